"""The installed wheel: `lakewriter demo` from its command, and the module's functions over the
demo's project. Run with the Python of a fresh venv the wheel was installed into:

    python tests/python/package.py
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import lakewriter


def main() -> None:
    command = lakewriter.binary()
    assert Path(command).parent == Path(sys.executable).parent, f"the venv's own command, not {command}"
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([command, "demo"], cwd=work, check=True, capture_output=True)
        project = Path(work) / "lakewriter-demo" / "lakewriter.toml"

        reports = lakewriter.run("daily_orders", "2026-09-30", project=project)
        assert reports[0]["status"] == "ok" and reports[0]["committed"], reports
        assert "summary" in reports[-1], reports

        days = lakewriter.backfill("daily_orders", "2026-09-01", "2026-09-03", project=project)
        partitions = sorted(r["partition"] for r in days if "partition" in r)
        assert partitions == ["dt=2026-09-01", "dt=2026-09-02", "dt=2026-09-03"], days
        assert all(r["status"] == "ok" for r in days if "partition" in r), days

        states = lakewriter.status("daily_orders", project=project)
        assert {s["state"] for s in states if "state" in s} == {"fresh"}, states

        tests = lakewriter.test(project=project)
        assert tests and all(t["status"] == "passed" for t in tests if "status" in t), tests
        name = tests[0]["test"]
        one = lakewriter.test(name, project=project)
        assert [t["test"] for t in one if "test" in t] == [name], f"a str is one test's name: {one}"

        try:
            lakewriter.backfill("daily_orders", "2026-09-01", "2026-09-02", parallel=0, project=project)
        except lakewriter.UsageError as e:
            assert e.code == 2 and "--parallel" in str(e) and not e.events, e
        else:
            raise AssertionError("parallel=0 is the command's usage error, as on the command line")

        failing_test(project)

        try:
            lakewriter.run("no_such_job", "2026-09-30", project=project)
        except lakewriter.UsageError as e:
            assert e.code == 2 and "no job `no_such_job`" in str(e), e
        else:
            raise AssertionError("an unknown job is a usage error")

        raw = Path(work) / "lakewriter-demo" / "lake" / "raw" / "orders" / "dt=2026-09-30"
        for file in raw.glob("*.parquet"):
            file.write_bytes(b"not parquet")
        try:
            lakewriter.run("daily_orders", "2026-09-30", project=project)
        except lakewriter.UsageError:
            raise AssertionError("a failed partition is exit 1, not a usage error")
        except lakewriter.LakewriterError as e:
            assert e.code == 1 and e.events and e.events[0]["status"] == "failed", (e, e.events)
        else:
            raise AssertionError("an unreadable raw file fails the run")
    print("the wheel's command and module: ok")


def failing_test(project: Path) -> None:
    """A failed job test raises its failed check as the error, not the last line on stderr: the
    job's lint warning (an ORDER BY whose ties come in any order) is logged after the test ran."""
    failing = project.with_name("failing.toml")
    failing.write_text(
        project.read_text()
        + """
[jobs.top_amounts]
target = "analytics.top_amounts"
write = "rebuild"
sql = "SELECT customer_id, amount FROM raw.orders ORDER BY amount LIMIT 5"

[tests.top_amounts_rows]
job = "top_amounts"
[tests.top_amounts_rows.given."raw.orders"]
rows = [ { customer_id = 1, amount = 10, dt = 2026-09-01 } ]
[tests.top_amounts_rows.expect]
rows = [ { customer_id = 1, amount = 11 } ]
"""
    )
    try:
        lakewriter.test("top_amounts_rows", project=failing)
    except lakewriter.UsageError:
        raise AssertionError("a failed test is exit 1, not a usage error")
    except lakewriter.LakewriterError as e:
        assert " WARN " in e.stderr, f"the lint's warning is on stderr: {e.stderr}"
        assert str(e).startswith("test `top_amounts_rows`: expected_rows failed: "), str(e)
    else:
        raise AssertionError("a test expecting other rows fails")


if __name__ == "__main__":
    main()
