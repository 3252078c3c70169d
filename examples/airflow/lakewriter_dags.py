"""lakewriter jobs as Airflow DAGs.

- `lakewriter_daily`: one run a day of data interval, catching up from the start date. Each task
  runs `lakewriter run JOB --dt {{ data_interval_start | ds }}`: the logical date of the interval,
  never the wall clock, so a retry or a re-run of an old interval rewrites exactly its partition.
- `lakewriter_repair`: on demand, `lakewriter backfill --all --from F --to T --only stale`: every
  day whose inputs or code changed since it was written, and the days of the jobs below it.

Exit codes: lakewriter exits 1 for a run that failed (nothing committed; a rerun is safe), which
is retried, and 2 for a usage or configuration error, which fails the task without retries
(`AirflowFailException`).

Settings (environment): LAKEWRITER_BIN (default: `lakewriter` on PATH), LAKEWRITER_PROJECT
(default: ./lakewriter.toml).
"""

import os
import subprocess
from datetime import timedelta

import pendulum
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG

LAKEWRITER = os.environ.get("LAKEWRITER_BIN", "lakewriter")
PROJECT = os.environ.get("LAKEWRITER_PROJECT", "lakewriter.toml")


def lakewriter(*args):
    """Runs `lakewriter ARGS…`; maps its exit code onto Airflow's retry semantics."""
    code = subprocess.run([LAKEWRITER, "--project", PROJECT, *args], check=False).returncode
    if code == 2:
        raise AirflowFailException(f"lakewriter {' '.join(args)}: a usage or configuration error (exit 2); not retried")
    if code != 0:
        raise AirflowException(f"lakewriter {' '.join(args)} exited {code}; nothing was committed, retrying is safe")


def run_job(job):
    return PythonOperator(
        task_id=job,
        python_callable=lakewriter,
        op_args=["run", job, "--dt", "{{ data_interval_start | ds }}"],
    )


with DAG(
    dag_id="lakewriter_daily",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 9, 1, tz="UTC"),
    end_date=pendulum.datetime(2026, 9, 30, tz="UTC"),
    catchup=True,
    max_active_runs=4,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
):
    daily_orders = run_job("daily_orders")
    weekly_revenue = run_job("weekly_revenue")
    customers = run_job("customers")
    daily_orders >> weekly_revenue

with DAG(
    dag_id="lakewriter_repair",
    schedule=None,
    start_date=pendulum.datetime(2026, 9, 1, tz="UTC"),
    catchup=False,
    params={"from": "2026-09-01", "to": "2026-09-30"},
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30)},
):
    PythonOperator(
        task_id="backfill_stale",
        python_callable=lakewriter,
        op_args=["backfill", "--all", "--from", "{{ params['from'] }}", "--to", "{{ params['to'] }}", "--only", "stale"],
    )
