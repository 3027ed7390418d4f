"""Conversion timings of the Python package (docs/PERFORMANCE.md):
how long a 10,000-flow result and a long trace take to cross into Python
as Arrow, pandas and polars, apart from the runs themselves.

    python crates/tcplab-python/benches/convert.py      # from the repository root

Each conversion is timed 5 times on the same result (each from the Rust
result: the pandas cache is bypassed); the median is printed, with the
minimum and maximum.
"""

import statistics
import sys
import time

import pyarrow as pa

import tcplab

REPEAT = 5


def timed(label, rows, f):
    times = []
    out = None
    for _ in range(REPEAT):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"  {label:<50} {rows:>9,} rows  {med * 1e3:9.1f} ms  (min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f})")
    return out


def convert(r, name):
    native = r._native
    n = native.table(name).num_rows
    timed(f"{name}: Rust result -> Arrow table", n, lambda: native.table(name))
    t = native.table(name)
    timed(f"{name}: Arrow C stream -> pyarrow.Table", n, lambda: pa.table(t))
    timed(f"{name}: -> pandas (Arrow, then to_pandas)", n, lambda: pa.table(native.table(name)).to_pandas())
    try:
        import polars as pl

        timed(f"{name}: -> polars (from the C stream)", n, lambda: pl.DataFrame(native.table(name)))
    except ImportError:
        pass


def main():
    print(f"tcplab {tcplab.__version__}, Python {sys.version.split()[0]}, pyarrow {pa.__version__}")
    sc = tcplab.Scenario.load("scenarios/scale/100k-flows.toml").set(
        {"topology.hosts_per_leaf": 10, "traffic.parallel": 250, "run.duration": "100ms"}
    )
    t = time.perf_counter()
    big = tcplab.run(sc, trace=True, progress=False)
    print(f"10,000 flows ({big._native.flow_count} flows, {sc.name} with {', '.join(sc.settings)}): run {time.perf_counter() - t:.1f} s")
    for name in ["flows", "flow_counters", "links", "trace"]:
        convert(big, name)
    sc = tcplab.Scenario.load("scenarios/two-flows.toml").set({"run.duration": "500s", "run.trace_interval": "1ms"})
    t = time.perf_counter()
    long = tcplab.run(sc, trace=True, progress=False)
    print(f"long trace ({sc.name} with {', '.join(sc.settings)}): run {time.perf_counter() - t:.1f} s")
    convert(long, "trace")


if __name__ == "__main__":
    main()
