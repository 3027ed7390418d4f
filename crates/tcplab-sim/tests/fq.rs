//! Hosts with the fq qdisc: EDT pacing of TCP, the round robin between
//! flows of one host, backpressure instead of local drops, and the
//! credit-based pacing of pre-4.20 kernels.

mod common;
use common::*;
use std::sync::{Arc, Mutex};
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{PacketEvent, PacketEventKind, Sim};

fn fq_host(name: &str, fq: FqConfig) -> NodeConfig {
    NodeConfig { qdisc: Qdisc::Fq(fq), ..host(name) }
}

/// sender -(access_bps, 1 ms)- s -(1 Gbit/s, 9 ms, 2000 packets)- receiver.
fn path(sender: NodeConfig, access_bps: u64, flows: Vec<FlowConfig>) -> SimConfig {
    let mut cfg = config(
        vec![sender, switch("s"), host("receiver")],
        vec![
            link("access", 0, 1, access_bps, fixed(Duration::from_millis(1)), queue(Limit::Packets(1000))),
            link("core", 1, 2, 1_000_000_000, fixed(Duration::from_millis(9)), queue(Limit::Packets(2000))),
        ],
        flows,
    );
    cfg.duration = Duration::from_secs(3);
    cfg
}

/// Times (ns) at which the sender's TCP handed data segments to its NIC.
fn data_sends(cfg: &SimConfig) -> (Vec<u64>, tcplab_sim::RunResult) {
    let mut sim = Sim::new(cfg).unwrap();
    let sends: Arc<Mutex<Vec<u64>>> = Arc::default();
    let s2 = sends.clone();
    sim.set_packet_tap(Box::new(move |now: Instant, ev: &PacketEvent| {
        if ev.kind == PacketEventKind::Send && ev.from_client && ev.seg.payload_len > 0 {
            s2.lock().unwrap().push(now.as_nanos());
        }
    }));
    sim.run_to_end();
    let r = sim.result();
    let v = sends.lock().unwrap().clone();
    (v, r)
}

