#!/usr/bin/env bash
# Runs launch_overhead_bench and perf profiles of each bundled build (overhead_bundle.sh) on the
# machine it is carried to, both OpenCL platforms, both attributions (issue 33). Each build is
# put where its bench expects oaprof (BENCH_BUILD_PATH, the build directory it was made in).
#   overhead_device.sh BUNDLE_DIR BENCH_BUILD_PATH LAUNCHES PERF_LAUNCHES BUILD...
# Results: the tables on stdout, and profiles in $OUT/profile.txt.
set -uo pipefail
bundle=$(cd "$1" && pwd); link=$2; launches=$3; perf_launches=$4; shift 4
export LD_LIBRARY_PATH=$bundle/libs POCL_CACHE_DIR=/tmp/pocl-cache
perf=$bundle/libs/perf
out=${OUT:-/tmp}
echo "cores $(nproc); $(grep PRETTY /etc/os-release)"; ls /etc/OpenCL/vendors 2>&1
mkdir -p "$(dirname "$link")"
platforms=$(ln -sfn "$bundle/$1" "$link" && "$link/tests/bin/launch_overhead_bench" --platforms)
echo "$platforms"
profile() {  # BUILD PLATFORM MODE: a perf profile of one oaprof run, its top symbols
  local attribution=() drain=drain
  [[ $3 == sampled ]] && attribution=(--attribution sampled) && drain=nodrain
  "$perf" record -q -e cpu-clock -F 4000 -g -o /tmp/perf.data -- "$link/bin/oaprof" --device sim \
    -q --energy none --mode kernel "${attribution[@]}" -o /tmp/rows.csv -- \
    "$link/tests/bin/launch_overhead_bench" --app "$perf_launches" "$drain" /tmp/loop_ns \
    >/dev/null 2>&1 || echo "perf record failed"
  echo "=== $1 $2 $3: loop $(( $(cat /tmp/loop_ns) / perf_launches )) ns/launch under perf"
  "$perf" report -i /tmp/perf.data --no-children --sort comm,dso --stdio -g none 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -12
  "$perf" report -i /tmp/perf.data --no-children --sort comm,sym --stdio -g none 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -40
}
for build in "$@"; do
  ln -sfn "$bundle/$build" "$link"
  for p in Portable NVIDIA; do
    grep -q "$p" <<<"$platforms" || continue
    echo "=== bench $build $p"
    OAPROF_BENCH_PLATFORM=$p "$link/tests/bin/launch_overhead_bench" --launches "$launches" --repeat 3
  done
done
for build in "$@"; do
  ln -sfn "$bundle/$build" "$link"
  for p in Portable NVIDIA; do
    grep -q "$p" <<<"$platforms" || continue
    for mode in sampled bracketed; do
      OAPROF_BENCH_PLATFORM=$p profile "$build" "$p" "$mode" >>"$out/profile.txt" 2>&1
    done
  done
done

