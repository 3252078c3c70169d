"""The differential suite: every case of the corpus computed by Apache Spark and by lakewriter's
`spark` dialect over the same Parquet (tests/spark/lake/raw, see fixtures.py), compared typed.

    python differential.py record                 # Spark's answers -> answers.jsonl (needs pyspark)
    python differential.py check LAKEWRITER       # lakewriter's results against answers.jsonl
    python differential.py check LAKEWRITER --live   # against Spark, run now (needs pyspark)
    python differential.py confirm                # Spark asked again: are answers.jsonl its answers?

The corpus (corpus/*.sql): each file is a category. A line `-- table: raw.x` names the table
the expressions after it read; every other non-empty line that is not a comment is one
expression case, computed for each row of that table (`SELECT <expr> FROM raw.x`). A block
`-- query: NAME` ... `-- end` is a whole-query case, whose rows are compared as a multiset.
Lines `-- spark: …` in a query block are what Spark runs instead of the query (a MERGE, which
Spark runs only on a table format it has no jar for here, is given as the SELECT it means).

A block `-- write: NAME` ... `-- end` is a write case: a job writing `out.NAME` with a write mode
(`-- job: KEY = VALUE` lines of its project-file table; none for a job written as a statement),
its SQL (the block's other lines; `-- before: …`, where given, the SQL of a first run that
writes the table it then changes), run once more after that to show a rerun changes nothing.
Spark runs the block's `-- spark: …` statements (each ending with `;`, `$dt` as the day's DATE)
on its own table `out.NAME` — an `INSERT OVERWRITE` as written, a MERGE as the SELECT it means —
and its last one's rows are the answer, compared with the table as a multiset of rows, its
columns taken by name.

A line `-- time_zone: ZONE` sets the session time zone of the cases after it in its file
(`spark.sql.session.timeZone`, lakewriter's `time_zone`; UTC where none is set).

Each case runs in both ANSI modes (`spark.sql.ansi.enabled`, lakewriter's `ansi`). lakewriter runs
each through its real write path: a `rebuild` job per case (cases that succeed in Spark share one
job per category and mode, one column each) writing a Delta table, read back with delta-rs.

A result is the column's Spark type and its values, or an error. Compared:
- types by Spark's names (`decimal(6,6)`, `bigint`); values typed: doubles and floats by their
  bits, except that any NaN equals any NaN (Spark keeps no NaN payload: it normalizes them);
  decimals by value at the type's scale; timestamps in microseconds; dates in days.
- an error in Spark must be an error in lakewriter (nothing committed), and the reverse.
A lakewriter error saying that a function "has no Spark-exact implementation" is `refused`.
lakewriter's refusal to write a date or timestamp outside the years 0001 to 9999, where Spark's
result holds one, is `unstorable`: a Delta table does not store it (Spark writes it, and
delta-rs cannot read the table back).

`check` prints a summary per category (cases, identical, refused, unstorable, different) as a Markdown table
and exits 1 where the cases that differ are not exactly those known-different.txt lists (the
cases left to make identical: the list only shrinks).
"""

import argparse
import base64
import collections
import datetime as dt
import decimal
import json
import logging
import math
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
RAW = HERE / "lake" / "raw"
CORPUS = HERE / "corpus"
ANSWERS = HERE / "answers.jsonl"
# The cases known to differ, each in one ANSI mode or both: the work left. A case that differs
# and is not listed fails the check, and so does one listed that no longer differs.
KNOWN = HERE / "known-different.txt"
REFUSED = "has no Spark-exact implementation"
# A date or timestamp outside the years 0001 to 9999 that a result holds: lakewriter refuses to
# write it (Delta does not store it), where Spark computes it.
OUTSIDE_DELTA = "Delta stores ("
MODES = (True, False)


# --- the corpus ---------------------------------------------------------------------------------

Case = collections.namedtuple("Case", "id category table expr query spark write zone", defaults=(None, "UTC"))
# A write case's job: its project-file lines, its first run's SQL (or None), its name.
Write = collections.namedtuple("Write", "config before name")
DAY = "2026-01-01"


