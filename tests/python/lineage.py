"""OpenLineage events from the installed command, as a lineage backend receives them: every write
mode's runs, a failing run of every mode and a backfill send their events to an HTTP server of this test (with
the API key as a bearer token), each event is rebuilt from the openlineage-python client's
generated classes (which check the required fields and formats: a UUID run id, a date-time event
time) and must serialize back to exactly what was sent, and each run's events arrive in order:
START, then COMPLETE or FAIL.

    python tests/python/lineage.py   # with the Python of the venv the wheel is installed into
"""

import json
import os
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import lakewriter
from openlineage.client.generated import (
    base,
    datasource_dataset,
    dataset_version_dataset,
    error_message_run,
    input_statistics_input_dataset,
    job_type_job,
    nominal_time_run,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    sql_job,
)
from openlineage.client.serde import Serde

API_KEY = "lineage-test-key"
PARENT = ("airflow", "orders_dag.load", "01890f0b-5c1d-7cc6-b5a4-3f3c1c5b0e0a")
OWN_FACET = "https://github.com/lakewriter/lakewriter/blob/main/schema/openlineage-facets.json#/$defs/LakewriterRunFacet"

# One job per write mode besides the demo's overwrite_partition (daily_orders) and merge
# (customers), each from the demo's raw orders; and one that fails while it computes.
JOBS = """
[jobs.orders_delete_insert]
target = "modes.delete_insert"
write = "delete_insert"
predicate = "dt = $dt"
sql = "SELECT order_id, customer_id, amount, dt FROM raw.orders WHERE dt = $dt"

[jobs.orders_append]
target = "modes.append"
write = "append"
sql = "SELECT order_id, customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"

[jobs.orders_append_dedup]
target = "modes.append_dedup"
write = "append_dedup"
key = ["order_id"]
sql = "SELECT order_id, customer_id, amount, dt FROM raw.orders WHERE dt = $dt"

[jobs.orders_rebuild]
target = "modes.rebuild"
write = "rebuild"
sql = "SELECT customer_id, COUNT(*) AS orders FROM raw.orders GROUP BY customer_id"

"""

# A job of each write mode that fails while it computes (a cast of 'x' to BIGINT on every row).
FAILING = "CAST(CASE WHEN customer_id >= 0 THEN 'x' ELSE '1' END AS BIGINT)"
FAILING_JOBS = {
    "overwrite_partition": 'partition_by = "dt"',
    "merge": 'key = ["order_id"]\nnewer_by = "created_at"',
    "delete_insert": 'predicate = "dt = $dt"',
    "append": "",
    "append_dedup": 'key = ["order_id"]',
    "rebuild": "",
}
for mode, settings in FAILING_JOBS.items():
    day = "" if mode == "rebuild" else " WHERE dt = $dt"
    JOBS += f"""
[jobs.failing_{mode}]
target = "failing.{mode}"
write = "{mode}"
{settings}
sql = "SELECT order_id, created_at, {FAILING} AS c, dt FROM raw.orders{day}"
"""

