//! One run with the extras the experiment commands need: traces kept in
//! memory for plots, and a packet tap for pcap capture. A thin wrapper
//! around the same simulator call as [`crate::runner::run`], which it
//! mirrors (tracing is on when a trace file, a plot or
//! `run.goodput_window` needs it).

use crate::error::{Error, Result};
use crate::runner::{Outcome, TraceSink};
use crate::schema::Scenario;
use tcplab_sim::{PacketTap, Sim};

/// What a run should produce besides its result.
#[derive(Default)]
pub struct Extras<'a> {
    /// Write trace CSV files here.
    pub trace_files: Option<&'a mut TraceSink>,
    /// Record traces in the result (for plots) even without files.
    pub keep_trace: bool,
    /// Observe every packet (pcap).
    pub tap: Option<PacketTap>,
}

/// Runs `sc` once.
pub fn run(sc: &Scenario, extras: Extras<'_>) -> Result<Outcome> {
    let mut cfg = sc.sim.clone();
    // A scenario that sets run.trace_interval keeps its traces (metrics
    // such as ca_share and reordering_mean read them).
    let need_trace = extras.keep_trace
        || extras.trace_files.is_some()
        || sc.goodput_window.is_some()
        || sc.sim.trace_interval.is_some();
    cfg.trace_interval = if need_trace { Some(sc.trace_interval_or_default()) } else { None };
    let started = std::time::Instant::now();
    let mut sim =
        Sim::new(&cfg).map_err(|e| Error::msg(format!("{e} (the scenario passed validation; please report this)")))?;
    if let Some(tap) = extras.tap {
        sim.set_packet_tap(tap);
    }
    sim.run_to_end();
    let result = sim.result();
    let wall = started.elapsed();
    drop(sim.clear_packet_tap());
    if let Some(t) = extras.trace_files {
        t.write(&result)?;
    }
    Ok(Outcome { result, wall, config: cfg })
}
