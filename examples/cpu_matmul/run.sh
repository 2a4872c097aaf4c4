#!/bin/sh
# The cpu_matmul demo, from the repository root: sh examples/cpu_matmul/run.sh
# PYTHON: the interpreter (default python); MAX: --max-measurements (default 3000); DB: the database.
set -eu
PY=${PYTHON:-python}
DIR=examples/cpu_matmul
SPACE=$DIR/space.py
$PY $DIR/peak.py                      # writes machine.json, which space.py reads
for backend in reference c cpsat; do $PY -m solverspace count $SPACE --backend $backend; done
$PY -m solverspace tune $SPACE \
    --measure "$PY $DIR/measure.py {tile_i} {tile_j} {tile_k} {unroll_i} {unroll_j} {order}" \
    --max-measurements "${MAX:-3000}" --db "${DB:-/tmp/cpu_matmul.sqlite}" --explain
