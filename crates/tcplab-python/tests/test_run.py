"""One run: the same seed gives the CLI's numbers, and the tables hold them."""

import csv
import json
import math

import pyarrow as pa
import pytest

import tcplab

from conftest import without_wall


@pytest.mark.parametrize("trace", [True, False])
def test_same_seed_same_numbers_as_the_cli(cli, in_root, trace):
    _, out, _ = cli("run", "scenarios/two-flows.toml", "--json", "--seed", "1")
    r = tcplab.run("scenarios/two-flows.toml", seed=1, trace=trace, progress=False)
    assert without_wall(r.to_json()) == without_wall(out)
    want = json.loads(out)
    f = r.flows.set_index("id")
    for wf in want["flows"]:
        row = f.loc[wf["id"]]
        for k in ["goodput_bps", "bytes_delivered", "retransmits", "final_cwnd", "final_ssthresh", "srtt_us", "goodput_last_bps"]:
            assert row[k] == wf[k], k
        assert row["min_rtt_us"] == wf["min_rtt_us"]
        assert row["pacing_rate"] == wf["sender"]["pacing_rate"]
    links = r.links.set_index("id")
    for wl in want["links"]:
        assert links.loc[wl["id"], "drops"] == wl["drops"]
        assert links.loc[wl["id"], "utilization"] == wl["utilization"]
    counters = dict(zip(r.counters["counter"], r.counters["value"]))
    assert counters == want["counters"]
    fc = r.flow_counters.set_index("flow")
    assert fc.loc["f1", "TcpRetransSegs"] == want["flows"][0]["counters"]["TcpRetransSegs"]
    assert r.jain_index == want["fairness"]["jain_index"]
    assert r.seed == 1 and r.backend == "model" and r.events == want["events"]


def test_rpc_and_another_seed(cli, in_root):
    sc = tcplab.Scenario.load("scenarios/dctcp-rpc.toml").set("run.duration", "0.2s")
    _, out, _ = cli("run", "scenarios/dctcp-rpc.toml", "--set", "run.duration=0.2s", "--seed", "7", "--json")
    r = tcplab.run(sc, seed=7, trace=False, progress=False)
    assert without_wall(r.to_json()) == without_wall(out)
    want = {f["id"]: f["rpc"] for f in json.loads(out)["flows"] if f["rpc"]}
    rpc = r.rpc.set_index("flow")
    assert set(rpc.index) == set(want)
    for fid, w in want.items():
        assert rpc.loc[fid, "p999_us"] == w["p999_us"] and rpc.loc[fid, "count"] == w["count"]


def test_trace_is_the_cli_trace_files(cli, in_root, tmp_path):
    sc = tcplab.Scenario.load("scenarios/bulk-reno.toml").set("run.duration", "2s")
    cli("run", "scenarios/bulk-reno.toml", "--set", "run.duration=2s", "--trace", tmp_path)
    r = tcplab.run(sc, progress=False)
    t = r.trace()
    assert list(t.columns[:7]) == ["flow", "time_s", "cwnd", "ssthresh", "srtt_us", "inflight", "ca_state"]
    for fid in sc.flows:
        rows = list(csv.DictReader(open(tmp_path / f"{fid}.csv")))
        mine = r.trace(fid)
        assert len(rows) == len(mine) > 10
        for want, (_, got) in zip(rows, mine.iterrows()):
            assert float(want["time_s"]) == pytest.approx(got["time_s"], abs=1e-9)
            for k in ["cwnd", "ssthresh", "srtt_us", "inflight", "delivered", "pacing_rate"]:
                assert int(want[k]) == got[k], k
            assert want["ca_state"] == got["ca_state"]
    q = r.queue_trace()
    assert set(q["link"].astype(str)) <= set(r.links["id"])


def test_no_trace_kept_says_how(in_root):
    r = tcplab.run("scenarios/bulk-reno.toml", trace=False, progress=False)
    with pytest.raises(tcplab.Error, match="trace=True"):
        r.trace()


