//! `tcplab`: the command-line front of the lab.
//!
//! Thin by design: flags are parsed here (clap, one definition per flag,
//! from which the help text comes) and everything else is a call into
//! `tcplab_lab`. Exit codes: 0 ok, 1 an experiment check failed (reserved),
//! 2 error (bad input, unreadable file, unwritable output). Data goes to
//! stdout, progress and errors to stderr; a closed stdout pipe counts as
//! success.

use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::report::RunReport;
use tcplab_lab::runner::{self, TraceSink};
use tcplab_lab::{listing, Error, EXIT_ERROR, EXIT_OK};

#[derive(Parser, Debug)]
#[command(
    name = "tcplab",
    version,
    about = "A Linux-faithful TCP model and deterministic packet simulator",
    long_about = "A Linux-faithful TCP model and deterministic packet simulator.\n\n\
        Scenario files are TOML; see docs/scenarios.md for the format.\n\
        Exit status: 0 ok, 1 an experiment check failed, 2 error."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run one scenario and print its results (a table, or JSON with --json).
    Run(RunArgs),
    /// Parse and validate a scenario (with overrides) without running it.
    Check(CheckArgs),
    /// Measure simulator speed: data segments delivered per wall-clock second.
    Bench {
        /// Print one JSON object: {"segments_per_sec", "segments", "wall_s", "sim_s", ...}.
        #[arg(long)]
        json: bool,
    },
    /// List the kernel presets and the knobs in which each differs from linux-current.
    Presets,
    /// List every TCP knob and module parameter a scenario may set, with defaults.
    Knobs,
    /// List the counters (nstat names) the model keeps.
    Counters,
}

#[derive(clap::Args, Debug)]
struct ScenarioArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    file: String,
    /// Override a scenario field by its dotted path, e.g. link.bottleneck.rate=50Mbit,
    /// flow.f1.cc=reno, tcp.tcp_reordering=10, run.duration=5s. Array elements are
    /// addressed by name/id (flow.f1) or position (flow[0]). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the run (overrides run.seed).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Print one JSON object (flows, links, counters, events, sim_time_s, wall_s, seed,
    /// scenario) instead of a table.
    #[arg(long)]
    json: bool,
    /// Write one CSV per flow to DIR/<flow-id>.csv
    /// (time_s,cwnd,ssthresh,srtt_us,inflight,ca_state,delivered). DIR is created.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.cmd {
        Cmd::Run(a) => {
            let sc = tcplab_lab::load(&a.scenario.file, &a.scenario.set, a.scenario.seed)?;
            // Trace files are created before the run, so a bad DIR fails fast.
            let mut trace = match &a.trace {
                Some(dir) => Some(TraceSink::create(dir, &sc)?),
                None => None,
            };
            if std::io::stderr().is_terminal() {
                eprintln!(
                    "tcplab: running {} ({} simulated, seed {})",
                    sc.name,
                    tcplab_lab::units::format_time(sc.sim.duration),
                    sc.sim.seed
                );
            }
            let out = runner::run(&sc, trace.as_mut())?;
            let report = RunReport::new(&sc, &out);
            if let Some(t) = &trace {
                eprintln!("tcplab: wrote {} trace file(s) to {}", t.paths().count(), t.dir.display());
            }
            emit(&if a.json { report.to_json() + "\n" } else { report.to_table() })
        }
        Cmd::Check(a) => {
            let sc = tcplab_lab::load(&a.scenario.file, &a.scenario.set, a.scenario.seed)?;
            emit(&format!(
                "ok: {}: {} nodes, {} links, {} flows, {} simulated, seed {}\n",
                sc.name,
                sc.sim.nodes.len(),
                sc.sim.links.len(),
                sc.sim.flows.len(),
                tcplab_lab::units::format_time(sc.sim.duration),
                sc.sim.seed
            ))
        }
        Cmd::Bench { json } => {
            if std::io::stderr().is_terminal() {
                eprintln!("tcplab: running the benchmark scenario on one thread...");
            }
            let b = runner::bench()?;
            emit(&if json { b.to_json() + "\n" } else { b.to_table() })
        }
        Cmd::Presets => emit(&listing::presets()),
        Cmd::Knobs => emit(&listing::knobs()),
        Cmd::Counters => emit(&listing::counters()),
    }
}

/// Writes data to stdout. A closed pipe (`tcplab ... | head`) is success.
fn emit(s: &str) -> Result<ExitCode, Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::from(EXIT_OK)),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(EXIT_OK)),
        Err(e) => Err(Error::at("stdout", format!("cannot write: {e}"))),
    }
}
