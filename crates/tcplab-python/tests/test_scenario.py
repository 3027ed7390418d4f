"""Scenarios: loading, overrides and the CLI's error messages."""

import pytest

import tcplab

from conftest import SCENARIOS

BAD = """description = "bad"
[run]
duration = "1s"
[[node]]
name = "h1"
[[node]]
name = "h2"
[[link]]
name = "l"
a = "h1"
b = "h2"
rate = "10Mbit"
[[flow]]
id = "f1"
from = "h1"
to = "h2"
cc = "cubik"
"""


def test_load_and_check_match_the_cli(cli, in_root):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml")
    _, out, _ = cli("check", "scenarios/two-flows.toml")
    assert sc.check() + "\n" == out
    assert sc.flows == ["f1", "f2"] and "bottleneck" in sc.links
    assert sc.duration_s == 120.0 and sc.seed == 1


def test_set_forms_and_values():
    sc = tcplab.Scenario.load(SCENARIOS / "two-flows.toml")
    same = sc.set("run.duration", "25s")
    assert same is sc
    sc.set({"flow.*.cc": "reno", "run.goodput_window": "2s"}).set("tcp.tcp_reordering=10")
    sc.set("tcp.tcp_sack", True).set("tcp.tcp_rmem", [4096, 131072, 6291456])
    assert sc.settings == [
        "run.duration=25s",
        "flow.*.cc=reno",
        "run.goodput_window=2s",
        "tcp.tcp_reordering=10",
        "tcp.tcp_sack=true",
        "tcp.tcp_rmem=[4096, 131072, 6291456]",
    ]
    assert sc.duration_s == 25.0
    assert "set=" in repr(sc) and "<code>run.duration=25s</code>" in sc._repr_html_()
    c = sc.copy().set("run.duration", "7s")
    assert sc.duration_s == 25.0 and c.duration_s == 7.0


def test_errors_carry_file_line_and_field(cli, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(BAD)
    with pytest.raises(tcplab.Error) as e:
        tcplab.Scenario.load(p)
    code, _, err = cli("check", p, check=False)
    assert code == 2
    assert err == f"error: {e.value}\n"
    assert e.value.location == f"{p}:17:6"
    assert e.value.path == "flow[0].cc"
    assert "cubic" in e.value.message  # did you mean


def test_a_bad_set_raises_and_changes_nothing(cli, in_root):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml")
    with pytest.raises(tcplab.Error) as e:
        sc.set("tcp.tcp_reorderin", 10)
    _, _, err = cli("check", "scenarios/two-flows.toml", "--set", "tcp.tcp_reorderin=10", check=False)
    assert err == f"error: {e.value}\n"
    assert e.value.location == "--set tcp.tcp_reorderin=10"
    assert sc.settings == []
    with pytest.raises(TypeError):
        sc.set("run.duration", object())


def test_from_toml_names_the_text():
    with pytest.raises(tcplab.Error) as e:
        tcplab.Scenario.from_toml(BAD, name="inline.toml")
    assert str(e.value).startswith("inline.toml:17:6: flow[0].cc: ")
    ok = tcplab.Scenario.from_toml(BAD.replace("cubik", "reno"))
    assert ok.name == "<toml>" and ok.flows == ["f1"]
