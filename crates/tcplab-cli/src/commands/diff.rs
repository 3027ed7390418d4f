//! `tcplab diff`: one scenario on the model and on the kernel.

use crate::options::{jobs, settings, KernelArgs, MetricArgs};
use crate::terminal::{emit, progress};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::overrides::ScenarioText;
use tcplab_lab::{plot, Error};

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    file: String,
    /// Override a field on both backends, e.g. run.duration=10s. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Runs per backend, on seeds 1 to N.
    #[arg(long, value_name = "N", default_value_t = 5)]
    runs: u32,
    /// Worker threads: model runs, and kernel guests (one per core); default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    #[command(flatten)]
    metric: MetricArgs,
    /// Print one JSON object: {"scenario", "runs", "rows": [{"metric", "model", "linux", ...}]}.
    #[arg(long)]
    json: bool,
    /// Write plots (PNG and SVG) to DIR: each flow's cwnd on both backends (seed 1),
    /// and each metric's distribution. DIR is created.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    kernel: KernelArgs,
}

pub(crate) fn run(a: DiffArgs) -> Result<ExitCode, Error> {
    let scenario = ScenarioText::read(&a.file)?;
    let base = settings("--set", &a.set)?;
    // A bad file or --set is reported before any kernel is looked for.
    scenario.load(&tcplab_lab::compare::set_layers(&base), None)?;
    let (model, linux) = a.kernel.pair()?;
    let mut out = Outputs::new();
    let plot_dir = a.plot.as_deref().map(|d| out.dir("--plot", d)).transpose()?;
    let spec = tcplab_lab::diff::DiffSpec {
        scenario,
        base,
        runs: a.runs,
        metrics: a.metric.metric.clone(),
        jobs: jobs(a.jobs),
        model,
        linux,
        keep_first: plot_dir.is_some(),
    };
    let bar = progress("diff");
    let diff = spec.run(bar.as_ref())?;
    if let Some(dir) = &plot_dir {
        let n = plot::write_all(&mut out, dir, &diff.charts())?;
        eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", dir.display());
    }
    out.commit();
    emit(&if a.json { diff.to_json() + "\n" } else { diff.to_table() })
}
