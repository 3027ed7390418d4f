"""One-call plots with matplotlib (where it is installed), drawn from the
results' DataFrames, the exported records, never from internal state."""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

#: Linux's ssthresh before the first reduction (TCP_INFINITE_SSTHRESH), not plotted.
INFINITE_SSTHRESH = 0x7FFFFFFF

#: States shaded behind cwnd: loss recovery and RTO recovery.
_SHADED = {"Recovery": "tab:orange", "Loss": "tab:red", "CWR": "tab:purple"}


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt  # type: ignore[import-not-found]
    except ImportError as e:
        raise ImportError("plots need matplotlib: pip install matplotlib") from e
    _, ax = plt.subplots(figsize=(9, 4))
    return ax


def _spans(t: pd.Series, states: pd.Series, name: str) -> list:
    """(start, end) times of the runs of rows in state `name`."""
    spans = []
    start = None
    prev_t = None
    for ti, s in zip(t, states):
        if s == name and start is None:
            start = ti
        elif s != name and start is not None:
            spans.append((start, ti))
            start = None
        prev_t = ti
    if start is not None and prev_t is not None:
        spans.append((start, prev_t))
    return spans


def cwnd(trace: pd.DataFrame, ax: Any = None, ssthresh: bool = True, inflight: bool = False, title: str = "") -> Any:
    ax = _axes(ax)
    if trace.empty:
        raise ValueError("no trace rows to plot (was the run made with trace=True?)")
    flows = list(dict.fromkeys(trace["flow"].astype(str)))
    for f in flows:
        d = trace[trace["flow"].astype(str) == f]
        (line,) = ax.plot(d["time_s"], d["cwnd"], label=f"{f} cwnd", linewidth=1)
        if ssthresh:
            s = d["ssthresh"].where(d["ssthresh"] < INFINITE_SSTHRESH)
            ax.plot(d["time_s"], s, linestyle="--", color=line.get_color(), linewidth=0.8, label=f"{f} ssthresh")
        if inflight:
            ax.plot(d["time_s"], d["inflight"], linestyle=":", color=line.get_color(), linewidth=0.8, label=f"{f} in flight")
        if len(flows) == 1:
            states = d["ca_state"].astype(str)
            for name, colour in _SHADED.items():
                for i, (a, b) in enumerate(_spans(d["time_s"], states, name)):
                    ax.axvspan(a, b, color=colour, alpha=0.15, linewidth=0, label=name if i == 0 else None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("segments")
    ax.set_title(f"cwnd{': ' + title if title else ''}")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def cwnd_pair(model: pd.DataFrame, linux: pd.DataFrame, flow: Optional[str], ax: Any = None) -> Any:
    ax = _axes(ax)
    if flow is None:
        flow = str(model["flow"].iloc[0])
    for name, t in (("model", model), ("linux", linux)):
        d = t[t["flow"].astype(str) == flow]
        ax.plot(d["time_s"], d["cwnd"], label=name, linewidth=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")
    ax.set_title(f"flow {flow}: cwnd, model and linux (seed 1)")
    ax.legend(fontsize="small")
    return ax


def distribution(cmp: Any, metric: Optional[str], ax: Any = None) -> Any:
    ax = _axes(ax)
    metrics = cmp.metrics.set_index("metric")
    if metric is None:
        metric = str(metrics.index[0])
    if metric not in metrics.index:
        raise KeyError(f"no metric {metric!r} (metrics: {', '.join(metrics.index)})")
    scale = float(metrics.loc[metric, "display_scale"])
    unit = str(metrics.loc[metric, "display_unit"])
    runs = cmp.runs
    summary = cmp.summary
    for i, arm in enumerate(cmp.arms):
        v = runs[runs["arm"].astype(str) == arm][metric] / scale
        ax.scatter([i] * len(v), v, alpha=0.6, s=18, label=None)
        row = summary[(summary["arm"].astype(str) == arm) & (summary["metric"] == metric)]
        if len(row) and not pd.isna(row["median"].iloc[0]):
            med = row["median"].iloc[0] / scale
            lo = row["ci95_lo"].iloc[0] / scale
            hi = row["ci95_hi"].iloc[0] / scale
            ax.errorbar([i + 0.15], [med], yerr=[[med - lo], [hi - med]], fmt="D", color="black", capsize=4, markersize=5)
    ax.set_xticks(range(len(cmp.arms)))
    ax.set_xticklabels(cmp.arms, rotation=15, ha="right")
    ax.set_ylabel(f"{metric} ({unit})")
    ax.set_title(f"{metrics.loc[metric, 'description']}: runs, median and 95% CI")
    return ax


def sweep(sw: Any, metric: Optional[str], x: Optional[str], ax: Any = None) -> Any:
    ax = _axes(ax)
    s = sw.summary
    if metric is None:
        metric = sw.metric_names[0]
    keys = list(sw.vary)
    if x is None:
        x = keys[0]
    d = s[s["metric"] == metric]
    others = [k for k in keys if k != x]
    groups = d.groupby(others, sort=False) if others else [("", d)]
    for label, g in groups:
        ax.errorbar(
            g[x], g["median"], yerr=[g["median"] - g["ci95_lo"], g["ci95_hi"] - g["median"]], marker="o", capsize=3,
            label=str(label) if others else None,
        )
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric} ({d['unit'].iloc[0] if len(d) else ''})")
    if others:
        ax.legend(title=", ".join(others), fontsize="small")
    return ax
