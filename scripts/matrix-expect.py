"""What each table of the write-mode matrix (tests/e2e/matrix/) must hold, computed by DuckDB from
the raw Parquet files alone, with SQL of its own for each kind of write.

    matrix-expect.py RAW_FOLDER < SPEC     prints {"CELL": [ROW, …], …}: each row a JSON object

RAW_FOLDER holds the raw events as hive folders (dt=YYYY-MM-DD/*.parquet). SPEC (JSON):

    {"order": [DAY, …],              the days in the order they were first written
     "old_code_days": [DAY, …],      the days whose first write was by the code without the added column
     "cells": [{"name", "kind", "columns": [COLUMN, …] (the result's, in order), "key": [COLUMN, …],
                "newer_by", "delete_when" (a condition on the source row), "window": {"days", "column"},
                "partition" (a string partition column: '' is written as NULL),
                "added": {"column", "sql"} (the column the new code adds)}, …]}

Kinds, each as the guide (docs/guide/write-modes.md, schema-changes.md, sql.md) says:

    replace       a day's rows are its raw rows (overwrite_partition, delete_insert, INSERT OVERWRITE)
    append        a day's rows are appended once, by its first write (append, INSERT INTO)
    rebuild       every raw row
    merge         per key the newest row (`newer_by`); on a tie within a day a delete, then the
                  greatest value of each other column; on a tie across days the first day written
                  (a row replaces another only where strictly newer); tombstones where deleted
    merge_into    the matrix's MERGE INTO statement replayed day after day: its source per key the
                  newest row, then the greatest value of each other column (as its ROW_NUMBER
                  orders them); a newer-wins update of every column (`UPDATE SET *`, which keeps a
                  column the source lacks), `INSERT *` (NULL in a column the source lacks)
    append_dedup  day after day, the day's rows (one per key: the greatest value of each column)
                  whose key has no row yet (within `window` days in its column, where it has one)

A column added by the new code is filled in every row, but by `append` and `merge_into`: there a
row holds it only where a write of the new code wrote it (appended, inserted or updated).
Values are printed as Python's `str` prints them (dates, timestamps in UTC, decimals at their
scale), as `scripts/delta-reader.py` prints the tables' rows.
"""

import json
import sys

import duckdb


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def source(con, cell, day=None, new_code=True):
    """The job's result for `day` (every day: None) as a relation's SQL, with the added column
    where the new code has it."""
    columns = ", ".join(quote(c) for c in cell["columns"])
    added = cell.get("added")
    extra = f", {added['sql']} AS {quote(added['column'])}" if added and new_code else ""
    where = f" WHERE dt = DATE '{day}'" if day else ""
    return f"(SELECT {columns}{extra} FROM raw{where})"


def written(cell, columns):
    """The select list of the table's rows from `columns`: '' NULL in a string partition column."""
    partition = cell.get("partition")
    out = []
    for c in columns:
        if c == partition:
            out.append(f"NULLIF({quote(c)}, '') AS {quote(c)}")
        else:
            out.append(quote(c))
    return ", ".join(out)


def table_columns(cell, with_added=True):
    columns = list(cell["columns"])
    if cell.get("delete_when"):
        columns.append("_deleted")
    if cell.get("added") and with_added:
        columns.append(cell["added"]["column"])
    return columns


def rows(con, sql):
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def descending(columns):
    return ", ".join(f"{quote(c)} DESC NULLS LAST" for c in columns)


def replace(con, cell, spec):
    return rows(con, f"SELECT {written(cell, table_columns(cell))} FROM {source(con, cell)}")


def append(con, cell, spec):
    added = cell.get("added")
    old = ", ".join(f"DATE '{d}'" for d in spec["old_code_days"]) or "NULL"
    select = written(cell, cell["columns"])
    if added:
        column = quote(added["column"])
        select += f", CASE WHEN dt IN ({old}) THEN NULL ELSE {column} END AS {column}"
    return rows(con, f"SELECT {select} FROM {source(con, cell)}")


