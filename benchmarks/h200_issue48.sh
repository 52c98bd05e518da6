#!/usr/bin/env bash
# Issue 48 on one GPU machine, two calls of at most ~9.5 minutes:
#   bash benchmarks/h200_issue48.sh A   # the cheat suite and the public exploit corpus on CUDA, and the defences' cost
#   bash benchmarks/h200_issue48.sh B   # throughput: >= 100 dev-corpus kernels from cold caches
# Before either: the wheels the GPU image lacks in .whl/ (see benchmarks/h200_issue35.sh) and, for B, the corpus in
# .corpus/ (mkdir -p .corpus && cp -r ../shared/corpora/kernelbench-leaderboard-dev .corpus/); carry both.
set -u
PART=${1:?usage: bash benchmarks/h200_issue48.sh A|B}
OUT=${OUT:-/tmp/h200-issue48}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheels did not install"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{
  date -u; nproc
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch, sys; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1
} > "$OUT/env.txt"
step() {  # NAME LIMIT_S COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --signal=INT --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: exit $? after $((SECONDS - t0)) s" | tee -a "$OUT/env.txt"
}
if [ "$PART" = A ]; then
  step cost "${COST_S:-150}" python3 benchmarks/runtime_defences_cost.py --out "$OUT/runtime_defences_cost.txt"
  step exploits "${EXPLOITS_S:-200}" python3 benchmarks/exploit_corpus.py --device cuda --out "$OUT/exploit_corpus-gpu.txt"
  [ "${CHEATS_S:-200}" -gt 0 ] && step cheats "${CHEATS_S:-200}" python3 benchmarks/cheat_suite.py --device cuda --out "$OUT/cheat_suite-gpu.txt"
  cat "$OUT/runtime_defences_cost.txt" 2>/dev/null; tail -n 40 "$OUT/exploits.log"
  grep -E "MISSED|FALSE ALARM|BROKEN|^dishonest:|^honest:|^target" "$OUT/cheat_suite-gpu.txt" 2>/dev/null || tail -n 20 "$OUT/cheats.log"
elif [ "$PART" = B ]; then
  C=.corpus/kernelbench-leaderboard-dev
  [ -d "$C/runs" ] || { echo "no corpus at $C"; exit 1; }
  step corpus "${CORPUS_S:-560}" python3 benchmarks/validate_throughput.py --corpus "$C/runs" --problems "$C/problems" \
    --n "${N:-100}" --timeout-s 120 --deadline-s "${DEADLINE_S:-530}" --out "$OUT/validate-corpus.txt" --save "$OUT/corpus.json"
  tail -n 40 "$OUT/validate-corpus.txt" 2>/dev/null || tail -n 40 "$OUT/corpus.log"
fi
cat "$OUT/env.txt"
