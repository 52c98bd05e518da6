#!/usr/bin/env bash
# Issue 42 on one GPU machine: part PART (0-based) of OF of the calibration runs validated (our audit, then the
# replay under kernelbench-2025), the results folder packed into $OUT/validation-PART.tar.gz.
#   python benchmarks/rules_agreement.py prepare .device/rules-data       # here, first (DATA in an ignored folder)
#   carry [".whl", ".device/rules-data"]; bash benchmarks/rules_agreement.sh PART OF
# then unpack each part's tar over .device/rules-data and run `rules_agreement.py report`.
# Wheels: as in benchmarks/h200_issue35.sh (the GPU image lacks pydantic, nh3, detect-secrets, dulwich, re2).
set -u
PART=${1:?usage: bash benchmarks/rules_agreement.sh PART OF}
OF=${2:?usage: bash benchmarks/rules_agreement.sh PART OF}
DATA=${DATA:-.device/rules-data}
OUT=${OUT:-/tmp/rules-agreement}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheels did not install"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 benchmarks/rules_agreement.py device "$DATA" "$PART" "$OF" --budget-s "${BUDGET_S:-470}" 2>&1 | tee "$OUT/log-$PART.txt"
tar -czf "$OUT/validation-$PART.tar.gz" -C "$DATA" validation
ls -la "$OUT"
