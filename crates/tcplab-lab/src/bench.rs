//! `tcplab bench`: how fast the simulator is, measured rather than
//! assumed. One scenario (the dumbbell of [`tcplab_sim::bench_config`]),
//! or the suite: the dumbbell, a 128-host leaf-spine incast, 100,000
//! connections, and the cost per segment and per connection as the
//! number of connections grows from 1 to 100,000.
//!
//! Every run is on the calling thread. Machines are shared, so the CPU
//! time of that thread is reported beside the wall-clock time
//! (`CLOCK_THREAD_CPUTIME_ID`: on-CPU time, user and system, exact to the
//! nanosecond rather than to the scheduler tick as /proc's counters are),
//! and rates are per CPU-second as well as per wall-clock second. Peak
//! memory is the process's high-water mark (`VmHWM`), reset before each
//! run by writing 5 to `/proc/self/clear_refs`; the suite runs each entry
//! in a fresh process, so each row's memory is its own.
//! On a system without those files the fields are absent.

use crate::error::{Error, Result};
use crate::report::text_table;
use crate::runner::validated_config_rejected;
use crate::schema::{load_str, Scenario};
use tcplab_sim::config::SimConfig;

/// The leaf-spine incast and the 100,000-connection scenario, built in so
/// that the suite runs from any directory with the binary alone.
const INCAST: (&str, &str) =
    ("scenarios/leaf-spine-incast.toml", include_str!("../../../scenarios/leaf-spine-incast.toml"));
const MANY: (&str, &str) =
    ("scenarios/scale/100k-flows.toml", include_str!("../../../scenarios/scale/100k-flows.toml"));

/// Simulated time of each point of the cost-vs-connections series: the
/// connections are all sending by then (they start at once).
const SERIES_DURATION: &str = "20ms";

/// One measured run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BenchRow {
    pub name: String,
    /// Connections (flows times runs).
    pub connections: u64,
    pub sim_s: f64,
    pub events: u64,
    /// The simulator's `data_segments`: payload-carrying segments that
    /// reached the receiving host's TCP, retransmissions included.
    pub segments: u64,
    pub wall_s: f64,
    /// On-CPU time of the thread that ran it, seconds.
    pub cpu_s: Option<f64>,
    pub segments_per_sec: f64,
    pub segments_per_cpu_sec: Option<f64>,
    pub events_per_sec: f64,
    pub events_per_cpu_sec: Option<f64>,
    /// Peak resident memory during the run, MB (10^6 bytes).
    pub peak_rss_mb: Option<f64>,
    /// Resident memory when the run started (the process's baseline), MB.
    pub start_rss_mb: Option<f64>,
}

impl BenchRow {
    /// CPU microseconds per data segment.
    pub fn cpu_us_per_segment(&self) -> Option<f64> {
        self.cpu_s.filter(|_| self.segments > 0).map(|c| c * 1e6 / self.segments as f64)
    }

    /// Memory per connection: the peak above the start, KB.
    pub fn kb_per_connection(&self) -> Option<f64> {
        match (self.peak_rss_mb, self.start_rss_mb) {
            (Some(p), Some(s)) if self.connections > 0 => Some((p - s).max(0.0) * 1e3 / self.connections as f64),
            _ => None,
        }
    }
}

/// What `tcplab bench` prints.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchReport {
    pub rows: Vec<BenchRow>,
    /// How `segments` is counted.
    pub segments_basis: &'static str,
    /// How the binary was built: the cargo profile and "plain" or
    /// "profile-guided" (`scripts/pgo-build.sh`), about 40 % apart on
    /// the dumbbell (docs/PERFORMANCE.md).
    pub build: &'static str,
}

/// [`BenchReport::build`] of this binary (`build.rs`).
pub const BUILD: &str = env!("TCPLAB_BUILD");

