//! Many runs in parallel: the engine under `compare`, `reproduce` and
//! `sweep`.
//!
//! Each run is single-threaded and deterministic; runs are spread over a
//! rayon pool of `jobs` threads and their records are collected in job
//! order, so the output does not depend on `jobs` or on scheduling. A run
//! keeps only what the commands print: its metric values, and (when asked,
//! for plots) its traces and RPC latencies.

use crate::error::{Error, Result};
use crate::exec::{self, Extras};
use crate::metrics::{rpc_latencies, Metric, RpcLatencies};
use crate::report::RunReport;
use crate::schema::Scenario;
use rayon::prelude::*;
use std::sync::Arc;
use tcplab_sim::result::TraceRow;

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

/// Runs `jobs` on `threads` threads (≥ 1) and returns their records in
/// job order. The first failing job (in job order) is the error.
pub fn run_all(jobs: &[Job], threads: usize, progress: &dyn Progress) -> Result<Vec<RunRecord>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("tcplab-run-{i}"))
        .build()
        .map_err(|e| Error::at("--jobs", format!("cannot start worker threads: {e}")))?;
    progress.start(jobs.len() as u64);
    let results: Vec<Result<RunRecord>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let r = run_one(job);
                progress.inc();
                r
            })
            .collect()
    });
    progress.finish();
    results.into_iter().collect()
}

/// Runs one job on this thread.
pub fn run_one(job: &Job) -> Result<RunRecord> {
    let mut sc = (*job.scenario).clone();
    sc.sim.seed = job.seed;
    let out = exec::run(&sc, Extras { keep_trace: job.keep, backend: job.backend.clone(), ..Default::default() })?;
    let rep = RunReport::new(&sc, &out);
    let values = job
        .metrics
        .iter()
        .map(|m| {
            m.eval(&rep, &out.result).map_err(|e| Error { message: format!("seed {}: {}", job.seed, e.message), ..e })
        })
        .collect::<Result<Vec<f64>>>()?;
    let traces = if job.keep {
        out.result
            .flows
            .iter()
            .map(|f| FlowTrace {
                id: f.id.clone(),
                mss: if f.sender_info.snd_mss > 0 { f.sender_info.snd_mss } else { 1448 },
                rows: f.trace.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
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
