#!/usr/bin/env bash
# The merge benchmark: a TARGET_ROWS-row dimension (initial load), then a BATCH_ROWS-row batch of
# changes merged into it. Prints wall time and peak memory (RSS) of each `lakewriter run`.
#   scripts/bench-merge.sh [TARGET_ROWS] [BATCH_ROWS]      (defaults: 5000000 50000)
# Builds with the release profile. Timings are for reading, never for asserting.
set -euo pipefail
cd "$(dirname "$0")/.."
target_rows=${1:-5000000}
batch_rows=${2:-50000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lakewriter-bench-merge.XXXXXX")
trap 'rm -rf "$dir"' EXIT

cargo build --release -q -p lakewriter-cli --bin lakewriter
cargo build --release -q -p lakewriter-datagen --example merge_bench_data
bin=${CARGO_TARGET_DIR:-target}/release
"$bin/examples/merge_bench_data" "$dir" "$target_rows" "$batch_rows"

measure() { # label, lakewriter args…
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin/lakewriter" --project "$dir/lakewriter.toml" --json "$@" > "$dir/out"
  read -r seconds kib < "$dir/time"
  local changes
  changes=$(head -n 1 "$dir/out" | sed -n 's/.*"changes":\({[^}]*}\).*/\1/p')
  printf '%-34s %8.1f s %8d MiB  %s\n' "$label" "$seconds" "$((kib / 1024))" "$changes"
}
measure "initial load ($target_rows rows)" run customers --dt 2026-01-01
measure "merge $batch_rows changes" run customers --dt 2026-01-02
measure "replay of the same batch" run customers --dt 2026-01-02
