//! `tcplab compare`: two arms of a scenario over seeds.

use crate::options::{jobs, prepare_outputs, settings, BackendArgs, MetricArgs, RunsArgs};
use crate::runs::Runs;
use crate::terminal::{command_line, emit, progress, warn_if_long};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_lab::compare::{ArmSpec, CompareSpec, Comparison};
use tcplab_lab::outputs::Outputs;
use tcplab_lab::overrides::ScenarioText;
use tcplab_lab::{html, plot, Error};

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    file: String,
    /// Settings of arm A: KEY=VALUE[,KEY=VALUE...], the dotted paths of --set;
    /// flow.*.KEY sets every flow. Repeatable.
    #[arg(long = "a", value_name = "KEY=VALUE,...")]
    a: Vec<String>,
    /// Settings of arm B, like --a.
    #[arg(long = "b", value_name = "KEY=VALUE,...")]
    b: Vec<String>,
    /// Name of arm A in tables, plots and JSON.
    #[arg(long, value_name = "NAME", default_value = "a")]
    name_a: String,
    /// Name of arm B.
    #[arg(long, value_name = "NAME", default_value = "b")]
    name_b: String,
    /// Override a field in both arms (before --a/--b), e.g. run.duration=10s. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    runs: RunsArgs,
    #[command(flatten)]
    metric: MetricArgs,
    /// Print one JSON object: {"arms": [{"name", "settings", "runs", "summary"}],
    /// "ratio_of_medians", ...}.
    #[arg(long)]
    json: bool,
    /// Write plots (PNG and SVG) to DIR: each metric's distribution per arm, and
    /// the first run of each arm over time. DIR is created.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Write a self-contained HTML report (settings, tables, inline SVG plots).
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
}

pub(crate) fn run(a: CompareArgs) -> Result<ExitCode, Error> {
    if a.a.is_empty() && a.b.is_empty() {
        return Err(Error::at(
            "compare",
            "give the arms' settings with --a and/or --b, e.g. --a 'flow.*.cc=reno' --b 'flow.*.cc=cubic'",
        ));
    }
    let backends = a.backend.backends()?;
    if backends.len() > 1 && (a.plot.is_some() || a.report.is_some()) {
        return Err(Error::at("--backend both", "--plot and --report take one backend: run each backend on its own"));
    }
    let scenario = ScenarioText::read(&a.file)?;
    let threads = jobs(a.runs.jobs);
    let mut prepared = Vec::new();
    for backend in backends {
        let arm = |name: &String, flag: &str, s: &[String]| -> Result<ArmSpec, Error> {
            Ok(ArmSpec {
                name: name.clone(),
                flag: flag.into(),
                settings: settings(flag, s)?,
                backend: backend.clone(),
            })
        };
        let spec = CompareSpec {
            scenario: scenario.clone(),
            base: settings("--set", &a.set)?,
            arms: vec![arm(&a.name_a, "--a", &a.a)?, arm(&a.name_b, "--b", &a.b)?],
            runs: a.runs.runs,
            metrics: a.metric.metric.clone(),
            jobs: threads,
            keep_first: a.plot.is_some() || a.report.is_some(),
            max_runs: a.runs.max_runs,
        };
        prepared.push((backend, spec.prepare()?));
    }
    let mut out = Outputs::new();
    let plot_dir = prepare_outputs(&mut out, a.plot.as_deref(), a.report.as_deref())?;
    for (backend, p) in &prepared {
        warn_if_long(p.first_scenario(), backend, p.total_runs(), threads);
    }
    let runs = Runs::open(&a.runs, "compare")?;
    let mut done = Vec::new();
    for (backend, p) in prepared {
        let bar = progress(&format!("compare ({})", backend.label()));
        match p.run_with(bar.as_ref(), runs.journal()) {
            Ok(cmp) => done.push(cmp),
            Err(e) => return runs.finish(Err(e)),
        }
    }
    runs.finish(Ok(()))?;
    let mut text = String::new();
    for cmp in &done {
        compare_outputs(&a, &mut out, plot_dir.as_deref(), cmp)?;
        text.push_str(&if a.json { cmp.to_json() + "\n" } else { cmp.to_table() });
    }
    out.commit();
    emit(&text)
}

/// A comparison's plots and report.
pub(crate) fn compare_outputs(
    a: &CompareArgs,
    out: &mut Outputs,
    plot_dir: Option<&Path>,
    cmp: &Comparison,
) -> Result<(), Error> {
    if let Some(dir) = plot_dir {
        let n = plot::write_all(out, dir, &plot::compare_charts(cmp))?;
        eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", dir.display());
    }
    if let Some(r) = &a.report {
        let html = html::compare_report(cmp, Some(&command_line()))?;
        out.write(r, html.as_bytes())?;
        eprintln!("tcplab: wrote the report to {}", r.display());
    }
    Ok(())
}
