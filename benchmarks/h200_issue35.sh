#!/usr/bin/env bash
# Issue 35 on one H200 machine, in two calls of at most 9 minutes each (every step has a deadline):
#   bash benchmarks/h200_issue35.sh A   # 30-kernel throughput from cold caches; the cheat suite on CUDA (no
#                                      # verdict or flag changes); the device-basis repeat spread (5 kernels
#                                      # validated 3 more times); the --ncu round on 10 kernels
#   bash benchmarks/h200_issue35.sh B   # >= 100 kernels of the leaderboard corpus from cold caches
# Before either: the wheels the GPU image lacks in .whl/ and, for B, the corpus in .corpus/ (both ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl pydantic==2.13.4 pydantic_core==2.46.4 \
#     annotated-types==0.7.0 typing-inspection==0.4.2 nh3==0.3.8 plotly==7.1.0 detect-secrets==1.5.0 \
#     ghp-import==2.1.0 dulwich==1.2.21 google-re2==1.1.20251105
#   mkdir -p .corpus && cp -r ../shared/corpora/kernelbench-leaderboard-dev .corpus/
# and carry ".whl" (and ".corpus" for B). Outputs under $OUT (at most 8 files): commit the .txt reports.
set -u
PART=${1:?usage: bash benchmarks/h200_issue35.sh A|B}
OUT=${OUT:-/tmp/h200-issue35}
mkdir -p "$OUT"
BUDGET_S=${BUDGET_S:-530}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "wheels did not install"; exit 1; }
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
left() { echo $((BUDGET_S - SECONDS)); }

{
  date -u
  nproc
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch, sys; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1
  python3 -c "import pynvml; print('nvidia-ml-py', pynvml.__version__ if hasattr(pynvml, '__version__') else 'present')" 2>&1
  which ncu 2>&1
  git rev-parse --short HEAD 2>/dev/null || echo "(no git checkout)"
} > "$OUT/env.txt"

if [ "$PART" = A ]; then
  # 1. Throughput: 30 kernels, cold; the run's folder is kept for the rounds (its builds warm, results stored).
  # (a backstop beyond each deadline: a python step that outlives it is interrupted, then killed)
  rm -rf /tmp/r3
  timeout --signal=INT --kill-after=10 290 python3 benchmarks/validate_throughput.py --n "${N:-30}" --deadline-s 250 --keep /tmp/r3 \
    --out "$OUT/h200-validate-throughput.txt" --save "$OUT/throughput.json" > "$OUT/throughput.log" 2>&1
  echo "throughput exit $? after ${SECONDS} s" >> "$OUT/env.txt"
  # 2. The cheat suite on CUDA: every dishonest kernel caught, no false alarm, as in benchmarks/cheat_suite-h200.txt
  #    (CHEATS_S=0 skips it, e.g. when benchmarks/h200_round3.sh ran it on this code already).
  if [ "${CHEATS_S:-200}" -gt 0 ]; then
    timeout --signal=INT --kill-after=5 "${CHEATS_S:-200}" python3 benchmarks/cheat_suite.py --device cuda \
      --out "$OUT/cheat_suite-h200.txt" >> "$OUT/throughput.log" 2>&1
    echo "cheat suite exit $? after ${SECONDS} s" >> "$OUT/env.txt"
  fi
  # 3. Repeat spread (a third of what is left) and the Nsight round (the rest), on the kept builds.
  timeout --signal=INT --kill-after=10 "$(left)" \
    python3 benchmarks/validate_rounds.py /tmp/r3 --repeat 5 --times 3 --ncu 10 --deadline-s "$(( $(left) - 25 ))" \
    --out-repeat "$OUT/h200-repeat-spread.txt" --out-ncu "$OUT/h200-ncu-round.txt" > "$OUT/rounds.log" 2>&1
  echo "rounds exit $? after ${SECONDS} s" >> "$OUT/env.txt"
  tail -n 30 "$OUT/h200-validate-throughput.txt" 2>/dev/null
  grep -E "MISSED|FALSE ALARM|^dishonest:|^honest:|^target" "$OUT/cheat_suite-h200.txt" 2>/dev/null
  tail -n 3 "$OUT/h200-repeat-spread.txt" "$OUT/h200-ncu-round.txt" 2>/dev/null
elif [ "$PART" = B ]; then
  C=.corpus/kernelbench-leaderboard-dev
  [ -d "$C/runs" ] || { echo "no corpus at $C (copy ../shared/corpora/kernelbench-leaderboard-dev there and carry .corpus)"; exit 1; }
  timeout --signal=INT --kill-after=10 "$(left)" \
    python3 benchmarks/validate_throughput.py --corpus "$C/runs" --problems "$C/problems" --n "${N:-100}" --timeout-s 120 \
    --deadline-s "$(( $(left) - 25 ))" --out "$OUT/h200-validate-corpus.txt" --save "$OUT/corpus.json" > "$OUT/corpus.log" 2>&1
  echo "corpus exit $? after ${SECONDS} s" >> "$OUT/env.txt"
  tail -n 30 "$OUT/h200-validate-corpus.txt" 2>/dev/null
else
  echo "unknown part $PART (A or B)"; exit 2
fi
cat "$OUT/env.txt"