def corpus():
    """Every case, in file order: ids are `category/N` for expressions, `category/NAME` for queries."""
    cases = []
    for path in sorted(CORPUS.glob("*.sql")):
        category = path.stem
        table, n, query, write, zone = None, 0, None, None, "UTC"
        for raw_line in path.read_text().splitlines():
            line = raw_line.strip()
            if write is not None:
                if line == "-- end":
                    name, sql, spark, config, before = write
                    statements = [t.strip() for t in "\n".join(spark).split(";") if t.strip()]
                    if not statements:
                        sys.exit(f"{path}: write {name} has no `-- spark:` statement")
                    cases.append(Case(f"{category}/{name}", category, None, None, "\n".join(sql).strip(),
                                      tuple(statements), Write(tuple(config), "\n".join(before) or None, name), zone))
                    write = None
                elif line.startswith("-- spark:"):
                    write[2].append(line[len("-- spark:"):])
                elif line.startswith("-- job:"):
                    write[3].append(line[len("-- job:"):].strip())
                elif line.startswith("-- before:"):
                    write[4].append(line[len("-- before:"):].strip())
                elif not line.startswith("--"):
                    write[1].append(raw_line)
                continue
            if query is not None:
                if line == "-- end":
                    name, sql, spark = query
                    cases.append(Case(f"{category}/{name}", category, None, None, "\n".join(sql).strip(),
                                      "\n".join(spark).strip() or None, None, zone))
                    query = None
                elif line.startswith("-- spark:"):
                    query[2].append(line[len("-- spark:"):])
                elif not line.startswith("--"):
                    query[1].append(raw_line)
                continue
            if not line:
                continue
            if line.startswith("-- table:"):
                table = line[len("-- table:"):].strip()
            elif line.startswith("-- time_zone:"):
                zone = line[len("-- time_zone:"):].strip()
            elif line.startswith("-- query:"):
                query = (line[len("-- query:"):].strip(), [], [])
            elif line.startswith("-- write:"):
                write = (line[len("-- write:"):].strip(), [], [], [], [])
            elif line.startswith("--"):
                continue
            else:
                if table is None:
                    sys.exit(f"{path}: an expression before any `-- table:` line: {line}")
                n += 1
                cases.append(Case(f"{category}/{n:03}", category, table, line, None, None, None, zone))
        if query is not None or write is not None:
            sys.exit(f"{path}: query or write {(query or write)[0]} has no `-- end`")
    return cases


def select(case, order=True):
    """The query a case runs in Spark: an expression's, for each row in id order; a write's
    statements."""
    if case.write is not None:
        return ";\n".join(spark_statement(t) for t in case.spark)
    if case.query is not None:
        return case.spark or case.query
    return expressions_query(case.table, f"{case.expr} AS v", order)


def expressions_query(table, columns, order=True):
    """The query of expression cases over `table`: the select list `columns`, for each row in id
    order."""
    return f"SELECT {columns} FROM {table}" + (" ORDER BY id" if order else "")


# --- typed values ------------------------------------------------------------------------------


def spark_type(arrow_type):
    """The Spark name of an Arrow type (as Spark's `simpleString` writes it)."""
    import pyarrow as pa
    t = arrow_type
    if pa.types.is_int8(t):
        return "tinyint"
    if pa.types.is_int16(t):
        return "smallint"
    if pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "bigint"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return f"array<{spark_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{spark_type(f.type)}" for f in t) + ">"
    if pa.types.is_map(t):
        return f"map<{spark_type(t.key_type)},{spark_type(t.item_type)}>"
    return str(t)


