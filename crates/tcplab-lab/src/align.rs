//! Packet-by-packet alignment of two runs of one scenario (`tcplab
//! align`): the model against the kernel, or the model against itself with
//! a knob changed. docs/ALIGNMENT.md has the suite and what it found.
//!
//! Both backends are deterministic on fixed-delay scenarios, so if the
//! model did exactly what Linux does the two packet traces would be the
//! same, and the first packet where they part names the mechanism that
//! differs. This module is the pure part: it takes two lists of
//! [`Packet`]s (the runners in [`run`] make them), makes what is
//! arbitrary comparable ([`normalise`]), walks both in time order and
//! reports the first difference ([`align`]) with the packets before it
//! and each side's state around it ([`State`]).
//!
//! # What is compared
//!
//! A packet is observed where it **arrives at the far end of a link
//! direction** (the model's `Arrive` tap event; in the guest, the
//! receiving veth's `AF_PACKET` capture, after the direction's netem): on
//! a link with a delay that instant is exact on both backends
//! (docs/KERNEL.md). Packets are grouped into streams, one per link
//! direction, flow, connection and sender ([`StreamKey`]), and the k-th
//! packet of a stream on one side is paired with the k-th on the other:
//! interleavings of different flows on a shared link that differ within
//! the tolerance are not a divergence, a packet that is missing, extra,
//! or different in a stream is.
//!
//! Normalised away ([`normalise`]): the initial sequence numbers (seq,
//! ack and SACK blocks become relative to each direction's ISN, as
//! Wireshark shows them), the TSval offset (TSval and TSecr relative to
//! each direction's first TSval: Linux adds a random per-connection
//! offset, `tcp_init_ts_off`), ports and addresses (a flow index, the
//! connection's index among the flow's runs, and the sender's side), and
//! MACs (never captured). Compared: relative seq and ack, payload length,
//! flags, SACK blocks, the SYN options, the ECN bits of the IP header, the
//! advertised window, TSval and TSecr within the slack that the time
//! tolerance allows (a millisecond clock read up to `tolerance` apart may
//! differ by one tick more), and the time, within `tolerance`. `ignore`
//! leaves fields out.

pub mod run;
pub mod suite;

use crate::plot::{Chart, Series};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use tcplab_core::time::Duration;
use tcplab_sim::result::{QueueSample, RunResult, TraceRow};
use tcplab_wire::SegmentRepr;

/// TCP flag bits as on the wire.
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// One observed packet: where and when, whose, and its TCP header.
/// Absolute numbers until [`normalise`] makes them relative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Packet {
    /// Nanoseconds since the run's start.
    pub t_ns: i64,
    /// Link direction (`2·link` for a → b, `2·link + 1` for b → a).
    pub dir: u32,
    /// Flow index in the scenario.
    pub flow: u32,
    /// The connection's index among the flow's runs (repeats).
    pub conn: u32,
    /// Sent by the flow's client (the data sender of a bulk flow).
    pub from_client: bool,
    pub seq: u32,
    pub ack: u32,
    /// Payload bytes.
    pub len: u32,
    pub flags: u8,
    pub win: u16,
    /// IP ECN bits (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// SYN options: MSS (0: none), window scale (`None`: none),
    /// SACK-permitted.
    pub mss: u16,
    pub wscale: Option<u8>,
    pub sack_perm: bool,
    /// SACK blocks, `sack_len` of them.
    pub sack: [(u32, u32); 4],
    pub sack_len: u8,
    /// (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
}

