#!/usr/bin/env bash
# Reproduces every figure in BENCHMARKS.md. Run from anywhere:
#
#   bench/run-all.sh            # full set (about 15 minutes on 2 cores, after the build)
#   RUNS=1 QUICK=1 bench/run-all.sh   # smoke run with small N
#
# Writes JSON summaries and logs into bench/results/ (override with OUT=DIR) and prints the
# tables. Honours CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
OUT=${OUT:-bench/results}
TARGET=${CARGO_TARGET_DIR:-target}
if [[ -n "${QUICK:-}" ]]; then N=200; N10K=1000; C10K=1000; else N=2000; N10K=10000; C10K=10000; fi
mkdir -p "$OUT"

echo "== build (release: skillet-bench, and skillet for wire/stdio)"
cargo build --release -p skillet-bench -p skillet --bin skillet-bench --bin skillet
BIN="$TARGET/release/skillet-bench"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "cpu: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "memory: $(grep MemTotal /proc/meminfo | awk '{print $2/1024/1024 " GiB"}')"
  echo "kernel: $(uname -r)"
  echo "open files limit: $(ulimit -n) (hard $(ulimit -Hn))"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"

echo "== 1. overhead: N=$N calls, C=16, no mock latency, $RUNS runs per mode (interleaved)"
"$BIN" --mode raw,replay,engine,wire,stdio,mcp,mcp-http,relay,stdio-relay,mcp-relay -n "$N" -c 16 --runs "$RUNS" --save "$OUT/overhead.json" \
  | tee "$OUT/overhead.txt"

echo "== 2. concurrency: N=$N10K calls all at once, 500 ms mock latency per turn (ideal: 3 x 0.5 s)"
# The mock runs as a child: one process cannot hold both ends of 10,000 sockets under a
# 20,000 open-files limit. wire needs two sockets per call inside the skillet child, so it
# runs at 9,000.
"$BIN" --mode raw,engine,stdio --mock child -n "$N10K" -c "$C10K" --latency-ms 500 --runs 3 \
  --save "$OUT/concurrency.json" | tee "$OUT/concurrency.txt"
echo "== 2a. the same over HTTP/2 (prior knowledge): every mode's calls share one connection to the mock"
"$BIN" --mode raw,engine,stdio --mock child -n "$N10K" -c "$C10K" --latency-ms 500 --runs 3 --http2 \
  --save "$OUT/concurrency-http2.json" | tee "$OUT/concurrency-http2.txt"
W=$(( C10K < 9000 ? C10K : 9000 ))
"$BIN" --mode wire --mock child -n "$W" -c "$W" --latency-ms 500 --runs 3 \
  --save "$OUT/concurrency-wire.json" | tee "$OUT/concurrency-wire.txt"

echo "== 2b. the same with 5 s of mock latency (ideal: 3 x 5 s): engine, 1 run"
"$BIN" --mode engine --mock child -n "$N10K" -c "$C10K" --latency-ms 5000 --runs 1 \
  --save "$OUT/concurrency-5s.json" | tee "$OUT/concurrency-5s.txt"

echo "== 3. mock-llm throughput (requests/s)"
cargo run --release -q -p mock-llm --example throughput -- 3 16 | tee "$OUT/mock-throughput.txt"

echo "== 4. micro-benchmarks"
cargo bench -q -p skillet-bench --bench micro 2>&1 | tee "$OUT/micro.txt"
cargo bench -q -p skillet-engine --bench load_skills 2>&1 | tee "$OUT/load-skills.txt"
if [[ -f engine/benches/engine_overhead.rs ]]; then
  cargo bench -q -p skillet-engine --bench engine_overhead 2>&1 | tee "$OUT/engine-overhead.txt"
fi

if [[ -n "${PROFILE:-}" ]] && perf stat -e instructions true >/dev/null 2>&1; then
  echo "== 5. profile of engine mode (perf; mock thread shown separately as comm mock-llm)"
  perf record -F 499 --call-graph dwarf,16384 -o "$OUT/perf-engine.data" -- \
    "$BIN" --one --mode engine -n 1000 -c 16 >/dev/null
  perf report -i "$OUT/perf-engine.data" --children --comm tokio-rt-worker --sort symbol \
    --stdio --no-call-graph 2>/dev/null | head -120 > "$OUT/perf-engine.txt"
elif [[ -n "${PROFILE:-}" ]] && command -v valgrind >/dev/null; then
  # No hardware counters (VMs often have none): count instructions with callgrind instead,
  # robust on a busy machine. The mock runs as its own process so only the engine is counted;
  # two call counts are differenced so start-up cancels out of the per-turn figure.
  echo "== 5. instruction profile of engine and raw modes (callgrind)"
  rm -f "$OUT/mock.in" && mkfifo "$OUT/mock.in"
  "$BIN" mock < "$OUT/mock.in" > "$OUT/mock.url" & MOCK_PID=$!
  exec 4> "$OUT/mock.in"   # the mock stops at end of stdin: when fd 4 closes
  until [[ -s "$OUT/mock.url" ]]; do sleep 0.1; done
  MOCK_URL=$(head -1 "$OUT/mock.url")
  for mode in engine raw; do
    for n in 100 300; do
      valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind-$mode-$n.out" \
        "$BIN" --one --mode "$mode" -n "$n" -c 4 --mock-url "$MOCK_URL" >/dev/null 2>&1
    done
    a=$(grep -m1 '^summary:' "$OUT/callgrind-$mode-100.out" | cut -d' ' -f2)
    b=$(grep -m1 '^summary:' "$OUT/callgrind-$mode-300.out" | cut -d' ' -f2)
    echo "$mode: $(( (b - a) / 600 )) instructions per turn" | tee -a "$OUT/callgrind.txt"
  done
  callgrind_annotate --inclusive=yes "$OUT/callgrind-engine-300.out" 2>/dev/null | head -80 \
    > "$OUT/callgrind-engine.txt"
  exec 4>&-
  wait "$MOCK_PID"

  # The servers of the stdio transports, counted in the `skillet serve` child alone. The bench
  # closes the child's stdin and then kills it: the wrapper runs skillet under callgrind as a
  # child of its own, so the kill ends the wrapper and skillet ends at the end of its input,
  # writing its counts (forked children write files of their own: the largest is the server).
  echo "== 5b. instructions per turn of the stdio and mcp servers (callgrind on the child)"
  WRAP="$OUT/callgrind-serve.sh"
  printf '#!/usr/bin/env bash\nvalgrind --tool=callgrind --callgrind-out-file="$CG_OUT.%%p" %q "$@" <&0 &\nwait\n' \
    "$(cd "$(dirname "$BIN")" && pwd)/skillet" > "$WRAP"
  chmod +x "$WRAP"
  for mode in stdio mcp; do
    for n in 100 300; do
      rm -f "$OUT/callgrind-serve-$mode-$n".out.*
      CG_OUT="$OUT/callgrind-serve-$mode-$n.out" "$BIN" --mode "$mode" -n "$n" -c 16 --runs 1 \
        --skillet "$WRAP" >/dev/null
      while pgrep -f -- "callgrind-serve-$mode-$n.out" >/dev/null; do sleep 0.2; done
    done
    count() { ls -S "$OUT/callgrind-serve-$mode-$1".out.* | head -1 | xargs grep -m1 '^summary:' | cut -d' ' -f2; }
    a=$(count 100); b=$(count 300)
    echo "serve ($mode): $(( (b - a) / 600 )) instructions per turn" | tee -a "$OUT/callgrind.txt"
  done
fi

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"