def merge(con, cell, spec):
    key = ", ".join(quote(k) for k in cell["key"])
    newer = quote(cell["newer_by"])
    others = [c for c in table_columns(cell) if c not in cell["key"] and c not in (cell["newer_by"], "_deleted")]
    deleted = f"COALESCE({cell['delete_when']}, false)" if cell.get("delete_when") else "false"
    order = ", ".join(f"(DATE '{d}', {i})" for i, d in enumerate(spec["order"]))
    sql = f"""
        WITH s AS (SELECT *, {deleted} AS _deleted FROM {source(con, cell)}),
        day_winner AS (
            SELECT * FROM s
            QUALIFY ROW_NUMBER() OVER (PARTITION BY dt, {key} ORDER BY {newer} DESC, _deleted DESC, {descending(others)}) = 1),
        written_at(dt, position) AS (VALUES {order})
        SELECT {written(cell, table_columns(cell))} FROM day_winner JOIN written_at USING (dt)
        QUALIFY ROW_NUMBER() OVER (PARTITION BY {key} ORDER BY {newer} DESC, position) = 1"""
    return rows(con, sql)


def merge_into(con, cell, spec):
    """The statement replayed: each day's source (one row per key), then
    `WHEN MATCHED AND s.newer > t.newer THEN UPDATE SET *`, `WHEN NOT MATCHED THEN INSERT *`; a day
    the old code wrote first has no added column."""
    key = cell["key"]
    newer = quote(cell["newer_by"])
    columns = table_columns(cell)
    order = f"{newer} DESC, " + descending([c for c in cell["columns"] if c not in key and c != cell["newer_by"]])
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT {', '.join(quote(c) for c in columns)} FROM {source(con, cell)} WHERE false")
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in key)
    for day in spec["order"]:
        new_code = day not in spec["old_code_days"]
        set_columns = columns if new_code else cell["columns"]
        con.execute(f"""CREATE OR REPLACE TEMP TABLE s AS SELECT * FROM {source(con, cell, day, new_code)}
            QUALIFY ROW_NUMBER() OVER (PARTITION BY {', '.join(quote(k) for k in key)} ORDER BY {order}) = 1""")
        sets = ", ".join(f"{quote(c)} = s.{quote(c)}" for c in set_columns if c not in key)
        con.execute(f"UPDATE t SET {sets} FROM s WHERE {on} AND s.{newer} > t.{newer}")
        values = ", ".join(f"s.{quote(c)}" if c in set_columns else "NULL" for c in columns)
        con.execute(f"INSERT INTO t SELECT {values} FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE {on})")
    return rows(con, f"SELECT {written(cell, columns)} FROM t")


def append_dedup(con, cell, spec):
    key = cell["key"]
    columns = table_columns(cell)
    order = descending([c for c in columns if c not in key])
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT * FROM {source(con, cell)} WHERE false")
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in key)
    window = cell.get("window")
    if window:
        within = f"abs(date_diff('day', CAST(t.{quote(window['column'])} AS DATE), CAST(s.{quote(window['column'])} AS DATE)))"
        on += f" AND {within} <= {int(window['days'])}"
    for day in spec["order"]:
        batch = f"""(SELECT * FROM {source(con, cell, day)}
            QUALIFY ROW_NUMBER() OVER (PARTITION BY {', '.join(quote(k) for k in key)} ORDER BY {order}) = 1)"""
        con.execute(f"INSERT INTO t SELECT * FROM {batch} AS s WHERE NOT EXISTS (SELECT 1 FROM t WHERE {on})")
    return rows(con, f"SELECT {written(cell, columns)} FROM t")


def rebuild(con, cell, spec):
    return replace(con, cell, spec)


KINDS = {f.__name__: f for f in (replace, append, rebuild, merge, merge_into, append_dedup)}


def main(raw_folder):
    spec = json.load(sys.stdin)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    files = f"{raw_folder.rstrip('/')}/*/*.parquet".replace("'", "''")
    con.execute(f"CREATE VIEW raw AS SELECT * REPLACE (CAST(dt AS DATE) AS dt) FROM read_parquet('{files}', hive_partitioning = true)")
    expected = {cell["name"]: KINDS[cell["kind"]](con, cell, spec) for cell in spec["cells"]}
    print(json.dumps(expected, default=str, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
