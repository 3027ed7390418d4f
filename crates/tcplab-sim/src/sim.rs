//! The simulator: a value that owns every node, link, connection and
//! packet of one run, and the event loop that drives them.
//!
//! # Event flow of one packet
//!
//! A connection's segment becomes a [`Packet`] in the arena and enters the
//! host's NIC queue (the host side of its first link). Each link direction
//! serializes one packet at a time ([`Event::TxDone`] when it finishes),
//! then delays it by its delay model: FIFO models put it in the direction's
//! pipe ring with only the head scheduled ([`Event::PipeHead`]); the
//! reordering `Uniform` model schedules the packet itself
//! ([`Event::Arrive`]). On arrival a switch forwards it to the next
//! direction of the flow's route; the destination host demultiplexes it by
//! 4-tuple to a connection.
//!
//! # Connections
//!
//! After every input (segment, timer, flow start/stop) a connection's
//! application runs (bulk writer or sink), then the connection is polled
//! for segments until it has none or its NIC queue is full, then its
//! deadline is read with `poll_timeout()`. Each connection has at most one
//! live timer entry in the event list, tagged with a generation number:
//! a deadline *earlier* than the live entry pushes a new entry (the old one
//! becomes stale and is skipped when popped); a *later* deadline (the RTO
//! re-armed by every ACK) pushes nothing — when the early entry pops, the
//! simulator sees the deadline has moved and re-arms for it. Re-arming the
//! RTO per ACK is thus O(1) and the heap holds one timer per connection.
//!
//! # Hosts with fq
//!
//! On a host whose qdisc is fq, the host-side direction of each link holds
//! an [`FqQdisc`](crate::fq) instead of the drop-tail queue, and its
//! connections are paced; `sim_fq.rs` has the enqueue/dequeue glue, the
//! EDT pacing of connections and the watchdog. docs/sim-fq.md describes
//! the model.
//!
//! # Flows, runs and applications
//!
//! A flow runs its application on one connection, or on several
//! consecutive ones (`repeat`); `flows.rs` starts and ends runs, keeps the
//! hosts' metrics caches (tcp_metrics.c) and decides completion.
//!
//! # Determinism
//!
//! Time is integer nanoseconds; ties are broken by scheduling order; every
//! random draw comes from a per-component PCG32 stream; nothing iterates a
//! hash map. The same [`SimConfig`] gives the same [`RunResult`] on any
//! machine.

use crate::app::{ClientApp, RpcRecorder, ServerApp};
use crate::config::{AppConfig, NodeId, NodeKind, Qdisc, SimConfig};
use crate::event::Agenda;
use crate::fq::{FqQdisc, NONE};
use crate::gro::{self, Held, NAPI_POLL_WEIGHT};
use crate::host::{client_ports, SERVER_PORT};
use crate::link::{DirRandom, LinkDir};
use crate::packet::{Packet, PacketArena, PacketEvent, PacketEventKind, PacketId};
use crate::queue::Admit;
use crate::ready::ReadyLinks;
use crate::result::QueueSample;
use crate::rng::{Component, Pcg32};
use crate::routing::{host_ip, FlowKey, Router};
use crate::trace::TraceSampler;
use crate::validate::ConfigError;
use std::collections::BTreeMap;
use std::sync::Arc;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::{Connection, Counters, TcpConfig, TcpInfo, TcpMetrics};
use tcplab_wire::{Ecn, SegmentRepr, SeqNum};

/// A scheduled event. Small and `Copy`: indices, never pointers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// Link direction finished serializing its packet in service.
    TxDone(u32),
    /// The head of a FIFO pipe reaches the far end.
    PipeHead(u32),
    /// A packet on a reordering (`Uniform`) direction reaches the far end.
    Arrive { dir: u32, pkt: PacketId },
    /// Connection deadline; stale unless `gen` is the connection's current.
    Timer { conn: u32, gen: u32 },
    /// A flow's next run connects (its first at the flow's start).
    FlowStart(u32),
    /// A run's application stops writing / issuing requests and closes.
    AppStop { flow: u32, run: u32 },
    /// A run's RPC client ends its think time.
    AppWake { flow: u32, run: u32 },
    /// A connection held back by EDT pacing may send again.
    PaceWake(u32),
    /// The fq qdisc of a direction may have a throttled flow due.
    Watchdog(u32),
    /// Time to sample every queue (tracing only).
    QueueSample,
}

/// One flow's runtime state.
pub(crate) struct FlowRt {
    pub from: NodeId,
    pub to: NodeId,
    pub start: Instant,
    /// The flow's random stream: ISNs of run 0 were its first two draws,
    /// each later run draws the next two.
    pub rng: Pcg32,
    pub client_iss: SeqNum,
    /// Connection index of run 0's client; run `k` uses `conn_base + 2k`
    /// (client) and `conn_base + 2k + 1` (server).
    pub conn_base: u32,
    /// Client port of run 0, and of run 1, from which runs ≥ 1 use
    /// consecutive ports ([`crate::host::client_ports`]): [`port`](Self::port).
    pub first_port: u16,
    pub later_port: u16,
    /// Runs started so far.
    pub runs: Vec<RunRt>,
    pub completed_at: Option<Instant>,
    /// Boxed: most runs do not trace (40 bytes less per flow, issue 15).
    pub trace: Option<Box<TraceSampler>>,
    pub rpc: Option<RpcRecorder>,
}