/// On-CPU time of this thread so far, ns.
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Resets the process's peak RSS to its current RSS; false if it cannot.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak RSS (`VmHWM`), bytes.
fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `cfg` on this thread and measures it.
pub fn measure(name: &str, cfg: &SimConfig) -> Result<BenchRow> {
    let rss_known = reset_peak_rss();
    // Right after the reset the peak is the current RSS.
    let start_rss_mb = if rss_known { peak_rss_bytes().map(|b| b as f64 / 1e6) } else { None };
    let cpu0 = thread_cpu_ns();
    let started = std::time::Instant::now();
    let result = tcplab_sim::run(cfg).map_err(validated_config_rejected)?;
    let wall = started.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
        _ => None,
    };
    let peak_rss_mb = if rss_known { peak_rss_bytes().map(|b| b as f64 / 1e6) } else { None };
    let per = |n: u64, t: f64| if t > 0.0 { n as f64 / t } else { 0.0 };
    Ok(BenchRow {
        name: name.to_string(),
        connections: cfg.connections(),
        sim_s: result.sim_time.as_secs_f64(),
        events: result.events,
        segments: result.data_segments,
        wall_s: wall,
        cpu_s: cpu,
        segments_per_sec: per(result.data_segments, wall),
        segments_per_cpu_sec: cpu.map(|c| per(result.data_segments, c)),
        events_per_sec: per(result.events, wall),
        events_per_cpu_sec: cpu.map(|c| per(result.events, c)),
        peak_rss_mb,
        start_rss_mb,
    })
}

const BASIS: &str = "simulator data_segments: payload segments that reached the receiving host";

/// `tcplab bench`: the dumbbell alone.
pub fn bench() -> Result<BenchReport> {
    Ok(BenchReport {
        rows: vec![measure("dumbbell", &tcplab_sim::bench_config())?],
        segments_basis: BASIS,
        build: BUILD,
    })
}

fn built_in(file: (&str, &str), sets: &[String]) -> Result<Scenario> {
    load_str(file.0, file.1, sets, None)
}

/// A scenario of the suite, built when its turn comes (the large ones
/// take hundreds of MB as configurations alone).
pub type Entry = (String, Box<dyn Fn() -> Result<SimConfig>>);

/// The suite's runs, in order; the points of the cost-vs-connections
/// series are named `connections=N`.
pub fn suite_entries() -> Vec<Entry> {
    let file = |f: (&'static str, &'static str), sets: Vec<String>| -> Box<dyn Fn() -> Result<SimConfig>> {
        Box::new(move || built_in(f, &sets).map(|sc| sc.sim))
    };
    let mut out: Vec<Entry> = vec![
        ("dumbbell".to_string(), Box::new(|| Ok(tcplab_sim::bench_config()))),
        ("leaf-spine incast (128 hosts)".to_string(), file(INCAST, Vec::new())),
        ("100k connections".to_string(), file(MANY, Vec::new())),
    ];
    // 1 connection (one sender of an incast), then the 32 hosts' permutation
    // with 1 to 3,125 connections per pair.
    let series = |parallel: u64, extra: &[&str]| {
        let mut sets = vec![format!("traffic.parallel={parallel}"), format!("run.duration={SERIES_DURATION}")];
        sets.extend(extra.iter().map(|s| s.to_string()));
        sets
    };
    out.push(("connections=1".to_string(), file(MANY, series(1, &["traffic.pattern=incast", "traffic.senders=1"]))));
    for parallel in [1, 10, 100, 1000, 3125] {
        out.push((format!("connections={}", 32 * parallel), file(MANY, series(parallel, &[]))));
    }
    out
}

/// Builds and measures suite entry `i` in this process.
pub fn measure_entry(i: usize) -> Result<BenchRow> {
    let entries = suite_entries();
    let Some((name, build)) = entries.get(i) else {
        return Err(Error::msg(format!("no bench suite entry {i} (there are {})", entries.len())));
    };
    measure(name, &build()?)
}

/// `tcplab bench --suite`: every entry through `run(i, name)`, which the
/// CLI points at a fresh process per entry ([`measure_entry`] there), so
/// that each row's memory is its own: a process that ran a large entry
/// keeps the freed memory, and a later, smaller entry would then seem to
/// cost nothing.
pub fn suite(mut run: impl FnMut(usize, usize, &str) -> Result<BenchRow>) -> Result<BenchReport> {
    let entries = suite_entries();
    let mut rows = Vec::with_capacity(entries.len());
    for (i, (name, _)) in entries.iter().enumerate() {
        rows.push(run(i, entries.len(), name)?);
    }
    Ok(BenchReport { rows, segments_basis: BASIS, build: BUILD })
}

