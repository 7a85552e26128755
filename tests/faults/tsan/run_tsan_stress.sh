#!/bin/bash
# ThreadSanitizer run of the concurrency stress: the core and the OpenCL backend built with the
# host's gcc -fsanitize=thread into their own venv, then tests/faults/stress.py on CPU and PoCL.
#
#   tests/faults/tsan/run_tsan_stress.sh [SECONDS] [THREADS] [WORK_DIR]
#
# Reports land in WORK_DIR/reports (none means clean); the stress table in WORK_DIR/stress-tsan.md.
# Python, tvm-ffi and PoCL are not instrumented: TSan sees their locks (interceptors) but not their
# memory accesses, so this checks our code's own synchronisation.
set -euo pipefail
SECONDS_BUDGET=${1:-90}
THREADS=${2:-4}
WORK=${3:-/tmp/tvm-tsan}
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
HERE="$REPO/tests/faults/tsan"

if [ ! -x "$WORK/venv/bin/python" ]; then
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q numpy 'apache-tvm-ffi>=0.1.15,<0.2' 'scikit-build-core>=0.11' ninja 'cmake>=3.18'
fi
for dist in tvm-runtime tvm-runtime-opencl; do
  CC=gcc CXX=g++ CXXFLAGS="-fsanitize=thread -g -O1 -fno-omit-frame-pointer" LDFLAGS="-fsanitize=thread" \
    CMAKE_BUILD_PARALLEL_LEVEL=2 "$WORK/venv/bin/pip" install -q --no-build-isolation --no-deps \
    --force-reinstall -C "build-dir=$WORK/build/$dist" "$REPO/packages/$dist"
done

rm -rf "$WORK/reports" && mkdir -p "$WORK/reports"
status=0
LD_PRELOAD=$(gcc -print-file-name=libtsan.so) \
TSAN_OPTIONS="halt_on_error=0 history_size=4 log_path=$WORK/reports/tsan suppressions=$HERE/tsan.supp" \
TVM_REPO_ROOT="$REPO" "$WORK/venv/bin/python" "$REPO/tests/faults/stress.py" \
  --seconds "$SECONDS_BUDGET" --threads "$THREADS" --out "$WORK/stress-tsan.md" || status=$?
reports=$(ls "$WORK/reports" | wc -l)
echo "ThreadSanitizer reports: $reports (in $WORK/reports)"
[ "$status" -eq 0 ] && [ "$reports" -eq 0 ]
