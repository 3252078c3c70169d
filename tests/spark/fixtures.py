"""The differential suite's fixtures: typed Parquet datasets with edge values, written as a
lakehouse raw layer (`lake/raw/<table>/dt=2026-01-01/part-0.parquet`) that Spark and lakewriter
both read. Deterministic: running it again writes the same rows.

    python tests/spark/fixtures.py      # (re)writes tests/spark/lake/raw
"""

import datetime as dt
import decimal
import math
import pathlib
import shutil
import struct

import pyarrow as pa
import pyarrow.parquet as pq

HERE = pathlib.Path(__file__).resolve().parent
RAW = HERE / "lake" / "raw"
DAY = "2026-01-01"

D = decimal.Decimal
NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000))[0]
UTC = dt.timezone.utc


def numbers():
    """Ordinary values of every number type, pairs to combine (`j`, `m`, `e`, `y` never zero),
    and NULLs."""
    rows = [
        # id, t, s, i, j, l, m, f, d, e, x, y, z, w
        (1, 7, 700, 7, 2, 7, 2, 1.5, 7.0, 2.0, D("7.25"), D("2.00"), D("7.250000000000000000"), D("1.125")),
        (2, -7, -700, -7, 2, -7, 2, -2.5, -7.5, 2.5, D("-7.25"), D("3.00"), D("-0.000000000000000001"), D("-1.005")),
        (3, 0, 0, 0, -3, 0, -3, 0.0, 0.0, -3.0, D("0.00"), D("-3.00"), D("0"), D("0.000")),
        (4, 1, 1, 1, 7, 1, 7, 0.1, 0.1, 0.2, D("0.10"), D("0.20"), D("0.100000000000000000"), D("0.285")),
        (5, 127, 32767, 123456, 1000, 9876543210, 1000, 3.25, 0.285, 3.0, D("99999999.99"), D("0.03"),
         D("12345678901234567890.123456789012345678"), D("99.999")),
        (6, -128, -32768, -123456, 17, -9876543210, 17, 1e10, 1e-7, 7.0, D("-99999999.99"), D("7.00"),
         D("-12345678901234567890.123456789012345678"), D("-99.999")),
        (7, None, None, None, 5, None, 5, None, None, 5.0, None, D("5.00"), None, None),
        (8, 3, 3, 3, None, 3, None, 3.0, 3.0, None, D("3.00"), None, D("3"), D("3.000")),
    ]
    schema = pa.schema([
        ("id", pa.int32()), ("t", pa.int8()), ("s", pa.int16()), ("i", pa.int32()), ("j", pa.int32()),
        ("l", pa.int64()), ("m", pa.int64()), ("f", pa.float32()), ("d", pa.float64()), ("e", pa.float64()),
        ("x", pa.decimal128(10, 2)), ("y", pa.decimal128(10, 2)), ("z", pa.decimal128(38, 18)), ("w", pa.decimal128(5, 3)),
    ])
    return schema, rows


def floats():
    """The floating-point edge values, each with a key and a group: NaN of both signs, ±0.0,
    ±Infinity, the smallest and greatest doubles, NULL."""
    values = [NAN, NEG_NAN, 0.0, -0.0, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, -1.5, 1.5, None, 2.5, NAN, -0.0]
    rows = []
    for n, v in enumerate(values, start=1):
        rows.append((n, v, None if v is None else float(struct.unpack("<f", struct.pack("<f", v))[0]) if abs(v) < 3e38 or math.isnan(v) or math.isinf(v) else math.copysign(math.inf, v), "g%d" % (n % 3)))
    schema = pa.schema([("id", pa.int32()), ("d", pa.float64()), ("f", pa.float32()), ("g", pa.string())])
    return schema, rows


def extremes():
    """The smallest and greatest value of every integer type, and decimal(38,18)'s extremes: one
    row, so that an expression overflows in it or not at all."""
    big = "99999999999999999999.999999999999999999"
    row = (1, 127, -128, 32767, -32768, 2147483647, -2147483648, 9223372036854775807, -9223372036854775808,
           D(big), D("-" + big), D("9999999999999999999999999999999999.99"))
    schema = pa.schema([
        ("id", pa.int32()), ("tmax", pa.int8()), ("tmin", pa.int8()), ("smax", pa.int16()), ("smin", pa.int16()),
        ("imax", pa.int32()), ("imin", pa.int32()), ("lmax", pa.int64()), ("lmin", pa.int64()),
        ("zmax", pa.decimal128(38, 18)), ("zmin", pa.decimal128(38, 18)), ("qmax", pa.decimal128(36, 2)),
    ])
    return schema, [row]


