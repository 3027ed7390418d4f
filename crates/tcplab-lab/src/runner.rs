//! Running a validated scenario, and writing its traces.
//!
//! [`run`] runs it plainly; [`run_with`] adds the extras the commands
//! need: trace files, traces kept in memory for plots, a packet tap for
//! pcap capture, and progress reports, on the backend asked for. Tracing
//! is on when a trace file, a plot, `run.trace_interval` or
//! `run.goodput_window` needs it.
//!
//! A model run goes in slices of simulated time, and between slices it
//! reports progress, stops at its wall-clock limit (`--max-wall`, an
//! error) and stops when the user interrupts ([`crate::interrupt`]).
//! Running in slices changes nothing: the simulator processes the same
//! events in the same order.
//!
//! Trace files are created before the run starts ([`TraceSink::create`]),
//! so that an unwritable directory fails in milliseconds, not after a long
//! simulation.

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::outputs::Outputs;
use crate::schema::Scenario;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::{AppConfig, NodeKind, SimConfig};
use tcplab_sim::result::{QueueSample, RunResult, TraceRow};
use tcplab_sim::{PacketTap, Sim};

/// What one run produced, with its wall-clock time.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: RunResult,
    /// Wall-clock time of the simulation alone (not parsing or output).
    pub wall: std::time::Duration,
    /// `model`, or the kernel that ran it (`linux-6.12.117`).
    pub backend: String,
}

/// Runs `sc`, writing its traces to `trace` if given: [`run_with`] with
/// only that extra (which also decides when tracing is on).
pub fn run(sc: &Scenario, trace: Option<&mut TraceSink>) -> Result<Outcome> {
    run_with(sc, Extras { trace_files: trace, ..Default::default() })
}

/// What a run should produce besides its result.
#[derive(Default)]
pub struct Extras<'a> {
    /// Write trace CSV files here.
    pub trace_files: Option<&'a mut TraceSink>,
    /// Record traces in the result (for plots) even without files.
    pub keep_trace: bool,
    /// Observe every packet (pcap).
    pub tap: Option<PacketTap>,
    /// Called with the fraction of simulated time done (0 to 1], about
    /// every 0.5 % of the run.
    pub progress: Option<&'a mut dyn FnMut(f64)>,
    /// Where to run: the model, or the kernel (no packet tap there).
    pub backend: Backend,
}

/// Runs `sc` once with `extras`.
pub fn run_with(sc: &Scenario, extras: Extras<'_>) -> Result<Outcome> {
    // A scenario that sets run.trace_interval keeps its traces (metrics
    // such as ca_share and reordering_mean read them).
    let need_trace = extras.keep_trace
        || extras.trace_files.is_some()
        || sc.goodput_window.is_some()
        || sc.sim.trace_interval.is_some();
    let trace_interval = need_trace.then(|| sc.trace_interval_or_default());
    // The scenario's own configuration unless tracing changes it: a copy
    // would stay alive through the whole run (about 0.5 KB per flow).
    let cfg: Cow<'_, SimConfig> = if sc.sim.trace_interval == trace_interval {
        Cow::Borrowed(&sc.sim)
    } else {
        Cow::Owned(SimConfig { trace_interval, ..sc.sim.clone() })
    };
    if let Backend::Linux(k) = &extras.backend {
        if extras.tap.is_some() {
            return Err(Error::at("--pcap", "packet capture is available on the model backend only"));
        }
        let mut sc = sc.clone();
        sc.sim.trace_interval = trace_interval;
        let run = crate::backend::run_linux(k, &sc)?;
        if let Some(report) = extras.progress {
            report(1.0);
        }
        if let Some(t) = extras.trace_files {
            t.write(&run.result)?;
        }
        return Ok(Outcome { result: run.result, wall: run.wall, backend: run.backend });
    }
    if let Some(i) = sc.sim.nodes.iter().position(|n| n.offloads) {
        return Err(Error {
            location: Some(sc.name.clone()),
            path: Some(format!("node[{i}].offloads")),
            message: "TSO/GSO/GRO are not modelled: the model sends MSS-sized segments. Run this scenario with \
                      --backend linux, or remove `offloads`"
                .into(),
        });
    }
    let max_wall = match extras.backend {
        Backend::Model { max_wall } => max_wall,
        Backend::Linux(_) => None,
    };
    let started = std::time::Instant::now();
    let mut sim = Sim::new(&cfg).map_err(validated_config_rejected)?;
    if let Some(tap) = extras.tap {
        sim.set_packet_tap(tap);
    }
    let mut report = extras.progress;
    let total = cfg.duration.as_nanos();
    // 0.5 % of the run, but at most 10 ms simulated, so that a limit or an
    // interruption is noticed soon even in a run of years.
    let slice = (total / 200).clamp(1_000_000, 10_000_000);
    let mut t = slice;
    let stopped = loop {
        if t >= total {
            sim.run_to_end();
            break None;
        }
        sim.run_until(Instant::from_nanos(t));
        if let Some(r) = report.as_mut() {
            r(t as f64 / total as f64);
        }
        if crate::interrupt::requested() {
            break Some(crate::interrupt::interrupted());
        }
        if let Some(limit) = max_wall.filter(|l| started.elapsed() > *l) {
            break Some(Error::at(
                format!("--max-wall {}", limit.as_secs_f64()),
                format!(
                    "the run passed its wall-clock limit at {} of {} simulated; raise --max-wall or shorten \
                     run.duration",
                    crate::units::format_time(tcplab_core::time::Duration::from_nanos(t)),
                    crate::units::format_time(cfg.duration)
                ),
            ));
        }
        t += slice;
    };
    if let Some(e) = stopped {
        // The packet tap (pcap) is dropped here, between two packets.
        drop(sim.clear_packet_tap());
        return Err(e);
    }
    if let Some(r) = report.as_mut() {
        r(1.0);
    }
    let result = sim.into_result();
    let wall = started.elapsed();
    if let Some(t) = extras.trace_files {
        t.write(&result)?;
    }
    Ok(Outcome { result, wall, backend: "model".into() })
}