impl FlowRt {
    /// Client port of run `k`.
    pub fn port(&self, k: usize) -> u16 {
        match k {
            0 => self.first_port,
            _ => self.later_port.wrapping_add((k - 1) as u16),
        }
    }
}

/// One run (connection) of a flow.
pub(crate) struct RunRt {
    pub start: Instant,
    pub client: ClientApp,
    pub server: ServerApp,
    pub completed_at: Option<Instant>,
    pub closed_at: Option<Instant>,
    /// Boxed: most runs start without cached metrics.
    pub cached: Option<Box<TcpMetrics>>,
    pub rpcs: u64,
    /// Set when both connections have finished and were released: their
    /// counters (merged) and the client's final `tcp_info`.
    pub released: Option<Box<(Counters, TcpInfo, u64)>>,
}

impl RunRt {
    /// Bytes the client application has read (RPC responses).
    pub fn client_read(&self) -> u64 {
        match &self.client {
            ClientApp::Bulk(_) => 0,
            ClientApp::Rpc(c) => c.read,
        }
    }
}

/// One connection's runtime state; see [`FlowRt::conn_base`] for the
/// layout.
pub(crate) struct ConnRt {
    /// `None` until the client's flow starts, and again once its run is
    /// released. Boxed so that releasing gives its memory back (it is
    /// most of a connection's).
    pub tcp: Option<Box<Connection>>,
    pub flow: u32,
    pub run: u32,
    pub client: bool,
    /// Where its route starts in `Sim::routes`.
    pub route: u32,
    /// First-hop link direction (the host's NIC queue): `routes[route]`.
    pub nic: u32,
    /// Largest packet the connection may send (its MTU, at most 65,535 by
    /// validation), for the NIC backpressure check.
    pub mtu: u16,
    pub timer_gen: u32,
    /// Time of the live timer entry; `Instant::MAX` when there is none
    /// (no `Option`: 16 bytes less per connection, issue 15).
    pub timer_at: Instant,
    /// When `handle_timeout` last ran (livelock guard, see `update_timer`);
    /// `Instant::MAX` before it first runs.
    pub fired_at: Instant,
    /// Waiting in its NIC's ready queue (`ready.rs`).
    pub blocked: bool,
    /// Its flow in the NIC's fq qdisc ([`NONE`] without fq).
    pub fq_flow: u32,
    /// A [`Event::PaceWake`] is pending.
    pub pace_armed: bool,
    /// It reached a synchronized state at some point.
    pub established: bool,
    /// It has finished (closed after being established); its metrics
    /// went into the host's cache.
    pub done: bool,
}

impl ConnRt {
    fn new(flow: u32, run: u32, client: bool, route: u32, nic: u32, mtu: u16) -> Self {
        ConnRt {
            tcp: None,
            flow,
            run,
            client,
            route,
            nic,
            mtu,
            timer_gen: 0,
            timer_at: Instant::MAX,
            fired_at: Instant::MAX,
            blocked: false,
            fq_flow: NONE,
            pace_armed: false,
            established: false,
            done: false,
        }
    }
}

/// Why [`Sim::poll_segments`] stopped polling a connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Drained {
    /// The connection has nothing to send now (or waits for something
    /// other than NIC room: its fq flow, its pacing time).
    Done,
    /// The NIC (or its fq qdisc) has no room for another packet; `sent`:
    /// it sent at least one packet before that.
    NoRoom { sent: bool },
}

/// A per-packet observer (e.g. a pcap writer). `Send`, so that a [`Sim`]
/// can be built on one thread and run on another.
pub type PacketTap = Box<dyn FnMut(Instant, &PacketEvent) + Send>;

/// A discrete-event simulation of one [`SimConfig`].
///
/// ```
/// # use tcplab_sim::{Sim, bench_config};
/// # use tcplab_core::time::Instant;
/// let cfg = bench_config();
/// let mut sim = Sim::new(&cfg).unwrap();
/// sim.run_until(Instant::from_millis(1));
/// let result = sim.result();
/// assert_eq!(result.sim_time.as_millis(), 1);
/// ```
pub struct Sim<'a> {
    /// The configuration it runs: flows read their settings from it
    /// rather than keeping copies (issue 15: memory per flow).
    pub(crate) cfg: &'a SimConfig,
    pub(crate) now: Instant,
    pub(crate) duration: Duration,
    pub(crate) events: Agenda<Event>,
    pub(crate) packets: PacketArena,
    pub(crate) dirs: Vec<LinkDir>,
    /// All routes, concatenated (link-direction indices).
    pub(crate) routes: Vec<u32>,
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) conns: Vec<ConnRt>,
    /// Per host and destination host: `tcp_metrics` cache entries.
    pub(crate) metrics: BTreeMap<(NodeId, NodeId), TcpMetrics>,
    pub(crate) processed: u64,
    pub(crate) data_segments: u64,
    /// The links of the NICs' ready queues, one per connection.
    pub(crate) ready_links: ReadyLinks,
    /// Connections taken from a ready queue to be polled (the cost of
    /// serving the queues; tests bound it).
    pub(crate) ready_served: u64,
    tap: Option<PacketTap>,
    /// GRO's held skbs during a NAPI poll at a host (`gro.rs`); empty
    /// between polls.
    gro_held: Vec<Held>,
    /// A link direction is handing over one slot's packets: GRO flushes
    /// when it is done, not after each packet.
    napi_batch: bool,
    /// Connections that took segments in the current batch: their
    /// applications run when it ends (the softirq takes the whole batch
    /// before the reader's process context runs).
    napi_woken: Vec<usize>,
    /// With tracing: the trace interval (ns) and each direction's queue
    /// samples so far.
    pub(crate) queue_trace: Option<(u64, Vec<Vec<QueueSample>>)>,
}

