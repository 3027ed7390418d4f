"""Result objects: the lab's results with their parts as DataFrames.

Every part is an Arrow table made in Rust (``tcplab._native``) and read
through the Arrow PyCapsule interface: ``arrow(name)`` gives a
``pyarrow.Table``, ``polars(name)`` a ``polars.DataFrame``, and the
properties (``flows``, ``runs``, ...) pandas DataFrames, converted once
and cached. ``to_json()`` and ``text`` are the CLI's own output.
"""

from __future__ import annotations

import html
import json
from typing import Any, Dict, List, Optional, Sequence, Union

import pandas as pd
import pyarrow as pa

from . import _plot

_MAX_HTML_ROWS = 20


def _pandas(table: Any) -> pd.DataFrame:
    return pa.table(table).to_pandas()


def _polars(table: Any) -> Any:
    try:
        import polars as pl  # type: ignore[import-not-found]
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("polars is not installed: pip install polars") from e
    return pl.from_arrow(pa.table(table))


def _html_frame(df: pd.DataFrame, caption: str) -> str:
    more = ""
    if len(df) > _MAX_HTML_ROWS:
        more = f"<div><i>{len(df) - _MAX_HTML_ROWS} more rows</i></div>"
        df = df.head(_MAX_HTML_ROWS)
    return f"<div><b>{html.escape(caption)}</b>{df.to_html(index=False, max_cols=20)}{more}</div>"


class _Tables:
    """Arrow-backed tables with a cache of their pandas conversions."""

    _native: Any

    def _table(self, name: str) -> Any:
        raise NotImplementedError

    def _frame(self, name: str) -> pd.DataFrame:
        cache: Dict[str, pd.DataFrame] = self.__dict__.setdefault("_frames", {})
        if name not in cache:
            cache[name] = _pandas(self._table(name))
        return cache[name]

    def arrow(self, name: str) -> pa.Table:
        """Part `name` as a ``pyarrow.Table`` (no copy of the values)."""
        return pa.table(self._table(name))

    def polars(self, name: str) -> Any:
        """Part `name` as a ``polars.DataFrame`` (needs polars)."""
        return _polars(self._table(name))

    def to_json(self) -> str:
        """The CLI's ``--json`` output, byte for byte (one line)."""
        return str(self._native.to_json())

    def to_dict(self) -> Dict[str, Any]:
        """``to_json()`` parsed."""
        return dict(json.loads(self.to_json()))

    @property
    def text(self) -> str:
        """The CLI's table for people."""
        return str(self._native.text())

    def __str__(self) -> str:
        return self.text


