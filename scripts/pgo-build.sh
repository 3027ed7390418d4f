#!/usr/bin/env bash
# Profile-guided build of tcplab (docs/PERFORMANCE.md, "The PGO build").
#
# An instrumented build runs a training set that covers the model's paths,
# not only the benchmark's: `tcplab bench` (one CUBIC flow), `tcplab
# reproduce all` (the three seed experiments in every era they run: Reno,
# CUBIC with HyStart, DCTCP, loss, reordering, fq pacing), the 128-host
# leaf-spine incast (ECMP, many connections) and a BBR flow. The release
# build is then compiled again with that profile, which mostly changes
# where the compiler puts code: the per-segment path fits the instruction
# cache. Results are the plain build's, bit for bit (the same code, laid
# out differently); `.ci/run` checks that on the benchmark.
#
#   scripts/pgo-build.sh        # prints the binary's path: target/pgo/release/tcplab
#
# Needs llvm-profdata of the compiler's own LLVM (the rustup component
# llvm-tools, added here when rustup can).
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools >&2
fi
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
RUSTFLAGS="-Cprofile-generate=$data" CARGO_TARGET_DIR=target/pgo-gen \
    cargo build --release -p tcplab-cli >&2
# Build scripts ran instrumented too; their profiles are not the model's.
rm -f "$data"/*.profraw
bin=target/pgo-gen/release/tcplab
echo "pgo: training (about 3 minutes on 2 cores)" >&2
"$bin" bench --json >/dev/null
"$bin" reproduce all --json >/dev/null 2>&1
"$bin" run scenarios/leaf-spine-incast.toml >/dev/null
"$bin" run scenarios/bulk-bbr.toml >/dev/null
mkdir -p target/pgo
"$profdata" merge -o target/pgo/tcplab.profdata "$data"
RUSTFLAGS="-Cprofile-use=$PWD/target/pgo/tcplab.profdata" CARGO_TARGET_DIR=target/pgo \
    cargo build --release -p tcplab-cli >&2
echo target/pgo/release/tcplab
