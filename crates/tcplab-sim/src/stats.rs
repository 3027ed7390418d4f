//! Turning a simulation's state into a [`RunResult`].
//!
//! - Flow goodput: bytes read by the applications (bulk: the receiver;
//!   RPC: requests read by the server plus responses read by the client),
//!   in bits per second over the flow's active time, from its `start` to
//!   its completion (or to now, if it has not completed). Zero before the
//!   flow starts. With several runs: summed over runs, over the whole
//!   span (gaps included); each [`RunSummary`] has its own.
//! - Retransmits: the sender's `TcpRetransSegs` (summed over runs).
//! - Counters: the flow's sender and receiver merged (all runs); the
//!   simulation's counters are the sum over flows.
//! - Link utilization: serializer busy time over elapsed time, the packet
//!   in service counted up to now.

use crate::event::Agenda;
use crate::packet::PacketArena;
use crate::ready::ReadyLinks;
use crate::result::{FlowResult, LinkResult, RunResult, RunSummary};
use crate::sim::Sim;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::{Counters, Mib, TcpInfo};

/// `bytes·8 / (end − start)` in bit/s; 0 for an empty interval.
fn rate_bps(bytes: u64, start: Instant, end: Instant) -> f64 {
    let active = end.as_nanos().saturating_sub(start.as_nanos());
    if active > 0 {
        bytes as f64 * 8.0 * 1e9 / active as f64
    } else {
        0.0
    }
}

fn since_zero(t: Instant) -> Duration {
    Duration::from_nanos(t.as_nanos())
}

impl Sim<'_> {
    /// The results so far (at [`Sim::now`]). Can be called at any time,
    /// any number of times.
    pub fn result(&self) -> RunResult {
        let flows = (0..self.flows.len()).map(|f| self.flow_result(f)).collect();
        self.run_result(flows)
    }

    /// The results at the end, like [`Sim::result`], built while dropping
    /// each flow's connections once its result is taken, so that the
    /// whole simulation and the whole result are not in memory at once.
    pub fn into_result(mut self) -> RunResult {
        // What the result does not read goes first, making room for it:
        // the event list alone is 130 to 260 bytes per flow, and the packets
        // queued at the end are many in a busy run.
        self.events = Agenda::with_capacity(0, 0);
        self.packets = PacketArena::with_capacity(0);
        self.routes = Vec::new();
        self.ready_links = ReadyLinks::default();
        drop(self.clear_packet_tap());
        // Grown as the connections go. The list (208 bytes a flow) is one
        // large block beside the heap; what each result holds in boxes (its
        // tcp_info, RPC statistics and runs, about 0.5 KB) lands in the
        // memory that the flow's connections have just freed (issue 15).
        let mut flows = Vec::new();
        for f in 0..self.flows.len() {
            flows.push(self.flow_result(f));
            let flow = &self.flows[f];
            let runs = self.cfg.flows[f].repeat.count() as usize;
            let conns = flow.conn_base as usize..flow.conn_base as usize + 2 * runs;
            for c in &mut self.conns[conns] {
                c.tcp = None;
            }
        }
        self.run_result(flows)
    }

    fn flow_result(&self, f: usize) -> FlowResult {
        let now = self.now;
        let (flow, fc) = (&self.flows[f], &self.cfg.flows[f]);
        let mut counters = Counters::default();
        let mut runs = Vec::with_capacity(flow.runs.len());
        let (mut delivered, mut retransmits) = (0u64, 0u64);
        let mut sender_info = TcpInfo::default();
        for (k, run) in flow.runs.iter().enumerate() {
            let base = flow.conn_base as usize + 2 * k;
            let (mut run_counters, info, retrans) = match &run.released {
                Some(b) => (b.0.clone(), b.1, b.2),
                None => {
                    let client = self.conns[base].tcp.as_deref();
                    let server = self.conns[base + 1].tcp.as_deref();
                    let mut c = Counters::default();
                    for t in [client, server].into_iter().flatten() {
                        c.merge(t.counters());
                    }
                    (
                        c,
                        client.map_or_else(TcpInfo::default, |t| t.info()),
                        client.map_or(0, |t| t.counters().get(Mib::TcpRetransSegs)),
                    )
                }
            };
            let bytes = run.server.delivered() + run.client_read();
            counters.merge(&run_counters);
            delivered += bytes;
            retransmits += retrans;
            sender_info = info;
            runs.push(RunSummary {
                start: since_zero(run.start),
                completed_at: run.completed_at.map(since_zero),
                closed_at: run.closed_at.map(since_zero),
                bytes_delivered: bytes,
                goodput_bps: rate_bps(bytes, run.start, run.completed_at.unwrap_or(now)),
                retransmits: retrans,
                rpcs: run.rpcs,
                cached_metrics: run.cached.as_deref().copied(),
                sender_info: info,
                counters: std::mem::take(&mut run_counters),
            });
        }
        // The server of run 0 exists (listening) before the flow starts.
        if flow.runs.is_empty() {
            if let Some(t) = self.conns[flow.conn_base as usize + 1].tcp.as_ref() {
                counters.merge(t.counters());
            }
        }
        let end = flow.completed_at.unwrap_or(now);
        let goodput_bps = if end > flow.start { rate_bps(delivered, flow.start, end) } else { 0.0 };
        FlowResult {
            id: fc.id.clone(),
            cc: fc.tcp.congestion_control.name().to_string(),
            bytes_delivered: delivered,
            goodput_bps,
            retransmits,
            sender_info: Box::new(sender_info),
            counters,
            counters_known: true,
            completed_at: flow.completed_at.map(since_zero),
            trace: flow.trace.as_ref().map_or_else(Vec::new, |t| t.rows.clone()),
            rpc: flow.rpc.as_ref().map(|r| Box::new(r.stats())),
            runs,
        }
    }

    /// The result of `flows` and the links.
    fn run_result(&self, flows: Vec<FlowResult>) -> RunResult {
        let now = self.now;
        let elapsed = now.as_nanos();
        let mut total = Counters::default();
        for f in &flows {
            total.merge(&f.counters);
        }
        let links = self
            .dirs
            .iter()
            .enumerate()
            .map(|(d, dir)| {
                let (drops, ce_marks, peak, throttled) = match dir.fq.as_deref() {
                    Some(q) => (q.drops, q.ce_marks, q.peak_packets, q.throttled),
                    None => (dir.queue.drops, dir.queue.ce_marks, dir.queue.peak_packets, 0),
                };
                LinkResult {
                    id: format!(
                        "{}:{}->{}",
                        self.cfg.links[d / 2].name,
                        self.cfg.nodes[dir.from].name,
                        self.cfg.nodes[dir.to].name
                    ),
                    utilization: if elapsed > 0 { dir.busy_until(now) as f64 / elapsed as f64 } else { 0.0 },
                    tx_packets: dir.tx_packets,
                    tx_bytes: dir.tx_bytes,
                    drops,
                    loss_drops: dir.loss_drops,
                    police_drops: dir.police.as_ref().map_or(0, |p| p.drops),
                    ce_marks,
                    peak_queue_packets: peak,
                    throttled,
                    queue_trace: self.queue_trace.as_ref().map_or_else(Vec::new, |(_, q)| q[d].clone()),
                }
            })
            .collect();
        RunResult {
            sim_time: Duration::from_nanos(elapsed),
            events: self.processed,
            flows,
            links,
            counters: total,
            data_segments: self.data_segments,
        }
    }
}
