//! Connections waiting for room in a full host NIC: served from a FIFO,
//! round-robin, one packet per turn (`ready.rs`).

mod common;
use common::*;
use tcplab_core::time::Duration;
use tcplab_sim::config::*;

/// a -(10 Mbit/s, 1 ms, NIC queue 20 packets)- b with `n` bulk flows from
/// a: the NIC is the bottleneck and nothing is ever dropped, so the only
/// thing deciding the shares is the order in which the NIC serves the
/// waiting connections.
fn nic_bound(n: usize, a: NodeConfig) -> SimConfig {
    let flows = (0..n).map(|i| bulk_flow(&format!("f{i}"), 0, 1, None)).collect();
    let mut cfg = config(
        vec![a, host("b")],
        vec![link("l", 0, 1, 10_000_000, fixed(Duration::from_millis(1)), queue(Limit::Packets(20)))],
        flows,
    );
    cfg.duration = Duration::from_secs(5);
    cfg
}

fn delivered(r: &tcplab_sim::RunResult) -> Vec<u64> {
    r.flows.iter().map(|f| f.bytes_delivered).collect()
}

#[test]
fn test_full_nic_serves_waiting_connections_round_robin() {
    // Before the ready queue, the connection at the head of the blocked
    // list kept it after each send and took every freed slot:
    // [76744, 5860056, 46336, 46336] bytes.
    let r = tcplab_sim::run(&nic_bound(4, host("a"))).unwrap();
    let got = delivered(&r);
    let (min, max) = (*got.iter().min().unwrap(), *got.iter().max().unwrap());
    assert!(min > 1_400_000, "{got:?}");
    assert!(max - min <= max / 50, "shares differ by more than 2 %: {got:?}");
    assert_eq!(r.links[0].drops, 0);
}

#[test]
fn test_full_fq_qdisc_serves_waiting_connections_round_robin() {
    // fq's own limit (20 packets) is what fills: the qdisc-full path.
    let fq = FqConfig { limit: 20, ..FqConfig::default() };
    let a = NodeConfig { qdisc: Qdisc::Fq(fq), ..host("a") };
    let r = tcplab_sim::run(&nic_bound(4, a)).unwrap();
    let got = delivered(&r);
    let (min, max) = (*got.iter().min().unwrap(), *got.iter().max().unwrap());
    assert!(min > 1_400_000, "{got:?}");
    assert!(max - min <= max / 50, "shares differ by more than 2 %: {got:?}");
}

#[test]
fn test_many_waiting_connections_same_seed_same_result() {
    // 500 connections on one NIC, most of them waiting at any time.
    let mut cfg = nic_bound(500, host("a"));
    cfg.duration = Duration::from_millis(1500);
    let r1 = tcplab_sim::run(&cfg).unwrap();
    let r2 = tcplab_sim::run(&cfg).unwrap();
    assert_eq!(r1, r2);
    assert!(r1.flows.iter().filter(|f| f.bytes_delivered > 0).count() > 400);
}
