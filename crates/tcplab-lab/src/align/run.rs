//! The runs behind an alignment: one scenario on the model with a packet
//! tap, on the kernel with the guest agent's capture
//! (`tcplab_agent::capture`), or twice on the model with a knob changed;
//! each side's packets as [`Packet`]s, normalised.

use super::{align, normalise, Names, Options, Packet, Report};
use crate::backend::{default_wall_limit, flow_knobs, kernel_error, Backend};
use crate::error::{Error, Result};
use crate::overrides::{ScenarioText, Setting};
use crate::runner::{self, Extras};
use crate::schema::Scenario;
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tcplab_agent::capture::{self, CaptureJob, CapturePoint, KIND_IN};
use tcplab_core::time::{Duration, Instant};
use tcplab_kernel::KernelBackend;
use tcplab_sim::result::RunResult;
use tcplab_sim::{PacketEvent, PacketEventKind};
use tcplab_wire::packet::PacketRepr;

/// Trace interval when the scenario sets none: the state shown around a
/// divergence is the last trace row before it.
pub const TRACE_INTERVAL: Duration = Duration::from_millis(1);

/// One side's run: its packets (normalised) and result.
pub struct Side {
    pub name: String,
    pub packets: Vec<Packet>,
    pub result: RunResult,
    pub warnings: Vec<String>,
}

/// Runs `sc` on the model and returns every packet's arrival at the end
/// of each link direction.
pub fn model(sc: &Scenario, name: &str) -> Result<Side> {
    let ports = tcplab_sim::client_ports(&sc.sim.flows);
    let sink: Arc<Mutex<Vec<Packet>>> = Arc::new(Mutex::new(Vec::new()));
    let tap_sink = Arc::clone(&sink);
    let tap = Box::new(move |now: Instant, ev: &PacketEvent| {
        let (PacketEventKind::Arrive, Some(dir)) = (ev.kind, ev.dir) else { return };
        let client_port = if ev.from_client { ev.seg.src_port } else { ev.seg.dst_port };
        let conn = ports.get(ev.flow).and_then(|p| p.iter().position(|&x| x == client_port)).unwrap_or(0);
        let p = Packet::from_segment(
            now.as_nanos() as i64,
            dir as u32,
            ev.flow as u32,
            conn as u32,
            ev.from_client,
            &ev.seg,
        );
        tap_sink.lock().unwrap_or_else(|p| p.into_inner()).push(p);
    });
    let extras =
        Extras { keep_trace: true, tap: Some(tap), backend: Backend::Model { max_wall: None }, ..Default::default() };
    let out = runner::run_with(sc, extras)?;
    let mut packets = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
    normalise(&mut packets);
    Ok(Side { name: name.into(), packets, result: out.result, warnings: Vec::new() })
}

/// The capture points of `sc` on the kernel: both ends of every link
/// (device `l<index>` in the end's namespace, as `translate` names them),
/// point `2·link` at end a, `2·link + 1` at end b.
pub fn capture_points(sc: &Scenario) -> Vec<CapturePoint> {
    let mut v = Vec::new();
    for (l, link) in sc.sim.links.iter().enumerate() {
        for node in [link.a, link.b] {
            let name = sc.sim.nodes.get(node).map_or("", |n| n.name.as_str());
            v.push(CapturePoint { ns: tcplab_kernel::translate::node_ns(name), dev: format!("l{l}") });
        }
    }
    v
}

/// The link direction whose arrivals capture point `point` sees: a packet
/// arriving at link l's end a came from b (direction `2·l + 1`), at end b
/// from a (`2·l`).
pub fn arrival_dir(point: u16) -> u32 {
    let (l, end) = (point as u32 / 2, point as u32 % 2);
    2 * l + (1 - end)
}

/// Source address and port, destination address and port.
type Tuple = ([u8; 4], u16, [u8; 4], u16);

