#!/usr/bin/env bash
# Loading 1,000 skills: `skillet --skills-dir DIR discover --json` over COUNT copies of the
# bundled `summarize` skill (input and output schemas, a strict template), release build.
#
#   bench/load-skills.sh                 # 1,000 copies, 10 timed runs (hyperfine if installed)
#   COUNT=200 RUNS=3 bench/load-skills.sh
#   SKILLET=path/to/skillet bench/load-skills.sh   # time another build (e.g. the one before)
#
# Each copy is renamed (`summarize-0001`, ...) because a skill's name must equal its directory
# name. The copies live in a temp dir removed on exit. Without hyperfine the script times each
# run with the shell's clock and prints the runs and their median.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-1000}
RUNS=${RUNS:-10}
TARGET=${CARGO_TARGET_DIR:-target}
SKILLET=${SKILLET:-$TARGET/release/skillet}

if [[ -z "${NO_BUILD:-}" && "$SKILLET" == "$TARGET/release/skillet" ]]; then
  echo "== build (release: skillet)"
  cargo build --release -p skillet --bin skillet
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SKILLS="$WORK/skills"
mkdir -p "$SKILLS"
echo "== $COUNT copies of skills/summarize in $SKILLS"
for i in $(seq -f '%04g' 1 "$COUNT"); do
  copy="$SKILLS/summarize-$i"
  cp -r skills/summarize "$copy"
  sed -i "s/^name: summarize$/name: summarize-$i/" "$copy/SKILL.md"
done

# One checked run first: every copy must load (no skipped skill), or the figure means nothing.
loaded=$("$SKILLET" --skills-dir "$SKILLS" discover --json 2>"$WORK/stderr" | grep -o '"name":"summarize-[0-9]*"' | wc -l)
if [[ "$loaded" -ne "$COUNT" ]]; then
  echo "error: $loaded of $COUNT skills were discovered" >&2
  head -20 "$WORK/stderr" >&2
  exit 1
fi
echo "== all $COUNT skills discovered; timing $RUNS runs"

if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs "$RUNS" --output=null \
    "$SKILLET --skills-dir $SKILLS discover --json"
  exit 0
fi

times=()
for _ in $(seq 1 "$RUNS"); do
  start=$(date +%s%N)
  "$SKILLET" --skills-dir "$SKILLS" discover --json >/dev/null 2>&1
  end=$(date +%s%N)
  times+=($(((end - start) / 1000000)))
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "runs (ms): ${times[*]}"
echo "median: $(echo "$sorted" | sed -n "$(((RUNS + 1) / 2))p") ms  min: $(echo "$sorted" | head -1) ms  max: $(echo "$sorted" | tail -1) ms"
