#!/usr/bin/env bash
# Compares tcplab builds' `bench` speed on a shared, noisy machine: runs
# `BIN bench --json` for each build in turn, ROUNDS times (so that load
# changes hit every build alike), and prints per build the best and the
# median of M data segments per CPU-second and M events per CPU-second,
# the least and the median CPU seconds, and the segment and event counts
# seen (one value each: the run is deterministic).
#
#   scripts/bench-interleave.sh 10 /tmp/base/target/release/tcplab target/release/tcplab
set -euo pipefail
rounds=${1:?usage: bench-interleave.sh ROUNDS BIN...}
shift
[ $# -ge 1 ] || { echo "usage: bench-interleave.sh ROUNDS BIN..." >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
    for b in "$@"; do
        "$b" bench --json | B="$b" python3 -c 'import json, os, sys
r = json.load(sys.stdin)["rows"][0]
print(os.environ["B"], r["segments_per_cpu_sec"] / 1e6, r["events_per_cpu_sec"] / 1e6, r["cpu_s"], r["segments"], r["events"])' >>"$out"
    done
done
python3 - "$out" "$@" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for b in sys.argv[2:]:
    r = [x for x in rows if x[0] == b]
    seg, ev, cpu = ([float(x[i]) for x in r] for i in (1, 2, 3))
    print(f"{b}: n={len(r)} M seg/CPU-s best {max(seg):.2f} median {st.median(seg):.2f}"
          f" | M ev/CPU-s best {max(ev):.2f} median {st.median(ev):.2f}"
          f" | CPU s min {min(cpu):.3f} median {st.median(cpu):.3f}"
          f" | segments {sorted(set(x[4] for x in r))} events {sorted(set(x[5] for x in r))}")
PY
