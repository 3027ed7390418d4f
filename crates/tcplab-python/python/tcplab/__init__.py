"""tcplab from Python: a Linux-faithful TCP model and a deterministic
packet simulator, with runs, comparisons, sweeps and kernel diffs as
DataFrames.

The package calls the same Rust lab as the ``tcplab`` command (nothing is
re-implemented in Python, nothing shells out): a scenario is validated as
``tcplab run --set`` validates it, a run with the same seed gives the same
numbers as ``tcplab run --json``, batches use the CLI's worker pool, and
errors carry the CLI's messages. Results cross into Python as Arrow
tables (the Arrow PyCapsule interface), read by pandas, pyarrow and
polars without a copy per value.

>>> import tcplab
>>> sc = tcplab.Scenario.load("scenarios/two-flows.toml").set("run.duration", "10s")
>>> r = tcplab.run(sc, seed=1)
>>> r.flows[["id", "goodput_bps"]]          # doctest: +SKIP
>>> cmp = tcplab.compare(sc, a={"flow.*.cc": "reno"}, b={"flow.*.cc": "cubic"}, runs=5)
>>> cmp.summary                              # doctest: +SKIP

Long calls draw a progress bar (in Jupyter and on a terminal); Ctrl-C
(or the notebook's interrupt) stops a batch cleanly and raises
:class:`Interrupted`, whose ``result`` holds the runs that finished (as
does :func:`last_interrupted`). docs/python.md has the whole tour.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from ._native import Error, Scenario
from ._progress import wait as _wait
from ._results import Comparison, Diff, Reproduction, RunResult, Sweep, _pandas

__version__: str = _native.__version__

__all__ = [
    "Comparison",
    "Diff",
    "Error",
    "Interrupted",
    "Reproduction",
    "RunResult",
    "Scenario",
    "Sweep",
    "compare",
    "counters",
    "diff",
    "experiment",
    "experiments",
    "kernel_available",
    "kernel_image",
    "kernel_images",
    "knobs",
    "last_interrupted",
    "preset_names",
    "presets",
    "reproduce",
    "run",
    "sweep",
]

ScenarioLike = Union[Scenario, str, "os.PathLike[str]"]
Settings = Union[None, str, Sequence[str], Mapping[str, Any]]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or a notebook's interrupt) stopped a batch. ``result`` is
    what finished: a :class:`Comparison`, :class:`Sweep`, :class:`Diff`,
    :class:`Reproduction` (or a list of them) whose ``complete`` is False
    and whose tables hold the finished runs. It subclasses
    KeyboardInterrupt, so a script stops as on any Ctrl-C."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


_last_interrupted: Any = None


def last_interrupted() -> Any:
    """The partial result of the last interrupted batch (None if none was):
    in a notebook, the finished runs of a cell stopped with the interrupt
    button."""
    return _last_interrupted


def _scenario(sc: ScenarioLike) -> Scenario:
    if isinstance(sc, Scenario):
        return sc
    if isinstance(sc, (str, os.PathLike)):
        return Scenario.load(os.fspath(sc))
    raise TypeError(f"expected a tcplab.Scenario or a path to a scenario file, not {type(sc).__name__}")


def _metrics(metrics: Union[None, str, Iterable[str]]) -> List[str]:
    if metrics is None:
        return []
    if isinstance(metrics, str):
        return [metrics]
    return list(metrics)


def _ancestors() -> Iterable[Path]:
    seen = set()
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for d in (start, *start.parents):
            if d not in seen:
                seen.add(d)
                yield d


def _ensure_agent() -> None:
    """The kernel backend's guest agent: ``$TCPLAB_AGENT``, else
    ``tcplab-agent`` on PATH, else ``target/release/tcplab-agent`` of the
    clone around the current directory (``cargo build --release
    --workspace`` builds it). The CLI finds it beside its own binary."""
    if os.environ.get("TCPLAB_AGENT"):
        return
    found = shutil.which("tcplab-agent")
    if found is None:
        for d in _ancestors():
            p = d / "target" / "release" / "tcplab-agent"
            if p.is_file():
                found = str(p)
                break
    if found is not None:
        os.environ["TCPLAB_AGENT"] = found


def _repo_root() -> Optional[Path]:
    """The clone around the current directory (it has results/linux), for
    the kernel's committed figures of reproductions."""
    for d in _ancestors():
        if (d / "results" / "linux").is_dir() and (d / "scenarios").is_dir():
            return d
    return None


