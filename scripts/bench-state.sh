#!/usr/bin/env bash
# The partition-state benchmark: DAYS daily partitions (default 3650: ten years) of the demo's
# `daily_orders` job, written by one backfill (so the log has DAYS commits and a checkpoint every
# 100), then the time `lakewriter status` takes to read the state of every partition:
#   - over one day: reading the state of all DAYS partitions from the log, plus one plan;
#   - over every day: that, plus planning and fingerprinting each partition's inputs.
#   scripts/bench-state.sh [DAYS]
# Builds with the release profile. Timings are for reading, never for asserting.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${1:-3650}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lakewriter-bench-state.XXXXXX")
trap 'rm -rf "$dir"' EXIT

cargo build --release -q -p lakewriter-cli --bin lakewriter
cargo build --release -q -p lakewriter-datagen --example state_bench_data
bin=${CARGO_TARGET_DIR:-target}/release
read -r from to files < <("$bin/examples/state_bench_data" "$dir" "$days")
lw() { "$bin/lakewriter" --project "$dir/lakewriter.toml" "$@"; }

start=$(date +%s.%N)
lw -q --no-progress backfill daily_orders --from "$from" --to "$to" --parallel 2 > /dev/null
printf '%-44s %8.1f s\n' "backfill of $days partitions ($files raw files)" "$(echo "$(date +%s.%N) - $start" | bc)"
log="$dir/lake/analytics/daily_orders/_delta_log"
echo "log: $(ls "$log" | grep -c '\.json$') commits, $(ls "$log" | grep -c 'checkpoint') checkpoint files"

measure() { # label, lakewriter args…
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin/lakewriter" --project "$dir/lakewriter.toml" --json -v "$@" \
    > "$dir/out" 2> "$dir/err"
  read -r seconds kib < "$dir/time"
  local read_ms
  read_ms=$(sed -n 's/.*elapsed_ms=\([0-9]*\).*partition state read.*/\1/p; s/.*partition state read.*elapsed_ms=\([0-9]*\).*/\1/p' "$dir/err" | head -n 1)
  printf '%-40s %6.2f s (state read %4s ms) %5d MiB  %s\n' "$label" "$seconds" "$read_ms" "$((kib / 1024))" \
    "$(tail -n 1 "$dir/out")"
}
for run in 1 2 3; do
  measure "status, 1 day (state of all $days) #$run" status daily_orders --from "$to" --to "$to"
done
measure "status, all $days days" status daily_orders