impl Packet {
    /// The packet of a TCP segment.
    pub fn from_segment(t_ns: i64, dir: u32, flow: u32, conn: u32, from_client: bool, seg: &SegmentRepr) -> Packet {
        let mut sack = [(0, 0); 4];
        let blocks = seg.options.sack_blocks();
        for (s, b) in sack.iter_mut().zip(blocks) {
            *s = (b.start.0, b.end.0);
        }
        Packet {
            t_ns,
            dir,
            flow,
            conn,
            from_client,
            seq: seg.seq.0,
            ack: seg.ack.0,
            len: seg.payload_len,
            flags: seg.flags.0,
            win: seg.window,
            ecn: seg.ecn as u8,
            mss: seg.options.mss.unwrap_or(0),
            wscale: seg.options.wscale,
            sack_perm: seg.options.sack_permitted,
            sack,
            sack_len: blocks.len().min(4) as u8,
            ts: seg.options.timestamp,
        }
    }

    pub fn key(&self) -> StreamKey {
        StreamKey { dir: self.dir, flow: self.flow, conn: self.conn, from_client: self.from_client }
    }

    fn sacks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len.min(4) as usize]
    }

    /// tcpdump-like flags: `S`, `.`, `P`, `F`, `R`, `E`, `W`.
    pub fn flag_text(&self) -> String {
        let mut s = String::new();
        for (bit, c) in [(SYN, 'S'), (FIN, 'F'), (RST, 'R'), (PSH, 'P'), (ECE, 'E'), (CWR, 'W')] {
            if self.flags & bit != 0 {
                s.push(c);
            }
        }
        if self.flags & ACK != 0 {
            s.push('.');
        }
        s
    }

    /// One line: time, stream, header fields.
    pub fn describe(&self, names: &Names) -> String {
        let mut s = format!(
            "{:>12.6} ms  {} {}  [{}] seq {}",
            self.t_ns as f64 / 1e6,
            names.flow(self.flow, self.conn),
            if self.from_client { "c>s" } else { "s>c" },
            self.flag_text(),
            self.seq
        );
        if self.len > 0 {
            let _ = write!(s, ":{}", self.seq.wrapping_add(self.len));
        }
        if self.flags & ACK != 0 {
            let _ = write!(s, " ack {}", self.ack);
        }
        let _ = write!(s, " len {} win {}", self.len, self.win);
        if self.mss != 0 {
            let _ = write!(s, " mss {}", self.mss);
        }
        if let Some(w) = self.wscale {
            let _ = write!(s, " wscale {w}");
        }
        if self.sack_perm {
            s.push_str(" sackOK");
        }
        if let Some((v, e)) = self.ts {
            let _ = write!(s, " ts {v}/{e}");
        }
        for (a, b) in self.sacks() {
            let _ = write!(s, " sack {a}:{b}");
        }
        match self.ecn {
            1 => s.push_str(" ECT(1)"),
            2 => s.push_str(" ECT(0)"),
            3 => s.push_str(" CE"),
            _ => {}
        }
        s
    }
}

/// A stream: the packets one side of one connection sent, seen arriving
/// at the end of one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct StreamKey {
    pub dir: u32,
    pub flow: u32,
    pub conn: u32,
    pub from_client: bool,
}

/// Makes a side's packets comparable with the other's: sorts them by
/// time (stable: packets of one instant keep their order), then makes
/// sequence numbers relative to each direction's initial sequence number
/// and timestamps relative to each direction's first TSval.
///
/// The ISN of a direction is the sequence number of its first packet (the
/// SYN, when the capture saw the handshake); seq and SACK blocks are
/// relative to the sender's ISN, ack to the receiver's. A TSecr of 0 (the
/// SYN's) stays 0.
pub fn normalise(pkts: &mut [Packet]) {
    pkts.sort_by_key(|p| p.t_ns);
    // (flow, conn, from_client) -> (ISN, first TSval)
    let mut base: HashMap<(u32, u32, bool), (u32, Option<u32>)> = HashMap::new();
    for p in pkts.iter() {
        base.entry((p.flow, p.conn, p.from_client)).or_insert((p.seq, p.ts.map(|t| t.0)));
    }
    for p in pkts.iter_mut() {
        let (isn, ts0) = base[&(p.flow, p.conn, p.from_client)];
        let peer = base.get(&(p.flow, p.conn, !p.from_client)).copied();
        p.seq = p.seq.wrapping_sub(isn);
        for b in p.sack.iter_mut().take(p.sack_len as usize) {
            // SACK blocks acknowledge the peer's data.
            let pisn = peer.map_or(0, |x| x.0);
            *b = (b.0.wrapping_sub(pisn), b.1.wrapping_sub(pisn));
        }
        if p.flags & ACK != 0 {
            p.ack = p.ack.wrapping_sub(peer.map_or(0, |x| x.0));
        } else {
            p.ack = 0;
        }
        if let Some((v, e)) = p.ts {
            let v = v.wrapping_sub(ts0.unwrap_or(v));
            let e = match peer.and_then(|x| x.1) {
                Some(pts0) if e != 0 => e.wrapping_sub(pts0),
                _ => e,
            };
            p.ts = Some((v, e));
        }
    }
}