/// Packets per wall-clock second assumed when estimating how long a model
/// run takes: about half what `tcplab bench` measures (docs/PERFORMANCE.md),
/// as scenarios with more flows and links are slower per packet.
pub const ESTIMATE_PACKETS_PER_SEC: f64 = 1e6;

/// A rough upper estimate of the packets a run sends: every link busy in
/// one direction for the whole run with full-size (1500-byte) packets; or,
/// when every flow is a finite bulk transfer, fewer: each of its segments
/// and an ACK crossing every switch (a bound on the path). Runs with idle
/// links or application-limited flows send fewer.
pub fn packet_estimate(sc: &Scenario) -> f64 {
    let by_links: f64 =
        sc.sim.links.iter().map(|l| l.rate_bps as f64 / (8.0 * 1500.0) * sc.sim.duration.as_secs_f64()).sum();
    let transfers: Option<f64> = sc
        .sim
        .flows
        .iter()
        .map(|f| match f.app {
            AppConfig::Bulk { bytes: Some(b), .. } => Some(b as f64 * f.repeat.count() as f64),
            _ => None,
        })
        .sum();
    let hops = sc.sim.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as f64 + 1.0;
    let by_transfers = transfers.map_or(f64::INFINITY, |bytes| bytes / 1000.0 * 2.0 * hops);
    by_links.min(by_transfers)
}

/// A rough upper estimate of a model run's wall-clock time: the smaller
/// of [`packet_estimate`] and [`end_host_packet_estimate`], at
/// [`ESTIMATE_PACKETS_PER_SEC`].
pub fn wall_estimate(sc: &Scenario) -> std::time::Duration {
    let packets = packet_estimate(sc).min(end_host_packet_estimate(sc));
    std::time::Duration::try_from_secs_f64(packets / ESTIMATE_PACKETS_PER_SEC).unwrap_or(std::time::Duration::MAX)
}

/// The packets a run's flows can move when the end hosts' links are the
/// bound: a host receives at most what its links carry, and a flow at
/// most what its sender's links carry; every data packet is counted on
/// each hop of a path as long as the switches plus one, with an ACK for
/// every two. A dumbbell's fast access links then no longer count as
/// busy (two flows into one 100 Mbit/s host: 100 Mbit/s, not the 20
/// Gbit/s the access links could carry).
pub fn end_host_packet_estimate(sc: &Scenario) -> f64 {
    let n = sc.sim.nodes.len();
    let mut capacity = vec![0.0f64; n];
    for l in &sc.sim.links {
        for end in [l.a, l.b] {
            if let Some(c) = capacity.get_mut(end) {
                *c += l.rate_bps as f64;
            }
        }
    }
    let mut inbound = vec![0.0f64; n];
    for f in &sc.sim.flows {
        let (from, to) = (capacity.get(f.from).copied().unwrap_or(0.0), capacity.get(f.to).copied().unwrap_or(0.0));
        if let Some(i) = inbound.get_mut(f.to) {
            *i += from.min(to);
        }
    }
    let bits_per_s: f64 = inbound.iter().zip(&capacity).map(|(i, c)| i.min(*c)).sum();
    let hops = sc.sim.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as f64 + 1.0;
    bits_per_s / (8.0 * 1500.0) * sc.sim.duration.as_secs_f64() * 1.5 * hops
}

