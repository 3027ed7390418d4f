//! `tcplab`: the command-line front of the lab.
//!
//! Thin by design: flags are parsed here (clap, one definition per flag,
//! from which the help text comes) and everything else is a call into
//! `tcplab_lab`. Exit codes: 0 ok, 1 an experiment check failed, 2 error
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
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_lab::backend::{Backend, Choice};
use tcplab_lab::batch::{self, FlowTrace, Progress, Quiet};
use tcplab_lab::compare::{ArmSpec, CompareSpec, Comparison};
use tcplab_lab::experiments::{self, REGISTRY};
use tcplab_lab::interrupt::{self, EXIT_INTERRUPTED};
use tcplab_lab::journal::Journal;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::overrides::{parse_list, ScenarioText, Setting};
use tcplab_lab::pcap::PcapCapture;
use tcplab_lab::report::RunReport;
use tcplab_lab::runner::{self, Extras, TraceSink};
use tcplab_lab::sweep::{self, SweepSpec};
use tcplab_lab::{html, listing, plot, Error, EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK};

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
    Run(RunArgs),
    /// Parse and validate a scenario (with overrides) without running it.
    Check(CheckArgs),
    /// Run two arms (knob settings) of a scenario on seeds 1..N and compare the distributions.
    Compare(CompareArgs),
    /// Run a registered experiment (a kernel patch's own test) and print it next to the patch's numbers.
    Reproduce(ReproduceArgs),
    /// Run the cartesian product of varied knobs, each point on seeds 1..N.
    Sweep(SweepArgs),
    /// Join the JSON outputs of `tcplab sweep --shard K/N --json` into one sweep.
    Merge(MergeArgs),
    /// Run a scenario on the model and on the real kernel, N seeds each, and compare them metric by metric.
    Diff(DiffArgs),
    /// Run a suite of scenarios on both backends and write the faithfulness page (docs/FAITHFULNESS.md).
    Faithfulness(FaithfulnessArgs),
    /// The kernel backend's images: build one, list them, or show how a scenario is set up in the guest.
    #[command(subcommand)]
    Kernel(KernelCmd),
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
    /// Run packetdrill scripts (files or directories, searched for .pkt)
    /// against the TCP model in virtual time. Exit 0 if every script passed
    /// or was skipped, 1 if one failed.
    Packetdrill(PacketdrillArgs),
}

#[derive(Args, Debug)]
struct PacketdrillArgs {
    /// .pkt files, and directories searched recursively for them.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Print JSON Lines: {"type":"script","data":{...}} per script, then
    /// {"type":"summary","data":{...}}.
    #[arg(long)]
    json: bool,
    /// Notes, print() output and the event trace under each script.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Kernel HZ of the model: 100, 250 (the default), 300 or 1000.
    #[arg(long, value_name = "N")]
    hz: Option<u32>,
    /// Diagnostic: do not compare this outbound field (tcp_psh, tcp_window, ...);
    /// such results are not packetdrill-conformant. Repeatable.
    #[arg(long = "ignore-field", value_name = "NAME")]
    ignore_field: Vec<String>,
}

/// Where runs run.
#[derive(Args, Debug, Clone)]
struct BackendArgs {
    /// model (default: the simulator), linux (the real kernel in a User-Mode Linux
    /// guest in virtual time; run `tcplab kernel build` once first) or both.
    #[arg(long, value_name = "model|linux|both", default_value = "model")]
    backend: String,
    #[command(flatten)]
    kernel: KernelArgs,
}

impl BackendArgs {
    fn backends(&self) -> Result<Vec<Backend>, Error> {
        self.kernel.backends(Choice::parse(&self.backend)?)
    }
}