RUN_FACETS = {
    "nominalTime": nominal_time_run.NominalTimeRunFacet,
    "processing_engine": processing_engine_run.ProcessingEngineRunFacet,
    "errorMessage": error_message_run.ErrorMessageRunFacet,
}
JOB_FACETS = {"jobType": job_type_job.JobTypeJobFacet, "sql": sql_job.SQLJobFacet}
DATASET_FACETS = {
    "dataSource": datasource_dataset.DatasourceDatasetFacet,
    "version": dataset_version_dataset.DatasetVersionDatasetFacet,
}
INPUT_FACETS = {"inputStatistics": input_statistics_input_dataset.InputStatisticsInputDatasetFacet}
OUTPUT_FACETS = {"outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet}


def facet(cls, sent: dict, **built):
    """The facet `sent` as an instance of `cls`: its fields checked by the class, its schema URL the
    class's own."""
    fields = {k: v for k, v in sent.items() if not k.startswith("_")}
    fields.update(built)
    instance = cls(**fields, producer=sent["_producer"])
    assert instance._schemaURL == sent["_schemaURL"], (cls.__name__, sent["_schemaURL"], instance._schemaURL)
    return instance


def facets(sent: dict, classes: dict) -> dict:
    built = {}
    for name, fields in sent.items():
        if name == "schema":
            columns = [schema_dataset.SchemaDatasetFacetFields(**c) for c in fields["fields"]]
            built[name] = facet(schema_dataset.SchemaDatasetFacet, fields, fields=columns)
        elif name == "parent":
            built[name] = facet(
                parent_run.ParentRunFacet,
                fields,
                run=parent_run.Run(**fields["run"]),
                job=parent_run.Job(**fields["job"]),
                root=parent_run.Root(
                    run=parent_run.RootRun(**fields["root"]["run"]), job=parent_run.RootJob(**fields["root"]["job"])
                ),
            )
        elif name == "lakewriter":
            assert fields["_schemaURL"] == OWN_FACET, fields
            for key in ("partition", "status", "committed", "retries", "durationMs"):
                assert key in fields, (key, fields)
            own = base.RunFacet(producer=fields["_producer"]).with_additional_properties(
                **{k: v for k, v in fields.items() if not k.startswith("_")}
            )
            own._schemaURL = fields["_schemaURL"]
            built[name] = own
        else:
            assert name in classes, f"a facet no class is given for: {name}"
            built[name] = facet(classes[name], fields)
    return built


def rebuilt(sent: dict) -> base.RunEvent:
    """`sent` as the client's RunEvent, every part built from its generated class."""
    run = base.Run(runId=sent["run"]["runId"], facets=facets(sent["run"].get("facets", {}), RUN_FACETS))
    job = base.Job(
        namespace=sent["job"]["namespace"],
        name=sent["job"]["name"],
        facets=facets(sent["job"].get("facets", {}), JOB_FACETS),
    )
    inputs = [
        base.InputDataset(
            namespace=d["namespace"],
            name=d["name"],
            facets=facets(d.get("facets", {}), DATASET_FACETS),
            inputFacets=facets(d.get("inputFacets", {}), INPUT_FACETS),
        )
        for d in sent.get("inputs", [])
    ]
    outputs = [
        base.OutputDataset(
            namespace=d["namespace"],
            name=d["name"],
            facets=facets(d.get("facets", {}), DATASET_FACETS),
            outputFacets=facets(d.get("outputFacets", {}), OUTPUT_FACETS),
        )
        for d in sent.get("outputs", [])
    ]
    event = base.RunEvent(
        eventType=base.EventType[sent["eventType"]],
        eventTime=sent["eventTime"],
        run=run,
        job=job,
        inputs=inputs,
        outputs=outputs,
        producer=sent["producer"],
    )
    assert event.schemaURL == sent["schemaURL"], (event.schemaURL, sent["schemaURL"])
    return event


def without_empty(value):
    """`value` without its empty objects and lists (an event without input facets and one with
    `{}` say the same, as do a column without nested fields and one with `[]`)."""
    if isinstance(value, dict):
        kept = {k: without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [without_empty(v) for v in value]
    return value


class Backend(BaseHTTPRequestHandler):
    """A lineage backend: keeps each event POSTed to /api/v1/lineage, in the order received."""

    received: list = []
    problems: list = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path != "/api/v1/lineage":
            Backend.problems.append(f"POST to {self.path}")
        if self.headers.get("Authorization") != f"Bearer {API_KEY}":
            Backend.problems.append(f"Authorization: {self.headers.get('Authorization')}")
        if self.headers.get("Content-Type") != "application/json":
            Backend.problems.append(f"Content-Type: {self.headers.get('Content-Type')}")
        Backend.received.append(json.loads(body))
        self.send_response(201)
        self.end_headers()

    def log_message(self, *args):
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OPENLINEAGE_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
    os.environ["OPENLINEAGE_API_KEY"] = API_KEY
    os.environ["OPENLINEAGE_NAMESPACE"] = "lakehouse"
    try:
        with tempfile.TemporaryDirectory() as work:
            subprocess.run([lakewriter.binary(), "demo", "--no-run"], cwd=work, check=True, capture_output=True)
            project = Path(work) / "lakewriter-demo" / "lakewriter.toml"
            project.write_text(project.read_text() + JOBS)

            reports = []
            for job in ["daily_orders", "customers", "orders_delete_insert", "orders_append", "orders_append_dedup"]:
                reports += [r for r in lakewriter.run(job, "2026-09-30", project=project) if "partition" in r]
            reports += [r for r in lakewriter.run("orders_rebuild", project=project) if "partition" in r]
            os.environ["OPENLINEAGE_PARENT_ID"] = "/".join(PARENT)
            days = lakewriter.backfill("daily_orders", "2026-09-01", "2026-09-03", project=project)
            del os.environ["OPENLINEAGE_PARENT_ID"]
            reports += [r for r in days if "partition" in r]
            for mode in FAILING_JOBS:
                try:
                    lakewriter.run(f"failing_{mode}", None if mode == "rebuild" else "2026-09-30", project=project)
                    raise AssertionError(f"failing_{mode} did not fail")
                except lakewriter.LakewriterError as e:
                    reports += [r for r in e.events if "partition" in r]
    finally:
        server.shutdown()

    assert not Backend.problems, Backend.problems
    for status in ("ok", "failed"):
        writes = {r["write"] for r in reports if r["status"] == status}
        assert writes == set(FAILING_JOBS), (status, writes)
    assert len(Backend.received) == 2 * len(reports), (len(Backend.received), len(reports))
    for sent in Backend.received:
        event = rebuilt(sent)
        held = without_empty(Serde.to_dict(event))
        assert held == without_empty(sent), f"the client's classes do not hold what was sent:\n{sent}\n{held}"
    for report in reports:
        events = [e for e in Backend.received if e["run"]["runId"] == report["run_id"]]
        kinds = [e["eventType"] for e in events]
        ended = "FAIL" if report["status"] == "failed" else "COMPLETE"
        assert kinds == ["START", ended], (report["job"], report["partition"], kinds)
        for e in events:
            assert e["job"] == {**e["job"], "namespace": "lakehouse", "name": report["job"]}, e["job"]
            parent = e["run"]["facets"].get("parent")
            if report["job"] == "daily_orders" and report["partition"] != "dt=2026-09-30":
                assert parent and parent["run"]["runId"] == PARENT[2], e["run"]["facets"]
            else:
                assert parent is None, e["run"]["facets"]
        if ended == "FAIL":
            assert events[1]["run"]["facets"]["errorMessage"]["message"] == report["error"], events[1]
        else:
            version = events[1]["outputs"][0]["facets"]["version"]["datasetVersion"]
            assert version == str(report["table_version"]), (version, report)
    print(f"OpenLineage: {len(Backend.received)} events of {len(reports)} runs received and accepted: ok")


if __name__ == "__main__":
    main()
