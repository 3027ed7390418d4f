//! Running a validated scenario on the simulator, and writing its traces.
//!
//! Trace files are created before the run starts ([`TraceSink::create`]),
//! so that an unwritable directory fails in milliseconds, not after a long
//! simulation.

use crate::error::{Error, Result};
use crate::outputs::Outputs;
use crate::schema::Scenario;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tcplab_sim::config::SimConfig;
use tcplab_sim::result::{RunResult, TraceRow};

/// What one run produced, with its wall-clock time.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: RunResult,
    /// Wall-clock time of the simulation alone (not parsing or output).
    pub wall: std::time::Duration,
    /// The configuration that ran (with tracing as the run needed it).
    pub config: SimConfig,
    /// `model`, or the kernel that ran it (`linux-6.12.117`).
    pub backend: String,
}

/// Runs `sc`, writing its traces to `trace` if given: [`crate::exec::run`]
/// with only that extra (which also decides when tracing is on).
pub fn run(sc: &Scenario, trace: Option<&mut TraceSink>) -> Result<Outcome> {
    crate::exec::run(sc, crate::exec::Extras { trace_files: trace, ..Default::default() })
}

/// The header of every trace CSV file.
pub const TRACE_HEADER: &str = "time_s,cwnd,ssthresh,srtt_us,inflight,ca_state,delivered";

/// One CSV line of a trace row (without the newline). Time is printed
/// exactly, from integer nanoseconds.
pub fn trace_line(r: &TraceRow) -> String {
    let ns = r.time.as_nanos();
    format!(
        "{}.{:09},{},{},{},{},{},{}",
        ns / 1_000_000_000,
        ns % 1_000_000_000,
        r.cwnd,
        r.ssthresh,
        r.srtt_us,
        r.inflight,
        r.ca_state.name(),
        r.delivered
    )
}

/// Per-flow trace files `<DIR>/<flow-id>.csv`, opened before the run.
pub struct TraceSink {
    pub dir: PathBuf,
    files: Vec<(String, PathBuf, File)>,
}

impl TraceSink {
    /// Creates `dir` (and parents) and one file per flow of `sc`, all
    /// through `out`, so that a failed command removes them again. Errors
    /// name the `--trace` argument and the path that failed.
    pub fn create(out: &mut Outputs, dir: &Path, sc: &Scenario) -> Result<TraceSink> {
        let loc = format!("--trace {}", dir.display());
        out.dir("--trace", dir)?;
        let mut files = Vec::new();
        for f in &sc.sim.flows {
            let path = dir.join(format!("{}.csv", f.id));
            out.track(&path);
            let file =
                File::create(&path).map_err(|e| Error::at(&loc, format!("cannot write {}: {e}", path.display())))?;
            files.push((f.id.clone(), path, file));
        }
        Ok(TraceSink { dir: dir.to_path_buf(), files })
    }

    /// The files, as `(flow id, path)`.
    pub fn paths(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.files.iter().map(|(id, p, _)| (id.as_str(), p.as_path()))
    }

    /// Writes every flow's trace rows of `result` to its file.
    pub fn write(&mut self, result: &RunResult) -> Result<()> {
        for (id, path, file) in &mut self.files {
            let rows: &[TraceRow] = result.flows.iter().find(|f| f.id == *id).map_or(&[], |f| &f.trace);
            let mut w = BufWriter::new(&mut *file);
            let io = (|| -> std::io::Result<()> {
                writeln!(w, "{TRACE_HEADER}")?;
                for r in rows {
                    writeln!(w, "{}", trace_line(r))?;
                }
                w.flush()
            })();
            io.map_err(|e| Error::at(path.display().to_string(), format!("cannot write trace: {e}")))?;
        }
        Ok(())
    }
}

/// Result of `tcplab bench`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    /// Data segments delivered per wall-clock second.
    pub segments_per_sec: f64,
    /// Data segments delivered: the simulator's `data_segments` count
    /// (payload-carrying segments that reached the receiving host's TCP,
    /// retransmissions included).
    pub segments: u64,
    pub wall_s: f64,
    pub sim_s: f64,
    pub events: u64,
    pub events_per_sec: f64,
    /// How `segments` is counted.
    pub segments_basis: &'static str,
}

/// A configuration the simulator rejected although the lab's validation
/// accepted it: a gap in the lab's checks, reported as such.
pub(crate) fn validated_config_rejected(e: tcplab_sim::ConfigError) -> Error {
    Error::msg(format!("{e} (the scenario passed validation; please report this)"))
}

/// The benchmark's call into the simulator.
fn simulate(cfg: &SimConfig) -> Result<RunResult> {
    tcplab_sim::run(cfg).map_err(validated_config_rejected)
}

/// Runs `tcplab_sim::bench_config()` on this thread and measures it.
pub fn bench() -> Result<BenchReport> {
    let cfg = tcplab_sim::bench_config();
    let started = std::time::Instant::now();
    let result = simulate(&cfg)?;
    let wall = started.elapsed().as_secs_f64();
    let segments = result.data_segments;
    let per = |n: f64| if wall > 0.0 { n / wall } else { 0.0 };
    Ok(BenchReport {
        segments_per_sec: per(segments as f64),
        segments,
        wall_s: wall,
        sim_s: result.sim_time.as_secs_f64(),
        events: result.events,
        events_per_sec: per(result.events as f64),
        segments_basis: "simulator data_segments: payload segments that reached the receiving host",
    })
}
