"""lakewriter jobs as Dagster assets: one daily-partitioned asset per job, each partition
materialized by `lakewriter run JOB` through Dagster Pipes.

lakewriter speaks the Pipes protocol itself: launched by `PipesSubprocessClient`, it reads the
partition key (the logical date) from the Pipes context — so the command carries no `--dt`, and
never the wall clock — and reports one asset materialization per run, with its figures as
metadata (rows written, table version, input and code fingerprints, whether it was fresh before)
and the input fingerprint as the data version. A failed run is the step's failure.

Settings (environment): LAKEWRITER_BIN, the `lakewriter` binary (default: on PATH);
LAKEWRITER_PROJECT, the project file (default: ./lakewriter.toml).
"""

import os

import dagster as dg

LAKEWRITER = os.environ.get("LAKEWRITER_BIN", "lakewriter")
PROJECT = os.environ.get("LAKEWRITER_PROJECT", "lakewriter.toml")

# The demo's raw layer holds September 2026.
daily = dg.DailyPartitionsDefinition(start_date="2026-09-01", end_date="2026-10-01")


def lakewriter_asset(job: str, table: str, deps=()):
    """The asset of `job`, whose target is `table` (schema.table): one partition a day."""

    @dg.asset(
        key=dg.AssetKey(table.split(".")),
        partitions_def=daily,
        deps=deps,
        # lakewriter exits 1 for a run that failed (worth retrying: a rerun is safe) and 2 for a
        # configuration error (retrying changes nothing); Dagster retries either, up to this.
        retry_policy=dg.RetryPolicy(max_retries=1),
    )
    def _asset(context: dg.AssetExecutionContext, pipes_subprocess_client: dg.PipesSubprocessClient):
        command = [LAKEWRITER, "--project", PROJECT, "run", job]
        return pipes_subprocess_client.run(command=command, context=context).get_materialize_result()

    return _asset


def lakewriter_backfill_asset(job: str, table: str, deps=()):
    """The asset of `job` for backfills of many days in one run (`BackfillPolicy.single_run()`):
    one `lakewriter backfill JOB` over the run's partition range, which lakewriter reads from the
    Pipes context (no --from, --to), and reports as one materialization with each day's figures;
    Dagster records it for every partition of the range. A failed day fails the step, with no
    materialization (a rerun is safe). Use it in place of `lakewriter_asset` for such a job."""

    @dg.asset(
        key=dg.AssetKey(table.split(".")),
        partitions_def=daily,
        deps=deps,
        backfill_policy=dg.BackfillPolicy.single_run(),
    )
    def _asset(context: dg.AssetExecutionContext, pipes_subprocess_client: dg.PipesSubprocessClient):
        command = [LAKEWRITER, "--project", PROJECT, "backfill", job]
        # This Dagster leaves a run's partition key range out of the Pipes context (it sends a
        # range only with a single partition key); the extras carry it, and lakewriter reads
        # either.
        extras = {}
        if context.has_partition_key_range:
            keys = context.partition_key_range
            extras["partition_key_range"] = {"start": keys.start, "end": keys.end}
        return pipes_subprocess_client.run(command=command, context=context, extras=extras).get_materialize_result()

    return _asset


daily_orders = lakewriter_asset("daily_orders", "analytics.daily_orders")
customers = lakewriter_asset("customers", "core.customers")
weekly_revenue = lakewriter_asset("weekly_revenue", "analytics.weekly_revenue", deps=[daily_orders])

# The same job's asset for range backfills (one run for many days); not in `defs`, which holds
# the per-day asset of the same key.
daily_orders_backfill = lakewriter_backfill_asset("daily_orders", "analytics.daily_orders")

defs = dg.Definitions(
    assets=[daily_orders, customers, weekly_revenue],
    resources={"pipes_subprocess_client": dg.PipesSubprocessClient()},
)
