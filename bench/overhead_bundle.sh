#!/usr/bin/env bash
# Packs one build of oaprof for launch_overhead_bench on another machine (issue 33): the binaries
# with their debug sections stripped (symbols kept, for perf), the shared libraries the target
# may lack, and optionally perf with its own libraries.
#   bench/overhead_bundle.sh BUILD_DIR OUT_DIR/NAME        one build, as OUT_DIR/NAME/{bin,lib,tests}
#   bench/overhead_bundle.sh --libs OUT_DIR                 the libraries (and perf) once, in OUT_DIR/libs
set -euo pipefail
copy_stripped() { mkdir -p "$(dirname "$2")"; objcopy --strip-debug "$1" "$2"; }
if [[ ${1:-} == --libs ]]; then
  out=${2:?}/libs
  mkdir -p "$out"
  # What oaprof links beyond the C/C++ runtime, and what perf needs beyond it.
  for f in $(ldd /usr/bin/perf "${3:-/dev/null}" 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$f") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libz.so*|libOpenCL*) continue ;; esac
    cp -L "$f" "$out/"
  done
  cp /usr/bin/perf "$out/perf"
  exit 0
fi
build=${1:?usage: overhead_bundle.sh BUILD_DIR OUT}
out=${2:?}
for f in bin/oaprof bin/oaprofd lib/oaprof/liboaprof_layer.so lib/oaprof/liboaprof_preload.so \
  tests/bin/launch_overhead_bench; do
  copy_stripped "$build/$f" "$out/$f"
done
