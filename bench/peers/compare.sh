#!/usr/bin/env bash
# Skillet against PydanticAI and the OpenAI Agents SDK on the same server (README.md here).
#
#   bench/peers/compare.sh --mock      the three-turn task on mock-llm: request bytes and tokens
#                                      per turn for each system (builds skillet and mock-llm)
#   bench/peers/compare.sh --setup     only prepare the venv and the offline tokenizer (CI)
#   ... --rig                          also rig's typed agent (builds rig/ first: a few minutes
#                                      the first time, in rig/target; not in CI)
#   bench/peers/compare.sh --upstream URL --model NAME [--skillet BIN] [--option KEY=TOML]... SKILL...
#                                      the skills' eval cases by each system on a real server
#
# The peers run in their own venv (.venv-peers at the repository root, or $SKILLET_PEERS_VENV),
# created on first use from requirements.txt here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${SKILLET_PEERS_VENV:-$root/.venv-peers}"
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the checkout

if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi

if [ "${1:-}" = "--setup" ]; then
  "$venv/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import tokens; tokens.o200k()' "$here"
  echo "peers venv ready: $venv"
  exit 0
fi
if [ "${1:-}" = "--mock" ]; then
  (cd "$root" && cargo build -q -p mock-llm --bin mock-llm -p skillet --bin skillet)
fi
# `--rig`: build the rig peer (its own workspace and target dir, one job to spare the shared
# CPU) and hand compare.py its binary.
args=()
for arg in "$@"; do
  if [ "$arg" = "--rig" ]; then
    cargo build -q -j 1 --manifest-path "$here/rig/Cargo.toml" --target-dir "$here/rig/target"
    args+=(--rig "$here/rig/target/debug/rig-peer")
  else
    args+=("$arg")
  fi
done
exec "$venv/bin/python" "$here/compare.py" "${args[@]}"