def _interrupted(kind: str, wrap: Any) -> Any:
    def make(output: Any, complete: bool) -> BaseException:
        global _last_interrupted
        result = wrap(output)
        _last_interrupted = result
        items = result if isinstance(result, list) else [result]
        n = sum(r.finished_runs for r in items)
        msg = f"tcplab: {kind} interrupted: {n} finished run(s) kept in e.result and tcplab.last_interrupted()"
        print(msg, file=sys.stderr)
        return Interrupted(msg, result)

    return make


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    trace: bool = True,
    max_wall: Optional[float] = None,
    progress: Optional[bool] = None,
) -> RunResult:
    """Runs `scenario` once, as ``tcplab run``.

    seed: overrides ``run.seed``. backend: ``"model"`` (the simulator) or
    ``"linux"`` (the real kernel in a User-Mode Linux guest; ``tcplab
    kernel build`` first), with `kernel` an image key, name or directory.
    trace: keep the per-flow time series (:meth:`RunResult.trace`).
    max_wall: wall-clock limit of the run, seconds. progress: draw a bar
    (None: in a notebook or on a terminal). The GIL is released while it
    runs; Ctrl-C stops it (KeyboardInterrupt).
    """
    sc = _scenario(scenario)
    if backend != "model":
        _ensure_agent()
    task = _native.start_run(sc, seed=seed, backend=backend, kernel=kernel, trace=trace, max_wall=max_wall)
    output, _ = _wait(task, f"run {sc.name}", "sim", progress, _interrupted("run", RunResult))
    return RunResult(output)


def compare(
    scenario: ScenarioLike,
    a: Settings = None,
    b: Settings = None,
    *,
    names: Tuple[str, str] = ("a", "b"),
    arms: Optional[Mapping[str, Settings]] = None,
    runs: int = 10,
    metrics: Union[None, str, Iterable[str]] = None,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    keep_traces: bool = False,
    max_runs: Optional[int] = None,
    progress: Optional[bool] = None,
) -> Comparison:
    """Runs arms of `scenario` on seeds 1..runs, as ``tcplab compare``.

    a, b: the two arms' settings (``--a``/``--b``): a dict of dotted keys,
    ``"KEY=VALUE,KEY=VALUE"`` or a list of ``"KEY=VALUE"``; ``flow.*.KEY``
    sets every flow. names: their names. arms: instead of a and b, any
    number of arms, ``{name: settings}``. The scenario's own overrides
    (:meth:`Scenario.set`) apply to every arm first, as ``--set``.
    metrics: what to measure per run (``--metric``; default goodput).
    jobs: worker threads (default every core). keep_traces: keep each
    arm's first run's traces (:meth:`Comparison.trace`).
    """
    sc = _scenario(scenario)
    if arms is None:
        if a is None and b is None:
            raise _error(
                "compare",
                "give the arms' settings with --a and/or --b, e.g. --a 'flow.*.cc=reno' --b 'flow.*.cc=cubic' "
                "(here: a={'flow.*.cc': 'reno'}, b={'flow.*.cc': 'cubic'})",
            )
        arm_list = [(names[0], a), (names[1], b)]
    else:
        arm_list = list(arms.items())
    if backend != "model":
        _ensure_agent()
    extra = {} if max_runs is None else {"max_runs": max_runs}
    task = _native.start_compare(
        sc, arm_list, runs=runs, metrics=_metrics(metrics), jobs=jobs, backend=backend, kernel=kernel,
        max_wall=max_wall, keep_traces=keep_traces, **extra,
    )
    output, _ = _wait(task, f"compare {sc.name}", "runs", progress, _interrupted("compare", Comparison))
    return Comparison(output)


def _vary(vary: Union[Mapping[str, Sequence[Any]], Sequence[str], str]) -> List[Tuple[str, List[Any]]]:
    if isinstance(vary, str):
        vary = [vary]
    if isinstance(vary, Mapping):
        out = []
        for k, v in vary.items():
            out.append((k, [v] if isinstance(v, (str, int, float, bool)) else list(v)))
        return out
    return [_native.parse_vary(v) for v in vary]


def sweep(
    scenario: ScenarioLike,
    vary: Union[Mapping[str, Sequence[Any]], Sequence[str], str],
    *,
    runs: int = 3,
    metrics: Union[None, str, Iterable[str]] = None,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    shard: Optional[str] = None,
    max_runs: Optional[int] = None,
    progress: Optional[bool] = None,
) -> Sweep:
    """Runs the cartesian product of `vary` (``{key: [values]}``, or
    ``"KEY=V1,V2"`` strings as ``--vary``; the first key changes slowest),
    each point on seeds 1..runs, as ``tcplab sweep``. shard: ``"K/N"``,
    one slice of the points x seeds (``--shard``)."""
    sc = _scenario(scenario)
    if backend != "model":
        _ensure_agent()
    extra = {} if max_runs is None else {"max_runs": max_runs}
    task = _native.start_sweep(
        sc, _vary(vary), runs=runs, metrics=_metrics(metrics), jobs=jobs, backend=backend, kernel=kernel,
        max_wall=max_wall, shard=shard, **extra,
    )
    output, _ = _wait(task, f"sweep {sc.name}", "runs", progress, _interrupted("sweep", Sweep))
    return Sweep(output)


