//! `tcplab align`: the first packet where the model's trace leaves the
//! kernel's (or another model run's), and the alignment suite's page.

use crate::options::{settings, KernelArgs};
use crate::terminal::emit;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::align::run::{Against, Spec};
use tcplab_lab::align::{suite, Ignore, Options};
use tcplab_lab::outputs::Outputs;
use tcplab_lab::overrides::ScenarioText;
use tcplab_lab::{faithfulness, units, Error};

/// The suite's manifest when `--suite` is given without one.
const SUITE: &str = "scenarios/align/suite.toml";

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    tcplab align scenarios/align/bulk-cubic.toml\n  \
    tcplab align scenarios/align/bulk-cubic.toml --b flow.bulk.tcp.initcwnd=20   (model against model)\n  \
    tcplab align --suite --markdown --out docs/ALIGNMENT.md\n\n\
    `tcplab diff` compares medians over seeds; `tcplab align` compares one run of each backend packet by packet.")]
pub(crate) struct AlignArgs {
    /// Scenario file (TOML); not with --suite.
    #[arg(value_name = "FILE", required_unless_present = "suite")]
    file: Option<String>,
    /// Override a field on both sides, e.g. run.duration=2s. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The seed of both runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Align against the model with these settings on top (repeatable) instead of the kernel.
    #[arg(long = "b", value_name = "KEY=VALUE")]
    b: Vec<String>,
    /// Largest time difference between two matching packets that is not a divergence (e.g. 50us, 1ms).
    #[arg(long, value_name = "TIME", default_value = "50us")]
    tolerance: String,
    /// Fields left out of the comparison: any of window, ts, ecn, time (comma-separated).
    #[arg(long, value_name = "FIELDS", default_value = "")]
    ignore: String,
    /// Packets of each side shown before the divergence.
    #[arg(long, value_name = "N", default_value_t = 5)]
    context: usize,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
    /// Write a plot of both sides' sequence numbers around the divergence (PNG and SVG) to DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Keep the kernel's packet capture in FILE (the agent's format, crates/tcplab-agent/src/capture.rs).
    #[arg(long, value_name = "FILE")]
    capture: Option<PathBuf>,
    /// Align every entry of a suite manifest (default scenarios/align/suite.toml) against the kernel.
    #[arg(long, value_name = "SUITE.toml", num_args = 0..=1, default_missing_value = SUITE)]
    suite: Option<PathBuf>,
    /// With --suite: print the page (docs/ALIGNMENT.md) instead of a table.
    #[arg(long, requires = "suite")]
    markdown: bool,
    /// With --suite: write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE", requires = "suite")]
    out: Option<PathBuf>,
    /// With --suite: only the entries whose name contains one of these (comma-separated).
    #[arg(long, value_name = "NAMES", requires = "suite")]
    only: Option<String>,
    #[command(flatten)]
    kernel: KernelArgs,
}

fn options(a: &AlignArgs) -> Result<Options, Error> {
    let tolerance = units::parse_time(&a.tolerance).map_err(|e| Error::at("--tolerance", e))?;
    let ignore = Ignore::parse(&a.ignore).map_err(|e| Error::at("--ignore", e))?;
    Ok(Options { tolerance_ns: tolerance.as_nanos(), context: a.context, ignore })
}

pub(crate) fn run(a: AlignArgs) -> Result<ExitCode, Error> {
    let opts = options(&a)?;
    if let Some(manifest) = &a.suite {
        return run_suite(&a, manifest, opts);
    }
    let file = a.file.clone().ok_or_else(|| Error::at("FILE", "a scenario file is needed (or --suite)"))?;
    let scenario = ScenarioText::read(&file)?;
    let base = settings("--set", &a.set)?;
    let b = settings("--b", &a.b)?;
    let against = if b.is_empty() { None } else { Some(Against::Model(b)) };
    let mut spec =
        Spec { scenario, base, seed: a.seed, against: Against::Model(Vec::new()), opts, capture: a.capture.clone() };
    // A bad file or setting is reported before a kernel is looked for.
    spec.scenarios()?;
    spec.against = match against {
        Some(x) => x,
        None => Against::Linux(a.kernel.pair()?.1),
    };
    let mut out = Outputs::new();
    let plot_dir = a.plot.as_deref().map(|d| out.dir("--plot", d)).transpose()?;
    if let Some(c) = &a.capture {
        out.reserve_file("--capture", c)?;
    }
    let report = spec.run()?;
    if let Some(dir) = &plot_dir {
        match report.chart() {
            Some(c) => {
                c.write(&mut out, dir, "align")?;
                eprintln!("tcplab: wrote align.png and align.svg to {}", dir.display());
            }
            None => eprintln!("tcplab: no divergence, no plot"),
        }
    }
    if let Some(c) = &a.capture {
        out.keep(c);
    }
    out.commit();
    emit(&if a.json { report.to_json() + "\n" } else { report.to_text() })
}

