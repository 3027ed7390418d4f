"""Batches: compare, sweep, reproduce and diff give the CLI's numbers and
summaries; the DataFrames hold them."""

import json
import os

import pytest

import tcplab

from conftest import without_wall


def test_compare_is_the_cli_compare(cli, in_root):
    args = ["scenarios/bulk-cubic.toml", "--set", "run.duration=2s", "--a", "flow.*.cc=reno", "--b", "flow.*.cc=cubic",
            "--runs", "3", "--metric", "goodput,TcpRetransSegs", "--json"]
    _, out, _ = cli("compare", *args)
    sc = tcplab.Scenario.load("scenarios/bulk-cubic.toml").set("run.duration", "2s")
    c = tcplab.compare(sc, a={"flow.*.cc": "reno"}, b=["flow.*.cc=cubic"], runs=3, metrics=["goodput,TcpRetransSegs"], jobs=2, progress=False)
    assert without_wall(c.to_json()) == without_wall(out)
    want = json.loads(out)
    assert c.complete and c.finished_runs == 6 and c.arms == ["a", "b"]
    runs = c.runs
    for arm in want["arms"]:
        for run in arm["runs"]:
            row = runs[(runs["arm"] == arm["name"]) & (runs["seed"] == run["seed"])]
            assert row["goodput"].item() == run["metrics"]["goodput"]
            assert row["TcpRetransSegs"].item() == run["metrics"]["TcpRetransSegs"]
        s = c.summary[(c.summary["arm"] == arm["name"]) & (c.summary["metric"] == "goodput")].iloc[0]
        w = arm["summary"]["goodput"]
        assert (s["median"], s["ci95_lo"], s["ci95_hi"], s["n"]) == (w["median"], w["ci95"][0], w["ci95"][1], w["n"])
    assert c.ratio("goodput") == want["ratio_of_medians"]["goodput"]
    assert "ratio of medians" in repr(c) and "<table" in c._repr_html_()
    pytest.importorskip("matplotlib")
    ax = c.plot("goodput")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]


def test_compare_more_arms_and_traces(in_root):
    sc = tcplab.Scenario.load("scenarios/bulk-cubic.toml").set("run.duration", "1s")
    c = tcplab.compare(sc, arms={"reno": {"flow.*.cc": "reno"}, "cubic": None, "dctcp": "flow.*.cc=dctcp"}, runs=2, keep_traces=True, progress=False)
    assert c.arms == ["reno", "cubic", "dctcp"] and c.finished_runs == 6
    t = c.trace("reno")
    assert len(t) > 10 and set(t["flow"].astype(str)) == set(sc.flows)
    with pytest.raises(KeyError):
        c.trace("bbr")


def test_compare_errors_are_the_cli_errors(cli, in_root):
    with pytest.raises(tcplab.Error) as e:
        tcplab.compare("scenarios/bulk-cubic.toml", a={"flow.*.cc": "reno"}, metrics="goodput.nosuchflow", runs=1)
    _, _, err = cli("compare", "scenarios/bulk-cubic.toml", "--a", "flow.*.cc=reno", "--metric", "goodput.nosuchflow", "--runs", "1", check=False)
    assert err == f"error: {e.value}\n"
    with pytest.raises(tcplab.Error) as e:
        tcplab.compare("scenarios/bulk-cubic.toml", a="flow.*.cc=cubik", runs=1)
    _, _, err = cli("compare", "scenarios/bulk-cubic.toml", "--a", "flow.*.cc=cubik", "--runs", "1", check=False)
    assert err == f"error: {e.value}\n"
    with pytest.raises(tcplab.Error, match="give the arms' settings"):
        tcplab.compare("scenarios/bulk-cubic.toml")


