#!/usr/bin/env bash
# Times the README's test command (issue 25: at most 5 minutes on 2 cores) and writes what it printed last,
# the pytest summary line with its duration, beside the machine's load into benchmarks/test-suite-time.txt.
# The load matters: on a machine others are using, the same suite takes longer; the figures say how busy it was.
# Usage: bash benchmarks/test_suite_time.sh [NOTE]
set -uo pipefail
cd "$(dirname "$0")/.."
out=benchmarks/test-suite-time.txt
log=$(mktemp)
commit="$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo '+changes')"  # before this file changes
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%FT%TZ)
SECONDS=0
python -m pytest -q -n auto -m "not slow" >"$log" 2>&1
rc=$?
wall=$SECONDS
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
summary=$(grep -E '(passed|failed|error)' "$log" | tail -1)
{
  echo "command: python -m pytest -q -n auto -m \"not slow\"   (README.md, second command)"
  echo "commit: $commit"
  echo "started: $started, on $(nproc) cores, no GPU"
  echo "load average (1, 5, 15 min) before: $load_before; after: $load_after"
  echo "exit status: $rc, wall: ${wall} s"
  echo "summary: $summary"
  [ -n "${1:-}" ] && echo "note: $1"
  grep -E '^(FAILED|ERROR) ' "$log" || true
  echo
} >>"$out"
tail -n 12 "$out"
rm -f "$log"
exit "$rc"