class RunResult(_Tables):
    """The result of one run (:func:`tcplab.run`).

    DataFrames: :attr:`flows`, :attr:`links`, :attr:`counters`,
    :attr:`flow_counters`, :attr:`rpc`, :attr:`flow_runs`, and the time
    series :meth:`trace` (per flow) and :meth:`queue_trace` (per link
    direction). The numbers are those of ``tcplab run --json`` for the
    same scenario and seed (:meth:`to_json` is that output).
    """

    def __init__(self, native: Any) -> None:
        self._native = native

    def _table(self, name: str) -> Any:
        return self._native.table(name)

    @property
    def scenario(self) -> str:
        """The scenario file (as given) or name."""
        return str(self._native.scenario)

    @property
    def description(self) -> Optional[str]:
        return self._native.description  # type: ignore[no-any-return]

    @property
    def backend(self) -> str:
        """``model``, or the kernel that ran it (``linux-6.12.117``)."""
        return str(self._native.backend)

    @property
    def seed(self) -> int:
        return int(self._native.seed)

    @property
    def sim_time_s(self) -> float:
        return float(self._native.sim_time_s)

    @property
    def events(self) -> int:
        return int(self._native.events)

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds of the simulation (not deterministic)."""
        return float(self._native.wall_s)

    @property
    def jain_index(self) -> Optional[float]:
        """Jain's index of the flows' goodput over ``run.goodput_window``, if set."""
        f = self._native.fairness
        return None if f is None else f[1]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow: goodput, bytes, retransmits, final cwnd, RTT, tcp_info, RPC percentiles."""
        return self._frame("flows")

    @property
    def links(self) -> pd.DataFrame:
        """One row per link direction: utilization, packets, drops, CE marks, peak queue."""
        return self._frame("links")

    @property
    def counters(self) -> pd.DataFrame:
        """Every counter (nstat name) summed over all flows: columns counter, value."""
        return self._frame("counters")

    @property
    def flow_counters(self) -> pd.DataFrame:
        """One row per flow, one column per counter (missing where the kernel counts per host)."""
        return self._frame("flow_counters")

    @property
    def rpc(self) -> pd.DataFrame:
        """RPC flows' latency statistics (µs)."""
        return self._frame("rpc")

    @property
    def flow_runs(self) -> pd.DataFrame:
        """One row per connection of a repeated flow."""
        return self._frame("flow_runs")

    def trace(self, flows: Union[None, str, Sequence[str]] = None) -> pd.DataFrame:
        """The flows' time series as one long DataFrame: flow, time_s, cwnd,
        ssthresh, srtt_us, inflight, ca_state, delivered (segments),
        delivered_bytes, pacing_rate (bytes/s), reordering, dctcp_alpha.
        `flows` picks flows by id. Needs ``run(..., trace=True)``."""
        df = self._frame("trace")
        if flows is None:
            return df
        ids = [flows] if isinstance(flows, str) else list(flows)
        return df[df["flow"].isin(ids)].reset_index(drop=True)

    def queue_trace(self) -> pd.DataFrame:
        """Each link direction's queue over time: link, time_s, packets, bytes, drops."""
        return self._frame("queue_trace")

    def plot_cwnd(self, flows: Union[None, str, Sequence[str]] = None, ax: Any = None, ssthresh: bool = True, inflight: bool = False) -> Any:
        """cwnd over time for each flow (or `flows`), with ssthresh dashed
        and loss recovery shaded; returns the matplotlib Axes."""
        return _plot.cwnd(self.trace(flows), ax=ax, ssthresh=ssthresh, inflight=inflight, title=self.scenario)

    def __repr__(self) -> str:
        n = self._native
        return (
            f"<tcplab.RunResult {n.scenario} backend={n.backend} seed={n.seed}: {n.flow_count} flows, "
            f"{n.link_count} link directions, {n.sim_time_s:g} s simulated, {n.events} events, wall {n.wall_s:.3f} s>"
        )

    def _repr_html_(self) -> str:
        n = self._native
        head = (
            f"<div><b>tcplab run</b> <code>{html.escape(n.scenario)}</code> backend <code>{html.escape(n.backend)}</code>, "
            f"seed {n.seed}, {n.sim_time_s:g} s simulated, {n.events} events, wall {n.wall_s:.3f} s</div>"
        )
        if n.description:
            head += f"<div><i>{html.escape(n.description)}</i></div>"
        if self.jain_index is not None:
            head += f"<div>Jain's fairness index over the last {n.fairness[0]:g} s: {self.jain_index:.4f}</div>"
        cols = ["id", "cc", "goodput_bps", "bytes_delivered", "retransmits", "final_cwnd", "srtt_us", "goodput_last_bps"]
        counters = self.counters[self.counters["value"] != 0]
        return (
            head
            + _html_frame(self.flows[cols], "flows")
            + _html_frame(self.links, "links")
            + _html_frame(counters, "counters (non-zero, all flows)")
        )


