#!/usr/bin/env bash
# The Python package's tests (docs/python.md), from a clone: builds the
# package into a virtual environment (.venv at the repository root, made
# if missing, or $TCPLAB_VENV), then runs its pytest suite, which holds
# it to the CLI's outputs and executes the notebooks in examples/notebooks.
#
#   crates/tcplab-python/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${TCPLAB_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
# The tests compare against the CLI and run the kernel backend's agent.
cargo build --release -p tcplab-cli -p tcplab-agent
"$venv/bin/python" -m pip install -q './crates/tcplab-python[test]' polars
exec "$venv/bin/python" -m pytest -q crates/tcplab-python/tests "$@"
