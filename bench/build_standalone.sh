#!/usr/bin/env bash
# Builds kernel_runner with g++ alone, for machines where the CMake build's dependencies (libpciaccess,
# libdrm, GoogleTest, ...) are missing: only an OpenCL ICD loader, fmt, CLI11 and nlohmann-json
# headers are needed (fmt is used header-only). Used to run bench/clpeak_side_by_side.sh on a
# borrowed GPU machine.
#
#   bench/build_standalone.sh OUT_DIR [EXTRA_INCLUDE_DIR]
#
# Produces OUT_DIR/bin/kernel_runner and OUT_DIR/share/oaprof/kernels, the installed layout.
set -euo pipefail
out=${1:?usage: bench/build_standalone.sh OUT_DIR [EXTRA_INCLUDE_DIR]}
extra=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/bin" "$out/share/oaprof/kernels"
cp "$src"/kernels/*.cl "$out/share/oaprof/kernels/"
opencl_lib=-lOpenCL
# Some images ship libOpenCL.so.1 without the unversioned development link.
if ! ld -lOpenCL -o /dev/null --unresolved-symbols=ignore-all 2>/dev/null; then
  opencl_lib=$(ldconfig -p | awk '/libOpenCL.so.1 / {print $NF; exit}')
fi
${CXX:-g++} -std=c++20 -O2 -DNDEBUG -DFMT_HEADER_ONLY -DCL_TARGET_OPENCL_VERSION=300 \
  -DOAPROF_KERNEL_DIR_FROM_BIN='"../share/oaprof/kernels"' \
  -I"$src/src" ${extra:+-I"$extra"} \
  "$src"/src/bench/{catalogue,stats,runner,peaks,sweep,result_writer}.cc "$src/src/oa/platform.cc" \
  "$src/src/report/csv.cc" \
  "$src/tools/kernel_runner/main.cc" "$opencl_lib" -o "$out/bin/kernel_runner"
echo "built $out/bin/kernel_runner"
