#!/bin/sh
# One shard of the worked cluster sweep (docs/CLUSTER.md): DCTCP against
# CUBIC on the 128-host leaf-spine incast, at three port marking
# thresholds, 20 seeds each: 2 x 3 x 20 = 120 runs, cut into N shards.
#
#   examples/cluster/sweep.sh K N OUTDIR     (K in 1..N)
#
# Slurm (slurm.sbatch) and Kubernetes (k8s-job.yaml) run it once per array
# index; merge.sh joins the shards. RUNS (default 20) and TCPLAB (default
# `tcplab` on PATH) may be set in the environment.
set -eu
k=${1:?usage: sweep.sh K N OUTDIR}
n=${2:?usage: sweep.sh K N OUTDIR}
out=${3:?usage: sweep.sh K N OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
# Write to a temporary name and rename, so that a shard file that exists
# is complete (a killed job leaves no half file for merge to trip on).
"${TCPLAB:-tcplab}" sweep "$root/scenarios/leaf-spine-incast.toml" \
    --vary traffic.flow.cc=dctcp,cubic \
    --vary topology.host_link.queue.ecn_threshold=20p,65p,200p \
    --metric fct.p50,fct.p99,TcpExtTCPTimeouts \
    --runs "${RUNS:-20}" --jobs 1 --shard "$k/$n" --json >"$out/shard-$k.json.part"
mv "$out/shard-$k.json.part" "$out/shard-$k.json"
