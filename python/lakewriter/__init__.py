"""Run the `lakewriter` command installed with this package and read what it prints.

Each function runs the command with `--json` and returns its JSON Lines as dicts (for `run` and
`backfill`: a report per partition, then the summary). A command that exits 1 (a partition, a
check or a test failed) raises `LakewriterError`, one that exits 2 (a usage error: arguments or
the project file) raises `UsageError`; each carries the error — the first one its `--json` events
report (a failed partition's, statement's or job's `error`, a failed test's error or first failed
check), else its last `error:` line on stderr —, the exit code, the events printed before it and
its stderr. Arguments are checked by the command itself: a value it refuses (`parallel=0`) is its
`UsageError`.

    import lakewriter

    reports = lakewriter.run("daily_orders", "2026-09-30", project="lakewriter.toml")
    reports = lakewriter.backfill("daily_orders", "2026-09-01", "2026-09-30", only="stale")
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any, Optional, Sequence, Union

__all__ = ["LakewriterError", "UsageError", "backfill", "binary", "command", "run", "status", "test"]

PathLike = Union[str, "os.PathLike[str]"]


class LakewriterError(RuntimeError):
    """The command exited 1: a partition, a check or a test failed; nothing it did not report as
    committed was committed."""

    def __init__(self, message: str, code: int, events: list[dict[str, Any]], stderr: str):
        super().__init__(message)
        self.code = code
        self.events = events
        self.stderr = stderr


class UsageError(LakewriterError):
    """The command exited 2: its arguments or the project file are wrong; nothing ran."""


def binary() -> str:
    """The `lakewriter` command this package installed (beside this Python's scripts), else the
    one on PATH."""
    name = "lakewriter.exe" if os.name == "nt" else "lakewriter"
    installed = Path(sysconfig.get_path("scripts")) / name
    if installed.is_file():
        return str(installed)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError("the lakewriter command is not installed (pip install lakewriter)")
    return found


def command(
    *args: str,
    project: Optional[PathLike] = None,
    root: Optional[str] = None,
    engine: Optional[str] = None,
    cwd: Optional[PathLike] = None,
) -> list[dict[str, Any]]:
    """Runs `lakewriter --json [--project P] [--root R] [--engine E] ARGS…`; returns its JSON
    Lines as dicts, or raises on a failure (see the module's documentation)."""
    argv = [binary(), "--json", "--no-progress"] if args and args[0] == "backfill" else [binary(), "--json"]
    for flag, value in (("--project", project), ("--root", root), ("--engine", engine)):
        if value is not None:
            argv += [flag, os.fspath(value)]
    argv += [str(a) for a in args]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip().startswith("{")]
    if done.returncode == 0:
        return events
    kind = UsageError if done.returncode == 2 else LakewriterError
    raise kind(_error(events, done.stderr, done.returncode), done.returncode, events, done.stderr)


def _error(events: list[dict[str, Any]], stderr: str, code: int) -> str:
    """The error a failed command reports: the first its events carry, else its last `error:`
    line on stderr (logs, such as a lint's warnings, come before it and are not the error)."""
    for event in events:
        failed = event.get("job_failed") if isinstance(event.get("job_failed"), dict) else event
        if isinstance(failed.get("error"), str) and failed["error"]:
            return failed["error"]
        if "test" in event and event.get("status") == "failed":
            for check in event.get("checks", []):
                if not check.get("passed"):
                    return f"test `{event['test']}`: {check['name']} failed: {check.get('detail') or ''}".rstrip()
    errors = [line[len("error: ") :] for line in stderr.splitlines() if line.startswith("error: ")]
    return errors[-1] if errors else f"exit code {code}"


def run(job: str, dt: Optional[str] = None, *, force: bool = False, **options: Any) -> list[dict[str, Any]]:
    """`lakewriter run JOB [--dt DT] [--force]`: the partition's report, then the summary."""
    args = ["run", job] + (["--dt", dt] if dt else []) + (["--force"] if force else [])
    return command(*args, **options)


def backfill(
    job: str,
    start: str,
    end: str,
    *,
    only: Optional[str] = None,
    parallel: Optional[int] = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """`lakewriter backfill JOB --from START --to END [--only WHICH] [--parallel N]`: a report per
    partition, then the summary."""
    args = ["backfill", job, "--from", start, "--to", end]
    args += ["--only", only] if only else []
    args += ["--parallel", str(parallel)] if parallel is not None else []
    return command(*args, **options)


def status(job: str, **options: Any) -> list[dict[str, Any]]:
    """`lakewriter status JOB`: each partition's state, then the summary."""
    return command("status", job, **options)


def test(names: Union[str, Sequence[str]] = (), **options: Any) -> list[dict[str, Any]]:
    """`lakewriter test [NAME…]`: a report per job test. `names` is one test's name, or several."""
    names = [names] if isinstance(names, str) else list(names)
    return command("test", *names, **options)
