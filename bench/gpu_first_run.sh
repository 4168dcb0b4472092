#!/usr/bin/env bash
# The first-GPU kit (issue 23, item 7): one command for the first time a GPU is available.
#
#   bash bench/gpu_first_run.sh            on a machine with an NVIDIA GPU, from the repository root
#   bash bench/gpu_first_run.sh --quick    the same in a short device window (every op's cuda samples,
#                                          the report without its pdist section)
#   bash bench/gpu_first_run.sh --dry-run  the same steps on the emulated device at tiny sizes (~1 min)
#
# Steps: (1) the test suite's cuda cases on the real device; (2) python -m bench.report (GB/s and
# TFLOP/s, torch and CuPy as peers when importable); (3) the traffic model's projection for this
# GPU next to the measured times, with the model's error (python -m bench.model --compare). The
# model counts traffic on the emulated device (a CPU process with TRITENSOR_EMULATE_CUDA=1, a few
# minutes) in the background while the GPU runs steps 1 and 2, so it costs no device time. Each step's output goes
# to $OUT (default build/gpu_first_run/<date>), and a dated section with the device, the commit, the
# test summary, the report and the comparison is appended to bench/RESULTS.md ($RESULTS; a dry run
# writes to $OUT/RESULTS.md unless RESULTS is set). A step that fails is recorded as failed and the
# next one still runs; the exit status is that of the first failed step.
#
# Environment: PYTHON (default python), JOBS (pytest workers, default 16; 0 in a dry run), TESTS
# (pytest selection, default: every test of tests/ whose id names cuda), REPORT_ARGS / MODEL_ARGS
# (extra arguments of bench.report / bench.model), TEST_TIMEOUT / REPORT_TIMEOUT / MODEL_TIMEOUT
# (seconds), OUT, RESULTS.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
DRY=0
QUICK=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY=1 ;;
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python}
STAMP=$(date -u +%Y-%m-%dT%H%MZ)
OUT=${OUT:-$ROOT/build/gpu_first_run/$STAMP}
mkdir -p "$OUT"
if [ "$DRY" = 1 ]; then
  export TRITENSOR_EMULATE_CUDA=1
  RESULTS=${RESULTS:-$OUT/RESULTS.md}
  [ -f "$RESULTS" ] || cp "$ROOT/bench/RESULTS.md" "$RESULTS"
  TESTS=${TESTS:-"tests/test_traffic.py -k add_contiguous"}
  JOBS=${JOBS:-0}
  REPORT_ARGS=${REPORT_ARGS:-"--skip-matmul --skip-pdist"}
  MODEL_ARGS=${MODEL_ARGS:-"--quick --only copy add"}
elif [ "$QUICK" = 1 ]; then      # a short device window: every op's samples, the report without pdist
  unset TRITENSOR_EMULATE_CUDA TRITON_INTERPRET
  RESULTS=${RESULTS:-$ROOT/bench/RESULTS.md}
  TESTS=${TESTS:-"tests/test_ops_table.py -k cuda"}
  REPORT_ARGS=${REPORT_ARGS:-"--skip-pdist"}
  MODEL_ARGS=${MODEL_ARGS:-}
else
  unset TRITENSOR_EMULATE_CUDA TRITON_INTERPRET
  RESULTS=${RESULTS:-$ROOT/bench/RESULTS.md}
  TESTS=${TESTS:-"tests -k cuda"}
  REPORT_ARGS=${REPORT_ARGS:-}
  MODEL_ARGS=${MODEL_ARGS:-}
fi

# Run from the source tree: the kernels live in kernels/ and are the subpackage tritensor.kernels
# once installed; without an install, a link makes the same import work (as on the first H200 run).
if ! "$PYTHON" -c "import tritensor.kernels" >/dev/null 2>&1; then
  [ -e tritensor/kernels ] || ln -sfn ../kernels tritensor/kernels
  export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
fi

STATUS=0
step() {    # step NAME TIMEOUT LOG CMD...: run, keep the output, remember the first failure
  local name=$1 limit=$2 log=$3
  shift 3
  echo "== $name" >&2
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  tail -n 3 "$log" >&2
  if [ $rc -ne 0 ]; then
    echo "   $name failed (exit $rc)" >&2
    [ $STATUS -ne 0 ] || STATUS=$rc
  fi
  return $rc
}

step "device" 120 "$OUT/device.txt" "$PYTHON" -c "
import tritensor as tt, triton, numpy
print('device:', tt.cuda.get_device_name() if tt.cuda.is_available() else 'none',
      '(emulated)' if tt.cuda.is_available() and tt.cuda.is_emulated() else '')
print('triton', triton.__version__, '| numpy', numpy.__version__)"
DEVICE_NAME=$(sed -n 's/^device: //p' "$OUT/device.txt")
case "$DEVICE_NAME" in
  *H200*) MODEL_DEVICE="H200" ;;
  *) MODEL_DEVICE="H100 SXM" ;;
esac

# the model's traffic counts need no GPU: they run on the CPU (emulated device) while the GPU works
# shellcheck disable=SC2086
env TRITENSOR_EMULATE_CUDA=1 timeout "${MODEL_TIMEOUT:-1800}" "$PYTHON" -m bench.model --device "$MODEL_DEVICE" \
  --save "$OUT/counts.json" $MODEL_ARGS >"$OUT/model_counts.txt" 2>&1 &
COUNTING=$!
trap 'kill "$COUNTING" 2>/dev/null' EXIT     # an interrupted run leaves no counting process behind

# shellcheck disable=SC2086
step "tests on the device" "${TEST_TIMEOUT:-1800}" "$OUT/tests.txt" "$PYTHON" -m pytest -q -n "${JOBS:-16}" -p no:cacheprovider $TESTS
TEST_SUMMARY=$(grep -E "(passed|failed|error)" "$OUT/tests.txt" | tail -n 1)

# shellcheck disable=SC2086
step "bench.report" "${REPORT_TIMEOUT:-1800}" "$OUT/report.txt" "$PYTHON" -m bench.report $REPORT_ARGS

echo "== waiting for the model's counts" >&2
if ! wait "$COUNTING"; then
  echo "   counting failed: see $OUT/model_counts.txt" >&2
  [ $STATUS -ne 0 ] || STATUS=1
fi
step "bench.model --compare" 300 "$OUT/model.txt" env TRITENSOR_EMULATE_CUDA=1 \
  "$PYTHON" -m bench.model --device "$MODEL_DEVICE" --load "$OUT/counts.json" --compare "$OUT/report.txt"

{
  echo
  if [ "$DRY" = 1 ]; then
    echo "## gpu_first_run.sh --dry-run ($STAMP, emulated device: figures mean nothing)"
  else
    echo "## gpu_first_run.sh on $DEVICE_NAME ($STAMP)"
  fi
  echo
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $(sed -n 2p "$OUT/device.txt"). Logs in $OUT."
  echo
  echo "**Tests** (\`pytest $TESTS\`): ${TEST_SUMMARY:-no summary (see tests.txt)}"
  echo
  echo "**\`python -m bench.report\`:**"
  echo
  echo '```'
  grep -v "^Traceback" "$OUT/report.txt" | sed -n '1,80p'
  echo '```'
  echo
  echo "**Model vs measurement** (\`python -m bench.model --device \"$MODEL_DEVICE\" --compare\`: projected from"
  echo "emulated traffic counts, measured above; error = projected / measured - 1):"
  echo
  grep -E "^\||^model error" "$OUT/model.txt"
} >>"$RESULTS"
echo "results appended to $RESULTS" >&2
exit $STATUS
