#!/usr/bin/env bash
# Checks that no source file under crates/*/src/ is over 400 lines (see ARCHITECTURE.md, "Size").
# Test files are exempt: files named tests.rs and files under a tests/ folder. No other exception.
# Prints nothing and exits 0 when every file is within the limit; else lists each file, exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=400
over=$(find crates/*/src -type f -name '*.rs' ! -name tests.rs ! -path '*/tests/*' -print0 \
  | xargs -0 -r wc -l | awk -v limit="$limit" '$2 != "total" && $1 > limit { print $2 ": " $1 " lines" }' | sort)
if [ -n "$over" ]; then
  echo "error: source files over $limit lines (split them; tests.rs and tests/ are exempt):"
  echo "$over"
  exit 1
fi
