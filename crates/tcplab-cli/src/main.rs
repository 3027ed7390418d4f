//! `tcplab`: the command-line front of the lab.
//!
//! Thin by design: flags are parsed here (clap, one definition per flag,
//! from which the help text comes: with its command in [`commands`], or in
//! [`options`] when several commands share it) and everything else is a
//! call into `tcplab_lab` or `tcplab_packetdrill`. Exit codes: 0 ok, 1 an
//! experiment check (or a packetdrill script) failed, 2 error
//! (bad input, unreadable file, unwritable output), 130 interrupted
//! (SIGINT or SIGTERM: the handler only sets [`tcplab_lab::interrupt`];
//! work stops at its next safe point and cleans up as for an error).
//! Data goes to stdout, progress and errors to stderr; a closed stdout
//! pipe counts as success.
//!
//! Output files (`--plot`, `--pcap`, `--report`, `--trace`) are created or
//! reserved before anything runs, so a bad path fails at once, and are
//! removed again when the command fails ([`tcplab_lab::outputs`]).

use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;
use tcplab_lab::interrupt::{self, EXIT_INTERRUPTED};
use tcplab_lab::{listing, Error, EXIT_ERROR};

mod commands;
mod options;
mod runs;
mod terminal;

use commands::{align, bench, compare, diff, faithfulness, kernel, packetdrill, reproduce, sweep};
use options::ScenarioArgs;
use terminal::emit;

#[derive(Parser, Debug)]
#[command(
    name = "tcplab",
    version,
    about = "A Linux-faithful TCP model and deterministic packet simulator",
    long_about = "A Linux-faithful TCP model and deterministic packet simulator.\n\n\
        Scenario files are TOML; see docs/scenarios.md for the format and\n\
        docs/experiments.md for compare, reproduce, sweep, plots and pcap.\n\
        Exit status: 0 ok, 1 an experiment check failed, 2 error."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run one scenario and print its results (a table, or JSON with --json).
    Run(commands::run::RunArgs),
    /// Parse and validate a scenario (with overrides) without running it.
    Check(CheckArgs),
    /// Run two arms (knob settings) of a scenario on seeds 1..N and compare the distributions.
    Compare(compare::CompareArgs),
    /// Run a registered experiment (a kernel patch's own test) and print it next to the patch's numbers.
    Reproduce(reproduce::ReproduceArgs),
    /// Run the cartesian product of varied knobs, each point on seeds 1..N.
    Sweep(sweep::SweepArgs),
    /// Join the JSON outputs of `tcplab sweep --shard K/N --json` into one sweep.
    Merge(sweep::MergeArgs),
    /// Run a scenario on the model and on the real kernel, N seeds each, and compare them metric by metric.
    Diff(diff::DiffArgs),
    /// Run a scenario once on the model and once on the kernel and report the first packet where their traces part.
    Align(align::AlignArgs),
    /// Run a suite of scenarios on both backends and write the faithfulness page (docs/FAITHFULNESS.md).
    Faithfulness(faithfulness::FaithfulnessArgs),
    /// The kernel backend's images: build one, list them, or show how a scenario is set up in the guest.
    #[command(subcommand)]
    Kernel(kernel::KernelCmd),
    /// Measure simulator speed: data segments per wall-clock and per CPU second, events, peak memory.
    Bench(bench::BenchArgs),
    /// List the kernel presets and the knobs in which each differs from linux-current.
    Presets,
    /// List every TCP knob and module parameter a scenario may set, with defaults.
    Knobs,
    /// List the counters (nstat names) the model keeps.
    Counters,
    /// Run packetdrill scripts (files or directories, searched for .pkt)
    /// against the TCP model in virtual time, or against Linux itself
    /// (--backend linux|both: Linux's own packetdrill in the kernel
    /// backend's guest). Exit 0 if every script passed or was skipped, 1
    /// if one failed.
    Packetdrill(packetdrill::PacketdrillArgs),
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // In the commands that run scenarios, SIGINT and SIGTERM ask the work
    // to stop (tcplab_lab::interrupt); a signal more than a second later
    // ends the process at once. Other commands keep the default: a signal
    // ends them.
    if matches!(
        cli.cmd,
        Cmd::Run(_) | Cmd::Compare(_) | Cmd::Reproduce(_) | Cmd::Sweep(_) | Cmd::Diff(_) | Cmd::Align(_)
    ) {
        let _ = ctrlc::set_handler(|| {
            if interrupt::request() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
        });
    }
    let result = run(cli);
    if interrupt::requested() {
        // Whatever stopped, it stopped because of the signal; outputs were
        // cleaned up (or completed) on the way out.
        if let Err(e) = &result {
            if *e != interrupt::interrupted() {
                eprintln!("error: {e}");
            }
        }
        eprintln!("tcplab: interrupted");
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.cmd {
        Cmd::Run(a) => commands::run::run(a),
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
        Cmd::Compare(a) => compare::run(a),
        Cmd::Reproduce(a) => reproduce::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Merge(a) => sweep::merge(a),
        Cmd::Diff(a) => diff::run(a),
        Cmd::Align(a) => align::run(a),
        Cmd::Faithfulness(a) => faithfulness::run(a),
        Cmd::Kernel(k) => kernel::run(k),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Presets => emit(&listing::presets()),
        Cmd::Knobs => emit(&listing::knobs()),
        Cmd::Counters => emit(&listing::counters()),
        Cmd::Packetdrill(a) => packetdrill::run(a),
    }
}
