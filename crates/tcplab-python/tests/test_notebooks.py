"""The example notebooks (examples/notebooks) run end to end, so they
cannot rot: each is executed in a fresh Python kernel with nbclient."""

import os

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = ROOT / "examples" / "notebooks"


def execute(name, env=None):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    old = dict(os.environ)
    os.environ.update(env or {})
    # The notebook's own matplotlib backend (inline), not the tests' Agg.
    os.environ.pop("MPLBACKEND", None)
    try:
        nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


def text_of(nb):
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", ""))
            out.extend(str(v) for k, v in o.get("data", {}).items() if k.startswith("text/"))
    return "\n".join(out)


@pytest.mark.parametrize("name", ["reordering.ipynb", "dctcp-rpc.ipynb", "hystart.ipynb"])
def test_reproduction_notebooks_run(name):
    nb = execute(name)
    text = text_of(nb)
    assert "Traceback" not in text
    assert "image/png" in {k for c in nb.cells for o in c.get("outputs", []) for k in o.get("data", {})}


def test_kernel_notebook_skips_cleanly_without_an_image():
    nb = execute("model-vs-kernel.ipynb", {"TCPLAB_KERNEL": "/nonexistent-kernel-image"})
    text = text_of(nb)
    assert "skipped: no kernel image to run on" in text and "tcplab kernel build" in text
    assert "model median" not in text


def test_kernel_notebook_runs_on_a_kernel():
    import tcplab

    if not tcplab.kernel_available():
        pytest.skip("no kernel image here (tcplab kernel build); the notebook's skip is tested above")
    nb = execute("model-vs-kernel.ipynb")
    text = text_of(nb)
    assert "skipped" not in text and "model vs linux" in text
