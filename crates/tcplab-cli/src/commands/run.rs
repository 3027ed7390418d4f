//! `tcplab run`: one scenario, with its traces, plots and captures.

use crate::options::{BackendArgs, ScenarioArgs};
use crate::terminal::{emit, interactive, sim_time_bar, warn_if_long};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::backend::Backend;
use tcplab_lab::batch::FlowTrace;
use tcplab_lab::interrupt;
use tcplab_lab::outputs::Outputs;
use tcplab_lab::pcap::PcapCapture;
use tcplab_lab::report::RunReport;
use tcplab_lab::runner::{self, Extras, TraceSink};
use tcplab_lab::{plot, Error};

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// Print one JSON object (flows, links, counters, events, sim_time_s, wall_s, seed,
    /// scenario) instead of a table.
    #[arg(long)]
    json: bool,
    /// Write one CSV per flow to DIR/<flow-id>.csv
    /// (time_s,cwnd,ssthresh,srtt_us,inflight,ca_state,delivered,pacing_rate,dctcp_alpha) and one
    /// per link direction to DIR/queue-<link>-<from>-<to>.csv (time_s,packets,bytes,drops). DIR is
    /// created.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Write plots (PNG and SVG) to DIR: cwnd/ssthresh/inflight per flow with ca_state
    /// shaded (cwnd-FLOW), goodput over time (goodput), and packets waiting and dropped per
    /// link direction whose queue ever held a packet (queue-LINK-FROM-TO). DIR is created.
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

pub(crate) fn run(a: RunArgs) -> Result<ExitCode, Error> {
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
pub(crate) fn run_on(a: &RunArgs, sc: &tcplab_lab::Scenario, backend: Backend) -> Result<String, Error> {
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
        let sim_s = outcome.result.sim_time.as_secs_f64();
        let mut charts = plot::run_charts(&traces, sim_s, "", "");
        charts.extend(plot::queue_charts(&outcome.result.links, sim_s));
        let n = plot::write_all(&mut out, dir, &charts)?;
        eprintln!("tcplab: wrote {n} plot(s) (PNG and SVG) to {}", dir.display());
    }
    out.commit();
    Ok(if a.json { report.to_json() + "\n" } else { report.to_table() })
}
