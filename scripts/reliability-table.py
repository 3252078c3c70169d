"""Turns the figures the fault scenarios record (JSON Lines, see tests/e2e/support/figures.rs) into the
Markdown table of docs/reliability.md.

    reliability-table.py FIGURES.jsonl TRIALS SEED
"""

import json
import sys


def counts(by_name):
    return ", ".join(f"{name} {n}" for name, n in sorted(by_name.items()))


def main(path, trials, seed):
    with open(path) as f:
        rows = sorted((json.loads(line) for line in f if line.strip()), key=lambda r: r["test"])
    print("| Scenario | Trials | Phases or faults hit | Outcomes | Rows lost | Duplicate rows | Partial partitions visible | Reproduce |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        command = f"`scripts/soak -n {trials} -s {seed} {r['test']}`"
        print(
            f"| {r['scenario']} | {r['trials']} | {counts(r['hits'])} | {counts(r['outcomes'])} "
            f"| {r['rows_lost']} | {r['duplicate_rows']} | {r['partial_partitions']} | {command} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:4])