class Comparison(_Tables):
    """Arms of a scenario over seeds (:func:`tcplab.compare`).

    DataFrames: :attr:`runs` (one row per run: arm, backend, seed, one
    column per metric, in the metric's JSON unit), :attr:`summary` (arm x
    metric: n, min, median, mean, max, the bootstrap 95 % CI of the
    median, two groups when the runs split) and :attr:`metrics` (unit,
    description, ratio of the second arm's median to the first's). If the
    batch was interrupted, ``complete`` is False and the tables hold the
    runs that finished.
    """

    _kind = "compare"

    def __init__(self, native: Any) -> None:
        self._native = native

    def _table(self, name: str) -> Any:
        return self._native.comparison_table(name)

    @property
    def scenario(self) -> str:
        return str(self._native.scenario)

    @property
    def arms(self) -> List[str]:
        return list(self._native.arms)

    @property
    def metric_names(self) -> List[str]:
        return list(self._native.metrics)

    @property
    def complete(self) -> bool:
        """Whether every run finished (False after an interruption)."""
        return bool(self._native.complete)

    @property
    def finished_runs(self) -> int:
        return int(self._native.finished_runs)

    @property
    def runs_per_arm(self) -> int:
        return int(self._native.runs)

    @property
    def wall_s(self) -> float:
        return float(self._native.wall_s)

    @property
    def runs(self) -> pd.DataFrame:
        """One row per run: arm, backend, seed, sim_s, one column per metric."""
        return self._frame("runs")

    @property
    def summary(self) -> pd.DataFrame:
        """One row per arm and metric: n, min, median, mean, max, ci95_lo, ci95_hi, low_runs, high_runs, gap."""
        return self._frame("summary")

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per metric: unit, display_unit, display_scale, description, ratio_of_medians."""
        return self._frame("metrics")

    def ratio(self, metric: Optional[str] = None) -> Optional[float]:
        """The second arm's median over the first's for `metric` (default the first metric)."""
        m = self.metrics
        row = m.iloc[0] if metric is None else m[m["metric"] == metric].iloc[0]
        r = row["ratio_of_medians"]
        return None if pd.isna(r) else float(r)

    def trace(self, arm: str) -> pd.DataFrame:
        """Arm `arm`'s first run's traces (seed 1), kept with ``keep_traces=True``."""
        return _pandas(self._native.trace(arm))

    def notes(self) -> List[str]:
        """What the CLI prints as notes: runs in two groups, runs all identical."""
        return list(self._native.notes())

    def plot(self, metric: Optional[str] = None, ax: Any = None) -> Any:
        """Each arm's runs of `metric` (default: the first) as points, with the
        median and its 95 % CI; returns the matplotlib Axes."""
        return _plot.distribution(self, metric, ax=ax)

    def _title(self) -> str:
        return f"{self._kind} {self.scenario}"

    def __repr__(self) -> str:
        state = "" if self.complete else f", interrupted: {self.finished_runs} runs finished"
        parts = []
        for _, row in self.metrics.iterrows():
            r = row["ratio_of_medians"]
            if not pd.isna(r) and len(self.arms) >= 2:
                parts.append(f"{row['metric']} {self.arms[1]}/{self.arms[0]} = {r:.4f}")
        ratios = ("; ratio of medians: " + ", ".join(parts)) if parts else ""
        return (
            f"<tcplab.{type(self).__name__} {self.scenario}: arms {self.arms}, {self.runs_per_arm} runs per arm"
            f"{state}{ratios}>"
        )

    def _summary_html(self) -> str:
        s = self.summary
        m = self.metrics.set_index("metric")
        rows = []
        for _, r in s.iterrows():
            scale = m.loc[r["metric"], "display_scale"]
            unit = m.loc[r["metric"], "display_unit"]

            def show(x: Any) -> str:
                return "-" if pd.isna(x) else f"{x / scale:.4g}"

            rows.append(
                {
                    "arm": r["arm"],
                    "metric": f"{r['metric']} ({unit})",
                    "n": r["n"],
                    "median": show(r["median"]),
                    "95% CI": f"[{show(r['ci95_lo'])}, {show(r['ci95_hi'])}]",
                    "min": show(r["min"]),
                    "max": show(r["max"]),
                }
            )
        return _html_frame(pd.DataFrame(rows), "summary")

    def _repr_html_(self) -> str:
        head = f"<div><b>tcplab {html.escape(self._title())}</b>: {self.runs_per_arm} runs per arm, wall {self.wall_s:.1f} s</div>"
        if not self.complete:
            head += f"<div><b>interrupted</b>: {self.finished_runs} runs finished</div>"
        ratios = self.metrics[["metric", "description", "ratio_of_medians"]]
        notes = "".join(f"<div>note: {html.escape(n)}</div>" for n in self.notes())
        return head + self._summary_html() + _html_frame(ratios, "ratio of medians (second arm / first)") + notes


class Reproduction(Comparison):
    """A registered experiment (:func:`tcplab.reproduce`): the comparison
    of its arms, plus the patch's numbers (:attr:`reference`), the
    checks of its headline (:attr:`checks`, :attr:`passed`) and, where
    the kernel's figures are known, the CLI's text with them (:attr:`text`)."""

    _kind = "reproduce"

    @property
    def name(self) -> str:
        return str(self._native.name)

    @property
    def title(self) -> str:
        """The patch's subject line."""
        return str(self._native.title)

    @property
    def source(self) -> str:
        return str(self._native.source)

    @property
    def experiment_summary(self) -> str:
        """What the patch changed and what the experiment shows."""
        return str(self._native.summary)

    @property
    def quote(self) -> str:
        """The patch's own table, verbatim."""
        return str(self._native.quote)

    @property
    def passed(self) -> bool:
        """Every check passed."""
        return bool(self._native.passed)

    @property
    def linux(self) -> Optional[str]:
        """The kernel whose figures the text sets beside the model's, if any."""
        return self._native.linux  # type: ignore[no-any-return]

    @property
    def checks(self) -> pd.DataFrame:
        """The checks: check (its description and range), value, ok."""
        return _pandas(self._native.checks())

    @property
    def reference(self) -> pd.DataFrame:
        """The patch's numbers (JSON units) beside tcplab's median of the same arm and metric."""
        return _pandas(self._native.reference())

    def _title(self) -> str:
        return f"reproduce {self.name}: {self.title}"

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "a check failed"
        state = "" if self.complete else f", interrupted: {self.finished_runs} runs finished"
        return f"<tcplab.Reproduction {self.name}: arms {self.arms}, {self.runs_per_arm} runs per arm, {verdict}{state}>"

    def _repr_html_(self) -> str:
        checks = self.checks
        verdict = "<b>all checks passed</b>" if self.passed else "<b>a check failed</b>"
        return (
            super()._repr_html_()
            + _html_frame(self.reference, "the patch's numbers and tcplab's")
            + _html_frame(checks, "checks")
            + f"<div>{verdict}</div>"
        )


