//! `tcplab sweep`, and `tcplab merge` of its shards' JSON.

use crate::options::{jobs, settings, BackendArgs, MetricArgs, RunsArgs};
use crate::runs::Runs;
use crate::terminal::{emit, progress, warn_if_long};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::overrides::ScenarioText;
use tcplab_lab::sweep::{self, SweepSpec};
use tcplab_lab::Error;

#[derive(Args, Debug)]
pub(crate) struct SweepArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    file: String,
    /// A knob and its values: KEY=V1,V2,... (dotted path as for --set). Repeatable;
    /// the points are the cartesian product, the first --vary changing slowest.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    vary: Vec<String>,
    /// Override a field at every point (before --vary). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    runs: RunsArgs,
    #[command(flatten)]
    metric: MetricArgs,
    /// Run only the K-th of N round-robin slices of the point x seed list (1 <= K <= N);
    /// needs --json. Join the outputs with `tcplab merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Print JSON (what `tcplab merge` reads): every run with its seed, scenario hash
    /// and tcplab version, and each point's summary.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV: one row per point, the metric's n, min, median, mean, max, CI.
    #[arg(long)]
    csv: bool,
}

pub(crate) fn run(a: SweepArgs) -> Result<ExitCode, Error> {
    let shard = a.shard.as_deref().map(sweep::parse_shard).transpose()?;
    if shard.is_some() && !a.json {
        return Err(Error::at(
            "--shard",
            "a shard's output is for `tcplab merge`, which reads JSON: add --json (and --csv to merge instead)",
        ));
    }
    let backend = match a.backend.backends()?.as_slice() {
        [one] => one.clone(),
        _ => return Err(Error::at("--backend both", "a sweep runs on one backend; `tcplab diff` compares the two")),
    };
    let threads = jobs(a.runs.jobs);
    let spec = SweepSpec {
        backend: backend.clone(),
        scenario: ScenarioText::read(&a.file)?,
        base: settings("--set", &a.set)?,
        vary: a.vary.iter().map(|v| sweep::parse_vary(v)).collect::<Result<_, _>>()?,
        runs: a.runs.runs,
        metrics: a.metric.metric.clone(),
        shard,
        jobs: threads,
        max_runs: a.runs.max_runs,
    };
    let prepared = spec.prepare()?;
    warn_if_long(prepared.first_scenario(), &backend, prepared.job_count(), threads);
    let runs = Runs::open(&a.runs, "sweep")?;
    let bar = progress("sweep");
    let result = prepared.run_with(bar.as_ref(), runs.journal());
    let result = runs.finish(result)?;
    emit(&if a.json {
        result.to_json() + "\n"
    } else if a.csv {
        result.to_csv()
    } else {
        result.to_table()
    })
}

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// JSON files written by `tcplab sweep --shard K/N --json`.
    #[arg(value_name = "FILES", required = true)]
    files: Vec<PathBuf>,
    /// Print the merged sweep as JSON (as `tcplab sweep --json` would).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the merged sweep as CSV.
    #[arg(long)]
    csv: bool,
    /// Merge even when runs are missing (a shard not given): the summaries
    /// then cover fewer runs, said on stderr. Without it missing runs are an error.
    #[arg(long)]
    partial: bool,
}

pub(crate) fn merge(a: MergeArgs) -> Result<ExitCode, Error> {
    let mut files = Vec::new();
    for f in &a.files {
        let text = tcplab_lab::input::read_text(f, "sweep JSON file", tcplab_lab::input::RESULTS_LIMIT)?;
        files.push((f.display().to_string(), text));
    }
    let (result, warnings) = sweep::merge(&files)?;
    if !a.partial && !warnings.is_empty() {
        return Err(Error::at(
            "merge",
            format!("{}; give every shard's file, or --partial to merge what there is", warnings.join("; ")),
        ));
    }
    for w in warnings {
        eprintln!("tcplab: warning: {w}");
    }
    emit(&if a.json {
        result.to_json() + "\n"
    } else if a.csv {
        result.to_csv()
    } else {
        result.to_table()
    })
}
