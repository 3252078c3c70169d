#!/usr/bin/env bash
# Checks that dependencies point one way (see ARCHITECTURE.md):
#   core, storage <- compute <- delta <- lakewriter <- lakewriter-cli (which also uses datagen for the
#   demo, and with the `ballista` feature lakewriter-engine, which sits on compute, delta and storage)
# and that only lakewriter-delta depends on deltalake and the Delta kernel (buoyant_kernel).
set -euo pipefail
cd "$(dirname "$0")/.."

direct() { cargo tree --offline -e normal -p "$1" --depth 1 --prefix none | tail -n +2 | awk '{print $1}' | sort -u; }
anywhere() { cargo tree --offline -e normal -p "$1" --prefix none | awk '{print $1}' | sort -u; }

fail=0
# crate | workspace crates it may depend on | crates it must not depend on directly | ... nor at all
check() {
  local crate=$1 allowed=$2 not_direct=$3 not_at_all=$4 deps all
  deps=$(direct "$crate")
  all=$(anywhere "$crate")
  for dep in $(grep '^lakewriter' <<<"$deps" || true); do
    if ! grep -qx "$dep" <<<"$(tr ' ' '\n' <<<"$allowed")"; then
      echo "error: $crate depends on $dep (allowed: ${allowed:-none})"; fail=1
    fi
  done
  for dep in $not_direct; do
    if grep -qx "$dep" <<<"$deps"; then echo "error: $crate must not depend on $dep"; fail=1; fi
  done
  for dep in $not_at_all; do
    if grep -qx "$dep" <<<"$all"; then echo "error: $crate must not depend, even indirectly, on $dep"; fail=1; fi
  done
}

check lakewriter-core     ""                                          ""                      "tokio deltalake datafusion object_store arrow parquet"
check lakewriter-storage  ""                                          ""                      "deltalake datafusion arrow parquet"
check lakewriter-datagen  "lakewriter-core"                           ""                      "tokio deltalake datafusion"
check lakewriter-compute  "lakewriter-core"                           ""                      "deltalake buoyant_kernel"
check lakewriter-delta    "lakewriter-core lakewriter-storage lakewriter-compute" ""          ""
check lakewriter-engine   "lakewriter-compute lakewriter-delta lakewriter-storage" "deltalake buoyant_kernel" ""
check lakewriter          "lakewriter-core lakewriter-storage lakewriter-compute lakewriter-delta" "deltalake buoyant_kernel clap indicatif tracing-subscriber lakewriter-datagen" ""
check lakewriter-cli      "lakewriter lakewriter-datagen lakewriter-engine" "deltalake buoyant_kernel datafusion"  ""

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "dependency direction: ok"
