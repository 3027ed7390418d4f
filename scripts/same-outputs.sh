#!/usr/bin/env bash
# Shows that a change kept tcplab's outputs: runs `tcplab reproduce all --json`
# (wall times removed) and `tcplab packetdrill` on Linux's scripts with two
# builds and diffs them. Run from the repository root (../shared must exist).
#
#   git worktree add /tmp/base REV && (cd /tmp/base && cargo build --release -p tcplab-cli)
#   cargo build --release -p tcplab-cli
#   scripts/same-outputs.sh /tmp/base/target/release/tcplab target/release/tcplab
set -uo pipefail
old=${1:?usage: same-outputs.sh OLD_TCPLAB NEW_TCPLAB}
new=${2:?usage: same-outputs.sh OLD_TCPLAB NEW_TCPLAB}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip() {
    python3 -c 'import json, sys
def s(o):
    if isinstance(o, dict): return {k: s(v) for k, v in o.items() if k != "wall_s"}
    if isinstance(o, list): return [s(x) for x in o]
    return o
for line in sys.stdin:
    if line.strip(): print(json.dumps(s(json.loads(line)), indent=1, sort_keys=True))'
}
status=0
for who in old new; do
    bin=${!who}
    "$bin" packetdrill ../shared/conformance/packetdrill/gtests --json >"$tmp/pd.$who" || true
    "$bin" reproduce all --json 2>/dev/null | strip >"$tmp/rp.$who" || true
done
if diff -q "$tmp/pd.old" "$tmp/pd.new" >/dev/null && [ -s "$tmp/pd.new" ]; then echo "packetdrill: identical"; else echo "packetdrill: DIFFERS"; diff "$tmp/pd.old" "$tmp/pd.new" | head -40; status=1; fi
if diff -q "$tmp/rp.old" "$tmp/rp.new" >/dev/null && [ -s "$tmp/rp.new" ]; then echo "reproduce all: identical"; else echo "reproduce all: DIFFERS"; diff "$tmp/rp.old" "$tmp/rp.new" | head -40; status=1; fi
exit $status