impl<'a> Sim<'a> {
    /// Builds the simulation at time zero; validates `cfg` first.
    pub fn new(cfg: &'a SimConfig) -> Result<Sim<'a>, ConfigError> {
        cfg.validate()?;
        if let Some(n) = cfg.nodes.iter().find(|n| n.offloads) {
            return Err(ConfigError(format!(
                "node {:?}: offloads (TSO/GSO/GRO) are not modelled; the kernel backend runs them",
                n.name
            )));
        }
        let mut dirs = Vec::with_capacity(2 * cfg.links.len());
        for (i, l) in cfg.links.iter().enumerate() {
            for (reverse, from, to, d) in [(false, l.a, l.b, &l.ab), (true, l.b, l.a, &l.ba)] {
                let host_nic = cfg.nodes[from].kind == NodeKind::Host;
                let random = DirRandom::new(cfg.seed, i, reverse);
                let mut dir = LinkDir::new(from, to, host_nic, l.rate_bps, d, random);
                dir.to_host = cfg.nodes[to].kind == NodeKind::Host;
                dir.to_gro = cfg.nodes[to].gro;
                if let (true, Qdisc::Fq(fq)) = (host_nic, &cfg.nodes[from].qdisc) {
                    dir.fq = Some(Box::new(FqQdisc::new(fq)));
                }
                dirs.push(dir);
            }
        }
        // Both directions of every flow, one search per destination host;
        // with ECMP, of every connection (each run has its own client port
        // and so its own hash).
        let all_ports = client_ports(&cfg.flows);
        let mut router = Router::new(&cfg.nodes, &cfg.links, cfg.seed);
        let per_conn = router.has_ecmp();
        let mut requests = Vec::new();
        for (fc, ports) in cfg.flows.iter().zip(&all_ports) {
            let ports = if per_conn { &ports[..] } else { &ports[..ports.len().min(1)] };
            for &port in ports {
                let key = |a: NodeId, b: NodeId, sport, dport| {
                    per_conn.then_some(FlowKey { src: host_ip(a), dst: host_ip(b), sport, dport })
                };
                requests.push((fc.from, fc.to, key(fc.from, fc.to, port, SERVER_PORT)));
                requests.push((fc.to, fc.from, key(fc.to, fc.from, SERVER_PORT, port)));
            }
        }
        let mut routes = Vec::new();
        let found = router.routes(&requests, &mut routes);
        let mut next_request = 0;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let total_conns = 2 * cfg.connections() as usize;
        let mut conns = Vec::with_capacity(total_conns);
        for ((f, fc), ports) in cfg.flows.iter().enumerate().zip(all_ports) {
            let (first_port, later_port) = (ports[0], ports.get(1).copied().unwrap_or(0));
            debug_assert!(ports[1..].iter().zip(0..).all(|(&p, k)| p == later_port.wrapping_add(k)));
            let first_request = next_request;
            next_request += if per_conn { 2 * ports.len() } else { 2 };
            let route = |k: usize, side: usize| -> Result<u32, ConfigError> {
                let i = first_request + if per_conn { 2 * k } else { 0 } + side;
                found
                    .get(i)
                    .copied()
                    .flatten()
                    .filter(|&(_, len)| len > 0)
                    .map(|(off, _)| off)
                    .ok_or_else(|| ConfigError(format!("flows[{f}]: no route")))
            };
            let mut rng = Pcg32::for_component(cfg.seed, Component::Flow { flow: f });
            let client_iss = SeqNum(rng.next_u32());
            let server_iss = SeqNum(rng.next_u32());
            let runs = fc.repeat.count();
            let conn_base = conns.len() as u32;
            let snic = routes[route(0, 1)? as usize];
            for k in 0..ports.len() {
                let c = conns.len() as u32;
                let (croute, sroute) = (route(k, 0)?, route(k, 1)?);
                let (cnic, snic) = (routes[croute as usize], routes[sroute as usize]);
                let mtu = |t: &TcpConfig| t.mtu.min(u16::MAX.into()) as u16;
                let mut client = ConnRt::new(f as u32, k as u32, true, croute, cnic, mtu(&fc.tcp));
                let mut server = ConnRt::new(f as u32, k as u32, false, sroute, snic, mtu(&fc.tcp_receiver));
                if let Some(q) = dirs[cnic as usize].fq.as_deref_mut() {
                    client.fq_flow = q.add_flow(c);
                }
                if let Some(q) = dirs[snic as usize].fq.as_deref_mut() {
                    server.fq_flow = q.add_flow(c + 1);
                }
                conns.push(client);
                conns.push(server);
            }
            // Run 0's server listens from time zero.
            let mut server = Connection::server(Arc::clone(&fc.tcp_receiver), SERVER_PORT, first_port, server_iss);
            server.set_nodelay(fc.nodelay);
            crate::sim_fq::attach(&mut server, dirs[snic as usize].fq.as_deref());
            conns[conn_base as usize + 1].tcp = Some(Box::new(server));
            flows.push(FlowRt {
                from: fc.from,
                to: fc.to,
                start: Instant::ZERO + fc.start,
                rng,
                client_iss,
                conn_base,
                first_port,
                later_port,
                runs: Vec::with_capacity(runs as usize),
                completed_at: None,
                trace: cfg.trace_interval.map(|i| Box::new(TraceSampler::new(i))),
                rpc: match &fc.app {
                    AppConfig::Rpc(r) => Some(RpcRecorder::new(r.samples)),
                    AppConfig::Bulk { .. } => None,
                },
            });
        }
        let mut events = Agenda::with_capacity(1024 + 2 * dirs.len(), 2 * conns.len());
        for (f, fc) in cfg.flows.iter().enumerate() {
            events.push_conn(Instant::ZERO + fc.start, Event::FlowStart(f as u32));
        }
        for (f, fc) in cfg.flows.iter().enumerate() {
            let stop = match &fc.app {
                AppConfig::Bulk { stop, .. } => *stop,
                AppConfig::Rpc(r) => r.stop,
            };
            if let Some(stop) = stop {
                events.push_conn(Instant::ZERO + stop, Event::AppStop { flow: f as u32, run: 0 });
            }
        }
        let queue_trace = cfg.trace_interval.map(|i| (i.as_nanos().max(1), vec![Vec::new(); dirs.len()]));
        if let Some((i, _)) = &queue_trace {
            events.push_link(Instant::from_nanos(*i), Event::QueueSample);
        }
        let mut sim = Sim {
            cfg,
            now: Instant::ZERO,
            duration: cfg.duration,
            events,
            packets: PacketArena::with_capacity(4096),
            dirs,
            routes,
            flows,
            conns,
            metrics: BTreeMap::new(),
            processed: 0,
            data_segments: 0,
            ready_links: ReadyLinks::new(total_conns),
            ready_served: 0,
            gro_held: Vec::with_capacity(8),
            napi_batch: false,
            napi_woken: Vec::with_capacity(8),
            tap: None,
            queue_trace,
        };
        // Servers listen from time zero; give them a chance to arm timers.
        for f in 0..sim.flows.len() {
            sim.update_timer(sim.flows[f].conn_base as usize + 1);
        }
        Ok(sim)
    }

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The configured run length.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// Events processed so far (stale timer entries not counted).
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Events scheduled so far (including stale timer entries) and entries
    /// currently pending in the event list: the event list's load.
    pub fn event_list_stats(&self) -> (u64, usize) {
        (self.events.scheduled(), self.events.len())
    }

    /// Packets currently in queues, serializers and pipes.
    pub fn packets_in_flight(&self) -> usize {
        self.packets.live()
    }

    /// Packets and bytes waiting in the queue of link direction `dir`
    /// (`2·link` for a → b, `2·link + 1` for b → a), not counting the packet
    /// being serialized; `None` if there is no such direction. For a host
    /// NIC with fq, the packets in the qdisc.
    pub fn queue_occupancy(&self, dir: usize) -> Option<(usize, u64)> {
        self.dirs.get(dir).map(|d| {
            let (packets, bytes, _) = d.waiting();
            (packets, bytes)
        })
    }

    /// Samples every direction's queue on the trace grid (as the kernel
    /// backend's agent samples its qdiscs) and schedules the next sample
    /// while inside the run.
    fn sample_queues(&mut self) {
        let Some((interval, series)) = self.queue_trace.as_mut() else { return };
        let time = Duration::from_nanos(self.now.as_nanos());
        for (d, dir) in self.dirs.iter().enumerate() {
            let (packets, bytes, drops) = dir.waiting();
            let s = QueueSample { time, packets: packets as u32, bytes, drops };
            QueueSample::push_if_changed(&mut series[d], s);
        }
        let next = self.now.as_nanos().saturating_add(*interval);
        if next < self.duration.as_nanos() {
            self.events.push_link(Instant::from_nanos(next), Event::QueueSample);
        }
    }

    /// Installs an observer called for every [`PacketEvent`]. Without one,
    /// the hot path pays a single branch per observation point.
    pub fn set_packet_tap(&mut self, tap: PacketTap) {
        self.tap = Some(tap);
    }

    /// Removes the packet observer.
    pub fn clear_packet_tap(&mut self) -> Option<PacketTap> {
        self.tap.take()
    }

    /// Processes every event due at or before `end`, then sets the clock to
    /// `end` (if it is later than now).
    pub fn run_until(&mut self, end: Instant) {
        while let Some((t, ev)) = self.events.pop_until(end) {
            self.now = t;
            let counted = match ev {
                Event::TxDone(d) => {
                    self.on_tx_done(d as usize);
                    true
                }
                Event::PipeHead(d) => {
                    self.on_pipe_head(d as usize);
                    true
                }
                Event::Arrive { dir, pkt } => {
                    self.arrive(dir as usize, pkt);
                    true
                }
                Event::Timer { conn, gen } => self.on_timer(conn as usize, gen),
                Event::FlowStart(f) => {
                    self.start_run(f as usize);
                    true
                }
                Event::AppStop { flow, run } => {
                    self.stop_run(flow as usize, run as usize);
                    true
                }
                Event::AppWake { flow, run } => self.wake_app(flow as usize, run as usize),
                Event::PaceWake(c) => {
                    self.on_pace_wake(c as usize);
                    true
                }
                Event::Watchdog(d) => self.on_watchdog(d as usize, t),
                Event::QueueSample => {
                    self.sample_queues();
                    false
                }
            };
            self.processed += counted as u64;
        }
        if end > self.now {
            self.now = end;
        }
    }

    /// Runs to the configured duration.
    pub fn run_to_end(&mut self) {
        self.run_until(Instant::ZERO + self.duration);
    }

    /// Sends a segment that no TCP connection produced, as if flow `flow`'s
    /// client (`from_client`) or server had transmitted it now: it takes the
    /// flow's route through every queue and link, and on arrival is reported
    /// to the packet tap as [`PacketEventKind::Deliver`] and discarded
    /// instead of being handed to TCP. It bypasses NIC backpressure (a full
    /// NIC queue drops it). For tests and traffic generators. Returns
    /// `false` if `flow` does not exist.
    pub fn inject_raw(&mut self, flow: usize, from_client: bool, seg: SegmentRepr) -> bool {
        let Some(f) = self.flows.get(flow) else { return false };
        // Run 0's route.
        let conn = f.conn_base + !from_client as u32;
        let off = self.conns[conn as usize].route;
        let pkt = Packet { seg, wire_len: seg.wire_len(), conn, raw: true, next: off + 1 };
        let id = self.packets.alloc(pkt);
        self.tap_send(id);
        let first = self.routes[off as usize] as usize;
        if self.dirs[first].fq.is_some() {
            // No socket: fq's orphan flow, never paced.
            self.enqueue_fq(first, 0, id, false, false);
        } else {
            self.enqueue(first, id);
        }
        true
    }

    // ---- links -----------------------------------------------------------

    /// A packet arrives at the output queue of direction `d`.
    #[inline]
    fn enqueue(&mut self, d: usize, id: PacketId) {
        if !self.police(d, id) {
            return;
        }
        let dir = &mut self.dirs[d];
        let from = dir.from;
        if dir.in_service.is_none() {
            // Idle serializer, hence empty queue: straight onto the wire.
            let len = self.packets.get(id).wire_len;
            self.tap(PacketEventKind::Enqueue, from, Some(d), id);
            self.start_tx(d, id, len);
            return;
        }
        let p = self.packets.get_mut(id);
        match dir.queue.enqueue(id, p.wire_len, p.seg.ecn) {
            Admit::Queued { mark } => {
                if mark {
                    p.seg.ecn = Ecn::Ce;
                }
                self.tap(PacketEventKind::Enqueue, from, Some(d), id);
            }
            Admit::Dropped => {
                self.tap(PacketEventKind::Drop, from, Some(d), id);
                self.packets.free(id);
            }
        }
    }

    /// The direction's policer, if any, on a packet arriving at its queue
    /// (`tcf_police_act` runs when the root qdisc classifies the packet,
    /// before it is queued): `false` if it dropped (and freed) the packet.
    #[inline(always)]
    pub(crate) fn police(&mut self, d: usize, id: PacketId) -> bool {
        // Most directions have no policer: decide that here, inlined into
        // every enqueue, and keep the token bucket out of line.
        self.dirs[d].police.is_none() || self.police_slow(d, id)
    }

    #[inline(never)]
    fn police_slow(&mut self, d: usize, id: PacketId) -> bool {
        let now = self.now.as_nanos();
        let dir = &mut self.dirs[d];
        let Some(p) = dir.police.as_mut() else { return true };
        if p.admit(now, self.packets.get(id).wire_len) {
            return true;
        }
        let from = dir.from;
        self.tap(PacketEventKind::Drop, from, Some(d), id);
        self.packets.free(id);
        false
    }

    #[inline]
    pub(crate) fn start_tx(&mut self, d: usize, id: PacketId, len: u32) {
        let dir = &mut self.dirs[d];
        dir.in_service = Some((id, len));
        dir.tx_start = self.now;
        if let Some(g) = dir.slot.as_mut() {
            // The shaper releases the packet into netem now: netem's
            // enqueue runs its dequeue (`slot.rs`).
            match dir.pipe.front() {
                Some(&(due, _)) => g.call(self.now.as_nanos(), due),
                None => g.pending_call = Some(self.now.as_nanos()),
            }
        }
        let done = self.now + Duration::from_nanos(dir.ser.tx_time_ns(len));
        self.events.push_link(done, Event::TxDone(d as u32));
    }

    fn on_tx_done(&mut self, d: usize) {
        let now = self.now;
        let dir = &mut self.dirs[d];
        let Some((id, len)) = dir.in_service.take() else { return };
        dir.busy_ns += (now - dir.tx_start).as_nanos();
        dir.tx_packets += 1;
        dir.tx_bytes += len as u64;
        let from = dir.from;
        self.tap(PacketEventKind::Depart, from, Some(d), id);
        let dir = &mut self.dirs[d];
        if dir.loss.lose(now) {
            dir.loss_drops += 1;
            if let Some(g) = dir.slot.as_mut() {
                g.pending_call = None;
            }
            self.tap(PacketEventKind::Drop, from, Some(d), id);
            self.packets.free(id);
        } else {
            self.propagate(d, id);
        }
        let dir = &mut self.dirs[d];
        if dir.fq.is_some() {
            self.fq_kick(d);
            return;
        }
        let next = dir.queue.dequeue();
        let wake = dir.host_nic && !dir.ready.is_empty();
        if let Some((nid, nlen)) = next {
            self.start_tx(d, nid, nlen);
        }
        if wake {
            self.serve_ready(d);
        }
    }

    /// A packet of direction `d` that finished serialization enters the
    /// direction's delay.
    #[inline]
    fn propagate(&mut self, d: usize, id: PacketId) {
        let now = self.now;
        let dir = &mut self.dirs[d];
        let arrive = dir.delay.arrival(now, &mut dir.rng);
        if let Some(g) = dir.slot.as_mut() {
            let due = arrive.as_nanos();
            if let Some(c) = g.pending_call.take() {
                g.call(c, due);
            }
            dir.pipe.push_back((due, id));
            if !g.armed {
                g.armed = true;
                let (head, _) = dir.pipe[0];
                self.events.push_link(Instant::from_nanos(g.wake_at(head)), Event::PipeHead(d as u32));
            }
        } else if dir.delay.is_fifo() {
            let was_empty = dir.pipe.is_empty();
            dir.pipe.push_back((arrive.as_nanos(), id));
            if was_empty {
                self.events.push_link(arrive, Event::PipeHead(d as u32));
            }
        } else {
            self.events.push_link(arrive, Event::Arrive { dir: d as u32, pkt: id });
        }
    }

    fn on_pipe_head(&mut self, d: usize) {
        if self.dirs[d].slot.is_some() {
            self.slot_release(d);
            return;
        }
        let dir = &mut self.dirs[d];
        let Some((_, id)) = dir.pipe.pop_front() else { return };
        if let Some(&(t, _)) = dir.pipe.front() {
            self.events.push_link(Instant::from_nanos(t), Event::PipeHead(d as u32));
        }
        self.arrive(d, id);
    }

    /// netem's watchdog on a slotted direction (`slot.rs`): one dequeue
    /// call, which hands over every packet due by the open slot; a
    /// receiving host takes them in one NAPI poll (`gro.rs`).
    fn slot_release(&mut self, d: usize) {
        let now = self.now.as_nanos();
        self.napi_batch = true;
        let mut polled = 0;
        loop {
            let dir = &mut self.dirs[d];
            let Some(g) = dir.slot.as_mut() else { break };
            g.armed = false;
            let Some(&(due, id)) = dir.pipe.front() else {
                // The packet being serialized is in netem already (its
                // due time is later than now): the call redraws the slot.
                if dir.in_service.is_some() {
                    g.call(now, u64::MAX);
                }
                break;
            };
            g.call(now, due);
            if !g.open(now, due) {
                g.armed = true;
                self.events.push_link(Instant::from_nanos(g.wake_at(due)), Event::PipeHead(d as u32));
                break;
            }
            dir.pipe.pop_front();
            self.arrive(d, id);
            polled += 1;
            if polled % NAPI_POLL_WEIGHT == 0 {
                self.gro_flush(self.dirs[d].to);
            }
        }
        if self.dirs[d].to_gro {
            self.gro_flush(self.dirs[d].to);
        }
        self.napi_batch = false;
        let mut woken = std::mem::take(&mut self.napi_woken);
        for &c in &woken {
            self.after_conn_event(c, true);
        }
        woken.clear();
        self.napi_woken = woken;
    }

    /// Packet `id` reached the far end of direction `d`.
    #[inline]
    fn arrive(&mut self, d: usize, id: PacketId) {
        let (node, to_host) = (self.dirs[d].to, self.dirs[d].to_host);
        self.tap(PacketEventKind::Arrive, node, Some(d), id);
        if to_host {
            // Hosts do not forward: the end of the route.
            if self.dirs[d].to_gro {
                self.gro_receive(node, id);
                if !self.napi_batch {
                    self.gro_flush(node);
                }
            } else {
                self.deliver(node, id, 0);
            }
        } else {
            let p = self.packets.get_mut(id);
            let next = self.routes[p.next as usize] as usize;
            p.next += 1;
            self.enqueue(next, id);
        }
    }

    // ---- hosts -----------------------------------------------------------

    /// `dev_gro_receive` for packet `id` at host `host`: merge it into its
    /// flow's held skb, or hold it, or hand it (and what it ends) to TCP.
    fn gro_receive(&mut self, host: NodeId, id: PacketId) {
        let p = *self.packets.get(id);
        if p.raw {
            self.deliver(host, id, 0);
            return;
        }
        let key = (p.conn, p.seg.src_port, p.seg.dst_port);
        if let Some(i) = self.gro_held.iter().position(|h| h.key == key) {
            let h = self.gro_held[i];
            let held = &mut self.packets.get_mut(h.id).seg;
            if gro::can_merge(held, h.gso_size, &p.seg) {
                gro::merge(held, &p.seg);
                self.gro_held[i].count += 1;
                // TCP sees the merged skb: its delivery is tapped once.
                self.packets.free(id);
                self.data_segments += 1;
                if gro::ends_skb(&p.seg, h.gso_size) {
                    let h = self.gro_held.remove(i);
                    self.deliver(host, h.id, h.delivered_gso_size());
                }
                return;
            }
            // Not mergeable: the held skb goes up first.
            self.gro_held.remove(i);
            self.deliver(host, h.id, h.delivered_gso_size());
        }
        if gro::ends_skb(&p.seg, 1) {
            self.deliver(host, id, 0);
        } else {
            self.gro_held.push(Held { key, id, gso_size: p.seg.payload_len, count: 1 });
        }
    }

    /// `napi_gro_flush`: every held skb goes up, oldest first.
    fn gro_flush(&mut self, host: NodeId) {
        while !self.gro_held.is_empty() {
            let h = self.gro_held.remove(0);
            self.deliver(host, h.id, h.delivered_gso_size());
        }
    }

    /// Hands packet `id` to host `host`'s TCP stack; `gso_size` is nonzero
    /// for a segment GRO merged from several (`gro.rs`).
    fn deliver(&mut self, host: NodeId, id: PacketId, gso_size: u32) {
        let p = *self.packets.get(id);
        if p.raw {
            self.tap(PacketEventKind::Deliver, host, None, id);
            self.packets.free(id);
            return;
        }
        self.tap(PacketEventKind::Deliver, host, None, id);
        self.packets.free(id);
        if p.seg.payload_len > 0 {
            self.data_segments += 1;
        }
        // The socket the 4-tuple names: the sender's peer (`Packet::conn`).
        let c = (p.conn ^ 1) as usize;
        let now = self.now;
        let Some(tcp) = self.conns[c].tcp.as_mut() else { return };
        if gso_size != 0 {
            tcp.handle_gro_segment(now, &p.seg, gso_size);
        } else {
            tcp.handle_segment(now, &p.seg);
        }
        if self.napi_batch {
            // The softirq sends what this segment owes (its ACK, data the
            // ACK let out); the application waits for the batch's end.
            self.drain_transmit(c);
            if !self.napi_woken.contains(&c) {
                self.napi_woken.push(c);
            }
        } else {
            self.after_conn_event(c, true);
        }
    }

    /// Runs the application, transmits, samples the trace and re-arms the
    /// timer of connection `c` after an input. `ack` = the input was a
    /// segment from the peer.
    pub(crate) fn after_conn_event(&mut self, c: usize, ack: bool) {
        let now = self.now;
        let conn = &mut self.conns[c];
        let (f, r) = (conn.flow as usize, conn.run as usize);
        if ack {
            // The softirq that took the segment sends what it owes (its
            // ACK, or the timer for one; data the ACK let out) before the
            // application wakes up to answer it (tcp_rcv_established's
            // tcp_data_snd_check and __tcp_ack_snd_check, then the reader's
            // process context).
            self.drain_transmit(c);
        }
        let conn = &mut self.conns[c];
        let Some(tcp) = conn.tcp.as_mut() else { return };
        let flow = &mut self.flows[f];
        let mut progress = false;
        let Some(run) = flow.runs.get_mut(r) else {
            // Run 0's server listens before its run starts.
            self.drain_transmit(c);
            self.update_timer(c);
            return;
        };
        if conn.client {
            match &mut run.client {
                ClientApp::Bulk(s) => s.on_event(tcp),
                ClientApp::Rpc(rc) => {
                    let ev = rc.on_event(tcp, now);
                    if let Some(lat) = ev.completed {
                        run.rpcs += 1;
                        if let Some(rec) = flow.rpc.as_mut() {
                            rec.record(lat);
                        }
                    }
                    if let Some(t) = ev.wake_at {
                        self.events.push_conn(t, Event::AppWake { flow: f as u32, run: r as u32 });
                    }
                    progress = ev.finished;
                }
            }
        } else {
            match &mut run.server {
                ServerApp::Sink(s) => progress = s.on_event(tcp) > 0,
                ServerApp::Rpc(s) => s.on_event(tcp),
            }
        }
        if progress {
            self.check_completion(f, r);
        }
        // After an input the connection was drained above; poll again only
        // for what the application's calls made.
        if !ack || self.conns[c].tcp.as_ref().is_some_and(|t| t.app_output_owed()) {
            self.drain_transmit(c);
        }
        let conn = &self.conns[c];
        if conn.client {
            if let (Some(tcp), Some(trace)) = (conn.tcp.as_ref(), self.flows[f].trace.as_mut()) {
                let info = tcp.info();
                if ack {
                    trace.on_ack(self.now, &info);
                } else {
                    trace.on_other(self.now, &info);
                }
            }
        }
        self.update_timer(c);
        if !self.conns[c].done {
            self.check_closed(c);
        }
    }

    /// Polls connection `c` for segments while its NIC can take them; if
    /// the NIC is full, `c` waits in the NIC's ready queue.
    #[inline]
    pub(crate) fn drain_transmit(&mut self, c: usize) {
        if let Drained::NoRoom { .. } = self.poll_segments(c) {
            let conn = &mut self.conns[c];
            if !conn.blocked {
                conn.blocked = true;
                self.dirs[conn.nic as usize].ready.push(&mut self.ready_links, c as u32);
            }
        }
    }

    /// Polls connection `c` for segments while its NIC can take them and
    /// says why it stopped; queues nothing.
    #[inline]
    fn poll_segments(&mut self, c: usize) -> Drained {
        let now = self.now;
        if self.dirs[self.conns[c].nic as usize].fq.is_some() {
            return self.drain_fq(c);
        }
        let mut sent = false;
        loop {
            let conn = &mut self.conns[c];
            let nic = conn.nic as usize;
            let dir = &mut self.dirs[nic];
            let room = dir.in_service.is_none() || dir.queue.is_empty() || dir.queue.has_room(conn.mtu.into());
            if !room {
                return Drained::NoRoom { sent };
            }
            let Some(tcp) = conn.tcp.as_mut() else { return Drained::Done };
            let Some(seg) = tcp.poll_transmit(now) else { return Drained::Done };
            sent = true;
            let next = conn.route + 1;
            let pkt = Packet { seg, wire_len: seg.wire_len(), conn: c as u32, raw: false, next };
            let id = self.packets.alloc(pkt);
            self.tap_send(id);
            self.enqueue(nic, id);
        }
    }

    /// Direction `d` (a host NIC) has room again: poll the connections
    /// waiting for it from the head of its ready queue until one of them
    /// takes the room (and waits again, at the tail) or the queue is
    /// empty. O(1) amortized per freed slot; see `ready.rs`.
    pub(crate) fn serve_ready(&mut self, d: usize) {
        while let Some(c) = self.dirs[d].ready.pop(&mut self.ready_links) {
            self.ready_served += 1;
            let out = self.poll_segments(c as usize);
            self.update_timer(c as usize);
            let Drained::NoRoom { sent } = out else {
                // Nothing (more) to send: it leaves the queue.
                self.conns[c as usize].blocked = false;
                continue;
            };
            // It took the room and waits again, at the tail; or the room
            // was too small for it and it keeps its turn.
            let q = &mut self.dirs[d].ready;
            if sent {
                q.push(&mut self.ready_links, c);
            } else {
                q.push_front(&mut self.ready_links, c);
            }
            return;
        }
    }

    // ---- timers ----------------------------------------------------------

    /// Schedules connection `c`'s deadline if it is earlier than its live
    /// timer entry (see the module docs). A deadline in the past fires now;
    /// a deadline equal to the instant a timeout was just handled is moved
    /// 1 ns later, so a core that keeps re-arming for "now" cannot livelock
    /// the event loop.
    #[inline]
    pub(crate) fn update_timer(&mut self, c: usize) {
        let now = self.now;
        let conn = &mut self.conns[c];
        let Some(tcp) = conn.tcp.as_ref() else { return };
        let Some(mut at) = tcp.poll_timeout() else { return };
        at = at.max(now);
        if conn.fired_at == at && at < Instant::MAX {
            at += Duration::from_nanos(1);
        }
        if at < conn.timer_at {
            conn.timer_gen = conn.timer_gen.wrapping_add(1);
            conn.timer_at = at;
            self.events.push_conn(at, Event::Timer { conn: c as u32, gen: conn.timer_gen });
        }
    }

    /// A timer entry popped; returns whether it did any work.
    fn on_timer(&mut self, c: usize, gen: u32) -> bool {
        let now = self.now;
        let conn = &mut self.conns[c];
        if gen != conn.timer_gen {
            return false;
        }
        conn.timer_at = Instant::MAX;
        let Some(tcp) = conn.tcp.as_mut() else { return false };
        match tcp.poll_timeout() {
            Some(at) if at <= now => {
                conn.fired_at = now;
                tcp.handle_timeout(now);
                self.after_conn_event(c, false);
                true
            }
            _ => {
                // The deadline moved later (or went away): re-arm lazily.
                self.update_timer(c);
                false
            }
        }
    }

    // ---- observers -------------------------------------------------------

    /// [`tap`](Self::tap) of [`PacketEventKind::Send`] at the sending host.
    #[inline]
    pub(crate) fn tap_send(&mut self, id: PacketId) {
        if self.tap.is_some() {
            let conn = &self.conns[self.packets.get(id).conn as usize];
            let flow = &self.flows[conn.flow as usize];
            let host = if conn.client { flow.from } else { flow.to };
            self.tap(PacketEventKind::Send, host, None, id);
        }
    }

    #[inline]
    pub(crate) fn tap(&mut self, kind: PacketEventKind, node: NodeId, dir: Option<usize>, id: PacketId) {
        if let Some(tap) = self.tap.as_mut() {
            let p = self.packets.get(id);
            let conn = &self.conns[p.conn as usize];
            let flow = &self.flows[conn.flow as usize];
            let (src, dst) = if conn.client { (flow.from, flow.to) } else { (flow.to, flow.from) };
            let ev = PacketEvent {
                kind,
                node,
                dir,
                flow: conn.flow as usize,
                from_client: conn.client,
                src,
                dst,
                seg: p.seg,
                wire_len: p.wire_len,
            };
            tap(self.now, &ev);
        }
    }
}
