#!/usr/bin/env bash
# Packs one build of oaprof for launch_overhead_bench on another machine (issue 33): the binaries
# with their debug sections stripped (symbols kept, for perf), the shared libraries the target
# may lack, and optionally perf with its own libraries.
#   bench/overhead_bundle.sh BUILD_DIR OUT_DIR/NAME        one build, as OUT_DIR/NAME/{bin,lib,tests}
#   bench/overhead_bundle.sh --libs OUT_DIR [BINARY...]     the libraries (and perf) once, in OUT_DIR/libs,
#                                                           with those the BINARYs link (the bench's
#                                                           libze_loader, oaprof's libpapi, …)
set -euo pipefail
copy_stripped() { mkdir -p "$(dirname "$2")"; objcopy --strip-debug "$1" "$2"; }
if [[ ${1:-} == --libs ]]; then
  out=${2:?}/libs
  mkdir -p "$out"
  # What oaprof links beyond the C/C++ runtime, and what perf needs beyond it.
  for f in $(ldd /usr/bin/perf "${@:3}" 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$f") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libz.so*|libOpenCL*) continue ;; esac
    cp -L "$f" "$out/"
  done
  # The loader opens its tracing layer itself (no ldd line): oaprof's Level Zero layer needs it.
  if [[ -e $out/libze_loader.so.1 ]]; then
    layer=$(ldconfig -p | awk '/libze_tracing_layer\.so\.1 / {print $NF}')
    [[ -n $layer ]] && cp -L "$layer" "$out/"
  fi
  cp /usr/bin/perf "$out/perf"
  exit 0
fi
build=${1:?usage: overhead_bundle.sh BUILD_DIR OUT}
out=${2:?}
for f in bin/oaprof bin/oaprofd lib/oaprof/liboaprof_layer.so lib/oaprof/liboaprof_preload.so \
  lib/oaprof/liboaprof_ze_layer.so lib/oaprof/liboaprof_ze_preload.so \
  lib/oaprof/liboaprof_ze_sim.so tests/bin/launch_overhead_bench; do
  copy_stripped "$build/$f" "$out/$f"
done
# The Level Zero columns' kernels (SPIR-V), where the build made them. The machine the bundle is
# carried to needs libze_loader.so.1 (and the tracing layer): pass launch_overhead_bench to --libs.
spirv=tests/gpu/sim/level_zero/kernels.spv
if [[ -f $build/$spirv ]]; then mkdir -p "$(dirname "$out/$spirv")" && cp "$build/$spirv" "$out/$spirv"; fi
