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


daily_orders = lakewriter_asset("daily_orders", "analytics.daily_orders")
customers = lakewriter_asset("customers", "core.customers")
weekly_revenue = lakewriter_asset("weekly_revenue", "analytics.weekly_revenue", deps=[daily_orders])

defs = dg.Definitions(
    assets=[daily_orders, customers, weekly_revenue],
    resources={"pipes_subprocess_client": dg.PipesSubprocessClient()},
)
