#!/usr/bin/env bash
# Issue 50, item 4: the whole suite (slow tests included) N times in a row on one commit, each run in its own
# random order (pytest-randomly, seed recorded so a failing order can be replayed), then once in file order.
# Runs in a detached worktree of COMMIT so edits in the main checkout cannot change what is tested.
# Usage: bash benchmarks/test_suite_repeat.sh COMMIT N [NOTE]
set -uo pipefail
cd "$(dirname "$0")/.."
python -c "import pytest_randomly" 2>/dev/null || { echo "needs pytest-randomly (pip install pytest-randomly)" >&2; exit 2; }
out=$PWD/benchmarks/test-suite-repeat.txt
commit=$(git rev-parse --short=12 "$1")
runs=${2:-10}
tree=$(mktemp -d /tmp/suite-XXXXXX)
git worktree add -q --detach "$tree" "$commit"
trap 'git worktree remove --force "$tree"' EXIT
cd "$tree"
export PYTHONPATH=$tree  # this commit's reporter, not the editable install's
{
  echo "commit: $commit, $(nproc) cores, no GPU; command: python -m pytest -q -p no:cacheprovider -n auto -p randomly --randomly-seed=SEED"
  [ -n "${3:-}" ] && echo "note: $3"
} >>"$out"
green=0
for i in $(seq 1 $((runs + 1))); do
  if [ "$i" -le "$runs" ]; then seed=$(( (RANDOM << 15) | RANDOM )); order=(-p randomly "--randomly-seed=$seed"); label="seed $seed"
  else order=(-p no:randomly); label="file order (pytest-randomly off)"; fi
  log=$(mktemp); load=$(cut -d' ' -f1-3 /proc/loadavg); started=$(date -u +%FT%TZ); SECONDS=0
  python -m pytest -q -p no:cacheprovider -n auto "${order[@]}" >"$log" 2>&1; rc=$?
  summary=$(grep -E '(passed|failed|error)' "$log" | tail -1)
  [ "$rc" -eq 0 ] && green=$((green + 1)) || green=0
  printf 'run %2d  %s  %s  exit %d  wall %4d s  load before %s  %s\n' "$i" "$started" "$label" "$rc" "$SECONDS" "$load" "$summary" >>"$out"
  grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/        /' >>"$out" || true
  rm -f "$log"
done
echo "consecutive green at the end: $green of $((runs + 1))" >>"$out"
echo >>"$out"
