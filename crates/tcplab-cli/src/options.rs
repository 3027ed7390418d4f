//! Flag groups that several commands share (scenario, backend and kernel,
//! batch size, metrics) and their conversion into what the lab takes.

use clap::Args;
use std::path::{Path, PathBuf};
use tcplab_lab::backend::{Backend, Choice};
use tcplab_lab::batch;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::overrides::{parse_list, Setting};
use tcplab_lab::Error;

/// Where runs run.
#[derive(Args, Debug, Clone)]
pub(crate) struct BackendArgs {
    /// model (default: the simulator), linux (the real kernel in a User-Mode Linux
    /// guest in virtual time; run `tcplab kernel build` once first) or both.
    #[arg(long, value_name = "model|linux|both", default_value = "model")]
    pub(crate) backend: String,
    #[command(flatten)]
    pub(crate) kernel: KernelArgs,
}

impl BackendArgs {
    pub(crate) fn backends(&self) -> Result<Vec<Backend>, Error> {
        self.kernel.backends(Choice::parse(&self.backend)?)
    }
}

/// Which kernel image, and how long a run may take: every command that can
/// run on the kernel takes these.
#[derive(Args, Debug, Clone)]
pub(crate) struct KernelArgs {
    /// Kernel image for the linux backend: a key (or prefix) or name from
    /// `tcplab kernel list`, or an image directory. Default: the newest built for this host at HZ 250 (an image of another HZ only by name).
    #[arg(long, value_name = "IMAGE")]
    pub(crate) kernel: Option<String>,
    /// Wall-clock limit of one run, seconds, on either backend: a run past it
    /// fails (exit 2). Default: none on the model; on the kernel 120 + the
    /// longer of 240 per simulated second and 300 us per packet the links
    /// could carry.
    #[arg(long, value_name = "SECS")]
    pub(crate) max_wall: Option<f64>,
}

impl KernelArgs {
    pub(crate) fn backends(&self, choice: Choice) -> Result<Vec<Backend>, Error> {
        tcplab_lab::choices::backends(choice, self.kernel.as_deref(), self.max_wall)
    }

    /// The model and the kernel, for the commands that always run both.
    pub(crate) fn pair(&self) -> Result<(Backend, Backend), Error> {
        match self.backends(Choice::Both)?.as_slice() {
            [model, linux] => Ok((model.clone(), linux.clone())),
            _ => Err(Error::msg("internal: both backends give two")),
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct ScenarioArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// Override a scenario field by its dotted path, e.g. link.bottleneck.rate=50Mbit,
    /// flow.f1.cc=reno, tcp.tcp_reordering=10, run.duration=5s. Array elements are
    /// addressed by name/id (flow.f1) or position (flow[0]). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Seed of the run (overrides run.seed).
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
}

#[derive(Args, Debug)]
pub(crate) struct RunsArgs {
    /// Runs per arm or point, on seeds 1 to N.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) runs: u32,
    /// Worker threads (each run is single-threaded); default: every core. At most
    /// 4 per core and one per run are used.
    #[arg(long, value_name = "J")]
    pub(crate) jobs: Option<usize>,
    /// Refuse to start more runs than this in total (points x runs, arms x runs).
    #[arg(long, value_name = "N", default_value_t = batch::DEFAULT_MAX_RUNS)]
    pub(crate) max_runs: u64,
    /// Append every finished run to FILE (JSON Lines), so that an interrupted
    /// command loses nothing; FILE must not exist. Continue with --resume FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub(crate) journal: Option<PathBuf>,
    /// Continue the journal FILE: runs it holds are not run again, new ones are
    /// appended. Give the same scenario, settings and metrics as the first time.
    #[arg(long, value_name = "FILE")]
    pub(crate) resume: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct MetricArgs {
    /// What to measure per run (repeatable, or comma-separated): goodput (default),
    /// goodput.FLOW, goodput_last[.FLOW], jain, rpc.p50, rpc.p99, rpc.p99.9,
    /// rpc.FLOW.p99, fct.p50, fct.p99, fct.p99.9, fct.FLOW.p99, reordering[.FLOW],
    /// hystart_exit_cwnd, or any counter by nstat name (TcpRetransSegs[.FLOW]).
    #[arg(long, value_name = "M")]
    pub(crate) metric: Vec<String>,
}

pub(crate) fn settings(flag: &str, args: &[String]) -> Result<Vec<Setting>, Error> {
    let mut v = Vec::new();
    for a in args {
        v.extend(parse_list(flag, a)?);
    }
    Ok(v)
}

/// `--jobs`, or every core; more than [`batch::max_jobs`] is reduced with
/// a note (a batch also never uses more threads than it has runs).
pub(crate) fn jobs(j: Option<usize>) -> usize {
    let (n, note) = tcplab_lab::choices::jobs(j);
    if let Some(note) = note {
        eprintln!("tcplab: {note}");
    }
    n
}

/// Prepares `--plot DIR` and `--report FILE`.
pub(crate) fn prepare_outputs(
    out: &mut Outputs,
    plot: Option<&Path>,
    report: Option<&Path>,
) -> Result<Option<PathBuf>, Error> {
    let dir = plot.map(|d| out.dir("--plot", d)).transpose()?;
    if let Some(r) = report {
        out.reserve_file("--report", r)?;
    }
    Ok(dir)
}