/// Largest number of data segments sent at the same nanosecond.
fn max_burst(times: &[u64]) -> usize {
    let (mut best, mut run) = (0, 0);
    for (i, t) in times.iter().enumerate() {
        run = if i > 0 && times[i - 1] == *t { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

#[test]
fn test_edt_pacing_spreads_what_pfifo_sends_in_bursts() {
    let flow = || vec![bulk_flow("f", 0, 2, Some(20_000_000))];
    let (pfifo, rp) = data_sends(&path(host("sender"), 10_000_000_000, flow()));
    let (fq, rf) = data_sends(&path(fq_host("sender", FqConfig::default()), 10_000_000_000, flow()));
    // Without pacing, each ACK in slow start releases two segments at once
    // and the initial window goes out in one instant.
    assert!(max_burst(&pfifo) >= 10, "pfifo burst {}", max_burst(&pfifo));
    // With fq, only the first 10 data segments are unpaced; every later skb
    // waits for the previous one's departure time plus len/rate, and its
    // segments leave together (GSO): a burst is at most one 64 KB skb
    // (tcp_tso_autosize: about 1 ms of data at the pacing rate).
    let bursts = fq[10..].windows(2).filter(|w| w[1] > w[0]).count() + 1;
    assert!(max_burst(&fq[10..]) <= 45, "fq burst {}", max_burst(&fq[10..]));
    assert!(bursts * 45 >= fq.len() - 10, "{bursts} departures for {} segments", fq.len() - 10);
    assert!(fq[10] > fq[9]);
    // Both transfer everything, and pacing costs little.
    for r in [&rp, &rf] {
        assert_eq!(r.flows[0].bytes_delivered, 20_000_000);
        assert_eq!(r.links[0].drops, 0);
    }
    let (tp, tf) = (rp.flows[0].completed_at.unwrap(), rf.flows[0].completed_at.unwrap());
    assert!(tf.as_nanos() < tp.as_nanos() * 3 / 2, "fq {tf:?} vs pfifo {tp:?}");
    assert_eq!(rf.links[0].throttled, 0, "EDT: fq itself never throttles TCP");
}

#[test]
fn test_fq_shares_a_slow_nic_fairly_and_never_drops() {
    // The 100 Mbit/s NIC is the bottleneck; fq's round robin shares it.
    let cfg = path(
        fq_host("sender", FqConfig { flow_limit: 10, ..FqConfig::default() }),
        100_000_000,
        vec![bulk_flow("f", 0, 2, None), bulk_flow("g", 0, 2, None)],
    );
    let r = tcplab_sim::run(&cfg).unwrap();
    let (f, g) = (r.flows[0].goodput_bps, r.flows[1].goodput_bps);
    assert!(f + g > 85e6, "{f} + {g}");
    assert!((f - g).abs() < 0.05 * (f + g), "{f} vs {g}");
    assert!(r.links.iter().all(|l| l.drops == 0));
    // Per-flow backpressure bounds what each flow keeps in the qdisc: the
    // limits count skbs, so a flow may add the rest of one skb (up to 44
    // more segments) past flow_limit.
    assert!(r.links[0].peak_queue_packets <= 2 * (10 + 44), "{}", r.links[0].peak_queue_packets);
}

#[test]
fn test_credit_mode_paces_in_quantum_bursts() {
    // 3.12-4.19 sch_fq: fq paces from sk_pacing_rate itself.
    let fq = FqConfig { pacing: FqPacing::Credit, ..FqConfig::default() };
    let cfg = path(fq_host("sender", fq), 10_000_000_000, vec![bulk_flow("f", 0, 2, Some(20_000_000))]);
    let mut sim = Sim::new(&cfg).unwrap();
    let departs: Arc<Mutex<Vec<(u64, u32)>>> = Arc::default();
    let d2 = departs.clone();
    sim.set_packet_tap(Box::new(move |now: Instant, ev: &PacketEvent| {
        if ev.kind == PacketEventKind::Depart && ev.dir == Some(0) && ev.seg.payload_len > 0 {
            d2.lock().unwrap().push((now.as_nanos(), ev.seg.payload_len));
        }
    }));
    sim.run_to_end();
    let r = sim.result();
    assert_eq!(r.flows[0].bytes_delivered, 20_000_000);
    // fq throttles the flow between skbs once its credit is spent (about
    // 100 times here; one per pair of segments before fq dequeued whole
    // skbs, 2026-12-02).
    assert!(r.links[0].throttled >= 50, "{}", r.links[0].throttled);
    assert_eq!(r.links[0].drops, 0);
    // Once paced, data leaves the 10 Gbit/s NIC in bursts of at most one
    // skb (GSO: up to 64 KB, 45 segments), which fq dequeues, credits and
    // paces whole.
    let d = departs.lock().unwrap();
    let ser = 1_212; // 1500 bytes at 10 Gbit/s, ns (rounded up)
    let mut burst = 1;
    let mut max_late_burst = 0;
    for w in d.windows(2).skip(20) {
        burst = if w[1].0 - w[0].0 <= ser { burst + 1 } else { 1 };
        max_late_burst = max_late_burst.max(burst);
    }
    assert!(max_late_burst <= 45, "burst {max_late_burst}");
    assert!(d.len() > 45 * 100, "{} departures", d.len());
}

#[test]
fn test_lone_segments_pass_fq_without_delay() {
    // The hand-timed RPC exchange of tests/rpc.rs through fq on both ends:
    // single-segment messages are never held (first 10 unpaced, later ones
    // long after their departure time) and take fq's fast path. The first
    // two transactions carry the quick-ACK phase's pure ACKs as there
    // (2 · 4 160 ns more).
    let mut rpc = RpcConfig::new(100, 200);
    rpc.count = Some(30);
    let mut cfg = config(
        vec![fq_host("client", FqConfig::default()), fq_host("server", FqConfig::default())],
        vec![link("l", 0, 1, 100_000_000, fixed(Duration::from_millis(1)), queue(Limit::Packets(1000)))],
        vec![FlowConfig::new("rr", 0, 1, AppConfig::Rpc(rpc))],
    );
    cfg.duration = Duration::from_secs(1);
    let s = tcplab_sim::run(&cfg).unwrap().flows[0].rpc.clone().unwrap();
    assert_eq!((s.count, s.min_ns, s.max_ns), (30, 2_032_320, 2_040_640));
}

#[test]
fn test_small_flow_limit_backpressures_never_drops() {
    let fq = FqConfig { flow_limit: 2, limit: 3, ..FqConfig::default() };
    let cfg = path(
        fq_host("sender", fq),
        20_000_000,
        vec![bulk_flow("f", 0, 2, Some(2_000_000)), bulk_flow("g", 0, 2, Some(2_000_000))],
    );
    let r = tcplab_sim::run(&cfg).unwrap();
    assert!(r.flows.iter().all(|f| f.bytes_delivered == 2_000_000));
    assert_eq!(r.links[0].drops, 0);
    // `limit` counts skbs: each flow's last one may bring its other
    // segments along (at 20 Mbit/s, skbs of a few segments).
    assert!(r.links[0].peak_queue_packets <= 3 + 2 * 44, "{}", r.links[0].peak_queue_packets);
}

#[test]
fn test_fq_runs_are_deterministic() {
    let mk = || {
        let mut cfg = path(
            fq_host("sender", FqConfig { pacing: FqPacing::Credit, ..FqConfig::default() }),
            1_000_000_000,
            vec![bulk_flow("f", 0, 2, None), bulk_flow("g", 0, 2, Some(5_000_000))],
        );
        cfg.links[1].ab.delay = DelayModel::OnOff {
            base: Duration::from_millis(9),
            delay: Duration::from_millis(2),
            mean_on: Duration::from_millis(50),
            mean_off: Duration::from_millis(200),
            slot: Duration::from_millis(1),
        };
        cfg
    };
    assert_eq!(tcplab_sim::run(&mk()).unwrap(), tcplab_sim::run(&mk()).unwrap());
}