/// Fields that can be left out of the comparison (`--ignore`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ignore {
    pub window: bool,
    pub ts: bool,
    pub ecn: bool,
    pub time: bool,
}

impl Ignore {
    /// `window,ts,ecn,time` (any subset, comma-separated).
    pub fn parse(s: &str) -> Result<Ignore, String> {
        let mut i = Ignore::default();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match w {
                "window" | "win" => i.window = true,
                "ts" | "timestamps" => i.ts = true,
                "ecn" => i.ecn = true,
                "time" => i.time = true,
                _ => return Err(format!("unknown field {w:?} (expected window, ts, ecn, time)")),
            }
        }
        Ok(i)
    }
}

/// How to compare.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Largest time difference of a matched pair that is not a divergence.
    pub tolerance_ns: u64,
    /// Packets of each side shown before the divergence.
    pub context: usize,
    pub ignore: Ignore,
}

impl Default for Options {
    fn default() -> Options {
        Options { tolerance_ns: 50_000, context: 5, ignore: Ignore::default() }
    }
}

/// What differs at the first divergence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum What {
    /// The paired packets differ in these header fields.
    Fields { fields: Vec<String> },
    /// Same header, times further apart than the tolerance
    /// (`dt_ns` = b's time − a's).
    Timing { dt_ns: i64 },
    /// The stream has a packet on side a only (b sent fewer).
    OnlyA,
    /// On side b only.
    OnlyB,
}

/// The first point where the two sides part.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    /// The earlier of the two packets' times.
    pub t_ns: i64,
    pub stream: StreamKey,
    /// The pair's index in the stream (packets before it matched).
    pub index: usize,
    pub what: What,
    pub a: Option<Packet>,
    pub b: Option<Packet>,
    /// Up to `context` packets of the stream before the divergence.
    pub a_before: Vec<Packet>,
    pub b_before: Vec<Packet>,
}

/// The outcome of [`align`].
#[derive(Clone, Debug, Serialize)]
pub struct Alignment {
    pub divergence: Option<Divergence>,
    /// Matched pairs before the divergence's time, over every stream.
    pub matched: u64,
    pub streams: usize,
    pub a_packets: usize,
    pub b_packets: usize,
}

fn slack_ticks(tolerance_ns: u64) -> u32 {
    // A millisecond TSval clock (tcp_clock_ms) read up to `tolerance`
    // apart can differ by ceil(tolerance / 1 ms) ticks, one more across
    // a tick boundary.
    (tolerance_ns.div_ceil(1_000_000) as u32).saturating_add(1)
}