def test_sweep_is_the_cli_sweep(cli, in_root):
    _, out, _ = cli("sweep", "scenarios/bulk-cubic.toml", "--set", "run.duration=1s", "--vary", "link.bottleneck.rate=50Mbit,100Mbit",
                    "--vary", "flow.*.cc=reno,cubic", "--runs", "2", "--json")
    sc = tcplab.Scenario.load("scenarios/bulk-cubic.toml").set("run.duration", "1s")
    s = tcplab.sweep(sc, {"link.bottleneck.rate": ["50Mbit", "100Mbit"], "flow.*.cc": ["reno", "cubic"]}, runs=2, progress=False)
    assert without_wall(s.to_json()) == without_wall(out)
    s2 = tcplab.sweep(sc, ["link.bottleneck.rate=50Mbit,100Mbit", "flow.*.cc=reno,cubic"], runs=2, progress=False)
    assert s2.to_json() == s.to_json()
    assert len(s.runs) == 8 and len(s.summary) == 4
    row = s.summary[(s.summary["link.bottleneck.rate"] == "50Mbit") & (s.summary["flow.*.cc"] == "reno")].iloc[0]
    want = json.loads(out)["points"][0]["summary"]["goodput"]
    assert row["median"] == want["median"]
    _, csv_out, _ = cli("sweep", "scenarios/bulk-cubic.toml", "--set", "run.duration=1s", "--vary", "link.bottleneck.rate=50Mbit,100Mbit",
                        "--vary", "flow.*.cc=reno,cubic", "--runs", "2", "--csv")
    assert s.to_csv() == csv_out


def test_reproduce_is_the_cli_reproduce(cli, in_root):
    _, out, _ = cli("reproduce", "reordering", "--runs", "2", "--json")
    r = tcplab.reproduce("reordering", runs=2, progress=False)
    assert isinstance(r, tcplab.Reproduction)
    assert without_wall(r.to_json()) == without_wall(out)
    want = json.loads(out)
    checks = r.checks
    assert list(checks["ok"]) == [c["ok"] for c in want["checks"]]
    assert list(checks["value"]) == [c["value"] for c in want["checks"]]
    assert r.passed == all(c["ok"] for c in want["checks"])
    ref = r.reference
    assert len(ref) == len(want["reference"]["values"]) and ref["patch"].notna().all()
    assert r.name == "reordering" and r.title in repr(r) or r.name in repr(r)
    with pytest.raises(tcplab.Error) as e:
        tcplab.reproduce("nosuch")
    _, _, err = cli("reproduce", "nosuch", check=False)
    assert err == f"error: {e.value}\n"


def test_experiment_as_data_runs_as_compare(in_root):
    e = tcplab.experiment("dctcp-rpc")
    assert list(e["arms"])[:3] == ["cubic", "dctcp", "dctcp-floor2"]
    assert e["scenario"].settings == ["run.duration=10s"]
    sc = e["scenario"].copy().set("run.duration", "0.3s")
    arms = {k: e["arms"][k] for k in ["dctcp", "dctcp-floor2"]}
    c = tcplab.compare(sc, arms=arms, metrics=["rpc.*-10k.p99.9"], runs=1, progress=False)
    assert c.arms == ["dctcp", "dctcp-floor2"] and c.finished_runs == 2


def test_diff_without_a_kernel_is_the_cli_error(cli, in_root):
    kernel = "/nonexistent-image-dir"
    with pytest.raises(tcplab.Error) as e:
        tcplab.diff("scenarios/bulk-reno.toml", runs=1, kernel=kernel)
    _, _, err = cli("diff", "scenarios/bulk-reno.toml", "--runs", "1", "--kernel", kernel, check=False)
    assert err == f"error: {e.value}\n"


@pytest.mark.skipif(os.environ.get("TCPLAB_KERNEL_TESTS") != "1", reason="kernel runs: set TCPLAB_KERNEL_TESTS=1 (CI does)")
def test_diff_on_the_kernel(in_root):
    sc = tcplab.Scenario.load("scenarios/bulk-cubic.toml").set("run.duration", "1s")
    d = tcplab.diff(sc, runs=1, metrics=["goodput", "TcpRetransSegs"], progress=False)
    rows = d.rows
    assert list(rows["metric"]) == ["goodput", "TcpRetransSegs"]
    assert rows.loc[0, "model_median"] > 0 and rows.loc[0, "linux_median"] > 0
    assert d.arms == ["model", "linux"] and d.finished_runs == 2
    assert d.model_settings == ["flow.*.tcp_receiver.rcv_truesize=per-segment"]
    assert len(d.trace("linux")) > 0 and len(d.trace("model")) > 0
