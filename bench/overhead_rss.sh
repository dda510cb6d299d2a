#!/usr/bin/env bash
# oaprof's peak resident memory (VmHWM, polled while it runs) over one run of LAUNCHES launches of
# launch_overhead_bench's app under --device sim, in one attribution (issue 33: flat to 10 M).
#   overhead_rss.sh BUILD_DIR LAUNCHES bracketed|sampled [PROGRESS_FILE]
# With PROGRESS_FILE, a line every 10 s: seconds, peak kB so far, rows written so far (from the
# CSV's size over its first rows'), so a run cut short still shows whether memory grows.
set -uo pipefail
build=$1; launches=$2; mode=$3
args=(); drain=drain
[[ $mode == sampled ]] && args=(--attribution sampled) && drain=nodrain
tmp=$(mktemp -d)
"$build/bin/oaprof" --device sim -q --energy none --mode kernel "${args[@]}" -o "$tmp/rows.csv" -- \
  "$build/tests/bin/launch_overhead_bench" --app "$launches" "$drain" "$tmp/loop_ns" >/dev/null 2>&1 &
pid=$!
progress=${4:-}
hwm=0; polls=0; row_bytes=0
while kill -0 "$pid" 2>/dev/null; do
  kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [[ -n $kb && $kb -gt $hwm ]] && hwm=$kb
  sleep 0.2
  polls=$((polls + 1))
  if [[ -n $progress && $((polls % 50)) -eq 0 && -s $tmp/rows.csv ]]; then
    if [[ $row_bytes -eq 0 && $(wc -l <"$tmp/rows.csv") -gt 101 ]]; then
      row_bytes=$(($(head -101 "$tmp/rows.csv" | tail -100 | wc -c) / 100))
    fi
    [[ $row_bytes -gt 0 ]] &&
      echo "$((polls / 5)) s: peak ${hwm} kB, about $(($(stat -c %s "$tmp/rows.csv") / row_bytes)) rows" >>"$progress"
  fi
done
wait "$pid"; rc=$?
rows=$(($(wc -l <"$tmp/rows.csv") - 1))
echo "rss $mode $launches launches: oaprof peak ${hwm} kB, $rows rows, exit $rc, $(( $(cat "$tmp/loop_ns") / launches )) ns/launch"
rm -rf "$tmp"