/// The fields in which `a` and `b` differ (empty: none).
pub fn differing_fields(a: &Packet, b: &Packet, opts: &Options) -> Vec<String> {
    let mut f = Vec::new();
    let mut check = |name: &str, differs: bool| {
        if differs {
            f.push(name.to_string());
        }
    };
    check("seq", a.seq != b.seq);
    check("len", a.len != b.len);
    check("flags", a.flags != b.flags);
    check("ack", a.flags & ACK != 0 && a.ack != b.ack);
    check("sack", a.sacks() != b.sacks());
    check("syn options", (a.mss, a.wscale, a.sack_perm) != (b.mss, b.wscale, b.sack_perm));
    if !opts.ignore.window {
        check("window", a.win != b.win);
    }
    if !opts.ignore.ecn {
        check("ecn", a.ecn != b.ecn);
    }
    if !opts.ignore.ts {
        let slack = slack_ticks(opts.tolerance_ns);
        let far = |x: u32, y: u32| x.wrapping_sub(y).min(y.wrapping_sub(x)) > slack;
        let ts = match (a.ts, b.ts) {
            (Some((av, ae)), Some((bv, be))) => far(av, bv) || far(ae, be),
            (None, None) => false,
            _ => true,
        };
        check("ts", ts);
    }
    f
}

/// Groups normalised packets into streams, in time order within each.
pub fn streams(pkts: &[Packet]) -> HashMap<StreamKey, Vec<Packet>> {
    let mut m: HashMap<StreamKey, Vec<Packet>> = HashMap::new();
    for p in pkts {
        m.entry(p.key()).or_default().push(*p);
    }
    m
}

/// Walks both sides' normalised packets stream by stream and returns the
/// earliest divergence of any stream, with the count of pairs that
/// matched before it.
pub fn align(a: &[Packet], b: &[Packet], opts: &Options) -> Alignment {
    let (sa, sb) = (streams(a), streams(b));
    let mut keys: Vec<StreamKey> = sa.keys().chain(sb.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    let empty = Vec::new();
    let mut first: Option<Divergence> = None;
    for k in &keys {
        let (pa, pb) = (sa.get(k).unwrap_or(&empty), sb.get(k).unwrap_or(&empty));
        let n = pa.len().max(pb.len());
        for i in 0..n {
            let (x, y) = (pa.get(i), pb.get(i));
            let t = match (x, y) {
                (Some(x), Some(y)) => x.t_ns.min(y.t_ns),
                (Some(x), None) => x.t_ns,
                (None, Some(y)) => y.t_ns,
                (None, None) => break,
            };
            if first.as_ref().is_some_and(|d| d.t_ns <= t) {
                break;
            }
            let what = match (x, y) {
                (Some(x), Some(y)) => {
                    let fields = differing_fields(x, y, opts);
                    let dt = y.t_ns - x.t_ns;
                    if !fields.is_empty() {
                        Some(What::Fields { fields })
                    } else if !opts.ignore.time && dt.unsigned_abs() > opts.tolerance_ns {
                        Some(What::Timing { dt_ns: dt })
                    } else {
                        None
                    }
                }
                (Some(_), None) => Some(What::OnlyA),
                _ => Some(What::OnlyB),
            };
            if let Some(what) = what {
                let lo = i.saturating_sub(opts.context);
                first = Some(Divergence {
                    t_ns: t,
                    stream: *k,
                    index: i,
                    what,
                    a: x.copied(),
                    b: y.copied(),
                    a_before: pa[lo.min(pa.len())..i.min(pa.len())].to_vec(),
                    b_before: pb[lo.min(pb.len())..i.min(pb.len())].to_vec(),
                });
                break;
            }
        }
    }
    // Matched pairs: every pair before the divergence's time.
    let limit = first.as_ref().map_or(i64::MAX, |d| d.t_ns);
    let matched = keys
        .iter()
        .map(|k| {
            let (pa, pb) = (sa.get(k).unwrap_or(&empty), sb.get(k).unwrap_or(&empty));
            pa.iter().zip(pb).take_while(|(x, y)| x.t_ns.min(y.t_ns) < limit).count() as u64
        })
        .sum();
    Alignment { divergence: first, matched, streams: keys.len(), a_packets: a.len(), b_packets: b.len() }
}

/// Names for flows and link directions, from the scenario.
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub flows: Vec<String>,
    /// Per link direction: `"link:from->to"`, as results name them.
    pub dirs: Vec<String>,
}

