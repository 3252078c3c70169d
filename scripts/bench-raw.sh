#!/usr/bin/env bash
# The raw-layer benchmark: what opening a raw dataset costs as its history grows. Lays out the
# demo's raw orders for 30 days and for DAYS days (default 3650: ten years), then times commands
# that read one day: `plan` of the newest day (opens raw.orders and plans that day) and `run` of
# it (the same, plus the write). The two figures should not depend on the history.
#   scripts/bench-raw.sh [DAYS]
# Builds with the release profile; LAKEWRITER_BIN=path/to/lakewriter measures another build.
# Timings are for reading, never for asserting.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${1:-3650}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lakewriter-bench-raw.XXXXXX")
trap 'rm -rf "$dir"' EXIT

target=${CARGO_TARGET_DIR:-target}
if [[ -z "${LAKEWRITER_BIN:-}" ]]; then
  cargo build --release -q -p lakewriter-cli --bin lakewriter
  LAKEWRITER_BIN=$target/release/lakewriter
fi
cargo build --release -q -p lakewriter-datagen --example state_bench_data

for n in 30 "$days"; do
  read -r _ to files < <("$target/release/examples/state_bench_data" "$dir/d$n" "$n")
  for what in plan run; do
    for round in 1 2 3; do
      rm -rf "$dir/d$n/lake/analytics"
      case $what in
        plan) args=(plan daily_orders --from "$to" --to "$to") ;;
        run) args=(run daily_orders --dt "$to") ;;
      esac
      /usr/bin/time -f "%e %M" -o "$dir/time" "$LAKEWRITER_BIN" --project "$dir/d$n/lakewriter.toml" -q \
        --no-progress "${args[@]}" > /dev/null
      read -r seconds kib < "$dir/time"
      printf '%-5s days (%5s raw files)  %-4s of the newest day  #%d  %5.2f s  %4d MiB\n' \
        "$n" "$files" "$what" "$round" "$seconds" "$((kib / 1024))"
    done
  done
done
