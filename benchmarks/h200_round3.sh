#!/usr/bin/env bash
# Issue 31's first GPU call on one H200 (at most ~560 s, 7 files under $OUT), from the repository root:
#   1. re-validate the sample data (data/, examples/kernelbench) with every check of this wave (check strength,
#      stateful references, checks incomplete, the basis rules), so the committed results carry them;
#   2. the check-strength table over KernelBench levels 1-3 (benchmarks/check_strength.py);
#   3. the cheat suite on CUDA (benchmarks/cheat_suite.py).
# The machine lacks pydantic, plotly, nh3, detect-secrets, ghp-import, dulwich and google-re2: they travel as
# wheels in .whl/ (see the device notes) and are installed into /tmp/site first.
#     bash benchmarks/h200_round3.sh
set -u
OUT=${OUT:-/tmp/h200-round3}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1

step() {  # NAME LIMIT_S COMMAND...: run it under a time limit, its output in $OUT/NAME.log, and say how it ended
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --signal=INT --kill-after=15 "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -4 "$OUT/$name.log"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
  python3 -c "import torch, sys; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  nproc
} 2>&1
step data "${DATA_S:-170}" python3 -m reporter.cli validate data --force
step examples "${EXAMPLES_S:-60}" python3 -m reporter.cli validate examples/kernelbench --force
step strength "${STRENGTH_S:-200}" python3 benchmarks/check_strength.py --per-gpu 6 --out "$OUT/check_strength.txt"
step cheats "${CHEATS_S:-120}" python3 benchmarks/cheat_suite.py --device cuda --out "$OUT/cheat_suite-h200.txt"
tar czf "$OUT/validation.tgz" data/validation examples/kernelbench/validation
echo "done after $SECONDS s"
