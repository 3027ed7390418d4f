//! Many runs in parallel: the engine under `compare`, `reproduce` and
//! `sweep`.
//!
//! Each run is single-threaded and deterministic; runs are spread over a
//! rayon pool of `jobs` threads and their records are collected in job
//! order, so the output does not depend on `jobs` or on scheduling. A run
//! keeps only what the commands print: its metric values, and (when asked,
//! for plots) its traces and RPC latencies.
//!
//! With a [`Journal`], runs it already holds are not run again and every
//! finished run is appended to it. Between runs the batch checks
//! [`crate::interrupt`]: once interrupted it starts no new run (running
//! runs stop at their next slice, [`crate::runner`]), and fails with
//! [`crate::interrupt::interrupted`]; every run that finished is in the
//! journal.

use crate::error::{Error, Result};
use crate::journal::{Journal, JournaledRun};
use crate::metrics::{rpc_latencies, Metric, RpcLatencies};
use crate::report::RunReport;
use crate::runner::{self, Extras};
use crate::schema::Scenario;
use rayon::prelude::*;
use std::sync::Arc;
use tcplab_sim::result::{RunResult, TraceRow};

/// Progress of a batch, e.g. a progress bar. Called from worker threads.
pub trait Progress: Sync {
    /// Before the first run: how many runs there are.
    fn start(&self, _total: u64) {}
    /// After each run.
    fn inc(&self) {}
    /// After the last run.
    fn finish(&self) {}
}

/// No progress display.
pub struct Quiet;

impl Progress for Quiet {}

/// One run to do.
#[derive(Clone, Debug)]
pub struct Job {
    pub scenario: Arc<Scenario>,
    /// The scenario's identity with its overrides
    /// ([`crate::overrides::ScenarioText::hash`]), for the journal.
    pub scenario_hash: Arc<str>,
    pub metrics: Arc<Vec<Metric>>,
    pub seed: u64,
    /// Keep traces and RPC latencies (for plots of this run).
    pub keep: bool,
    /// Keep RPC latencies (for CDFs pooled over runs).
    pub keep_rpc: bool,
    pub backend: crate::backend::Backend,
}

/// A flow's trace, as exported by the simulator, with its MSS.
#[derive(Clone, Debug)]
pub struct FlowTrace {
    pub id: String,
    /// Sender MSS (bytes), to turn delivered segments into bytes.
    pub mss: u32,
    pub rows: Vec<TraceRow>,
}

/// The MSS assumed for a flow whose sender never set one (`tcpi_snd_mss`
/// 0: no connection, so nothing delivered to convert): linux-current's,
/// a 1500-byte MTU less 40 bytes of IPv4 and TCP headers and 12 of
/// timestamp option (`TCPOLEN_TSTAMP_ALIGNED`).
pub const FALLBACK_MSS: u32 = 1500 - 40 - 12;

impl FlowTrace {
    /// Every flow's trace in `result`, with its sender's MSS (plots of one
    /// run, `tcplab run --plot` and the batch runs alike).
    pub fn all(result: &RunResult) -> Vec<FlowTrace> {
        result
            .flows
            .iter()
            .map(|f| FlowTrace {
                id: f.id.clone(),
                mss: if f.sender_info.snd_mss > 0 { f.sender_info.snd_mss } else { FALLBACK_MSS },
                rows: f.trace.clone(),
            })
            .collect()
    }
}

/// What one run left.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub seed: u64,
    /// One value per metric of the job, in its order.
    pub values: Vec<f64>,
    /// With `keep`: per-flow traces.
    pub traces: Vec<FlowTrace>,
    /// With `keep` or `keep_rpc`: RPC latencies per RPC flow id.
    pub rpc: Vec<(String, RpcLatencies)>,
    /// Simulated seconds.
    pub sim_s: f64,
}

/// Most worker threads per core: runs are CPU-bound, so more threads
/// only add memory and scheduling (kernel guests wait a little on I/O).
pub const MAX_THREADS_PER_CORE: usize = 4;

/// The worker threads for `runs` runs when `requested` are asked for: at
/// least 1, at most one per run and [`max_jobs`].
pub fn worker_threads(requested: usize, runs: usize) -> usize {
    requested.min(runs).min(max_jobs()).max(1)
}

/// The most worker threads a batch uses: [`MAX_THREADS_PER_CORE`] per core.
pub fn max_jobs() -> usize {
    default_jobs().saturating_mul(MAX_THREADS_PER_CORE)
}

/// Most runs one command may start unless raised (`--max-runs`): each run
/// is kept in memory, and this many take days.
pub const DEFAULT_MAX_RUNS: u64 = 1_000_000;