/// The header of every trace CSV file.
pub const TRACE_HEADER: &str = "time_s,cwnd,ssthresh,srtt_us,inflight,ca_state,delivered,pacing_rate,dctcp_alpha";

/// Seconds, printed exactly from integer nanoseconds (`S.NNNNNNNNN`).
fn seconds(d: Duration) -> String {
    let ns = d.as_nanos();
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// One CSV line of a trace row (without the newline).
pub fn trace_line(r: &TraceRow) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{}",
        seconds(r.time),
        r.cwnd,
        r.ssthresh,
        r.srtt_us,
        r.inflight,
        r.ca_state.name(),
        r.delivered,
        r.pacing_rate,
        r.dctcp_alpha.map_or(String::new(), |a| a.to_string())
    )
}

/// The header of every queue trace CSV file.
pub const QUEUE_TRACE_HEADER: &str = "time_s,packets,bytes,drops";

/// One CSV line of a queue sample (without the newline).
pub fn queue_trace_line(q: &QueueSample) -> String {
    format!("{},{},{},{}", seconds(q.time), q.packets, q.bytes, q.drops)
}

/// The file stem of a link direction's queue trace and plot,
/// `queue-<link>-<from>-<to>`, from its id `"<link>:<from>-><to>"`.
pub fn queue_stem(id: &str) -> String {
    format!("queue-{}", id.replace(':', "-").replace("->", "-"))
}

/// Trace files, opened before the run: `<DIR>/<flow-id>.csv` per flow
/// (the sender's state) and `<DIR>/queue-<link>-<from>-<to>.csv` per link
/// direction (its queue on the trace grid, a row whenever it changed).
pub struct TraceSink {
    pub dir: PathBuf,
    files: Vec<(TraceOf, PathBuf, File)>,
}

/// What one trace file holds.
enum TraceOf {
    /// The flow of this id.
    Flow(String),
    /// The link direction of this id (`"<link>:<from>-><to>"`).
    Queue(String),
}

impl TraceSink {
    /// Creates `dir` (and parents) and the files of `sc`'s flows and link
    /// directions, all through `out`, so that a failed command removes
    /// them again. Errors name the `--trace` argument and the path that
    /// failed.
    pub fn create(out: &mut Outputs, dir: &Path, sc: &Scenario) -> Result<TraceSink> {
        let loc = format!("--trace {}", dir.display());
        out.dir("--trace", dir)?;
        let flows = sc.sim.flows.iter().map(|f| (format!("{}.csv", f.id), TraceOf::Flow(f.id.clone())));
        let node = |i: usize| sc.sim.nodes[i].name.as_str();
        let queues = sc.sim.links.iter().flat_map(|l| {
            [(l.a, l.b), (l.b, l.a)].map(|(from, to)| {
                let id = format!("{}:{}->{}", l.name, node(from), node(to));
                (format!("{}.csv", queue_stem(&id)), TraceOf::Queue(id))
            })
        });
        let mut files = Vec::new();
        for (name, of) in flows.chain(queues) {
            let path = dir.join(name);
            out.track(&path);
            let file =
                File::create(&path).map_err(|e| Error::at(&loc, format!("cannot write {}: {e}", path.display())))?;
            files.push((of, path, file));
        }
        Ok(TraceSink { dir: dir.to_path_buf(), files })
    }

    /// The files' paths.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(_, p, _)| p.as_path())
    }

    /// Writes every flow's trace rows and every link direction's queue
    /// samples of `result` to their files.
    pub fn write(&mut self, result: &RunResult) -> Result<()> {
        for (of, path, file) in &mut self.files {
            let mut w = BufWriter::new(&mut *file);
            let io = (|| -> std::io::Result<()> {
                match of {
                    TraceOf::Flow(id) => {
                        writeln!(w, "{TRACE_HEADER}")?;
                        let rows = result.flows.iter().find(|f| f.id == *id).map_or(&[][..], |f| &f.trace);
                        for r in rows {
                            writeln!(w, "{}", trace_line(r))?;
                        }
                    }
                    TraceOf::Queue(id) => {
                        writeln!(w, "{QUEUE_TRACE_HEADER}")?;
                        let rows = result.links.iter().find(|l| l.id == *id).map_or(&[][..], |l| &l.queue_trace);
                        for q in rows {
                            writeln!(w, "{}", queue_trace_line(q))?;
                        }
                    }
                }
                w.flush()
            })();
            io.map_err(|e| Error::at(path.display().to_string(), format!("cannot write trace: {e}")))?;
        }
        Ok(())
    }
}

/// A configuration the simulator rejected although the lab's validation
/// accepted it: a gap in the lab's checks, reported as such.
pub(crate) fn validated_config_rejected(e: tcplab_sim::ConfigError) -> Error {
    Error::msg(format!("{e} (the scenario passed validation; please report this)"))
}
