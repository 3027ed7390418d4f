//! Builders for test configurations and a packet-tap recorder.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{PacketEvent, PacketEventKind, Sim};
use tcplab_wire::{Ecn, SegmentRepr, SeqNum, TcpFlags};

pub fn host(name: &str) -> NodeConfig {
    NodeConfig::host(name)
}

pub fn switch(name: &str) -> NodeConfig {
    NodeConfig::switch(name)
}

pub fn queue(limit: Limit) -> QueueConfig {
    QueueConfig { limit, ecn_threshold: None }
}

/// A symmetric link with the given delay model and queue both ways.
pub fn link(name: &str, a: NodeId, b: NodeId, rate_bps: u64, delay: DelayModel, q: QueueConfig) -> LinkConfig {
    let d =
        DirectionConfig { delay, queue: q, loss: Default::default(), blackouts: Vec::new(), police: None, slot: None };
    LinkConfig { name: name.into(), a, b, rate_bps, ab: d.clone(), ba: d }
}

pub fn fixed(d: Duration) -> DelayModel {
    DelayModel::Fixed(d)
}

/// A flow whose TCP never starts within test horizons (start at 1000 s),
/// used only as a route for injected packets.
pub fn route_only_flow(id: &str, from: NodeId, to: NodeId) -> FlowConfig {
    FlowConfig {
        start: Duration::from_secs(1000),
        ..FlowConfig::new(id, from, to, AppConfig::Bulk { bytes: None, stop: None })
    }
}

pub fn bulk_flow(id: &str, from: NodeId, to: NodeId, bytes: Option<u64>) -> FlowConfig {
    FlowConfig::new(id, from, to, AppConfig::Bulk { bytes, stop: None })
}

pub fn config(nodes: Vec<NodeConfig>, links: Vec<LinkConfig>, flows: Vec<FlowConfig>) -> SimConfig {
    SimConfig { duration: Duration::from_secs(10), seed: 1, nodes, links, flows, trace_interval: None }
}

/// a -(100 Mbit/s, 1 ms)- s -(10 Mbit/s, 9 ms, 100-packet queue)- b:
/// 20 ms RTT, 10 Mbit/s bottleneck, run for `duration`.
pub fn dumbbell(flows: Vec<FlowConfig>, duration: Duration) -> SimConfig {
    let mut cfg = config(
        vec![host("a"), switch("s"), host("b")],
        vec![
            link("access", 0, 1, 100_000_000, fixed(Duration::from_millis(1)), queue(Limit::Packets(1000))),
            link("bottleneck", 1, 2, 10_000_000, fixed(Duration::from_millis(9)), queue(Limit::Packets(100))),
        ],
        flows,
    );
    cfg.duration = duration;
    cfg
}

/// A data segment of `payload` bytes and no options: `wire_len` =
/// 40 + payload. `seq` tags it.
pub fn data_seg(seq: u32, payload: u32, ecn: Ecn) -> SegmentRepr {
    SegmentRepr {
        src_port: 1,
        dst_port: 2,
        seq: SeqNum(seq),
        flags: TcpFlags::ACK,
        ecn,
        payload_len: payload,
        ..Default::default()
    }
}

/// One recorded tap observation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obs {
    pub t: u64,
    pub kind: PacketEventKind,
    pub node: NodeId,
    pub dir: Option<usize>,
    pub flow: usize,
    pub seq: u32,
    pub ecn: Ecn,
    /// Payload bytes (of the skb TCP took, for a delivery GRO merged into).
    pub len: u32,
}

/// A shared log of observations.
pub struct Log(Arc<Mutex<Vec<Obs>>>);

impl Log {
    pub fn borrow(&self) -> std::sync::MutexGuard<'_, Vec<Obs>> {
        self.0.lock().unwrap()
    }
}

/// Installs a tap that records every observation.
pub fn record(sim: &mut Sim) -> Log {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    sim.set_packet_tap(Box::new(move |now: Instant, ev: &PacketEvent| {
        l.lock().unwrap().push(Obs {
            t: now.as_nanos(),
            kind: ev.kind,
            node: ev.node,
            dir: ev.dir,
            flow: ev.flow,
            seq: ev.seg.seq.0,
            ecn: ev.seg.ecn,
            len: ev.seg.payload_len,
        })
    }));
    Log(log)
}

/// `(time ns, seq)` of every delivery, in delivery order.
pub fn deliveries(log: &[Obs]) -> Vec<(u64, u32)> {
    log.iter().filter(|o| o.kind == PacketEventKind::Deliver).map(|o| (o.t, o.seq)).collect()
}

pub fn ms(x: u64) -> u64 {
    x * 1_000_000
}
