"""Ctrl-C: a batch stops cleanly and keeps its finished runs; a single
run stops; the next call runs again. And the progress bar."""

import os
import signal
import threading
import time

import pytest

import tcplab


def interrupt_after(seconds):
    def kick():
        time.sleep(seconds)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=kick, daemon=True)
    t.start()
    return t


def long_scenario():
    return tcplab.Scenario.load("scenarios/two-flows.toml").set("run.duration", "25s")


def test_interrupted_batch_keeps_finished_runs(in_root):
    sc = long_scenario()
    started = time.monotonic()
    interrupt_after(1.5)
    with pytest.raises(tcplab.Interrupted) as e:
        tcplab.compare(sc, a={"flow.*.cc": "reno"}, b={"flow.*.cc": "cubic"}, runs=20, jobs=1, progress=False)
    stopped = time.monotonic() - started
    partial = e.value.result
    assert isinstance(e.value, KeyboardInterrupt)
    assert tcplab.last_interrupted() is partial
    assert not partial.complete
    assert 0 < partial.finished_runs < 40
    assert len(partial.runs) == partial.finished_runs
    # Seeds in order from 1, arm a first (one worker thread).
    a = partial.runs[partial.runs["arm"] == "a"]
    assert list(a["seed"]) == list(range(1, len(a) + 1))
    assert stopped < 10, f"took {stopped:.1f} s to stop"
    assert "interrupted" in repr(partial)
    # The next call runs normally.
    c = tcplab.compare(sc.copy().set("run.duration", "21s"), a={"flow.*.cc": "reno"}, runs=1, progress=False)
    assert c.complete and c.finished_runs == 2


def test_interrupted_single_run_raises_keyboardinterrupt(in_root):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml").set("run.duration", "600s")
    interrupt_after(0.5)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as e:
        tcplab.run(sc, trace=False, progress=False)
    assert not isinstance(e.value, tcplab.Interrupted)
    assert time.monotonic() - started < 5
    r = tcplab.run(sc.copy().set("run.duration", "21s"), trace=False, progress=False)
    assert r.sim_time_s == 21.0


def test_progress_bar_on_stderr(in_root, capfd):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml").set("run.duration", "21s")
    tcplab.compare(sc, a={"flow.*.cc": "reno"}, runs=3, jobs=1, progress=True)
    err = capfd.readouterr().err
    assert "compare scenarios/two-flows.toml [" in err and "/6 runs" in err and "eta" in err
    tcplab.compare(sc, a={"flow.*.cc": "reno"}, runs=3, jobs=1, progress=False)
    assert capfd.readouterr().err == ""


def test_runs_leave_the_gil_free(in_root):
    sc = tcplab.Scenario.load("scenarios/two-flows.toml")  # 120 s simulated: about a second of wall time
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=count, daemon=True)
    t.start()
    started = time.monotonic()
    tcplab.run(sc, trace=False, progress=False)
    took = time.monotonic() - started
    stop.set()
    t.join()
    during = [x for x in ticks if started <= x <= started + took]
    # The Python thread kept running through the simulation; a held GIL
    # would stop it for the whole run (a loaded machine delays it a little).
    gaps = [b - a for a, b in zip(during, during[1:])]
    assert took > 0.3 and len(during) > 50
    assert max(gaps) < min(0.25, took / 3), f"the Python thread was held for {max(gaps):.3f} s of {took:.3f} s"
