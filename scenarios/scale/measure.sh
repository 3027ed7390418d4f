#!/bin/sh
# Runs `tcplab run FILE --json` under /usr/bin/time and prints one line:
# wall s, user CPU s, max RSS MB, events, events per wall s, events per
# user CPU s, and the JSON's own wall_s (the simulation alone).
#
#   scenarios/scale/measure.sh target/release/tcplab FILE [run|check]
set -eu
bin=${1:?usage: measure.sh TCPLAB FILE [run|check]}
file=${2:?usage: measure.sh TCPLAB FILE [run|check]}
cmd=${3:-run}
out=${KEEP:-$(mktemp)}
tim=$(mktemp)
if [ "$cmd" = check ]; then
    /usr/bin/time -f '%e %U %S %M' -o "$tim" "$bin" check "$file" >"$out"
    read -r wall user sys rss <"$tim"
    printf 'check %s: wall %s s, user %s s, sys %s s, max RSS %.1f MB\n' "$file" "$wall" "$user" "$sys" "$(echo "$rss / 1024" | bc -l)"
else
    /usr/bin/time -f '%e %U %S %M' -o "$tim" "$bin" run "$file" --json >"$out"
    read -r wall user sys rss <"$tim"
    events=$(jq -r '.data.events // .events' "$out" | head -1)
    simwall=$(jq -r '.data.wall_s // .wall_s' "$out" | head -1)
    printf 'run %s: wall %s s, user %s s, sys %s s, max RSS %.1f MB, events %s, %.3f M events/s wall, %.3f M events/user-s, sim wall_s %.2f\n' \
        "$file" "$wall" "$user" "$sys" "$(echo "$rss / 1024" | bc -l)" "$events" \
        "$(echo "$events / $wall / 1000000" | bc -l)" "$(echo "$events / $user / 1000000" | bc -l)" "$simwall"
fi
[ -n "${KEEP:-}" ] || rm -f "$out"
rm -f "$tim"