impl Names {
    pub fn of(sim: &tcplab_sim::config::SimConfig) -> Names {
        let node = |i: usize| sim.nodes.get(i).map_or("?", |n| n.name.as_str()).to_string();
        let mut dirs = Vec::new();
        for l in &sim.links {
            dirs.push(format!("{}:{}->{}", l.name, node(l.a), node(l.b)));
            dirs.push(format!("{}:{}->{}", l.name, node(l.b), node(l.a)));
        }
        Names { flows: sim.flows.iter().map(|f| f.id.clone()).collect(), dirs }
    }

    pub fn flow(&self, flow: u32, conn: u32) -> String {
        let name = self.flows.get(flow as usize).cloned().unwrap_or_else(|| format!("flow{flow}"));
        if conn == 0 {
            name
        } else {
            format!("{name}#{conn}")
        }
    }

    pub fn dir(&self, dir: u32) -> String {
        self.dirs.get(dir as usize).cloned().unwrap_or_else(|| format!("dir{dir}"))
    }
}

/// One side's state around a time, from its traces: the flow's last
/// `TCP_INFO` row (the model's equivalent) at or before it, and the
/// link direction's last queue sample. The traces have no timers (RTO,
/// TLP, RACK): neither backend samples them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct State {
    /// Time of the trace row, ns.
    pub row_t_ns: Option<u64>,
    pub cwnd: Option<u32>,
    pub ssthresh: Option<u32>,
    pub ca_state: Option<String>,
    pub inflight: Option<u32>,
    pub srtt_us: Option<u32>,
    pub delivered: Option<u64>,
    pub pacing_rate: Option<u64>,
    /// Queue sample of the divergence's link direction.
    pub queue_t_ns: Option<u64>,
    pub queue_packets: Option<u32>,
    pub queue_bytes: Option<u64>,
    pub queue_drops: Option<u64>,
}

/// `r`'s state of `flow` and link direction `dir_id` at `t_ns`.
pub fn state_at(r: &RunResult, flow: usize, dir_id: &str, t_ns: i64) -> State {
    let t = Duration::from_nanos(t_ns.max(0) as u64);
    let mut s = State::default();
    let row: Option<&TraceRow> = r.flows.get(flow).and_then(|f| f.trace.iter().take_while(|x| x.time <= t).last());
    if let Some(x) = row {
        s.row_t_ns = Some(x.time.as_nanos());
        s.cwnd = Some(x.cwnd);
        s.ssthresh = Some(x.ssthresh);
        s.ca_state = Some(format!("{:?}", x.ca_state));
        s.inflight = Some(x.inflight);
        s.srtt_us = Some(x.srtt_us);
        s.delivered = Some(x.delivered);
        s.pacing_rate = Some(x.pacing_rate);
    }
    let q: Option<&QueueSample> =
        r.links.iter().find(|l| l.id == dir_id).and_then(|l| l.queue_trace.iter().take_while(|x| x.time <= t).last());
    if let Some(q) = q {
        s.queue_t_ns = Some(q.time.as_nanos());
        s.queue_packets = Some(q.packets);
        s.queue_bytes = Some(q.bytes);
        s.queue_drops = Some(q.drops);
    }
    s
}

impl State {
    pub fn describe(&self) -> String {
        let o = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let ssthresh = self.ssthresh.map(|x| if x >= 0x7fff_ffff { "inf".to_string() } else { x.to_string() });
        format!(
            "cwnd {} ssthresh {} {} inflight {} srtt {} us delivered {} (row at {}); queue {} pkts {} B, {} drops (sample at {})",
            o(self.cwnd.map(|x| x.to_string())),
            o(ssthresh),
            o(self.ca_state.clone()),
            o(self.inflight.map(|x| x.to_string())),
            o(self.srtt_us.map(|x| x.to_string())),
            o(self.delivered.map(|x| x.to_string())),
            o(self.row_t_ns.map(|t| format!("{:.3} ms", t as f64 / 1e6))),
            o(self.queue_packets.map(|x| x.to_string())),
            o(self.queue_bytes.map(|x| x.to_string())),
            o(self.queue_drops.map(|x| x.to_string())),
            o(self.queue_t_ns.map(|t| format!("{:.3} ms", t as f64 / 1e6))),
        )
    }
}

