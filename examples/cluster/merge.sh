#!/bin/sh
# Joins the shards of examples/cluster/sweep.sh into the sweep's table,
# CSV and JSON (docs/CLUSTER.md). Fails, naming the file, if a shard is
# missing or does not belong to the sweep.
#
#   examples/cluster/merge.sh OUTDIR
set -eu
out=${1:?usage: merge.sh OUTDIR}
"${TCPLAB:-tcplab}" merge "$out"/shard-*.json --json >"$out/sweep.json"
"${TCPLAB:-tcplab}" merge "$out"/shard-*.json --csv >"$out/sweep.csv"
"${TCPLAB:-tcplab}" merge "$out"/shard-*.json
