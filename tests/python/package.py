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


if __name__ == "__main__":
    main()