/// Both sides' (time ms, KB) points and the y axis' description.
pub type PlotData = (Vec<(f64, f64)>, Vec<(f64, f64)>, String);

/// A finished alignment with what is needed to print it.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    /// The two sides' names (`model`, `linux-6.12.118`, `model (b)`).
    pub a_name: String,
    pub b_name: String,
    pub tolerance_ns: u64,
    pub alignment: Alignment,
    /// The divergence's stream, in words.
    pub flow: Option<String>,
    pub link_dir: Option<String>,
    pub a_state: Option<State>,
    pub b_state: Option<State>,
    /// Warnings (capture losses, an incomplete capture).
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub names: Names,
    /// Both sides' packets of the divergence's data stream around it
    /// (for the plot).
    #[serde(skip)]
    pub plot: Option<PlotData>,
}

impl Report {
    /// Builds the report of `al` over both sides' normalised packets and
    /// results.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        scenario: &str,
        seed: u64,
        names: Names,
        (a_name, a_pkts, a_res): (&str, &[Packet], &RunResult),
        (b_name, b_pkts, b_res): (&str, &[Packet], &RunResult),
        opts: &Options,
        al: Alignment,
        warnings: Vec<String>,
    ) -> Report {
        let mut r = Report {
            scenario: scenario.to_string(),
            seed,
            a_name: a_name.into(),
            b_name: b_name.into(),
            tolerance_ns: opts.tolerance_ns,
            flow: None,
            link_dir: None,
            a_state: None,
            b_state: None,
            warnings,
            plot: None,
            names,
            alignment: al,
        };
        if let Some(d) = &r.alignment.divergence {
            let dir_id = r.names.dir(d.stream.dir);
            r.flow = Some(r.names.flow(d.stream.flow, d.stream.conn));
            r.a_state = Some(state_at(a_res, d.stream.flow as usize, &dir_id, d.t_ns));
            r.b_state = Some(state_at(b_res, d.stream.flow as usize, &dir_id, d.t_ns));
            r.link_dir = Some(dir_id);
            r.plot = Some(plot_points(d, a_pkts, b_pkts));
        }
        r
    }

    /// One line: where the traces part, or that they do not.
    pub fn summary(&self) -> String {
        match &self.alignment.divergence {
            None => format!(
                "no divergence: {} packets on each side match (tolerance {})",
                self.alignment.a_packets,
                us(self.tolerance_ns as i64)
            ),
            Some(d) => format!(
                "first divergence at {:.6} ms: {} {} on {} (packet {} of the stream): {}",
                d.t_ns as f64 / 1e6,
                self.flow.as_deref().unwrap_or("?"),
                if d.stream.from_client { "client->server" } else { "server->client" },
                self.link_dir.as_deref().unwrap_or("?"),
                d.index,
                self.what_text(d)
            ),
        }
    }

    fn what_text(&self, d: &Divergence) -> String {
        match &d.what {
            What::Fields { fields } => format!("{} differ", fields.join(", ")),
            What::Timing { dt_ns } => {
                format!(
                    "same header, {} later on {} (tolerance {})",
                    us(*dt_ns),
                    self.b_name,
                    us(self.tolerance_ns as i64)
                )
            }
            What::OnlyA => format!("sent on {} only", self.a_name),
            What::OnlyB => format!("sent on {} only", self.b_name),
        }
    }

    /// The human-readable report.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let al = &self.alignment;
        let _ = writeln!(
            s,
            "align {} (seed {}): {} ({} packets) vs {} ({} packets), {} streams, {} pairs matched",
            self.scenario, self.seed, self.a_name, al.a_packets, self.b_name, al.b_packets, al.streams, al.matched
        );
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        let _ = writeln!(s, "{}", self.summary());
        if let Some(d) = &al.divergence {
            for (name, before, p, st) in
                [(&self.a_name, &d.a_before, &d.a, &self.a_state), (&self.b_name, &d.b_before, &d.b, &self.b_state)]
            {
                let _ = writeln!(s, "\n{name}:");
                for q in before {
                    let _ = writeln!(s, "    {}", q.describe(&self.names));
                }
                match p {
                    Some(q) => {
                        let _ = writeln!(s, "  > {}", q.describe(&self.names));
                    }
                    None => {
                        let _ = writeln!(s, "  > (no packet)");
                    }
                }
                if let Some(st) = st {
                    let _ = writeln!(s, "  state: {}", st.describe());
                }
            }
        }
        s
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Both sides' sequence numbers (the stream's relative seq, or ack for
    /// a stream of pure ACKs) over time around the divergence.
    pub fn chart(&self) -> Option<Chart> {
        let (a, b, y_desc) = self.plot.clone()?;
        let d = self.alignment.divergence.as_ref()?;
        Some(Chart::Lines {
            title: format!(
                "{}: {} {} at {:.3} ms",
                self.scenario,
                self.flow.as_deref().unwrap_or("?"),
                self.link_dir.as_deref().unwrap_or("?"),
                d.t_ns as f64 / 1e6
            ),
            x_desc: "time (ms)".into(),
            y_desc,
            series: vec![
                Series { name: self.a_name.clone(), points: a },
                Series { name: self.b_name.clone(), points: b },
            ],
        })
    }
}