/// Which kernel image, and how long a run may take: every command that can
/// run on the kernel takes these.
#[derive(Args, Debug, Clone)]
struct KernelArgs {
    /// Kernel image for the linux backend: a key (or prefix) or name from
    /// `tcplab kernel list`, or an image directory. Default: the newest built for this host.
    #[arg(long, value_name = "IMAGE")]
    kernel: Option<String>,
    /// Wall-clock limit of one run, seconds, on either backend: a run past it
    /// fails (exit 2). Default: none on the model; 120 + 240 per simulated second
    /// on the kernel.
    #[arg(long, value_name = "SECS")]
    max_wall: Option<f64>,
}

impl KernelArgs {
    fn backends(&self, choice: Choice) -> Result<Vec<Backend>, Error> {
        let wall = match self.max_wall {
            Some(s) if !(s.is_finite() && s > 0.0 && s < 1e9) => {
                return Err(Error::at("--max-wall", format!("{s}: give a positive number of seconds")))
            }
            Some(s) => Some(std::time::Duration::from_secs_f64(s)),
            None => None,
        };
        choice.backends(self.kernel.as_deref(), wall)
    }

    /// The model and the kernel, for the commands that always run both.
    fn pair(&self) -> Result<(Backend, Backend), Error> {
        match self.backends(Choice::Both)?.as_slice() {
            [model, linux] => Ok((model.clone(), linux.clone())),
            _ => Err(Error::msg("internal: both backends give two")),
        }
    }
}

#[derive(Subcommand, Debug)]
enum KernelCmd {
    /// Build (or find cached) a User-Mode Linux kernel for the linux backend.
    Build(KernelBuildArgs),
    /// List the cached kernel images.
    List {
        /// Print JSON (one array of image descriptions).
        #[arg(long)]
        json: bool,
    },
    /// Print how a scenario is set up in the guest (namespaces, veth, qdiscs,
    /// sysctls, module parameters), without running it.
    Plan {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Kernel image (as for --kernel); default: the newest built for this host.
        #[arg(long, value_name = "IMAGE")]
        kernel: Option<String>,
    },
}

