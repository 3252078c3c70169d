#!/usr/bin/env python3
"""The benchmark's peer and judge (run by scripts/bench in its own venv).

The peer is the short Python pipeline a user would write instead of lakewriter: polars computes
each day, delta-rs Python writes it — a predicate overwrite of the day's partition for the
`daily_orders` aggregate, a merge on the key with a newer-`updated_at`-wins guard for `customers`.

    bench-peer.py backfill ROOT TABLE FROM TO    the aggregate of each day, one commit a day
    bench-peer.py merge ROOT TABLE FROM TO       each customer batch, deduplicated, merged
    bench-peer.py same A B                       exit 1 unless A and B hold the same rows
    bench-peer.py table RESULTS.jsonl            the results as a Markdown table, with ratios

Threads: POLARS_MAX_THREADS (scripts/bench sets it).
"""

import datetime
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds


def days(first, last):
    day, last = datetime.date.fromisoformat(first), datetime.date.fromisoformat(last)
    while day <= last:
        yield day
        day += datetime.timedelta(days=1)


def backfill(root, table, first, last):
    import polars as pl
    from deltalake import write_deltalake

    for day in days(first, last):
        result = (
            pl.scan_parquet(f"{root}/raw/orders/dt={day}/*.parquet")
            .group_by("customer_id")
            .agg(
                pl.len().cast(pl.Int64).alias("orders"),
                pl.col("amount").sum().alias("revenue"),
                (pl.col("status") == "cancelled").sum().cast(pl.Int64).alias("cancelled"),
            )
            .with_columns(pl.lit(day).alias("dt"))
            .collect()
        )
        write_deltalake(table, result, mode="overwrite", predicate=f"dt = '{day}'", partition_by=["dt"])


def merge(root, table, first, last):
    import polars as pl
    from deltalake import DeltaTable, write_deltalake

    for day in days(first, last):
        batch = pl.read_parquet(f"{root}/raw/customers_batch/dt={day}/*.parquet")
        source = batch.sort("updated_at", descending=True).unique("customer_id", keep="first")
        if not DeltaTable.is_deltatable(table):
            write_deltalake(table, source)
            continue
        (
            DeltaTable(table)
            .merge(source, "t.customer_id = s.customer_id", source_alias="s", target_alias="t")
            .when_matched_update_all(predicate="s.updated_at > t.updated_at")
            .when_not_matched_insert_all()
            .execute()
        )


def load(path):
    """A Delta table (through delta-rs) or a folder of plain Parquet files, rows in a fixed order
    and values in comparable types: integers as int64, decimals as text, dates as text."""
    if (Path(path) / "_delta_log").is_dir():
        from deltalake import DeltaTable

        table = DeltaTable(path).to_pyarrow_table()
    else:
        table = ds.dataset(path, format="parquet", partitioning=None).to_table()
    columns = {}
    for name in sorted(table.column_names):
        column, kind = table.column(name), table.schema.field(name).type
        if pa.types.is_integer(kind):
            column = column.cast(pa.int64())
        elif pa.types.is_decimal(kind) or pa.types.is_date(kind) or pa.types.is_string(kind) \
                or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
            column = column.cast(pa.string())
        elif pa.types.is_timestamp(kind):
            column = column.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
        columns[name] = column
    normal = pa.table(columns)
    return normal.take(pc.sort_indices(normal, sort_keys=[(n, "ascending") for n in normal.column_names]))


def same(a, b):
    left, right = load(a), load(b)
    if left.column_names != right.column_names:
        print(f"columns differ: {left.column_names} vs {right.column_names}", file=sys.stderr)
        return 1
    if not left.equals(right):
        print(f"rows differ: {left.num_rows} vs {right.num_rows} rows", file=sys.stderr)
        return 1
    print(f"same content: {left.num_rows} rows", file=sys.stderr)
    return 0


PEERS = ("polars + deltalake, 1 thread", "polars + deltalake, 2 threads")


def table(results):
    """One row per workload, one column per tool: wall time, CPU time and peak memory, and lakewriter's
    ratio to the best peer's wall time."""
    runs = [json.loads(line) for line in Path(results).read_text().splitlines() if line.strip()]
    tools = list(dict.fromkeys(r["tool"] for r in runs))
    workloads = list(dict.fromkeys(r["workload"] for r in runs))
    cell = {(r["workload"], r["tool"]): r for r in runs}
    print("| workload | " + " | ".join(tools) + " | lakewriter ÷ best peer |")
    print("|---" * (len(tools) + 2) + "|")
    for workload in workloads:
        row = []
        for tool in tools:
            r = cell.get((workload, tool))
            row.append(f"{r['wall']:.2f} s ({r['cpu']:.2f} s CPU, {r['rss_mb']} MB)" if r else "")
        peers = [cell[(workload, p)]["wall"] for p in PEERS if (workload, p) in cell]
        mine = cell.get((workload, "lakewriter"))
        ratio = f"{mine['wall'] / min(peers):.2f}×" if mine and peers else ""
        print(f"| {workload} | " + " | ".join(row) + f" | {ratio} |")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "backfill":
        backfill(*args)
    elif command == "merge":
        merge(*args)
    elif command == "same":
        sys.exit(same(*args))
    elif command == "table":
        table(*args)
    else:
        sys.exit(__doc__)
