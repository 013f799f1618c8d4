#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 10): `fuzz/run.sh [SECONDS] [TARGET...]`.
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install --locked cargo-fuzz`). New inputs
# go to fuzz/corpus/<target>/ (not committed); the committed seeds are in fuzz/seeds/<target>/.
# A crash stops with a non-zero exit and leaves its input in fuzz/artifacts/<target>/: turn it
# into a regression test in the normal suite, then fix it.
#
# Targets are built without a sanitizer (`--sanitizer none`): the fuzzed code is safe Rust, so
# panics are what the fuzzer looks for, and the build and the runs are several times faster.
# Set SKILLET_FUZZ_SANITIZER=address to build with AddressSanitizer instead.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-10}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
sanitizer="${SKILLET_FUZZ_SANITIZER:-none}"
jobs="${SKILLET_FUZZ_BUILD_JOBS:-2}"

# One build of all targets (they share every dependency).
CARGO_BUILD_JOBS="$jobs" cargo +nightly fuzz build --sanitizer "$sanitizer" -O

status=0
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    echo "== $target (${seconds}s)"
    log="$(mktemp)"
    if cargo +nightly fuzz run --sanitizer "$sanitizer" -O "$target" "corpus/$target" "seeds/$target" \
        -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        grep -E "^stat::number_of_executed_units|^stat::new_units_added|^stat::peak_rss_mb|Done [0-9]+ runs" "$log" || true
    else
        status=1
        tail -n 40 "$log"
        echo "!! $target FAILED: see fuzz/artifacts/$target/"
    fi
    rm -f "$log"
done
exit $status