def encode(value, arrow_type):
    """A value as JSON, exactly: floats by their bits (NaN as "NaN"), decimals as text,
    timestamps in microseconds, dates in days since 1970-01-01, bytes as base64."""
    import pyarrow as pa
    t = arrow_type
    if value is None:
        return None
    if pa.types.is_float64(t):
        return "NaN" if math.isnan(value) else struct.pack(">d", value).hex()
    if pa.types.is_float32(t):
        return "NaN" if math.isnan(value) else struct.pack(">f", value).hex()
    if pa.types.is_decimal(t):
        return str(value)
    if pa.types.is_timestamp(t):
        return value  # already micros (see column_values)
    if pa.types.is_date32(t):
        return value
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return base64.b64encode(value).decode()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return [encode(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {f.name: encode(value.get(f.name), f.type) for f in t}
    if pa.types.is_map(t):
        return [[encode(k, t.key_type), encode(v, t.item_type)] for k, v in value]
    return value


def column_values(column):
    """The values of an Arrow column as Python values, timestamps as microseconds and dates as days
    (so that years 1 and 9999 and any zone survive)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    t = column.type
    if pa.types.is_timestamp(t):
        micros = pc.cast(column, pa.timestamp("us", tz=t.tz)).cast(pa.int64())
        return micros.to_pylist()
    if pa.types.is_date32(t):
        return column.cast(pa.int32()).to_pylist()
    return column.to_pylist()


def result_of(table, names):
    """A result: for each column of `names`, its Spark type and values."""
    out = []
    for name in names:
        column = table.column(name)
        out.append({"type": spark_type(column.type),
                    "values": [encode(v, column.type) for v in column_values(column)]})
    return out


# --- Spark --------------------------------------------------------------------------------------


# Where Spark's tables of the write cases live: a folder of its own, removed when Python exits.
WAREHOUSE = None


def spark_session(ansi):
    global WAREHOUSE
    from pyspark.sql import SparkSession
    if WAREHOUSE is None:
        WAREHOUSE = tempfile.TemporaryDirectory(prefix="lakewriter-differential-warehouse-")
    spark = (SparkSession.builder.master("local[1]").appName("lakewriter-differential")
             .config("spark.sql.warehouse.dir", WAREHOUSE.name)
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "1").config("spark.driver.memory", "1g").getOrCreate())
    # A case's failure is its answer, not news: Spark's own logs of it stay quiet.
    spark.sparkContext.setLogLevel("OFF")
    logging.getLogger("SQLQueryContextLogger").disabled = True
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    spark.sql("CREATE DATABASE IF NOT EXISTS raw")
    for folder in sorted(RAW.iterdir()):
        spark.sql(f"CREATE OR REPLACE VIEW raw.{folder.name} AS SELECT * FROM parquet.`{folder}`")
    return spark


def spark_statement(text):
    """A write case's statement as Spark runs it: `$dt` the day, as a DATE."""
    return text.replace("$dt", f"DATE'{DAY}'")


def spark_write(spark, case):
    """Runs a write case's statements on its own table `out.NAME`: the last one's rows."""
    spark.sql("CREATE DATABASE IF NOT EXISTS out")
    spark.sql(f"DROP TABLE IF EXISTS out.{case.write.name}")
    *before, last = case.spark
    for statement in before:
        spark.sql(spark_statement(statement))
    return spark.sql(spark_statement(last)).toArrow()


def error_class(exception):
    """The error class Spark names (`[ARITHMETIC_OVERFLOW] …` → ARITHMETIC_OVERFLOW)."""
    text = str(exception)
    found = re.search(r"\[([A-Z_]+(?:\.[A-Z_]+)?)\]", text)
    return found.group(1) if found else text.splitlines()[0][:200]


# How many expression cases of one table Spark answers with one query (a column each).
BATCH = 40


def spark_answer(spark, case):
    """Spark's answer to one case, in the session's mode."""
    spark.conf.set("spark.sql.session.timeZone", case.zone)
    try:
        table = spark_write(spark, case) if case.write else spark.sql(select(case)).toArrow()
        names = table.column_names
        return {"columns": names, "result": result_of(table, names)}
    except Exception as e:  # noqa: BLE001 — any Spark failure is the answer
        return {"error": error_class(e)}


def spark_batch(spark, group):
    """Spark's answers to expression cases of one table and zone, `{id: answer}`: asked as one
    query, a column each; where that query fails, each half of them asked again the same way, down
    to a case on its own, whose error is its answer."""
    if len(group) == 1:
        return {group[0].id: spark_answer(spark, group[0])}
    import pyarrow as pa
    spark.conf.set("spark.sql.session.timeZone", group[0].zone)
    columns = ", ".join(f"{case.expr} AS c{i}" for i, case in enumerate(group))
    try:
        table = spark.sql(expressions_query(group[0].table, columns)).toArrow()
    except Exception:  # noqa: BLE001 — a case's error: the halves tell which
        half = len(group) // 2
        return {**spark_batch(spark, group[:half]), **spark_batch(spark, group[half:])}
    return {case.id: {"columns": ["v"], "result": result_of(pa.table({"v": table.column(i)}), ["v"])}
            for i, case in enumerate(group)}


def spark_answers(cases, expected=None):
    """Spark's answer to each case in each mode: `{(id, ansi): result}`. Expression cases of one
    table and zone are asked together, up to BATCH in one query (a column's values do not depend
    on the others': the answers are those of each case asked alone); the rest one by one, as are
    the cases whose `expected` answer (`{(id, ansi): answer}`, where given) is an error."""
    answers = {}
    spark = None
    for ansi in MODES:
        spark = spark_session(ansi)
        groups = collections.defaultdict(list)
        for case in cases:
            if case.write is None and case.query is None and "error" not in (expected or {}).get((case.id, ansi), {}):
                groups[(case.table, case.zone)].append(case)
            else:
                answers[(case.id, ansi)] = spark_answer(spark, case)
        for group in groups.values():
            for i in range(0, len(group), BATCH):
                answered = spark_batch(spark, group[i:i + BATCH])
                answers.update({(id_, ansi): answer for id_, answer in answered.items()})
    if spark is not None:
        spark.stop()
    return answers


def as_recorded(case, answer):
    """An answer as answers.jsonl records it (without its id and mode, which key it): the query
    Spark ran, then the answer."""
    return {"sql": select(case), **answer}


def record(_args):
    cases = corpus()
    answers = spark_answers(cases)
    with ANSWERS.open("w") as out:
        for case in cases:
            for ansi in MODES:
                line = {"id": case.id, "ansi": ansi, **as_recorded(case, answers[(case.id, ansi)])}
                out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"recorded {len(cases)} cases in both ANSI modes into {ANSWERS}")


def confirm(_args):
    """Asks Spark every case again and compares its answers with the recorded ones (the e2e test
    `interop::spark` holds lakewriter to those): exits 1 naming each case whose answer is not the
    one recorded, or that has none."""
    cases = corpus()
    was = recorded()
    live = spark_answers(cases, was)
    changed = []
    for case in cases:
        for ansi in MODES:
            now = as_recorded(case, live[(case.id, ansi)])
            if was.get((case.id, ansi)) != now:
                changed.append(f"{case.id} (ansi={str(ansi).lower()}): recorded {was.get((case.id, ansi))}, now {now}")
    for line in changed:
        print(line[:1000])
    print(f"{len(cases)} cases in both ANSI modes: {len(changed)} answers are not the ones recorded in {ANSWERS.name}")
    sys.exit(1 if changed else 0)


def recorded():
    answers = {}
    for line in ANSWERS.read_text().splitlines():
        answer = json.loads(line)
        answers[(answer.pop("id"), answer.pop("ansi"))] = answer
    return answers


# --- lakewriter ---------------------------------------------------------------------------------


def toml_string(text):
    return json.dumps(text, ensure_ascii=False)


class Lakewriter:
    """One lakehouse per ANSI mode and session time zone: the fixtures' raw layer and a project of
    rebuild jobs."""

    def __init__(self, binary, ansi, work, zone="UTC"):
        self.binary, self.ansi, self.zone = binary, ansi, zone
        self.root = pathlib.Path(work) / zone.replace("/", "_") / ("ansi" if ansi else "legacy")
        shutil.copytree(RAW, self.root / "lake" / "raw")
        self.jobs = {}

    def job(self, name, sql, config=('write = "rebuild"',), target=None):
        """A job `name` writing `target` (default `out.NAME`) with `sql` and its project-file
        lines `config`."""
        self.jobs[name] = (sql, tuple(config), target or f"out.{name}")

    def run(self):
        """Runs every job; returns `{job: error or None}`. A job the project cannot load (SQL that
        does not parse) fails the whole command before any job runs: it is taken out, with that
        error, and the others run again."""
        outcome, jobs = {}, dict(self.jobs)
        while jobs:
            lines = ['root = "lake"', 'dialect = "spark"', f"ansi = {str(self.ansi).lower()}",
                     f"time_zone = {toml_string(self.zone)}", ""]
            for name, (sql, config, target) in jobs.items():
                lines += [f"[jobs.{name}]", f"target = {toml_string(target)}", *config, f"sql = {toml_string(sql)}", ""]
            (self.root / "lakewriter.toml").write_text("\n".join(lines))
            run = subprocess.run([self.binary, "--json", "backfill", "--all", "--from", DAY, "--to", DAY,
                                  "--no-progress", "--parallel", "2"],
                                 cwd=self.root, capture_output=True, text=True, check=False)
            ran = {}
            for line in run.stdout.splitlines():
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue
                job = event.get("job")
                if job in jobs and "status" in event:
                    ran[job] = event.get("error") if event["status"] == "failed" else None
            unloadable = re.match(r"error: job `([^`]+)`: ", run.stderr)
            if not ran and unloadable and unloadable.group(1) in jobs:
                outcome[unloadable.group(1)] = run.stderr.strip()
                del jobs[unloadable.group(1)]
                continue
            outcome.update(ran)
            for name in jobs:
                if name not in outcome:
                    outcome[name] = f"no result line for the job (exit {run.returncode}): {run.stderr[-2000:]}"
            break
        return outcome

    def table(self, name):
        from deltalake import DeltaTable
        return DeltaTable(str(self.root / "lake" / "out" / name)).to_pyarrow_table()


def write_results(binary, cases, ansi, work, zone):
    """lakewriter's result for each write case in one ANSI mode: `{(id, ansi): result}`. Each
    job runs its `before` SQL where it has one, then its SQL, then its SQL again."""
    lake = Lakewriter(binary, ansi, pathlib.Path(work) / "writes", zone)
    outcome = {}
    for phase in ("before", "run", "rerun"):
        lake.jobs = {}
        for case in cases:
            name = job_name(case)
            sql = case.write.before if phase == "before" else case.query
            if sql is not None and outcome.get(name) is None:
                lake.job(name, sql, case.write.config, f"out.{case.write.name}")
        outcome.update({name: error and f"{phase}: {error}" for name, error in lake.run().items()})
    results = {}
    for case in cases:
        error = outcome[job_name(case)]
        if error is not None:
            results[(case.id, ansi)] = {"error": error}
            continue
        try:
            table = lake.table(case.write.name)
        except Exception as e:  # noqa: BLE001 — a table delta-rs cannot read is lakewriter's error
            results[(case.id, ansi)] = {"error": f"delta-rs cannot read the table written: {e}"}
            continue
        results[(case.id, ansi)] = {"columns": table.column_names, "result": result_of(table, table.column_names)}
    return results


def job_name(case):
    return "c_" + re.sub(r"[^A-Za-z0-9_]", "_", case.id)


def lakewriter_results(binary, cases, answers, work):
    """lakewriter's result for each case in each mode: `{(id, ansi): result}`."""
    results = {}
    for zone in sorted({case.zone for case in cases}):
        results.update(results_in_zone(binary, [c for c in cases if c.zone == zone], answers, work, zone))
    return results


def results_in_zone(binary, cases, answers, work, zone):
    """lakewriter's result for each case of one session time zone in each mode."""
    results = {}
    for ansi in MODES:
        lake = Lakewriter(binary, ansi, work, zone)
        batched = collections.defaultdict(list)
        single = []
        results.update(write_results(binary, [c for c in cases if c.write], ansi, work, zone))
        for case in (c for c in cases if not c.write):
            if case.query is None and "error" not in answers[(case.id, ansi)]:
                batched[(case.category, case.table)].append(case)
            else:
                single.append(case)
        batches = {}
        for n, ((category, table), group) in enumerate(sorted(batched.items())):
            name = f"b_{category}_{n}"
            columns = ", ".join(f"{c.expr} AS c{i}" for i, c in enumerate(group))
            lake.job(name, f"SELECT id, {columns} FROM {table}")
            batches[name] = group
        for case in single:
            lake.job(job_name(case), case.query if case.query is not None else f"SELECT id, {case.expr} AS v FROM {case.table}")
        outcome = lake.run()
        where = {name: lake for name in lake.jobs}
        retry = []
        for name, group in batches.items():
            if outcome[name] is not None:
                retry += group  # one case failed the batch: each on its own
                continue
            try:
                table = lake.table(name).sort_by("id")
            except Exception:  # noqa: BLE001 — each case on its own tells which
                retry += group
                continue
            for i, case in enumerate(group):
                results[(case.id, ansi)] = {"columns": ["v"], "result": result_of(table, [f"c{i}"])}
        if retry:
            again = Lakewriter(binary, ansi, pathlib.Path(work) / "retry", zone)
            for case in retry:
                again.job(job_name(case), f"SELECT id, {case.expr} AS v FROM {case.table}")
            outcome.update(again.run())
            where.update({name: again for name in again.jobs})
            single += retry
        for case in single:
            error = outcome[job_name(case)]
            if error is not None:
                results[(case.id, ansi)] = {"error": error}
                continue
            try:
                table = where[job_name(case)].table(job_name(case))
            except Exception as e:  # noqa: BLE001 — a table delta-rs cannot read is lakewriter's error
                results[(case.id, ansi)] = {"error": f"delta-rs cannot read the table written: {e}"}
                continue
            if case.query is None:
                table = table.sort_by("id")
                results[(case.id, ansi)] = {"columns": ["v"], "result": result_of(table, ["v"])}
            else:
                results[(case.id, ansi)] = {"columns": table.column_names, "result": result_of(table, table.column_names)}
    return results


# --- comparing ----------------------------------------------------------------------------------


def same_value(a, b):
    return a == b


def rows(result):
    return sorted(json.dumps(list(row)) for row in zip(*[c["values"] for c in result]))


def beyond_delta(spark):
    """Whether Spark's result holds a date or timestamp outside the years 0001 to 9999, which a
    Delta table does not store (lakewriter refuses to write it, naming the column)."""
    low, high = -719162, 2932896  # 0001-01-01 and 9999-12-31 in days since 1970-01-01
    for column in spark.get("result", []):
        scale = 86_400_000_000 if column["type"].startswith("timestamp") else 1
        if column["type"] not in ("date", "timestamp", "timestamp_ntz"):
            continue
        if any(v is not None and not low * scale <= v < (high + 1) * scale for v in column["values"]):
            return True
    return False


def verdict(case, spark, ours):
    """`identical`, `refused`, `unstorable` or `different: why`."""
    if "error" in ours and REFUSED in ours["error"]:
        return "refused"
    if "error" in ours and OUTSIDE_DELTA in ours["error"] and beyond_delta(spark):
        return "unstorable"
    if "error" in spark or "error" in ours:
        if "error" in spark and "error" in ours:
            return "identical"
        if "error" in spark:
            return f"different: Spark fails ({spark['error']}), lakewriter does not"
        return f"different: lakewriter fails ({ours['error'][:300]}), Spark does not"
    if case.write is not None:
        if sorted(spark["columns"]) != sorted(ours["columns"]):
            return f"different: columns {spark['columns']} (Spark) vs {ours['columns']}"
        ours = {"columns": spark["columns"],
                "result": [ours["result"][ours["columns"].index(name)] for name in spark["columns"]]}
    s_types = [c["type"] for c in spark["result"]]
    o_types = [c["type"] for c in ours["result"]]
    if s_types != o_types:
        return f"different: types {s_types} (Spark) vs {o_types}"
    if case.query is not None:
        if rows(spark["result"]) != rows(ours["result"]):
            return f"different: rows {rows(spark['result'])[:5]} (Spark) vs {rows(ours['result'])[:5]}"
        return "identical"
    s_values, o_values = spark["result"][0]["values"], ours["result"][0]["values"]
    if s_values != o_values:
        return f"different: values {s_values} (Spark) vs {o_values}"
    return "identical"


def check(args):
    cases = corpus()
    if args.only:
        cases = [c for c in cases if c.id.startswith(args.only)]
    answers = spark_answers(cases) if args.live else recorded()
    missing = [c.id for c in cases if any((c.id, a) not in answers for a in MODES)]
    if missing:
        sys.exit(f"no recorded answer for {len(missing)} cases (run `differential.py record`): {missing[:10]}")
    work = tempfile.mkdtemp(prefix="lakewriter-differential-")
    try:
        ours = lakewriter_results(args.lakewriter, cases, answers, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    summary = collections.OrderedDict()
    different, refused = [], []
    for case in cases:
        outcomes = [verdict(case, answers[(case.id, a)], ours[(case.id, a)]) for a in MODES]
        counts = summary.setdefault(case.category, collections.Counter())
        counts["cases"] += 1
        if any(o.startswith("different") for o in outcomes):
            counts["different"] += 1
            for ansi, o in zip(MODES, outcomes):
                if o.startswith("different"):
                    different.append(f"{case.id} (ansi={str(ansi).lower()}): {select(case, order=False)}\n    {o}")
        elif any(o == "refused" for o in outcomes):
            counts["refused"] += 1
            refused.append(case.id)
        elif any(o == "unstorable" for o in outcomes):
            counts["unstorable"] += 1
        else:
            counts["identical"] += 1
    for line in different:
        print(line)
    if refused:
        print(f"refused: {' '.join(refused)}")
    ids = {case.id for case in cases}
    known = set(KNOWN.read_text().split()) & ids if KNOWN.exists() else set()
    now = {line.split(" ", 1)[0] for line in different}
    if args.write_known:
        KNOWN.write_text("".join(f"{case}\n" for case in sorted(now)))
        known = now
    total = collections.Counter()
    columns = ("cases", "identical", "refused", "unstorable", "different")
    print(f"| category | {' | '.join(columns)} |")
    print("|---|" + "---:|" * len(columns))
    for category, counts in summary.items():
        total.update(counts)
        print(f"| {category} | {' | '.join(str(counts[c]) for c in columns)} |")
    print(f"| **all** | {' | '.join(f'**{total[c]}**' for c in columns)} |")
    new, fixed = sorted(now - known), sorted(known - now)
    if new:
        print(f"\n{len(new)} cases differ that {KNOWN.name} does not list: {' '.join(new)}")
    if fixed:
        print(f"\n{len(fixed)} cases {KNOWN.name} lists are identical or refused now: take them out: {' '.join(fixed)}")
    sys.exit(1 if new or fixed else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record").set_defaults(run=record)
    sub.add_parser("confirm", help="ask Spark again: are the recorded answers its answers?").set_defaults(run=confirm)
    c = sub.add_parser("check")
    c.add_argument("lakewriter")
    c.add_argument("--live", action="store_true", help="ask Spark now instead of the recorded answers")
    c.add_argument("--only", help="only the cases whose id starts with this")
    c.add_argument("--keep", action="store_true", help="keep the lakehouses written")
    c.add_argument("--write-known", action="store_true", help=f"write the cases that differ into {KNOWN.name}")
    c.set_defaults(run=check)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
