#!/bin/sh
# The cpu_matmul demo, from the repository root: sh examples/cpu_matmul/run.sh
# PYTHON: the interpreter (default python); MAX: --max-measurements (default 2000).
set -eu
PY=${PYTHON:-python}
DIR=examples/cpu_matmul
SPACE=$DIR/space.py
$PY $DIR/peak.py
SETS=$($PY $DIR/bound.py --settings)
BOUND=$($PY $DIR/bound.py --print)
for backend in reference c cpsat; do $PY -m solverspace count $SPACE $SETS --backend $backend; done
if $PY -m solverspace tune --help >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $PY -m solverspace tune $SPACE $SETS --bound "$BOUND" \
        --measure "$PY $DIR/measure.py {tile_i} {tile_j} {tile_k} {unroll_i} {unroll_j} {order}" \
        --max-measurements "${MAX:-2000}" --db "${DB:-/tmp/cpu_matmul.sqlite}" --explain
else
    echo "solverspace tune is not available: checking the bound on 20 sampled configurations instead"
    $PY -m solverspace sample $SPACE $SETS -n 20 --seed 1 -o /tmp/cpu_matmul_sample.csv
    $PY $DIR/bound.py /tmp/cpu_matmul_sample.csv --machine
fi
