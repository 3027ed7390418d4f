//! `tcplab faithfulness`: the differential suite on both backends, as a
//! Markdown page.

use crate::options::{jobs, KernelArgs};
use crate::terminal::{command_line, emit, progress};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::{Error, EXIT_OK};

#[derive(Args, Debug)]
pub(crate) struct FaithfulnessArgs {
    /// The suite: a TOML file of [[scenario]] tables (name, file, set, note).
    #[arg(value_name = "SUITE.toml", default_value = "scenarios/diff/suite.toml")]
    suite: PathBuf,
    /// Runs per backend and scenario, on seeds 1 to N.
    #[arg(long, value_name = "N", default_value_t = 5)]
    runs: u32,
    /// Worker threads: model runs, and kernel guests (one per core); default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Write the Markdown page to FILE (default: stdout).
    #[arg(long, value_name = "FILE.md")]
    out: Option<PathBuf>,
    /// Write each scenario's cwnd plots (both backends, seed 1) to DIR/<scenario>/, linked
    /// from the page relative to its directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Only the scenarios whose name contains this text (repeatable).
    #[arg(long, value_name = "TEXT")]
    only: Vec<String>,
    #[command(flatten)]
    kernel: KernelArgs,
}

pub(crate) fn run(a: FaithfulnessArgs) -> Result<ExitCode, Error> {
    use tcplab_lab::faithfulness;
    let (model, linux) = a.kernel.pair()?;
    let mut entries = faithfulness::load_manifest(&a.suite)?;
    if !a.only.is_empty() {
        entries.retain(|e| a.only.iter().any(|o| e.name.contains(o.as_str())));
        if entries.is_empty() {
            return Err(Error::at("--only", "no scenario of the suite matches"));
        }
    }
    let mut out = Outputs::new();
    if let Some(p) = &a.out {
        out.reserve_file("--out", p)?;
    }
    let plot_dir = a.plot.as_deref().map(|d| out.dir("--plot", d)).transpose()?;
    let bar = |name: &str| progress(&format!("faithfulness: {name}"));
    let spec =
        faithfulness::SuiteSpec { runs: a.runs, jobs: jobs(a.jobs), model, linux, keep_first: plot_dir.is_some() };
    let result = faithfulness::run(&entries, Path::new("."), &spec, &bar)?;
    // Plots are linked relative to the page.
    let link = match (&plot_dir, &a.out) {
        (Some(d), Some(page)) => {
            let base = page.parent().unwrap_or(Path::new(""));
            Some(d.strip_prefix(base).unwrap_or(d).display().to_string())
        }
        (Some(d), None) => Some(d.display().to_string()),
        _ => None,
    };
    if let Some(dir) = &plot_dir {
        // PNG only: the page links them, and it lives in the repository.
        for (sub, charts) in result.charts() {
            let d = out.dir("--plot", &dir.join(sub))?;
            for (stem, c) in &charts {
                c.write_png(&mut out, &d, stem)?;
            }
        }
    }
    let scope = if a.only.is_empty() {
        faithfulness::Scope::Whole { parts: a.out.as_deref().map(part_pages).unwrap_or_default() }
    } else {
        faithfulness::Scope::Only(a.only.clone())
    };
    let page = result.markdown(&command_line(), link.as_deref(), &scope);
    match &a.out {
        Some(p) => {
            out.write(p, page.as_bytes())?;
            out.commit();
            eprintln!("tcplab: wrote {}", p.display());
            Ok(ExitCode::from(EXIT_OK))
        }
        None => {
            out.commit();
            emit(&page)
        }
    }
}

/// The pages of parts of the suite (`--only`) next to the whole suite's
/// page `page`: the `faithfulness-*.md` files of its directory, by name.
fn part_pages(page: &Path) -> Vec<String> {
    let dir = page.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut parts: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("faithfulness-") && n.ends_with(".md"))
        .filter(|n| page.file_name().and_then(|f| f.to_str()) != Some(n.as_str()))
        .collect();
    parts.sort();
    parts
}
