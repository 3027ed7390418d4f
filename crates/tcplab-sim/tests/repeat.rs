//! Sequential connections (`repeat`): each run a new connection (new
//! port, new ISN) after the previous one finished, per-run results, and
//! the hosts' tcp_metrics cache between runs.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use tcplab_core::time::{Duration, Instant};
use tcplab_core::Mib;
use tcplab_sim::config::*;
use tcplab_sim::{PacketEvent, PacketEventKind, Sim};

fn dumbbell(flows: Vec<FlowConfig>) -> SimConfig {
    common::dumbbell(flows, Duration::from_secs(10))
}

fn repeated(runs: u32, gap: Duration, bytes: u64) -> FlowConfig {
    let mut f = bulk_flow("f", 0, 2, Some(bytes));
    f.repeat = Repeat { runs, gap, duration_each: None };
    f
}

#[test]
fn test_runs_follow_each_other_with_new_connections() {
    let cfg = dumbbell(vec![repeated(3, Duration::from_millis(100), 500_000)]);
    let mut sim = Sim::new(&cfg).unwrap();
    // Client ports and ISNs of the SYNs.
    let syns: Arc<Mutex<Vec<(u64, u16, u32)>>> = Arc::default();
    let s2 = syns.clone();
    sim.set_packet_tap(Box::new(move |now: Instant, ev: &PacketEvent| {
        if ev.kind == PacketEventKind::Send && ev.from_client && ev.seg.flags.syn() {
            s2.lock().unwrap().push((now.as_nanos(), ev.seg.src_port, ev.seg.seq.0));
        }
    }));
    sim.run_to_end();
    let r = sim.result();
    let f = &r.flows[0];
    assert_eq!(f.runs.len(), 3);
    let syns = syns.lock().unwrap();
    assert_eq!(syns.len(), 3);
    let ports: BTreeSet<u16> = syns.iter().map(|s| s.1).collect();
    let isns: BTreeSet<u32> = syns.iter().map(|s| s.2).collect();
    assert_eq!((ports.len(), isns.len()), (3, 3));
    assert_eq!(syns[0].1, tcplab_sim::client_port(0));
    for (k, run) in f.runs.iter().enumerate() {
        assert_eq!(run.bytes_delivered, 500_000, "run {k}");
        let done = run.completed_at.expect("each run completes");
        let closed = run.closed_at.expect("each client connection finishes");
        assert!(run.start < done && done <= closed, "run {k}");
        assert_eq!(run.start.as_nanos(), syns[k].0);
        assert!(run.goodput_bps > 1e6 && run.goodput_bps < 10e6, "run {k}: {}", run.goodput_bps);
        assert_eq!(run.counters.get(Mib::TcpActiveOpens), 1);
        assert_eq!(run.counters.get(Mib::TcpPassiveOpens), 1);
        if k > 0 {
            // Exactly `gap` after the previous client finished.
            let prev = f.runs[k - 1].closed_at.unwrap();
            assert_eq!(run.start, prev + Duration::from_millis(100));
        }
    }
    // Flow totals sum the runs; completion is the last run's.
    assert_eq!(f.bytes_delivered, 1_500_000);
    assert_eq!(f.counters.get(Mib::TcpActiveOpens), 3);
    assert_eq!(f.completed_at, f.runs[2].completed_at);
    assert_eq!(f.retransmits, f.runs.iter().map(|r| r.retransmits).sum::<u64>());
    assert_eq!(r.counters, f.counters);
}

#[test]
fn test_metrics_cache_carries_rtt_between_runs() {
    let cfg = dumbbell(vec![repeated(3, Duration::from_millis(10), 200_000)]);
    let r = tcplab_sim::run(&cfg).unwrap();
    let runs = &r.flows[0].runs;
    assert_eq!(runs.len(), 3);
    // The first connection finds an empty cache; later ones the RTT the
    // previous ones saved (srtt_us units: µs × 8; the path RTT is 20 ms).
    assert_eq!(runs[0].cached_metrics, None);
    for run in &runs[1..] {
        let m = run.cached_metrics.expect("saved by the previous run");
        assert!(m.rtt >= 8 * 20_000 && m.rtt < 8 * 60_000, "{m:?}");
    }
    // linux-current: tcp_no_ssthresh_metrics_save = 1.
    assert_eq!(runs[1].cached_metrics.unwrap().ssthresh, 0);
}

#[test]
fn test_no_metrics_save_leaves_the_cache_empty() {
    let mut f = repeated(2, Duration::ZERO, 200_000);
    Arc::make_mut(&mut f.tcp).tcp_no_metrics_save = true;
    Arc::make_mut(&mut f.tcp_receiver).tcp_no_metrics_save = true;
    let r = tcplab_sim::run(&dumbbell(vec![f])).unwrap();
    let runs = &r.flows[0].runs;
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.cached_metrics.is_none()));
}

#[test]
fn test_duration_each_bounds_each_run_and_flows_share_the_cache() {
    // Two RPC runs of 300 ms each; a later flow between the same hosts
    // starts with what they left in the cache.
    let mut rpc = RpcConfig::new(1000, 1000);
    rpc.samples = 0;
    let mut f = FlowConfig::new("rr", 0, 2, AppConfig::Rpc(rpc));
    f.repeat = Repeat { runs: 2, gap: Duration::from_millis(50), duration_each: Some(Duration::from_millis(300)) };
    let mut g = bulk_flow("later", 0, 2, Some(100_000));
    g.start = Duration::from_secs(2);
    let r = tcplab_sim::run(&dumbbell(vec![f, g])).unwrap();
    let rr = &r.flows[0];
    assert_eq!(rr.runs.len(), 2);
    for run in &rr.runs {
        let done = run.completed_at.unwrap();
        // The last transaction ends within one RTT-ish after the stop.
        assert!(done - run.start >= Duration::from_millis(300) && done - run.start < Duration::from_millis(400));
        assert!(run.rpcs > 5);
    }
    assert_eq!(rr.rpc.as_ref().unwrap().count, rr.runs.iter().map(|r| r.rpcs).sum::<u64>());
    assert!(r.flows[1].runs[0].cached_metrics.is_some());
}

#[test]
fn test_repeat_is_deterministic() {
    let mk = || dumbbell(vec![repeated(4, Duration::from_millis(20), 300_000)]);
    assert_eq!(tcplab_sim::run(&mk()).unwrap(), tcplab_sim::run(&mk()).unwrap());
}