def texts():
    """Strings: ASCII, empty, NULL, letters outside ASCII, an emoji, padding, separators, digits."""
    values = ["abcdef", "", None, "Ünïcödé", "日本語テキスト", "🙂 smile", "  padded  ", "a,b,,c", "12345", "-17.5",
              "2026-03-29", "Spark SQL", "x"]
    rows = [(n, v, None if v is None else n % 4) for n, v in enumerate(values, start=1)]
    schema = pa.schema([("id", pa.int32()), ("s", pa.string()), ("k", pa.int32())])
    return schema, rows


def times():
    """Dates at the edges (0001, the 1582 calendar change, 1969/1970, 2262, 9999), the days DST
    begins in Europe and the US, and zoned (UTC) and wall-clock timestamps, each with a date."""
    stamps = [
        dt.datetime(2026, 3, 29, 0, 30, 0),
        dt.datetime(2026, 3, 29, 1, 30, 0),
        dt.datetime(2026, 3, 8, 7, 15, 30, 123456),
        dt.datetime(2026, 10, 25, 0, 59, 59, 999999),
        dt.datetime(1969, 12, 31, 23, 59, 59),
        dt.datetime(1970, 1, 1, 0, 0, 0),
        dt.datetime(1582, 10, 15, 12, 0, 0),
        dt.datetime(2262, 4, 12, 0, 0, 0),
        dt.datetime(1, 1, 1, 0, 0, 0),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2024, 2, 29, 12, 0, 0),
        None,
    ]
    dates = [dt.date(2026, 3, 29), dt.date(2026, 3, 29), dt.date(2026, 3, 8), dt.date(2026, 10, 25),
             dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(1582, 10, 4), dt.date(2262, 4, 12),
             dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2024, 2, 29), None]
    rows = [(n, None if s is None else s.replace(tzinfo=UTC), s, d) for n, (s, d) in enumerate(zip(stamps, dates), start=1)]
    schema = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("us", tz="UTC")), ("ntz", pa.timestamp("us")),
                        ("d", pa.date32())])
    return schema, rows


def zoned():
    """Instants whose Parquet files name another zone than UTC (pyarrow keeps a column's zone in
    the file's Arrow schema; Parquet stores the instant in UTC): around midnight UTC of the
    fixtures' day and of the DST days in Europe and the US."""
    stamps = [
        dt.datetime(2025, 12, 31, 23, 30, 0),
        dt.datetime(2026, 1, 1, 0, 30, 0),
        dt.datetime(2026, 1, 1, 23, 30, 0),
        dt.datetime(2026, 1, 2, 4, 59, 59),
        dt.datetime(2026, 3, 8, 6, 30, 0),
        dt.datetime(2026, 3, 8, 7, 30, 0),
        dt.datetime(2026, 3, 28, 23, 30, 0),
        dt.datetime(2026, 3, 29, 1, 30, 0),
        dt.datetime(2026, 10, 25, 0, 30, 0),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        None,
    ]
    rows = [(n, *([None if s is None else s.replace(tzinfo=UTC)] * 3)) for n, s in enumerate(stamps, start=1)]
    schema = pa.schema([("id", pa.int32()), ("paris", pa.timestamp("us", tz="Europe/Paris")),
                        ("ny", pa.timestamp("us", tz="America/New_York")), ("utc", pa.timestamp("us", tz="UTC"))])
    return schema, rows


def sales():
    """Rows to aggregate and window over: a key with NULLs, amounts of each type, days."""
    rows = []
    keys = ["a", "b", "c", None, "Ünï"]
    for n in range(1, 31):
        key = keys[n % len(keys)]
        rows.append((n, key, n % 7, n * 1000003 % 97 - 40, float(n) / 8 - 1.5, D(n * 37 % 1000) / 100,
                     dt.date(2026, 1, 1 + n % 10), None if n % 11 == 0 else n % 4))
    schema = pa.schema([("id", pa.int32()), ("k", pa.string()), ("q", pa.int32()), ("v", pa.int64()),
                        ("d", pa.float64()), ("amount", pa.decimal128(10, 2)), ("day", pa.date32()), ("n", pa.int32())])
    return schema, rows


TABLES = {"numbers": numbers, "floats": floats, "extremes": extremes, "texts": texts, "times": times, "sales": sales,
          "zoned": zoned}


def write():
    shutil.rmtree(RAW, ignore_errors=True)
    for name, make in TABLES.items():
        schema, rows = make()
        columns = list(zip(*rows))
        table = pa.table([pa.array(list(col), type=field.type) for col, field in zip(columns, schema)], schema=schema)
        folder = RAW / name / f"dt={DAY}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / "part-0.parquet", compression="snappy")


if __name__ == "__main__":
    write()
