"""Shared fixtures: the repository root and the CLI binary the package is
held to (``target/release/tcplab``, or ``$TCPLAB_BIN``)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"


def cli_path():
    p = os.environ.get("TCPLAB_BIN") or str(ROOT / "target" / "release" / "tcplab")
    return p if os.path.isfile(p) else None


@pytest.fixture(scope="session")
def cli():
    """Runs the CLI and returns (exit code, stdout, stderr)."""
    path = cli_path()
    if path is None:
        pytest.skip("the CLI is not built: cargo build --release -p tcplab-cli (or set TCPLAB_BIN)")

    def run(*args, check=True):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True, cwd=ROOT)
        if check and r.returncode != 0:
            raise AssertionError(f"tcplab {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
        return r.returncode, r.stdout, r.stderr

    return run


@pytest.fixture()
def in_root(monkeypatch):
    """Runs the test in the repository root, as the CLI's commands are run."""
    monkeypatch.chdir(ROOT)
    return ROOT


def without_wall(doc):
    """A JSON document without its wall-clock fields (not deterministic)."""
    d = json.loads(doc) if isinstance(doc, str) else doc
    d.pop("wall_s", None)
    return d