def diff(
    scenario: ScenarioLike,
    *,
    runs: int = 5,
    metrics: Union[None, str, Iterable[str]] = None,
    jobs: Optional[int] = None,
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    keep_traces: bool = True,
    progress: Optional[bool] = None,
) -> Diff:
    """Runs `scenario` on the model and on the real kernel, `runs` seeds
    each, and compares them metric by metric, as ``tcplab diff``. Needs a
    kernel image (``tcplab kernel build``; :func:`kernel_available`)."""
    sc = _scenario(scenario)
    _ensure_agent()
    task = _native.start_diff(
        sc, runs=runs, metrics=_metrics(metrics), jobs=jobs, kernel=kernel, max_wall=max_wall, keep_traces=keep_traces
    )
    output, _ = _wait(task, f"diff {sc.name}", "runs", progress, _interrupted("diff", Diff))
    return Diff(output)


def reproduce(
    name: str,
    *,
    runs: Optional[int] = None,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    root: Union[None, str, "os.PathLike[str]"] = None,
    progress: Optional[bool] = None,
) -> Union[Reproduction, List[Reproduction]]:
    """Runs a registered experiment (a kernel patch's own test, patch off
    and on), as ``tcplab reproduce NAME``; ``"all"`` runs every one and
    returns a list. runs: per arm (default the experiment's own). On the
    model, the kernel's committed figures (``results/linux/NAME.json``
    under `root`, default the clone around the current directory) stand
    beside tcplab's in :attr:`Reproduction.text`."""
    if backend != "model":
        _ensure_agent()
    if root is None:
        root = _repo_root()
        # Relative to the current directory, as the CLI names the file it reads.
        root = None if root is None else os.path.relpath(root)
    task = _native.start_reproduce(
        name, runs=runs, jobs=jobs, backend=backend, kernel=kernel, max_wall=max_wall,
        root=None if root is None else os.fspath(root),
    )

    def wrap(out: Any) -> Any:
        items = [Reproduction(x) for x in out]
        return items if name == "all" else items[0]

    output, _ = _wait(task, f"reproduce {name}", "runs", progress, _interrupted("reproduce", wrap))
    return wrap(output)  # type: ignore[no-any-return]


def knobs() -> pd.DataFrame:
    """Every knob a scenario's ``[tcp]`` table accepts (as ``tcplab
    knobs``): table, name, key (the path for :meth:`Scenario.set`, e.g.
    ``tcp.tcp_reordering``; per flow ``flow.ID.tcp....``), default
    (linux-current), accepts, linux (the sysctl or module parameter it
    models), side, kernel (what the kernel backend does with it), doc."""
    return _pandas(_native.knobs_table())


def presets() -> pd.DataFrame:
    """Each kernel-era preset's knobs that differ from linux-current (as
    ``tcplab presets``): preset, knob, value, linux_current. Presets equal
    to linux-current have no rows; :func:`preset_names` lists them all."""
    return _pandas(_native.presets_table())


def preset_names() -> List[str]:
    """Every preset's name (``tcp.preset = NAME``)."""
    return list(_native.preset_names())


def counters() -> pd.DataFrame:
    """The counters the model keeps, by nstat name (as ``tcplab counters``)."""
    return pd.DataFrame({"counter": list(_native.counter_names())})


def experiments() -> pd.DataFrame:
    """The registered experiments (:func:`reproduce`)."""
    return _pandas(_native.experiments_table())


def experiment(name: str) -> Dict[str, Any]:
    """A registered experiment as data, to run a variant of it with
    :func:`compare`: ``scenario`` (the shipped scenario file with the
    experiment's own overrides, a :class:`Scenario`), ``arms`` (``{name:
    [settings]}``, patch off first), ``metrics`` and ``runs``. For example
    the same arms on shorter runs::

        e = tcplab.experiment("dctcp-rpc")
        tcplab.compare(e["scenario"].set("run.duration", "1s"), arms=e["arms"], metrics=e["metrics"], runs=2)
    """
    sc, arms, metrics, runs = _native.experiment(name)
    return {"name": name, "scenario": sc, "arms": dict(arms), "metrics": list(metrics), "runs": int(runs)}


def kernel_image(kernel: Optional[str] = None) -> str:
    """The kernel image the linux backend would use, as ``linux-RELEASE``;
    raises :class:`Error` (the CLI's message: build one with ``tcplab
    kernel build``) when there is none or no guest agent."""
    _ensure_agent()
    return str(_native.kernel_image(kernel))


def kernel_images() -> pd.DataFrame:
    """The kernel images built on this machine, newest first (as ``tcplab
    kernel list``): key, name, label, release, series (``mainline`` or an
    era), hz, this_host (bootable here), source. Give a key (or a unique
    prefix, or a name) as ``kernel=`` to run on that image."""
    return _pandas(_native.kernel_images())


def kernel_available(kernel: Optional[str] = None) -> bool:
    """Whether the linux backend can run (an image and the guest agent)."""
    try:
        kernel_image(kernel)
    except Error:
        return False
    return True


def default_jobs() -> int:
    """Worker threads a batch uses by default: every core, as the CLI."""
    return int(_native.default_jobs())


def _error(location: str, message: str) -> Error:
    e = Error(f"{location}: {message}")
    e.location = location  # type: ignore[attr-defined]
    e.path = None  # type: ignore[attr-defined]
    e.message = message  # type: ignore[attr-defined]
    return e