/// Runs `sc` on the kernel with a capture written to `capture_path` (a
/// host file, kept) and returns every packet's arrival at the end of each
/// link direction.
pub fn linux(k: &KernelBackend, sc: &Scenario, capture_path: &Path) -> Result<Side> {
    let mut k = k.clone();
    if k.guest.wall_limit.is_zero() {
        k.guest.wall_limit = default_wall_limit(sc);
    }
    let mut plan = k.plan(&sc.sim, &flow_knobs(sc)).map_err(|e| kernel_error(sc, e))?;
    let abs = std::path::absolute(capture_path)
        .map_err(|e| Error::at(capture_path.display().to_string(), format!("cannot resolve: {e}")))?;
    plan.job.capture = Some(CaptureJob { path: abs.to_string_lossy().into_owned(), points: capture_points(sc) });
    let run = tcplab_kernel::guest::run(&k.guest, &plan).map_err(|e| kernel_error(sc, e))?;
    let result = tcplab_kernel::collect::collect(&sc.sim, &run.result);
    let name = if run.result.kernel_release.is_empty() {
        k.guest.image.label()
    } else {
        format!("linux-{}", run.result.kernel_release)
    };
    let what = capture_path.display().to_string();
    let bytes = std::fs::read(capture_path).map_err(|e| Error::at(&what, format!("cannot read the capture: {e}")))?;
    let file = capture::read(&bytes, &what).map_err(Error::msg)?;
    let mut warnings = Vec::new();
    if !file.complete {
        warnings.push(format!("{what}: the capture has no trailer (the guest did not reach the run's end)"));
    }
    let points = capture_points(sc);
    for (p, n) in file.drops.iter().filter(|d| d.1 > 0) {
        let at = points.get(*p as usize).map_or_else(String::new, |c| format!(" ({} in {})", c.dev, c.ns));
        warnings.push(format!(
            "the capture lost {n} packet(s) at point {p}{at}: its socket's buffer overflowed; streams there may \
             diverge where the capture, not the kernel, lost a packet"
        ));
    }
    // Addresses and ports -> (flow, connection, from the client).
    let mut who: HashMap<Tuple, (u32, u32, bool)> = HashMap::new();
    for (f, fj) in plan.job.flows.iter().enumerate() {
        let parse = |a: &str| a.parse::<Ipv4Addr>().map(|x| x.octets()).ok();
        let (Some(c), Some(s)) = (parse(&fj.client_addr), parse(&fj.server_addr)) else { continue };
        for (conn, &port) in fj.client_ports.iter().enumerate() {
            who.insert((c, port, s, fj.server_port), (f as u32, conn as u32, true));
            who.insert((s, fj.server_port, c, port), (f as u32, conn as u32, false));
        }
    }
    let mut packets = Vec::with_capacity(file.records.len() / 2);
    let mut unparsed = 0u64;
    for r in file.records.iter().filter(|r| r.kind == KIND_IN) {
        let Ok(p) = PacketRepr::parse(&r.headers) else {
            unparsed += 1;
            continue;
        };
        let (pk, seg) = (p.packet, p.packet.seg);
        let Some(&(flow, conn, from_client)) = who.get(&(pk.src, seg.src_port, pk.dst, seg.dst_port)) else {
            continue;
        };
        packets.push(Packet::from_segment(r.t_ns, arrival_dir(r.point), flow, conn, from_client, &seg));
    }
    if unparsed > 0 {
        warnings.push(format!("{unparsed} captured packet(s) were not TCP over IPv4 and were left out"));
    }
    normalise(&mut packets);
    Ok(Side { name, packets, result, warnings })
}

/// What to align: a scenario with its settings, on one seed, against the
/// kernel or against the model with other settings.
pub struct Spec {
    pub scenario: ScenarioText,
    pub base: Vec<Setting>,
    pub seed: u64,
    pub against: Against,
    pub opts: Options,
    /// Where the kernel's capture goes; `None`: a temporary file, removed.
    pub capture: Option<PathBuf>,
}

/// The second side.
pub enum Against {
    Linux(Backend),
    /// The model again, with these settings on top.
    Model(Vec<Setting>),
}

fn load(scenario: &ScenarioText, base: &[Setting], extra: &[Setting], flag: &str, seed: u64) -> Result<Scenario> {
    let mut layers = crate::compare::set_layers(base);
    for s in extra {
        layers.push(&format!("{flag} {}", s.text()), std::slice::from_ref(s));
    }
    let mut sc = scenario.load(&layers, Some(seed))?;
    if sc.sim.trace_interval.is_none() {
        sc.sim.trace_interval = Some(TRACE_INTERVAL);
    }
    Ok(sc)
}

impl Spec {
    /// Both scenarios (model side, other side), validated: a bad file or
    /// setting is reported before anything runs.
    pub fn scenarios(&self) -> Result<(Scenario, Scenario)> {
        match &self.against {
            Against::Linux(_) => {
                let m = crate::diff::model_settings(&self.base);
                Ok((
                    load(&self.scenario, &self.base, &m, "align", self.seed)?,
                    load(&self.scenario, &self.base, &[], "--set", self.seed)?,
                ))
            }
            Against::Model(b) => Ok((
                load(&self.scenario, &self.base, &[], "--set", self.seed)?,
                load(&self.scenario, &self.base, b, "--b", self.seed)?,
            )),
        }
    }

    /// Runs both sides and aligns them.
    pub fn run(&self) -> Result<Report> {
        let (a, b, names) = self.sides()?;
        Ok(self.report(&a, &b, names, &self.opts))
    }

