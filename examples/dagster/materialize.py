"""Materializes partitions of the example's assets in-process, then reads each materialization
back from the Dagster instance and prints it as one JSON line: the asset, the partition, the
data version and the metadata lakewriter reported.

    python materialize.py ASSET PARTITION…      (ASSET: analytics/daily_orders, core/customers, …)
    python materialize.py --range START END     (daily_orders_backfill: the days START to END in one run)

Exits 1 where a materialization failed, after printing `{"failed": PARTITION, "errors": […]}`
(the failure and its causes).
"""

import json
import sys

import dagster as dg

import definitions


def main(asset_path, partitions):
    if asset_path == "--range":
        asset, runs = definitions.daily_orders_backfill, [{"tags": {
            "dagster/asset_partition_range_start": partitions[0],
            "dagster/asset_partition_range_end": partitions[1],
        }}]
        asset_path = "/".join(asset.key.path)
    else:
        key = dg.AssetKey(asset_path.split("/"))
        asset = next(a for a in definitions.defs.assets if key in a.keys)
        runs = [{"partition_key": partition} for partition in partitions]
    key = dg.AssetKey(asset_path.split("/"))
    instance = dg.DagsterInstance.ephemeral()
    failed = False
    for run in runs:
        partition = run.get("partition_key") or "..".join(run["tags"].values())
        result = dg.materialize(
            [asset],
            instance=instance,
            resources={"pipes_subprocess_client": dg.PipesSubprocessClient()},
            raise_on_error=False,
            **run,
        )
        if not result.success:
            error, messages = result.get_step_failure_events()[0].step_failure_data.error, []
            while error is not None:
                messages.append(error.message.strip())
                error = error.cause
            print(json.dumps({"failed": partition, "errors": messages}), flush=True)
            failed = True
    records = instance.fetch_materializations(key, limit=100).records
    for record in sorted(records, key=lambda r: r.storage_id):
        materialization = record.asset_materialization
        metadata = {k: v.value for k, v in materialization.metadata.items()}
        print(json.dumps({
            "asset": asset_path,
            "partition": materialization.partition,
            "data_version": materialization.tags.get("dagster/data_version"),
            "metadata": metadata,
        }, default=str), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