/// Refuses a batch of `total` runs (None: past u64) above `max`, before
/// anything is allocated for it. `what` says how the total came about.
pub fn check_total_runs(total: Option<u64>, max: u64, what: &str) -> Result<()> {
    match total {
        Some(n) if n <= max => Ok(()),
        _ => Err(Error::at(
            "--max-runs",
            format!(
                "{what} is {} runs, more than the limit of {max}: fewer --runs or values, or raise --max-runs",
                total.map_or_else(|| "more than 18446744073709551615".to_string(), |n| n.to_string())
            ),
        )),
    }
}

/// Runs `jobs` on at most `threads` threads ([`worker_threads`]) and
/// returns their records in job order. The first failing job (in job
/// order) is the error; with an interruption, the interruption is.
pub fn run_all(
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
    journal: Option<&Journal>,
) -> Result<Vec<RunRecord>> {
    let results = run_jobs(jobs, threads, progress, journal)?;
    if crate::interrupt::requested() {
        return Err(crate::interrupt::interrupted());
    }
    results.into_iter().collect()
}

/// [`run_all`], keeping what an interruption leaves: each job's record in
/// job order, `None` for a job that did not finish because the batch was
/// interrupted. The first other failure (in job order) is the error.
pub fn run_finished(
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
    journal: Option<&Journal>,
) -> Result<Vec<Option<RunRecord>>> {
    let interrupted = crate::interrupt::interrupted();
    let results = run_jobs(jobs, threads, progress, journal)?;
    let stopped = crate::interrupt::requested();
    results
        .into_iter()
        .map(|r| match r {
            Ok(r) => Ok(Some(r)),
            Err(e) if stopped && e == interrupted => Ok(None),
            Err(e) => Err(e),
        })
        .collect()
}

/// Every job's outcome, in job order, on a pool of [`worker_threads`].
fn run_jobs(
    jobs: &[Job],
    threads: usize,
    progress: &dyn Progress,
    journal: Option<&Journal>,
) -> Result<Vec<Result<RunRecord>>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(worker_threads(threads, jobs.len()))
        .thread_name(|i| format!("tcplab-run-{i}"))
        .build()
        .map_err(|e| Error::at("--jobs", format!("cannot start worker threads: {e}")))?;
    progress.start(jobs.len() as u64);
    let results: Vec<Result<RunRecord>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let r = run_journaled(job, journal);
                progress.inc();
                r
            })
            .collect()
    });
    progress.finish();
    Ok(results)
}

/// One job: from the journal if it holds it, else run (unless
/// interrupted) and journaled.
fn run_journaled(job: &Job, journal: Option<&Journal>) -> Result<RunRecord> {
    let names: Vec<String> = job.metrics.iter().map(|m| m.name.clone()).collect();
    let backend = job.backend.label();
    // Runs kept for plots need their traces, and for CDFs their RPC
    // latencies, which the journal does not hold: those always run.
    let needs_more = job.keep || (job.keep_rpc && job.scenario.sim.flows.iter().any(crate::metrics::is_rpc_flow));
    let journaled = journal.filter(|_| !needs_more);
    if let Some(r) = journaled.and_then(|j| j.lookup(&job.scenario_hash, &backend, job.seed, &names)) {
        return Ok(RunRecord { seed: r.seed, values: r.values, traces: Vec::new(), rpc: Vec::new(), sim_s: r.sim_s });
    }
    if crate::interrupt::requested() {
        return Err(crate::interrupt::interrupted());
    }
    let r = run_one(job)?;
    if let Some(j) = journaled {
        let kept = JournaledRun { seed: r.seed, sim_s: r.sim_s, values: r.values.clone() };
        j.append(&job.scenario_hash, &backend, &names, &kept)?;
    }
    Ok(r)
}

/// Runs one job on this thread.
pub fn run_one(job: &Job) -> Result<RunRecord> {
    let mut sc = (*job.scenario).clone();
    sc.sim.seed = job.seed;
    let out =
        runner::run_with(&sc, Extras { keep_trace: job.keep, backend: job.backend.clone(), ..Default::default() })?;
    let rep = RunReport::new(&sc, &out);
    let values = job
        .metrics
        .iter()
        .map(|m| {
            m.eval(&rep, &out.result).map_err(|e| Error { message: format!("seed {}: {}", job.seed, e.message), ..e })
        })
        .collect::<Result<Vec<f64>>>()?;
    let traces = if job.keep { FlowTrace::all(&out.result) } else { Vec::new() };
    let rpc = if job.keep || job.keep_rpc {
        (0..out.result.flows.len())
            .filter_map(|i| rpc_latencies(&out.result, i).map(|v| (out.result.flows[i].id.clone(), v)))
            .collect()
    } else {
        Vec::new()
    };
    Ok(RunRecord { seed: job.seed, values, traces, rpc, sim_s: out.result.sim_time.as_secs_f64() })
}

/// The number of worker threads when `--jobs` is not given: every core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