    /// Aligns two sides' runs with `opts` (several alignments of one
    /// pair of runs cost one pair of runs).
    pub fn report(&self, a: &Side, b: &Side, names: Names, opts: &Options) -> Report {
        let al = align(&a.packets, &b.packets, opts);
        let mut warnings = a.warnings.clone();
        warnings.extend(b.warnings.iter().cloned());
        Report::new(
            &self.scenario.name,
            self.seed,
            names,
            (&a.name, &a.packets, &a.result),
            (&b.name, &b.packets, &b.result),
            opts,
            al,
            warnings,
        )
    }

    /// Runs both sides: the model, then the kernel or the model again.
    pub fn sides(&self) -> Result<(Side, Side, Names)> {
        let (sa, sb) = self.scenarios()?;
        let a = model(&sa, "model")?;
        let b = match &self.against {
            Against::Model(_) => model(&sb, "model (b)")?,
            Against::Linux(Backend::Linux(k)) => {
                let tmp;
                let path = match &self.capture {
                    Some(p) => p.as_path(),
                    None => {
                        tmp = TempFile::new()?;
                        tmp.0.as_path()
                    }
                };
                linux(k, &sb, path)?
            }
            Against::Linux(Backend::Model { .. }) => return Err(Error::msg("internal: the linux side is the model")),
        };
        Ok((a, b, Names::of(&sa.sim)))
    }
}

/// A temporary capture file, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new() -> Result<TempFile> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Ok(TempFile(std::env::temp_dir().join(format!("tcplab-align-{}-{n}.cap", std::process::id()))))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overrides::parse_one;

    const SCENARIO: &str = r#"
[run]
duration = "300ms"
[[node]]
name = "a"
[[node]]
name = "sw"
kind = "switch"
[[node]]
name = "b"
[[link]]
name = "access"
a = "a"
b = "sw"
rate = "1Gbit"
delay = "10us"
[[link]]
name = "bottleneck"
a = "sw"
b = "b"
rate = "20Mbit"
delay = "10ms"
queue = "30p"
[[flow]]
id = "f1"
from = "a"
to = "b"
cc = "cubic"
"#;

    fn spec(b: &[&str]) -> Spec {
        Spec {
            scenario: ScenarioText { name: "t.toml".into(), text: SCENARIO.into() },
            base: Vec::new(),
            seed: 1,
            against: Against::Model(b.iter().map(|s| parse_one("--b", s).unwrap()).collect()),
            opts: Options::default(),
            capture: None,
        }
    }

    #[test]
    fn the_same_seed_gives_identical_traces() {
        let r = spec(&[]).run().unwrap();
        assert!(r.alignment.divergence.is_none(), "{}", r.to_text());
        assert!(r.alignment.a_packets > 500, "{}", r.alignment.a_packets);
        assert_eq!(r.alignment.a_packets, r.alignment.b_packets);
        assert!(r.to_text().contains("no divergence"));
    }

    /// An initial window of 20 instead of 10: the handshake and the first
    /// ten segments are the same, the 11th leaves at once with IW 20
    /// where IW 10 waits for the first ACK, a round trip later. So the
    /// first divergence is the 11th data segment (index 12 of the client's
    /// stream after SYN and the handshake's ACK... counted below) on the
    /// first link, a timing or content difference at the time of IW 20's
    /// 11th segment.
    #[test]
    fn a_changed_initial_window_diverges_at_the_eleventh_segment() {
        let r = spec(&["flow.f1.tcp.initcwnd=20"]).run().unwrap();
        let d = r.alignment.divergence.as_ref().expect("a divergence");
        assert_eq!(r.link_dir.as_deref(), Some("access:a->sw"), "{}", r.to_text());
        assert!(d.stream.from_client);
        let b = d.b.expect("b's packet");
        // Packets of the client's stream: SYN, the handshake's ACK (which
        // Linux folds into the first data segment? no: a pure ACK), then
        // data; the divergent one carries bytes 10·MSS + 1 onwards.
        assert_eq!(b.seq, 1 + 10 * 1448, "{}", r.to_text());
        assert!(r.chart().is_some());
        let text = r.to_text();
        assert!(text.contains("state: cwnd"), "{text}");
    }

    #[test]
    fn capture_points_and_directions_follow_the_links() {
        let sc = spec(&[]).scenarios().unwrap().0;
        let p = capture_points(&sc);
        assert_eq!(p.len(), 4);
        assert_eq!((p[1].ns.as_str(), p[1].dev.as_str()), ("t-sw", "l0"));
        assert_eq!(arrival_dir(0), 1); // link 0, end a: from b
        assert_eq!(arrival_dir(3), 2); // link 1, end b: from a
    }
}