impl BenchReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    pub fn to_table(&self) -> String {
        let opt = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.connections.to_string(),
                    format!("{:.3}", r.sim_s),
                    r.events.to_string(),
                    r.segments.to_string(),
                    format!("{:.2}", r.wall_s),
                    opt(r.cpu_s, 2),
                    format!("{:.2}", r.segments_per_sec / 1e6),
                    opt(r.segments_per_cpu_sec.map(|v| v / 1e6), 2),
                    opt(r.events_per_cpu_sec.map(|v| v / 1e6), 2),
                    opt(r.peak_rss_mb, 1),
                    opt(r.kb_per_connection(), 1),
                ]
            })
            .collect();
        let mut out = String::new();
        text_table(
            &mut out,
            &[
                "run",
                "conns",
                "sim s",
                "events",
                "segments",
                "wall s",
                "CPU s",
                "M seg/s",
                "M seg/CPU-s",
                "M ev/CPU-s",
                "peak RSS MB",
                "KB/conn",
            ],
            &rows,
            false,
        );
        out.push_str(&format!(
            "(segments: {}; CPU: this thread's on-CPU time; build: {})\n",
            self.segments_basis, self.build
        ));
        out
    }

    /// The cost-vs-connections charts (`connections=N` rows): CPU per
    /// segment and memory per connection, over a log axis of connections.
    pub fn charts(&self) -> Vec<(String, crate::plot::Chart)> {
        use crate::plot::{Chart, Series};
        let points = |f: &dyn Fn(&BenchRow) -> Option<f64>| -> Vec<(f64, f64)> {
            self.rows
                .iter()
                .filter(|r| r.name.starts_with("connections="))
                .filter_map(|r| f(r).map(|y| (r.connections as f64, y)))
                .collect()
        };
        let chart = |title: &str, y: &str, name: &str, pts: Vec<(f64, f64)>| Chart::LogX {
            title: title.to_string(),
            x_desc: "connections".to_string(),
            y_desc: y.to_string(),
            series: vec![Series { name: name.to_string(), points: pts }],
        };
        vec![
            (
                "cost-cpu-per-segment".to_string(),
                chart(
                    "CPU per data segment vs connections",
                    "CPU µs per segment",
                    "32-host leaf-spine, 20 ms",
                    points(&|r| r.cpu_us_per_segment()),
                ),
            ),
            (
                "cost-memory-per-connection".to_string(),
                chart(
                    "Memory per connection vs connections (peak above the start)",
                    "KB per connection",
                    "32-host leaf-spine, 20 ms",
                    points(&|r| r.kb_per_connection()),
                ),
            ),
        ]
    }
}

/// An error for `--plot` without `--suite`.
pub fn plot_needs_suite() -> Error {
    Error::at("--plot", "plots the cost-vs-connections series of the suite: add --suite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_suite_scenarios_load_and_span_1_to_100k_connections() {
        for (name, build) in suite_entries() {
            let cfg = build().unwrap();
            let conns = cfg.connections();
            match name.strip_prefix("connections=") {
                Some(n) => assert_eq!(n.parse::<u64>().unwrap(), conns, "{name}"),
                None if name.starts_with("leaf-spine") => assert_eq!(cfg.nodes.len(), 128 + 8 + 4),
                None if name.starts_with("100k") => assert_eq!(conns, 100_000),
                None => assert_eq!(conns, 1),
            }
        }
    }

    #[test]
    fn test_measure_counts_what_the_run_did() {
        let mut cfg = tcplab_sim::bench_config();
        cfg.duration = tcplab_core::time::Duration::from_millis(200);
        let r = measure("short", &cfg).unwrap();
        let again = tcplab_sim::run(&cfg).unwrap();
        assert_eq!((r.events, r.segments), (again.events, again.data_segments));
        assert_eq!(r.connections, 1);
        if let Some(cpu) = r.cpu_s {
            assert!(cpu > 0.0);
            assert!(r.segments_per_cpu_sec.unwrap() > 0.0);
        }
    }

    /// The report names the build its figures came from, in the table and
    /// the JSON: the cargo profile these tests run under, and "plain"
    /// (the tests are never built with a profile).
    #[test]
    fn test_report_says_which_build_ran() {
        let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
        assert_eq!(BUILD, format!("{profile}, plain"));
        let report = BenchReport { rows: Vec::new(), segments_basis: BASIS, build: BUILD };
        assert!(report.to_table().contains(&format!("build: {profile}, plain)")), "{}", report.to_table());
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["build"], BUILD);
    }
}
