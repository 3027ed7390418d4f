#!/bin/sh
# Memory per connection: runs scenarios/scale/100k-flows.toml with 1k,
# 10k and 100k flows (parallel = 31, 312, 3125 over the 32-host
# permutation), each flow either active (unlimited bulk, the scenario's
# own) or idle (one 1-byte RPC, then a 10 s think time: established and
# quiet), for 20 ms of simulated time, and prints the max RSS and the RSS
# per flow above the 1k run's (each flow is two connections, client and
# server). Output goes to /dev/null: the run's report is part of the cost.
#
#   scenarios/scale/memory.sh target/release/tcplab
set -eu
bin=${1:?usage: memory.sh TCPLAB}
here=$(dirname "$0")
tim=$(mktemp)
printf '%-7s %9s %12s %16s\n' app flows "max RSS MB" "KB per flow"
for app in active idle; do
    base_rss=""
    base_n=""
    for p in 31 312 3125; do
        n=$((32 * p))
        set -- --set traffic.parallel=$p --set run.duration=20ms
        if [ "$app" = idle ]; then
            set -- "$@" --set 'traffic.flow.app={ kind = "rpc", request = "1B", response = "1B", think = "10s" }'
        fi
        /usr/bin/time -f '%M' -o "$tim" "$bin" run "$here/100k-flows.toml" "$@" >/dev/null
        rss=$(cat "$tim")
        if [ -z "$base_rss" ]; then
            per="-"
            base_rss=$rss
            base_n=$n
        else
            per=$(echo "scale=2; ($rss - $base_rss) / ($n - $base_n)" | bc -l)
        fi
        printf '%-7s %9d %12.1f %16s\n' "$app" "$n" "$(echo "$rss / 1024" | bc -l)" "$per"
    done
done
rm -f "$tim"