fn us(ns: i64) -> String {
    format!("{:.1} us", ns as f64 / 1e3)
}

/// Points of the divergence's stream on both sides, in a window around
/// it: from the 200th packet before it to as long after.
fn plot_points(d: &Divergence, a: &[Packet], b: &[Packet]) -> PlotData {
    let key = d.stream;
    let data = a.iter().chain(b).any(|p| p.key() == key && p.len > 0);
    let y = |p: &Packet| if data { p.seq.wrapping_add(p.len) as f64 / 1e3 } else { p.ack as f64 / 1e3 };
    let sa: Vec<&Packet> = a.iter().filter(|p| p.key() == key).collect();
    let sb: Vec<&Packet> = b.iter().filter(|p| p.key() == key).collect();
    let lo_i = d.index.saturating_sub(200);
    let start = sa.get(lo_i).or(sb.get(lo_i)).map_or(d.t_ns, |p| p.t_ns).min(d.t_ns);
    let end = d.t_ns + (d.t_ns - start).max(1_000_000);
    let pts = |s: &[&Packet]| -> Vec<(f64, f64)> {
        s.iter().filter(|p| p.t_ns >= start && p.t_ns <= end).map(|p| (p.t_ns as f64 / 1e6, y(p))).collect()
    };
    let desc = if data { "end of segment, KB from the ISN" } else { "ack, KB from the peer's ISN" };
    (pts(&sa), pts(&sb), desc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(t_us: i64, from_client: bool, seq: u32, ack: u32, len: u32, flags: u8) -> Packet {
        Packet {
            t_ns: t_us * 1000,
            dir: 2,
            flow: 0,
            conn: 0,
            from_client,
            seq,
            ack,
            len,
            flags,
            win: 100,
            ecn: 0,
            mss: 0,
            wscale: None,
            sack_perm: false,
            sack: [(0, 0); 4],
            sack_len: 0,
            ts: None,
        }
    }

    /// A handshake and two data segments with ISNs `ci` (client) and `si`
    /// (server), TSval offsets `co`/`so`, the second segment at `t2` µs.
    fn trace(ci: u32, si: u32, co: u32, so: u32, t2: i64) -> Vec<Packet> {
        let mut v = vec![
            pkt(0, true, ci, 0, 0, SYN),
            pkt(40_000, false, si, ci.wrapping_add(1), 0, SYN | ACK),
            pkt(80_000, true, ci.wrapping_add(1), si.wrapping_add(1), 1000, ACK),
            pkt(t2, true, ci.wrapping_add(1001), si.wrapping_add(1), 1000, ACK | PSH),
            pkt(120_000, false, si.wrapping_add(1), ci.wrapping_add(1001), 0, ACK),
        ];
        let ts = [(co, 0), (so, co), (co + 80, so + 40), (co + 80, so + 40), (so + 120, co + 80)];
        for (p, t) in v.iter_mut().zip(ts) {
            p.ts = Some(t);
        }
        v[4].sack = [(ci.wrapping_add(2001), ci.wrapping_add(3001)), (0, 0), (0, 0), (0, 0)];
        v[4].sack_len = 1;
        normalise(&mut v);
        v
    }

    #[test]
    fn isns_and_ts_offsets_are_normalised_away() {
        let a = trace(1_000, 5_000, 7, 9, 80_001);
        let b = trace(u32::MAX - 10, 123_456, 1 << 31, 42, 80_001);
        assert_eq!(a[2].seq, 1);
        assert_eq!(a[2].ack, 1);
        assert_eq!(a[4].sack_len, 1);
        assert_eq!(a[4].sack[0], (2001, 3001));
        assert_eq!(a[4].ts, Some((120, 80)));
        let al = align(&a, &b, &Options::default());
        assert!(al.divergence.is_none(), "{:?}", al.divergence);
        assert_eq!(al.matched, 5);
    }

    #[test]
    fn a_timing_difference_beyond_the_tolerance_is_reported() {
        let a = trace(1, 2, 3, 4, 80_001);
        let b = trace(1, 2, 3, 4, 80_200);
        let opts = Options { tolerance_ns: 50_000, ..Options::default() };
        let al = align(&a, &b, &opts);
        let d = al.divergence.unwrap();
        assert_eq!(d.what, What::Timing { dt_ns: 199_000 });
        assert_eq!((d.index, d.t_ns), (2, 80_001_000));
        assert_eq!(d.a_before.len(), 2);
        // Within a larger tolerance: none.
        let opts = Options { tolerance_ns: 500_000, ..opts };
        assert!(align(&a, &b, &opts).divergence.is_none());
    }

    #[test]
    fn the_earliest_differing_field_wins_and_is_named() {
        let a = trace(1, 2, 3, 4, 80_001);
        let mut b = a.clone();
        b[3].len = 500; // the second data segment
        b[4].ack = 7; // later, ignored
        let al = align(&a, &b, &Options::default());
        let d = al.divergence.unwrap();
        assert_eq!(d.what, What::Fields { fields: vec!["len".into()] });
        assert!(d.stream.from_client);
        assert_eq!(d.index, 2);
        assert_eq!(al.matched, 3);
        // A missing packet.
        let al = align(&a, &a[..4], &Options::default());
        assert_eq!(al.divergence.unwrap().what, What::OnlyA);
        // The window is ignored on request.
        let mut c = a.clone();
        c[1].win = 1;
        assert!(align(&a, &c, &Options::default()).divergence.is_some());
        let opts = Options { ignore: Ignore::parse("window").unwrap(), ..Options::default() };
        assert!(align(&a, &c, &opts).divergence.is_none());
        assert!(Ignore::parse("windows").unwrap_err().contains("unknown field \"windows\""));
    }

    #[test]
    fn timestamps_may_differ_by_the_slack_of_the_tolerance() {
        let a = trace(1, 2, 3, 4, 80_001);
        let mut b = a.clone();
        b[2].ts = b[2].ts.map(|(v, e)| (v + 1, e));
        assert!(align(&a, &b, &Options::default()).divergence.is_none());
        b[2].ts = b[2].ts.map(|(v, e)| (v + 5, e));
        let d = align(&a, &b, &Options::default()).divergence.unwrap();
        assert_eq!(d.what, What::Fields { fields: vec!["ts".into()] });
    }
}