/// The line after which a page's hand-written part starts; `--suite
/// --markdown --out FILE` keeps it (and what follows) from the old FILE.
pub(crate) const NOTES_MARKER: &str = "<!-- Hand-written below this line: kept when the page is regenerated. -->";

/// The hand-written part of an old page, from the marker on.
fn kept_notes(old: &str) -> Option<String> {
    old.find(NOTES_MARKER).map(|i| old[i..].to_string())
}

fn run_suite(a: &AlignArgs, manifest: &std::path::Path, opts: Options) -> Result<ExitCode, Error> {
    if a.file.is_some() {
        return Err(Error::at("--suite", "give either a scenario file or --suite, not both"));
    }
    let mut entries = faithfulness::load_manifest(manifest)?;
    if let Some(only) = &a.only {
        let names: Vec<&str> = only.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        entries.retain(|e| names.iter().any(|n| e.name.contains(n)));
        if entries.is_empty() {
            return Err(Error::at("--only", "no entry of the suite matches"));
        }
    }
    let mut out = Outputs::new();
    if let Some(f) = &a.out {
        out.reserve_file("--out", f)?;
    }
    let linux = a.kernel.pair()?.1;
    let started = std::time::Instant::now();
    let n = entries.len();
    let mut i = 0;
    let outcomes = suite::run(&entries, &linux, a.seed, opts, &mut |name| {
        i += 1;
        eprintln!("tcplab: align [{i}/{n}] {name}");
    });
    let text = if a.markdown {
        let mut cmd = "tcplab align --suite".to_string();
        if manifest != std::path::Path::new(SUITE) {
            cmd = format!("tcplab align --suite {}", manifest.display());
        }
        cmd.push_str(" --markdown");
        if let Some(k) = &a.kernel.kernel {
            cmd.push_str(&format!(" --kernel {k}"));
        }
        if a.seed != 1 {
            cmd.push_str(&format!(" --seed {}", a.seed));
        }
        if a.tolerance != "50us" {
            cmd.push_str(&format!(" --tolerance {}", a.tolerance));
        }
        if let Some(o) = &a.only {
            cmd.push_str(&format!(" --only {o}"));
        }
        if let Some(f) = &a.out {
            cmd.push_str(&format!(" --out {}", f.display()));
        }
        let facts = format!(
            "Seed {}, tolerance {}, kernel `{}`; regenerated in {:.0} s of wall time on 2 shared cores.",
            a.seed,
            a.tolerance,
            linux.label(),
            started.elapsed().as_secs_f64()
        );
        suite::markdown(&outcomes, &cmd, &facts)
    } else {
        let mut s = String::new();
        for o in &outcomes {
            let line = match &o.report {
                Ok(r) => r.summary(),
                Err(e) => format!("failed: {e}"),
            };
            s.push_str(&format!("{:<28} {line}\n", o.entry.name));
        }
        s
    };
    match &a.out {
        Some(f) => {
            // Hand-written findings below the marker survive regeneration.
            let mut text = text;
            if a.markdown {
                if let Some(kept) = std::fs::read_to_string(f).ok().and_then(|old| kept_notes(&old)) {
                    text.push('\n');
                    text.push_str(&kept);
                }
            }
            out.write(f, text.as_bytes())?;
            out.commit();
            eprintln!("tcplab: wrote {}", f.display());
            Ok(ExitCode::SUCCESS)
        }
        None => {
            out.commit();
            emit(&text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_written_part_of_a_page_is_kept() {
        let old = format!("# generated\n| table |\n\n{NOTES_MARKER}\n\n## Findings\n\ntext\n");
        assert_eq!(kept_notes(&old).unwrap(), format!("{NOTES_MARKER}\n\n## Findings\n\ntext\n"));
        assert_eq!(kept_notes("# generated only\n"), None);
    }
}
