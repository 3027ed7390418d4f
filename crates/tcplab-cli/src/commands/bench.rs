//! `tcplab bench`: the simulator's speed, on one scenario or the suite.

use crate::options::prepare_outputs;
use crate::terminal::{emit, interactive};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::bench;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::plot;
use tcplab_lab::Error;

#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// Run the suite: the dumbbell, a 128-host leaf-spine incast, 100,000 connections, and the cost per
    /// segment and per connection from 1 to 100,000 connections (about a minute of CPU).
    #[arg(long)]
    suite: bool,
    /// With --suite: write the cost-vs-connections plots (PNG and SVG) to DIR. DIR is created.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Print one JSON object: {"rows": [{"name", "connections", "events", "segments", "wall_s", "cpu_s",
    /// "segments_per_cpu_sec", "peak_rss_mb", ...}], "segments_basis", "build"} (build: "release, plain" or
    /// "release, profile-guided", scripts/pgo-build.sh).
    #[arg(long)]
    json: bool,
    /// Internal: measure suite entry N in this process and print its row as JSON (the suite runs each
    /// entry in a fresh process so that its memory figure is its own).
    #[arg(long, value_name = "N", hide = true)]
    entry: Option<usize>,
}

/// Runs suite entry `i` in a child process (`tcplab bench --entry i`).
fn in_child(i: usize) -> Result<bench::BenchRow, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::msg(format!("cannot find this program: {e}")))?;
    let out = std::process::Command::new(exe)
        .args(["bench", "--entry", &i.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| Error::msg(format!("cannot run bench entry {i}: {e}")))?;
    if !out.status.success() {
        return Err(Error::msg(format!("bench entry {i} failed ({})", out.status)));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| Error::msg(format!("bench entry {i}: unreadable row: {e}")))
}

pub(crate) fn run(a: BenchArgs) -> Result<ExitCode, Error> {
    if let Some(i) = a.entry {
        let row = bench::measure_entry(i)?;
        return emit(&(serde_json::to_string(&row).map_err(|e| Error::msg(e.to_string()))? + "\n"));
    }
    if a.plot.is_some() && !a.suite {
        return Err(bench::plot_needs_suite());
    }
    let mut out = Outputs::new();
    let plot_dir = prepare_outputs(&mut out, a.plot.as_deref(), None)?;
    let report = if a.suite {
        bench::suite(|i, n, name| {
            if interactive() {
                eprintln!("tcplab: bench {}/{n}: {name}...", i + 1);
            }
            in_child(i)
        })?
    } else {
        if interactive() {
            eprintln!("tcplab: running the benchmark scenario on one thread...");
        }
        bench::bench()?
    };
    if let Some(dir) = plot_dir {
        let n = plot::write_all(&mut out, &dir, &report.charts())?;
        eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", dir.display());
    }
    out.commit();
    emit(&if a.json { report.to_json() + "\n" } else { report.to_table() })
}
