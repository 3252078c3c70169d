#!/usr/bin/env bash
# The report benchmark: DAYS daily partitions (default 3650: ten years) of three jobs — the
# partition-state benchmark's `daily_orders`, `daily_statuses` reading the same raw orders, and
# `weekly_revenue` reading seven days of `daily_orders` — written by one `backfill --all`, then
# the time `lakewriter report` takes to draw every partition of the three, and `status` of each
# job for comparison (three runs each).
#   scripts/bench-report.sh [DAYS]
# Builds with the release profile; BIN=DIR uses the `lakewriter` and `state_bench_data` built
# in DIR (and DIR/examples) instead. KEEP=DIR lays the lakehouse out in DIR and keeps it (a DIR
# that already holds one is measured again as it is). Timings are for reading, never for asserting.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${1:-3650}

if [[ -z "${BIN:-}" ]]; then
  cargo build --release -q -p lakewriter-cli --bin lakewriter
  cargo build --release -q -p lakewriter-datagen --example state_bench_data
  BIN=${CARGO_TARGET_DIR:-target}/release
fi
if [[ -n "${KEEP:-}" ]]; then
  dir=$KEEP
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/lakewriter-bench-report.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi
lw() { "$BIN/lakewriter" --project "$dir/lakewriter.toml" "$@"; }

if [[ ! -d "$dir/lake/analytics/weekly_revenue" ]]; then
  read -r from to files < <("$BIN/examples/state_bench_data" "$dir" "$days")
  cat >> "$dir/lakewriter.toml" <<'EOF'

[jobs.daily_statuses]
target = "analytics.daily_statuses"
write = "overwrite_partition"
partition_by = "dt"
sql = "SELECT status, COUNT(*) AS orders, SUM(amount) AS amount, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY status"

[jobs.weekly_revenue]
target = "analytics.weekly_revenue"
write = "overwrite_partition"
partition_by = "dt"
sql = """
SELECT customer_id, SUM(orders) AS orders_7d, SUM(revenue) AS revenue_7d, $dt AS dt
FROM analytics.daily_orders
WHERE dt BETWEEN $dt - INTERVAL '6 days' AND $dt
GROUP BY customer_id
"""
EOF
  start=$(date +%s.%N)
  lw -q --no-progress backfill --all --from "$from" --to "$to" --parallel 2 > /dev/null
  printf '%-44s %8.1f s\n' "backfill --all: 3 × $days partitions ($files raw files)" \
    "$(echo "$(date +%s.%N) - $start" | bc)"
fi

measure() { # label, lakewriter args…
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$BIN/lakewriter" --project "$dir/lakewriter.toml" "$@" \
    > "$dir/out" 2> "$dir/err"
  read -r seconds user sys kib < "$dir/time"
  printf '%-36s %6.2f s wall %6.2f s CPU %5d MiB\n' "$label" "$seconds" "$(echo "$user + $sys" | bc)" "$((kib / 1024))"
}
for run in 1 2 3; do
  measure "report #$run" report --out "$dir/report.html"
done
for job in daily_orders daily_statuses weekly_revenue; do
  measure "status $job" status "$job" --json
done
echo "page: $(du -h "$dir/report.html" | cut -f1)"