class Diff(Comparison):
    """One scenario on the model and on the kernel (:func:`tcplab.diff`):
    :attr:`rows` has one row per metric with both backends' medians, CIs
    and ranges, their relative difference and whether they overlap."""

    _kind = "diff"

    @property
    def rows(self) -> pd.DataFrame:
        return _pandas(self._native.rows())

    @property
    def model_settings(self) -> List[str]:
        """What the model's side ran with besides the common settings."""
        return list(self._native.model_settings)

    def plot_cwnd(self, flow: Optional[str] = None, ax: Any = None) -> Any:
        """Seed 1's cwnd of `flow` (default: the first) on both backends."""
        model = self.trace("model")
        linux = self.trace("linux")
        return _plot.cwnd_pair(model, linux, flow, ax=ax)

    def _repr_html_(self) -> str:
        return super()._repr_html_() + _html_frame(self.rows, "model vs linux")


class Sweep(_Tables):
    """A sweep (:func:`tcplab.sweep`): :attr:`runs` (one row per point and
    seed: the varied keys, seed, one column per metric) and
    :attr:`summary` (one row per point and metric)."""

    def __init__(self, native: Any) -> None:
        self._native = native

    def _table(self, name: str) -> Any:
        return self._native.table(name)

    @property
    def scenario(self) -> str:
        return str(self._native.scenario)

    @property
    def vary(self) -> Dict[str, List[str]]:
        return {k: list(v) for k, v in self._native.vary}

    @property
    def metric_names(self) -> List[str]:
        return list(self._native.metrics)

    @property
    def complete(self) -> bool:
        return bool(self._native.complete)

    @property
    def finished_runs(self) -> int:
        return int(self._native.finished_runs)

    @property
    def runs(self) -> pd.DataFrame:
        return self._frame("runs")

    @property
    def summary(self) -> pd.DataFrame:
        return self._frame("summary")

    def to_csv(self) -> str:
        """``tcplab sweep --csv``."""
        return str(self._native.to_csv())

    def plot(self, metric: Optional[str] = None, x: Optional[str] = None, ax: Any = None) -> Any:
        """The median of `metric` (default: the first) with its 95 % CI
        against the varied key `x` (default: the first); returns the Axes."""
        return _plot.sweep(self, metric, x, ax=ax)

    def __repr__(self) -> str:
        state = "" if self.complete else f", interrupted: {self.finished_runs} runs finished"
        return f"<tcplab.Sweep {self.scenario}: {self._native.points} points x {self._native.runs} runs{state}>"

    def _repr_html_(self) -> str:
        head = f"<div><b>tcplab sweep</b> <code>{html.escape(self.scenario)}</code>: {self._native.points} points x {self._native.runs} runs</div>"
        if not self.complete:
            head += f"<div><b>interrupted</b>: {self.finished_runs} runs finished</div>"
        return head + _html_frame(self.summary, "summary")
