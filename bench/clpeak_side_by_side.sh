#!/usr/bin/env bash
# Runs clpeak and kernel_runner on the same OpenCL device in one go and prints kernel_runner's
# figures over clpeak's: mad_vect4 GFLOP/s over clpeak's float4 single-precision compute, and
# load_store_vect4 GB/s over clpeak's float4 global-memory bandwidth. Goal: both ratios >= 1.0.
#
#   bench/clpeak_side_by_side.sh [--platform N] [--device N] [--kernel-runner PATH] [--clpeak PATH]
#
# Platform and device are indices as the ICD loader orders them (both tools use that order;
# `kernel_runner --devices` lists them). Both tools time kernels with OpenCL events (clpeak gets
# --use-event-timer), so launch overheads are left out of both. kernel_runner is given a launch
# large enough to fill the device, sized from its compute units as clpeak sizes its own:
#   mad_vect4:        work-groups = compute units x 512 (x 64 on a CPU device), 256 work-items
#                     each, 4096 iterations (32768 FLOP a work-item, so that the work-item's
#                     one load and one store weigh little against its arithmetic)
#   load_store_vect4: one float4 per work-item over KR_SIZE bytes (64M on a CPU device, else 512M)
# KR_WG, KR_WI, KR_ITERATIONS, KR_SIZE and KR_MIN_TIME_MS override these.
set -euo pipefail

platform=0
device=0
here=$(cd "$(dirname "$0")/.." && pwd)
kernel_runner=${KERNEL_RUNNER:-$here/build/bin/kernel_runner}
clpeak=${CLPEAK:-clpeak}
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) platform=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --kernel-runner) kernel_runner=$2; shift 2 ;;
    --clpeak) clpeak=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "clpeak_side_by_side: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v "$clpeak" >/dev/null || { echo "clpeak_side_by_side: no clpeak at '$clpeak'; install the Debian package clpeak or pass --clpeak PATH" >&2; exit 2; }
[ -x "$kernel_runner" ] || { echo "clpeak_side_by_side: no kernel_runner at '$kernel_runner'; build it or pass --kernel-runner PATH" >&2; exit 2; }

line=$("$kernel_runner" --devices | grep "^platform $platform (.*) device $device: " || true)
[ -n "$line" ] || { echo "clpeak_side_by_side: no device $device on platform $platform; kernel_runner --devices lists them" >&2; exit 2; }
echo "$line"
cus=$(sed -E 's/.*, ([0-9]+) compute units,.*/\1/' <<<"$line")
if grep -q "Portable Computing Language" <<<"$line"; then
  default_size=64M; groups_per_cu=64
else
  default_size=512M; groups_per_cu=512
fi
wi=${KR_WI:-256}
wg=${KR_WG:-$((cus * groups_per_cu))}
iterations=${KR_ITERATIONS:-4096}
size=${KR_SIZE:-$default_size}
min_time=${KR_MIN_TIME_MS:-200}
size_bytes=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1].upper()] if s[-1].upper() in m else int(s))" "$size")
ls_wg=$(( (size_bytes / 16 + wi - 1) / wi ))

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# clpeak's sections: a heading, then "float4 : <value>" lines; take float4 from the right one.
clpeak_float4() {  # section-heading-regex file
  awk -v h="$1" '$0 ~ h {on=1; next} on && /^[[:space:]]*$/ {if (seen) on=0; next}
                 on && $1 == "float4" {print $3; exit} on {seen=1}' "$2"
}

echo "clpeak: compute-sp and global-bandwidth ..."
"$clpeak" -p "$platform" -d "$device" --use-event-timer --compute-sp >"$tmp/compute.txt" 2>&1
"$clpeak" -p "$platform" -d "$device" --use-event-timer --global-bandwidth >"$tmp/bw.txt" 2>&1
clpeak_gflops=$(clpeak_float4 "Single-precision compute" "$tmp/compute.txt")
clpeak_gbps=$(clpeak_float4 "Global memory bandwidth" "$tmp/bw.txt")
[ -n "$clpeak_gflops" ] && [ -n "$clpeak_gbps" ] || { echo "clpeak_side_by_side: could not read clpeak's float4 figures:" >&2; cat "$tmp/compute.txt" "$tmp/bw.txt" >&2; exit 1; }

echo "kernel_runner: mad_vect4 (--wg $wg --wi $wi --iterations $iterations) and load_store_vect4 (--size $size --wg $ls_wg --wi $wi) ..."
"$kernel_runner" --cl-platform "$platform" --cl-device "$device" --json --min-time "$min_time" \
  --wg "$wg" --wi "$wi" --iterations "$iterations" mad_vect4 >"$tmp/mad.json"
"$kernel_runner" --cl-platform "$platform" --cl-device "$device" --json --min-time "$min_time" \
  --wg "$ls_wg" --wi "$wi" --size "$size" load_store_vect4 >"$tmp/ls.json"

python3 - "$tmp/mad.json" "$tmp/ls.json" "$clpeak_gflops" "$clpeak_gbps" <<'PY'
import json, sys
mad = json.load(open(sys.argv[1]))["results"][0]
ls = json.load(open(sys.argv[2]))["results"][0]
cf, cb = float(sys.argv[3]), float(sys.argv[4])
print(f"device: {json.load(open(sys.argv[1]))['device']}")
print(f"{'figure':<40} {'kernel_runner':>14} {'clpeak':>10} {'ratio':>7}")
print(f"{'mad_vect4 GFLOP/s vs float4 compute':<40} {mad['rate']:>14.2f} {cf:>10.2f} {mad['rate']/cf:>7.3f}")
print(f"{'load_store_vect4 GB/s vs float4 bw':<40} {ls['rate']:>14.2f} {cb:>10.2f} {ls['rate']/cb:>7.3f}")
print(f"(kernel_runner medians of {mad['repeats']} and {ls['repeats']} launches; "
      f"load_store counts bytes read + written, clpeak's bandwidth kernel reads only)")
PY