#[derive(Args, Debug)]
struct KernelBuildArgs {
    /// debian:SERIES (Debian's linux-source-SERIES package, installed with apt-get if
    /// missing) or the path of a kernel source tree (it is copied, never written to).
    #[arg(long, value_name = "debian:6.12|PATH", default_value = "debian:6.12")]
    source: String,
    /// Directory of *.patch files applied in name order, or `none`. Default: tcplab's
    /// own run-time switches (kernel/patches, GPL-2.0).
    #[arg(long, value_name = "DIR|none")]
    patches: Option<String>,
    /// The kernel's HZ (100, 250, 300 or 1000); scenarios must use the same `hz`.
    #[arg(long, value_name = "N", default_value_t = 250)]
    hz: u32,
    /// Parallel make jobs; default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// A name to select the image by (--kernel NAME).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(Args, Debug)]
struct DiffArgs {
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

#[derive(Args, Debug)]
struct FaithfulnessArgs {
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

#[derive(Args, Debug)]
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

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// Print one JSON object (flows, links, counters, events, sim_time_s, wall_s, seed,
    /// scenario) instead of a table.
    #[arg(long)]
    json: bool,
    /// Write one CSV per flow to DIR/<flow-id>.csv
    /// (time_s,cwnd,ssthresh,srtt_us,inflight,ca_state,delivered). DIR is created.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Write plots (PNG and SVG) to DIR: cwnd/ssthresh/inflight per flow with ca_state
    /// shaded (cwnd-FLOW), goodput over time (goodput). DIR is created.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Write a pcap file per link end to DIR/LINK@NODE.pcap (raw IPv4, nanosecond
    /// timestamps; host i is 10.0.0.(i+1)). Records hold the headers only unless
    /// --pcap-snaplen is given. DIR is created.
    #[arg(long, value_name = "DIR")]
    pcap: Option<PathBuf>,
    /// With --pcap: keep the first BYTES bytes of each packet (payload zero-filled);
    /// at least the headers are always kept.
    #[arg(long, value_name = "BYTES", requires = "pcap")]
    pcap_snaplen: Option<u32>,
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
}

#[derive(Args, Debug)]
struct RunsArgs {
    /// Runs per arm or point, on seeds 1 to N.
    #[arg(long, value_name = "N", default_value_t = 10)]
    runs: u32,
    /// Worker threads (each run is single-threaded); default: every core. At most
    /// 4 per core and one per run are used.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Refuse to start more runs than this in total (points x runs, arms x runs).
    #[arg(long, value_name = "N", default_value_t = batch::DEFAULT_MAX_RUNS)]
    max_runs: u64,
    /// Append every finished run to FILE (JSON Lines), so that an interrupted
    /// command loses nothing; FILE must not exist. Continue with --resume FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    journal: Option<PathBuf>,
    /// Continue the journal FILE: runs it holds are not run again, new ones are
    /// appended. Give the same scenario, settings and metrics as the first time.
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct MetricArgs {
    /// What to measure per run (repeatable, or comma-separated): goodput (default),
    /// goodput.FLOW, goodput_last[.FLOW], jain, rpc.p50, rpc.p99, rpc.p99.9,
    /// rpc.FLOW.p99, or any counter by nstat name (TcpRetransSegs[.FLOW]).
    #[arg(long, value_name = "M")]
    metric: Vec<String>,
}

#[derive(Args, Debug)]
struct CompareArgs {
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

#[derive(Args, Debug)]
struct ReproduceArgs {
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

#[derive(Args, Debug)]
struct SweepArgs {
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

#[derive(Args, Debug)]
struct MergeArgs {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    // In the commands that run scenarios, SIGINT and SIGTERM ask the work
    // to stop (tcplab_lab::interrupt); a signal more than a second later
    // ends the process at once. Other commands keep the default: a signal
    // ends them.
    if matches!(cli.cmd, Cmd::Run(_) | Cmd::Compare(_) | Cmd::Reproduce(_) | Cmd::Sweep(_) | Cmd::Diff(_)) {
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

// ---- terminal behaviour, decided in one place ---------------------------------

/// Whether to draw a progress bar and chatter on stderr: only for a person
/// at a terminal. Data on stdout (JSON too) is not affected, so `--json`
/// does not turn progress off: a long run piped into a program still
/// shows a person at the terminal how far it is.
fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Runs estimated to take longer than this (wall clock) are warned about.
const LONG_RUN: std::time::Duration = std::time::Duration::from_secs(600);

/// Warns on stderr (always: also in a pipe) when `runs` model runs of
/// `sc` on `jobs` threads are estimated to take longer than [`LONG_RUN`].
fn warn_if_long(sc: &tcplab_lab::Scenario, backend: &Backend, runs: u64, jobs: usize) {
    let Backend::Model { max_wall } = backend else { return };
    let one = runner::wall_estimate(sc);
    let waves = runs.div_ceil(batch::worker_threads(jobs, runs as usize).max(1) as u64).max(1);
    let total = one.saturating_mul(u32::try_from(waves).unwrap_or(u32::MAX));
    if total > LONG_RUN {
        let limit = match max_wall {
            Some(w) => format!("--max-wall {} stops each run after that many seconds", w.as_secs_f64()),
            None => "--max-wall SECS limits each run".into(),
        };
        eprintln!(
            "tcplab: warning: {} simulated per run x {runs} run(s) may take up to about {} of wall-clock time \
             (estimated from the links' rates); {limit}",
            tcplab_lab::units::format_time(sc.sim.duration),
            human_wall(total)
        );
    }
}

/// `3.2 hours`, `41 days`.
fn human_wall(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 3600.0 => format!("{:.0} minutes", s / 60.0),
        s if s < 86400.0 * 2.0 => format!("{:.1} hours", s / 3600.0),
        s if s < 86400.0 * 365.0 * 2.0 => format!("{:.0} days", s / 86400.0),
        s => format!("{:.0} years", s / (86400.0 * 365.25)),
    }
}

/// A progress bar on stderr (indicatif).
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The progress display for a batch of runs.
fn progress(what: &str) -> Box<dyn Progress> {
    if !interactive() {
        return Box::new(Quiet);
    }
    Box::new(Bar(styled_bar(0, "{pos}/{len} runs", what.to_string())))
}

/// A progress bar for one run: per mille of the simulated duration.
fn sim_time_bar(message: String) -> indicatif::ProgressBar {
    styled_bar(1000, "{percent}% of simulated time", message)
}

/// A bar on stderr in the project's style: `message [====>   ] counts,
/// elapsed, eta`, coloured unless `NO_COLOR` is set.
fn styled_bar(len: u64, counts: &str, message: String) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    let colour = if std::env::var_os("NO_COLOR").is_some() { "" } else { ".cyan/blue" };
    let template = format!("{{msg}} [{{bar:30{colour}}}] {counts}, {{elapsed}}, eta {{eta}}");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// The command line, quoted for a shell, for reports.
fn command_line() -> String {
    let quote = |a: &str| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c)) {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    let mut v = vec!["tcplab".to_string()];
    v.extend(std::env::args().skip(1).map(|a| quote(&a)));
    v.join(" ")
}

// ---- commands ------------------------------------------------------------------

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
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
        Cmd::Compare(a) => cmd_compare(a),
        Cmd::Reproduce(a) => cmd_reproduce(a),
        Cmd::Sweep(a) => cmd_sweep(a),
        Cmd::Merge(a) => cmd_merge(a),
        Cmd::Diff(a) => cmd_diff(a),
        Cmd::Faithfulness(a) => cmd_faithfulness(a),
        Cmd::Kernel(k) => cmd_kernel(k),
        Cmd::Bench { json } => {
            if interactive() {
                eprintln!("tcplab: running the benchmark scenario on one thread...");
            }
            let b = runner::bench()?;
            emit(&if json { b.to_json() + "\n" } else { b.to_table() })
        }
        Cmd::Presets => emit(&listing::presets()),
        Cmd::Knobs => emit(&listing::knobs()),
        Cmd::Counters => emit(&listing::counters()),
        Cmd::Packetdrill(a) => cmd_packetdrill(a),
    }
}

fn cmd_run(a: RunArgs) -> Result<ExitCode, Error> {
    let sc = tcplab_lab::load(&a.scenario.file, &a.scenario.set, a.scenario.seed)?;
    let backends = a.backend.backends()?;
    if backends.len() > 1 && (a.trace.is_some() || a.plot.is_some() || a.pcap.is_some()) {
        return Err(Error::at(
            "--backend both",
            "--trace, --plot and --pcap write one backend's files: run each backend on its own, or use `tcplab diff --plot DIR`",
        ));
    }
    let mut text = String::new();
    for backend in backends {
        text.push_str(&run_on(&a, &sc, backend)?);
    }
    emit(&text)
}

/// `tcplab run` on one backend: the report, as text or JSON.
fn run_on(a: &RunArgs, sc: &tcplab_lab::Scenario, backend: Backend) -> Result<String, Error> {
    // Every output is created before the run, so a bad path fails fast.
    let mut out = Outputs::new();
    let mut trace = match &a.trace {
        Some(dir) => Some(TraceSink::create(&mut out, dir, sc)?),
        None => None,
    };
    let plot_dir = a.plot.as_deref().map(|d| out.dir("--plot", d)).transpose()?;
    let capture = match &a.pcap {
        Some(d) => {
            let dir = out.dir("--pcap", d)?;
            Some(PcapCapture::create(&mut out, &dir, sc, a.pcap_snaplen)?)
        }
        None => None,
    };
    warn_if_long(sc, &backend, 1, 1);
    if interactive() {
        eprintln!(
            "tcplab: running {} on {} ({} simulated, seed {})",
            sc.name,
            backend.label(),
            tcplab_lab::units::format_time(sc.sim.duration),
            sc.sim.seed
        );
    }
    // A bar over simulated time, for a person at a terminal; indicatif
    // draws it only after a moment, so short runs show nothing.
    let bar =
        interactive().then(|| sim_time_bar(format!("{} simulated", tcplab_lab::units::format_time(sc.sim.duration))));
    let mut report = |done: f64| {
        if let Some(b) = &bar {
            b.set_position((done * 1000.0) as u64);
        }
    };
    let extras = Extras {
        trace_files: trace.as_mut(),
        keep_trace: plot_dir.is_some(),
        tap: capture.as_ref().map(PcapCapture::tap),
        progress: bar.is_some().then_some(&mut report as &mut dyn FnMut(f64)),
        backend,
    };
    let outcome = runner::run_with(sc, extras);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if outcome.is_err() && interrupt::requested() {
        // The run stopped between two packets: the captures are whole up
        // to there and worth keeping; every other output goes.
        if let Some(c) = capture {
            let s = c.finish()?;
            for (p, _) in &s.files {
                out.keep(p);
            }
            let n: u64 = s.files.iter().map(|f| f.1).sum();
            eprintln!(
                "tcplab: interrupted: kept {} pcap file(s) in {}, {n} whole packet records up to the interruption",
                s.files.len(),
                a.pcap.as_deref().map_or(String::new(), |p| p.display().to_string())
            );
        }
        return Err(interrupt::interrupted());
    }
    let outcome = outcome?;
    let report = RunReport::new(sc, &outcome);
    if let Some(t) = &trace {
        eprintln!("tcplab: wrote {} trace file(s) to {}", t.paths().count(), t.dir.display());
    }
    if let Some(c) = capture {
        let s = c.finish()?;
        let n: u64 = s.files.iter().map(|f| f.1).sum();
        eprintln!(
            "tcplab: wrote {} pcap file(s), {n} packets, to {} (one per link end: LINK@NODE.pcap)",
            s.files.len(),
            a.pcap.as_deref().map_or(String::new(), |p| p.display().to_string())
        );
        if s.sack_trimmed > 0 {
            eprintln!("tcplab: {} packet(s) had more SACK blocks than fit in 40 option bytes; the extra blocks are not in the capture", s.sack_trimmed);
        }
    }
    if let Some(dir) = &plot_dir {
        let traces = FlowTrace::all(&outcome.result);
        let charts = plot::run_charts(&traces, outcome.result.sim_time.as_secs_f64(), "", "");
        let n = plot::write_all(&mut out, dir, &charts)?;
        eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", dir.display());
    }
    out.commit();
    Ok(if a.json { report.to_json() + "\n" } else { report.to_table() })
}

fn settings(flag: &str, args: &[String]) -> Result<Vec<Setting>, Error> {
    let mut v = Vec::new();
    for a in args {
        v.extend(parse_list(flag, a)?);
    }
    Ok(v)
}

/// `--jobs`, or every core; more than [`batch::max_jobs`] is reduced with
/// a note (a batch also never uses more threads than it has runs).
fn jobs(j: Option<usize>) -> usize {
    match j {
        Some(n) if n > batch::max_jobs() => {
            eprintln!(
                "tcplab: --jobs {n}: using {} worker threads ({} per core; runs are CPU-bound)",
                batch::max_jobs(),
                batch::MAX_THREADS_PER_CORE
            );
            batch::max_jobs()
        }
        Some(n) => n,
        None => batch::default_jobs(),
    }
}

/// Where a batch's finished runs go: `--journal FILE`, `--resume FILE`,
/// or else a journal of this process in the current directory that is
/// kept only if the command is interrupted.
struct Runs {
    journal: Option<Journal>,
    /// The journal is this command's own: removed unless interrupted.
    own: bool,
}

impl Runs {
    fn open(r: &RunsArgs, command: &str) -> Result<Runs, Error> {
        match (&r.journal, &r.resume) {
            (Some(p), _) => Ok(Runs { journal: Some(Journal::create("--journal", p)?), own: false }),
            (None, Some(p)) => {
                let j = Journal::resume(p)?;
                eprintln!("tcplab: resuming {}: {} finished run(s) in it", p.display(), j.resumed());
                Ok(Runs { journal: Some(j), own: false })
            }
            // Best effort: where the directory is not writable, nothing is kept.
            (None, None) => {
                let p = PathBuf::from(format!("tcplab-{command}-{}.jsonl", std::process::id()));
                Ok(Runs { journal: Journal::create("journal", &p).ok(), own: true })
            }
        }
    }

    fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// After the batch: on an interruption, says where the finished runs
    /// are and how to continue; else removes this command's own journal.
    fn finish<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        if let Some(j) = &self.journal {
            if interrupt::requested() {
                eprintln!(
                    "tcplab: interrupted: {} finished run(s) are in {}; `--resume {}` with the same arguments continues",
                    j.resumed() as u64 + j.written(),
                    j.path().display(),
                    j.path().display()
                );
            } else if self.own {
                let _ = std::fs::remove_file(j.path());
            }
        }
        result
    }
}

/// Prepares `--plot DIR` and `--report FILE`.
fn prepare_outputs(out: &mut Outputs, plot: Option<&Path>, report: Option<&Path>) -> Result<Option<PathBuf>, Error> {
    let dir = plot.map(|d| out.dir("--plot", d)).transpose()?;
    if let Some(r) = report {
        out.reserve_file("--report", r)?;
    }
    Ok(dir)
}

fn cmd_compare(a: CompareArgs) -> Result<ExitCode, Error> {
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
fn compare_outputs(a: &CompareArgs, out: &mut Outputs, plot_dir: Option<&Path>, cmp: &Comparison) -> Result<(), Error> {
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

fn cmd_reproduce(a: ReproduceArgs) -> Result<ExitCode, Error> {
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

fn cmd_sweep(a: SweepArgs) -> Result<ExitCode, Error> {
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

fn cmd_merge(a: MergeArgs) -> Result<ExitCode, Error> {
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

fn cmd_packetdrill(a: PacketdrillArgs) -> Result<ExitCode, Error> {
    if let Some(hz) = a.hz {
        tcplab_packetdrill::check_hz(hz).map_err(|rule| Error::at("--hz", rule))?;
    }
    let scripts = tcplab_packetdrill::collect_scripts(&a.paths).map_err(|e| Error::msg(e.to_string()))?;
    if scripts.is_empty() {
        let paths: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::msg(format!("no .pkt scripts under {}", paths.join(", "))));
    }
    let opts = tcplab_packetdrill::RunOptions { verbose: a.verbose, hz: a.hz, ignore_fields: a.ignore_field };
    let results: Vec<_> = scripts.iter().map(|p| tcplab_packetdrill::run_script_with(p, &opts)).collect();
    emit(&if a.json {
        tcplab_packetdrill::format_json_lines(&results)
    } else {
        tcplab_packetdrill::format_table(&results, opts.verbose)
    })?;
    let failed = results.iter().any(tcplab_packetdrill::ScriptResult::failed);
    Ok(ExitCode::from(if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
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

fn cmd_diff(a: DiffArgs) -> Result<ExitCode, Error> {
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

/// Shows a kernel build's steps and compile progress on stderr.
struct BuildBar(Option<indicatif::ProgressBar>);

impl tcplab_kernel::build::BuildProgress for BuildBar {
    fn phase(&self, what: &str) {
        match &self.0 {
            Some(b) => b.set_message(what.to_string()),
            None => eprintln!("tcplab: {what}"),
        }
    }
    fn compiled(&self, done: u64, estimate: u64) {
        if let Some(b) = &self.0 {
            b.set_length(estimate);
            b.set_position(done);
        }
    }
}

fn cmd_kernel(k: KernelCmd) -> Result<ExitCode, Error> {
    use tcplab_kernel::{build, image};
    let kerr = |flag: &str, e: tcplab_kernel::KernelError| Error::at(flag, e.message);
    match k {
        KernelCmd::Build(a) => {
            let source = build::Source::parse(&a.source).map_err(|e| kerr("--source", e))?;
            let patches = match a.patches.as_deref() {
                Some("none") => None,
                Some(dir) => Some(PathBuf::from(dir)),
                None => {
                    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel/patches");
                    if !dir.is_dir() {
                        return Err(Error::at(
                            "--patches",
                            format!("tcplab's patches are not at {}: give --patches DIR (or none)", dir.display()),
                        ));
                    }
                    Some(dir)
                }
            };
            let opts = build::BuildOptions {
                source,
                patches,
                hz: a.hz,
                jobs: a.jobs.unwrap_or_else(batch::default_jobs),
                name: a.name.clone(),
            };
            let bar = BuildBar(interactive().then(|| styled_bar(0, "{pos}/{len} compile steps", String::new())));
            let built = build::build(&opts, &bar);
            if let Some(b) = &bar.0 {
                b.finish_and_clear();
            }
            let built = built.map_err(|e| kerr("tcplab kernel build", e))?;
            let m = &built.image.meta;
            let how =
                if built.compiled { format!("built in {:.0} s", m.build_seconds) } else { "already cached".into() };
            emit(&format!(
                "kernel image {} ({how}): Linux {} from {}, HZ {}, {} patch(es)\n  {}\n",
                m.key,
                m.kernel_release,
                m.source,
                m.hz,
                m.patches.len(),
                built.image.binary.display()
            ))
        }
        KernelCmd::List { json } => {
            let all = image::list().map_err(|e| kerr("tcplab kernel list", e))?;
            if json {
                let metas: Vec<&image::ImageMeta> = all.iter().map(|i| &i.meta).collect();
                let text = serde_json::to_string(&metas).map_err(|e| Error::msg(e.to_string()))?;
                return emit(&(text + "\n"));
            }
            if all.is_empty() {
                return emit("no kernel images: build one with `tcplab kernel build`\n");
            }
            let host = tcplab_kernel::host::xsave_size();
            let mut s = format!(
                "{:<16} {:<12} {:<10} {:>4} {:>7}  {:<8} source\n",
                "key", "name", "release", "HZ", "patches", "host"
            );
            for i in &all {
                let m = &i.meta;
                let fits = if Some(m.xsave_size) == host { "this" } else { "other" };
                s.push_str(&format!(
                    "{:<16} {:<12} {:<10} {:>4} {:>7}  {:<8} {}\n",
                    m.key,
                    m.name.as_deref().unwrap_or("-"),
                    m.kernel_release,
                    m.hz,
                    m.patches.len(),
                    fits,
                    m.source
                ));
            }
            emit(&s)
        }
        KernelCmd::Plan { scenario, kernel } => {
            let sc = tcplab_lab::load(&scenario.file, &scenario.set, scenario.seed)?;
            let backend = tcplab_kernel::KernelBackend::new(kernel.as_deref(), std::time::Duration::ZERO)
                .map_err(|e| kerr("--kernel", e))?;
            let plan = backend
                .plan(&sc.sim, &tcplab_lab::backend::flow_knobs(&sc))
                .map_err(|e| tcplab_lab::backend::kernel_error(&sc, e))?;
            let mut s = tcplab_kernel::translate::describe(&plan).join("\n");
            s.push('\n');
            emit(&s)
        }
    }
}

fn cmd_faithfulness(a: FaithfulnessArgs) -> Result<ExitCode, Error> {
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
    let page = result.markdown(&command_line(), link.as_deref());
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
