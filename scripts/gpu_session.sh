#!/usr/bin/env bash
# One prepared run of the course on a CUDA GPU machine that has no network access.
#
#   OUT=/some/folder bash scripts/gpu_session.sh        # results into $OUT (created)
#
# It installs nothing from the network. Python packages the machine lacks can travel as
# wheels in ./.whl (pip-downloaded elsewhere for the machine's Python and platform); they are
# installed into /tmp/gl-site with --no-index and put on PYTHONPATH. Then, each step under a
# time limit so that the whole run ends in about 8 minutes:
#
#   1. which of the course's dependencies are importable (deps.json);
#   2. the device probe, as a learner's lesson runs it (probe.txt);
#   3. scripts/gpu_check.py: the unit tests and every lesson and exercise notebook with
#      GPULESSON_DEVICE=gpu, GEMM FLOP/s per precision, copy bandwidth, CPU-vs-GPU
#      speed-ups, against the datasheet (gpu-check-*.json and .md);
#   4. scripts/gpu_ceiling.py: the 16-bit GEMM ceiling from a sweep of shapes, the course's
#      timing as a fraction of it, and the timing harness's overhead (ceiling.json);
#   5. the benchmarks (benchmarks.txt).
#
# Every step's log is kept in $OUT; a failed step does not stop the later ones. The exit
# code is that of the GPU check (0 passed, 1 a test or measurement failed, 2 no GPU).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-benchmarks/results/gpu-session-$(date -u +%Y%m%d-%H%M)}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export OUT
export MPLBACKEND=Agg PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/gl-site .whl/*.whl >"$OUT/wheels.log" 2>&1 || echo "wheel install failed" >>"$OUT/wheels.log"
  export PYTHONPATH=/tmp/gl-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

step() {  # step NAME SECONDS COMMAND...: run with a limit, log to $OUT/NAME.log
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$OUT/steps.txt"
  return $rc
}

step deps 60 "$PY" - <<'PY'
import importlib, json, os, sys
names = ["numpy", "matplotlib", "ipywidgets", "threadpoolctl", "pytest", "nbval", "hypothesis",
         "jupyter_client", "ipykernel", "nbformat", "cupy", "cupyx", "torch", "numba",
         "numba_cuda", "ml_dtypes", "mpi4py", "playwright", "jupyter_book"]
found = {}
for name in names:
    try:
        module = importlib.import_module(name)
        found[name] = getattr(module, "__version__", "present")
    except Exception as err:  # noqa: BLE001
        found[name] = f"missing: {type(err).__name__}: {err}"[:200]
json.dump({"python": sys.version, "modules": found}, open(os.environ["OUT"] + "/deps.json", "w"),
          indent=2)
print(json.dumps(found, indent=2))
PY
step probe 60 env GPULESSON_DEVICE=gpu "$PY" -c \
  "from gpulesson.device import get_device; print(get_device().describe())"
cp "$OUT/probe.log" "$OUT/probe.txt" 2>/dev/null

step gpu_check 330 env GPULESSON_DEVICE=gpu "$PY" scripts/gpu_check.py --outdir "$OUT"
check=$?
step ceiling 90 "$PY" scripts/gpu_ceiling.py --out "$OUT/ceiling.json"
step benchmarks 60 bash -c "'$PY' benchmarks/bench_calculators.py && '$PY' benchmarks/bench_cpu.py --quick"
cp "$OUT/benchmarks.log" "$OUT/benchmarks.txt" 2>/dev/null
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || true
echo "results in $OUT"
exit $check
