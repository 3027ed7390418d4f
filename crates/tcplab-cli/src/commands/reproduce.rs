//! `tcplab reproduce`: registered experiments beside the numbers of their
//! kernel patches.

use crate::options::{jobs, prepare_outputs, BackendArgs};
use crate::terminal::{command_line, emit, progress};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_lab::backend::Backend;
use tcplab_lab::experiments::{self, REGISTRY};
use tcplab_lab::outputs::Outputs;
use tcplab_lab::{plot, Error, EXIT_CHECK_FAILED, EXIT_OK};

#[derive(Args, Debug)]
pub(crate) struct ReproduceArgs {
    /// Experiment name, or `all`.
    #[arg(value_name = "NAME|all")]
    name: String,
    /// Runs per arm (default: the experiment's own count).
    #[arg(long, value_name = "N")]
    runs: Option<u32>,
    #[command(flatten)]
    backend: BackendArgs,
    /// Worker threads (each run is single-threaded); default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Print one JSON object per experiment (a line each): the compare JSON plus
    /// "experiment", "reference" and "checks".
    #[arg(long)]
    json: bool,
    /// Write plots to DIR/<experiment>/ (PNG and SVG).
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Write a self-contained HTML report of every experiment run.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Exit with status 1 when a check of what the patch's effect should
    /// look like fails; without it a failed check is reported and the exit
    /// status stays 0.
    #[arg(long)]
    strict: bool,
}

pub(crate) fn run(a: ReproduceArgs) -> Result<ExitCode, Error> {
    let chosen = experiments::select(REGISTRY, &a.name)?;
    if chosen.is_empty() {
        // `reproduce all` with nothing registered: say so, successfully.
        if a.json {
            eprintln!("{}", experiments::NOTHING_REGISTERED);
            return Ok(ExitCode::from(EXIT_OK));
        }
        return emit(&format!("{}\n", experiments::NOTHING_REGISTERED));
    }
    if let Some(r) = a.runs {
        tcplab_lab::compare::check_runs(r)?;
    }
    let backends = a.backend.backends()?;
    if backends.len() > 1 && (a.plot.is_some() || a.report.is_some()) {
        return Err(Error::at("--backend both", "--plot and --report take one backend: run each backend on its own"));
    }
    // The kernel's column of the model's tables: this invocation's kernel
    // runs with --backend both, else the committed results files, read
    // before anything runs so that a bad one fails at once.
    let model_first = matches!(backends.first(), Some(Backend::Model { .. }));
    let kernel_runs = backends.len() > 1;
    let mut committed = Vec::new();
    if model_first && !kernel_runs {
        for e in &chosen {
            let path = experiments::kernel_column::results_path(Path::new("."), e.name);
            committed.push(experiments::KernelColumn::load(&path, e.name)?);
        }
    }
    let mut prepared = Vec::new();
    for backend in backends {
        let opts = experiments::Options {
            runs: a.runs,
            jobs: jobs(a.jobs),
            keep_first: a.plot.is_some() || a.report.is_some(),
            backend,
        };
        for e in &chosen {
            prepared.push((e, e.compare_spec(&opts)?.prepare()?));
        }
    }
    let mut out = Outputs::new();
    let plot_dir = prepare_outputs(&mut out, a.plot.as_deref(), a.report.as_deref())?;
    let mut done = Vec::new();
    for (e, p) in prepared {
        let bar = progress(e.name);
        let cmp = p.run(bar.as_ref())?;
        done.push(experiments::Reproduction { experiment: e, comparison: cmp, linux: None });
    }
    if model_first {
        // Model runs come first, then the kernel's, experiment by experiment.
        let (model, kernel) = done.split_at_mut(chosen.len());
        for (i, r) in model.iter_mut().enumerate() {
            r.linux = match kernel.get(i) {
                Some(k) => Some(experiments::KernelColumn::from_comparison(&k.comparison)),
                None => committed.get_mut(i).and_then(Option::take),
            };
        }
    }
    if let Some(dir) = &plot_dir {
        for r in &done {
            let sub = out.dir("--plot", &dir.join(plot::file_stem(r.experiment.name)))?;
            let n = plot::write_all(&mut out, &sub, &plot::compare_charts(&r.comparison))?;
            eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", sub.display());
        }
    }
    if let Some(path) = &a.report {
        let html = experiments::html_report(&done, Some(&command_line()))?;
        out.write(path, html.as_bytes())?;
        eprintln!("tcplab: wrote the report to {}", path.display());
    }
    out.commit();
    let text: String = if a.json {
        done.iter().map(|r| r.to_json() + "\n").collect()
    } else {
        done.iter().map(|r| r.to_table()).collect::<Vec<_>>().join("\n")
    };
    let code = emit(&text)?;
    if done.iter().all(|r| r.passed()) {
        Ok(code)
    } else if a.strict {
        eprintln!("tcplab: an experiment check failed (see the check: lines)");
        Ok(ExitCode::from(EXIT_CHECK_FAILED))
    } else {
        eprintln!("tcplab: an experiment check failed (see the check: lines); --strict makes that exit 1");
        Ok(code)
    }
}
