#!/usr/bin/env bash
# Prints `skillet eval --trigger` of bundled skills on the real GGUF model (also the judge of
# their expectations), served by the C++ llama-server
# that .ci/llama.sh built. A 270M base model fails many cases: failures are printed, not fatal
# (eval exits 1); anything else (a usage, setup or protocol error: exit >= 2) fails.
#
# Usage: .ci/eval-gguf.sh ENV_FILE SKILL...
set -euo pipefail
env_file="${1:?usage: .ci/eval-gguf.sh ENV_FILE SKILL...}"
shift
# shellcheck disable=SC1090
source "$env_file"
work=$(mktemp -d)
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

LD_LIBRARY_PATH="$SKILLET_LLAMA_CPP_LIB_PATH" "$SKILLET_LLAMA_SERVER" -m "$SKILLET_GGUF_MODEL" \
  --host 127.0.0.1 --port 0 --jinja -c 4096 -t "$(nproc)" --parallel 1 --no-webui \
  >"$work/server.log" 2>&1 &
server_pid=$!
base=""
for _ in $(seq 1 180); do
  base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/server.log" | head -1 || true)
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "llama-server exited"; exit 1; }
  sleep 1
done
[ -n "$base" ] || { echo "llama-server did not start"; exit 1; }

cat >"$work/skillet.toml" <<EOF
default_provider = "llama"

[providers.llama]
kind = "openai-compatible"
model = "gemma-3-270m-q4_k_m"
base_url = "$base/v1"

[providers.llama.options]
max_tokens = 256
temperature = 0
seed = 7
read_timeout_ms = 300000
tool_calling = "prompted"
EOF

skillet="${CARGO_TARGET_DIR:-target}/debug/skillet"
[ -x "$skillet" ] || cargo build -q --bin skillet
for skill in "$@"; do
  set +e
  "$skillet" --config "$work/skillet.toml" --skills-dir skills eval "$skill" --concurrency 1 --trigger \
    --json-out "$work/$skill.eval.json"
  rc=$?
  set -e
  case "$rc" in
    0|1) ;;
    *) echo "skillet eval $skill on the GGUF model exited $rc"; exit 1 ;;
  esac
  # The real model judged its own runs' expectations: print every grade (passed or not).
  python3 - "$work/$skill.eval.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for model in report["models"]:
    for run in model["runs"]:
        for grade in run.get("expectations", []):
            verdict = "passed" if grade["passed"] else ("FAILED" if grade["graded"] else "ungraded")
            print(f"  judge ({model.get('judge')}) · {run['case']} #{run['repeat']}: {verdict}: "
                  f"{grade['text']} — {grade['evidence']}")
PY
done

# Skillet vs its peers (bench/peers/): the same skills' eval cases by Skillet, PydanticAI and the
# OpenAI Agents SDK on this server, each request counted by a logging proxy (valid and correct
# answers, turns, request bytes and o200k tokens per turn). Printed, not fatal: a peer that
# crashes counts as no valid answer with its error's first line, and a comparison that cannot run
# at all is reported here, not failed.
echo
echo "Skillet vs peers, the three-turn task on mock-llm (bench/peers/compare.sh --mock):"
bench/peers/compare.sh --mock || echo "  the mock comparison did not complete (printed, not fatal)"
echo
echo "Skillet vs peers on the GGUF model (bench/peers/compare.sh):"
if ! bench/peers/compare.sh --upstream "$base" --model gemma-3-270m-q4_k_m --skillet "$skillet" \
  --option max_tokens=256 --option temperature=0 --option seed=7 --option read_timeout_ms=300000 \
  --option 'tool_calling="prompted"' "$@"; then
  echo "  the peer comparison did not complete (printed, not fatal)"
fi
