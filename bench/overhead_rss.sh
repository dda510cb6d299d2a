#!/usr/bin/env bash
# oaprof's peak resident memory (VmHWM, polled while it runs) over one run of LAUNCHES launches of
# launch_overhead_bench's app under --device sim, in one attribution (issue 33: flat to 10 M).
#   overhead_rss.sh BUILD_DIR LAUNCHES bracketed|sampled
set -uo pipefail
build=$1; launches=$2; mode=$3
args=(); drain=drain
[[ $mode == sampled ]] && args=(--attribution sampled) && drain=nodrain
tmp=$(mktemp -d)
"$build/bin/oaprof" --device sim -q --energy none --mode kernel "${args[@]}" -o "$tmp/rows.csv" -- \
  "$build/tests/bin/launch_overhead_bench" --app "$launches" "$drain" "$tmp/loop_ns" >/dev/null 2>&1 &
pid=$!
hwm=0
while kill -0 "$pid" 2>/dev/null; do
  kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [[ -n $kb && $kb -gt $hwm ]] && hwm=$kb
  sleep 0.2
done
wait "$pid"; rc=$?
rows=$(($(wc -l <"$tmp/rows.csv") - 1))
echo "rss $mode $launches launches: oaprof peak ${hwm} kB, $rows rows, exit $rc, $(( $(cat "$tmp/loop_ns") / launches )) ns/launch"
rm -rf "$tmp"