def test_arrow_capsules_pyarrow_and_polars(in_root):
    r = tcplab.run(tcplab.Scenario.load("scenarios/two-flows.toml").set({"run.duration": "3s", "run.goodput_window": "1s"}), progress=False)
    native = r._native.table("trace")
    # The PyCapsule interface: pyarrow reads the stream as it is.
    reader = pa.RecordBatchReader.from_stream(native)
    table = reader.read_all()
    assert table.num_rows == native.num_rows == len(r.trace())
    assert pa.types.is_dictionary(table.schema.field("flow").type)
    assert table.schema.field("cwnd").type == pa.uint32()
    assert table.schema.field("dctcp_alpha").nullable
    # Twice: each export is a new stream over the same buffers.
    assert pa.table(native).equals(table)
    assert r.arrow("flows").column("id").to_pylist() == ["f1", "f2"]
    pl = pytest.importorskip("polars")
    df = r.polars("flows")
    assert isinstance(df, pl.DataFrame) and df["id"].to_list() == ["f1", "f2"]
    assert pl.DataFrame(r._native.table("links")).height == len(r.links)


def test_repr_html_and_plot(in_root):
    r = tcplab.run(tcplab.Scenario.load("scenarios/two-flows.toml").set({"run.duration": "3s", "run.goodput_window": "1s"}), progress=False)
    assert repr(r).startswith("<tcplab.RunResult scenarios/two-flows.toml backend=model seed=1: 2 flows")
    html = r._repr_html_()
    assert "<table" in html and "f1" in html and "Jain" in html
    assert str(r) == r.text and "Jain's fairness index" in r.text
    pytest.importorskip("matplotlib")
    ax = r.plot_cwnd()
    assert len(ax.get_lines()) >= 2 and ax.get_xlabel() == "time (s)"
    ax = r.plot_cwnd("f1")
    assert all("f1" in l.get_label() for l in ax.get_lines())


def test_listings_are_the_registry(cli):
    k = tcplab.knobs()
    _, knobs_text, _ = cli("knobs")
    for name in k["name"]:
        assert f"{name} = " in knobs_text, name
    row = k.set_index("key").loc["tcp.tcp_reordering"]
    assert row["default"] == "3" and row["linux"] == "net.ipv4.tcp_reordering"
    p = tcplab.presets()
    _, presets_text, _ = cli("presets")
    assert set(p["preset"]) <= set(tcplab.preset_names())
    for _, x in p.iterrows():
        assert f"= {x['value']}  (linux-current: {x['linux_current']})" in presets_text
    _, counters_text, _ = cli("counters")
    assert list(tcplab.counters()["counter"]) == counters_text.split()
    e = tcplab.experiments()
    assert {"reordering", "dctcp-rpc", "hystart"} <= set(e["name"])


def test_bad_options_and_missing_kernel_are_the_cli_errors(cli, in_root):
    for args, kwargs in [
        (["--backend", "bsd"], {"backend": "bsd"}),
        (["--max-wall=-1"], {"max_wall": -1}),
        (["--backend", "linux", "--kernel", "/nonexistent-image-dir"], {"backend": "linux", "kernel": "/nonexistent-image-dir"}),
    ]:
        with pytest.raises(tcplab.Error) as e:
            tcplab.run("scenarios/bulk-reno.toml", progress=False, **kwargs)
        code, _, err = cli("run", "scenarios/bulk-reno.toml", *args, check=False)
        assert code == 2 and err == f"error: {e.value}\n", args
    assert not tcplab.kernel_available("/nonexistent-image-dir")


def test_max_wall_stops_a_run(in_root):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml")
    with pytest.raises(tcplab.Error, match="wall-clock limit"):
        tcplab.run(sc, max_wall=0.05, trace=False, progress=False)
