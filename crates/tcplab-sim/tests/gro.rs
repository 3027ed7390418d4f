//! GRO at a receiving host (`gro.rs`): what one slot of netem hands over
//! is merged per flow up to the sender's skb boundaries, and TCP takes
//! and answers each merged skb once.

mod common;
use common::*;
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{PacketEventKind, Sim};

/// a -(1 Gbit/s, 10 ms, a 1 ms slot towards b)- b, with `gro` at b; one
/// flow sends ten full segments (its initial window) and closes.
fn initial_window(gro: bool) -> Vec<Obs> {
    let mut l = link("l", 0, 1, 1_000_000_000, fixed(Duration::from_millis(10)), queue(Limit::Packets(100)));
    l.ab.slot = Some(Duration::from_millis(1));
    let b = NodeConfig { gro, ..host("b") };
    let cfg = config(vec![host("a"), b], vec![l], vec![bulk_flow("f", 0, 1, Some(10 * 1448))]);
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    sim.run_until(Instant::from_millis(300));
    let log = log.borrow().clone();
    log
}

/// `(time ns, payload)` of what b's TCP took, and the times b sent.
fn at_b(log: &[Obs]) -> (Vec<(u64, u32)>, Vec<u64>) {
    let took = log.iter().filter(|o| o.kind == PacketEventKind::Deliver && o.node == 1).map(|o| (o.t, o.len)).collect();
    let sent = log.iter().filter(|o| o.kind == PacketEventKind::Send && o.node == 1).map(|o| o.t).collect();
    (took, sent)
}

#[test]
fn test_gro_merges_a_slots_segments_up_to_each_skbs_psh() {
    let (took, sent) = at_b(&initial_window(true));
    let data: Vec<(u64, u32)> = took.iter().copied().filter(|&(_, len)| len > 0).collect();
    // The ten segments leave a back to back (12 µs apart), come due within
    // 120 µs of each other and leave netem in one slot. a sends them as
    // five skbs of two segments (`tcp_tso_autosize`'s minimum), and
    // `__tcp_transmit_skb` sets PSH on every skb of more than one segment
    // "to expedite GRO flush at receiver": five merged skbs.
    assert_eq!(data, [(data[0].0, 2 * 1448); 5], "{took:?}");
    // In quick-ACK mode b answers each skb at once: five ACKs where ten
    // segments came.
    let t = data[0].0;
    assert_eq!(sent.iter().filter(|&&s| s == t).count(), 5, "{sent:?}");
}

#[test]
fn test_without_gro_the_same_slot_gives_tcp_each_segment() {
    let (took, sent) = at_b(&initial_window(false));
    let data: Vec<(u64, u32)> = took.iter().copied().filter(|&(_, len)| len > 0).collect();
    assert_eq!(data.len(), 10, "{took:?}");
    assert!(data.iter().all(|&(t, len)| t == data[0].0 && len == 1448));
    // In quick-ACK mode every segment is ACKed at once, in the softirq
    // that took the batch.
    let t = data[0].0;
    assert_eq!(sent.iter().filter(|&&s| s == t).count(), 10, "{sent:?}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6e0),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Whatever the slot, the loss and the draws, a GRO receiver takes
    /// every byte once: the transfer completes with exactly its size, and
    /// the merged skbs never hold more than the segments that arrived.
    #[test]
    fn prop_gro_behind_a_lossy_slot_delivers_every_byte_once(
        seed in proptest::prelude::any::<u64>(),
        slot_us in 1u64..3000,
        loss_permille in 0u32..50,
    ) {
        let mut l = link("l", 0, 1, 100_000_000, fixed(Duration::from_millis(5)), queue(Limit::Packets(50)));
        l.ab.slot = Some(Duration::from_micros(slot_us));
        l.ab.loss = LossModel::Random { p: (u32::MAX as u64 * loss_permille as u64 / 1000) as u32 };
        let b = NodeConfig { gro: true, ..host("b") };
        let mut cfg = config(vec![host("a"), b], vec![l], vec![bulk_flow("f", 0, 1, Some(300_000))]);
        cfg.seed = seed;
        cfg.duration = Duration::from_secs(30);
        let mut sim = Sim::new(&cfg).unwrap();
        let log = record(&mut sim);
        sim.run_until(Instant::ZERO + cfg.duration);
        let r = sim.result();
        proptest::prop_assert_eq!(r.flows[0].bytes_delivered, 300_000);
        proptest::prop_assert!(r.flows[0].completed_at.is_some());
        let log = log.borrow();
        let arrived: u64 = log.iter().filter(|o| o.kind == PacketEventKind::Arrive && o.node == 1).map(|o| o.len as u64).sum();
        let took: u64 = log.iter().filter(|o| o.kind == PacketEventKind::Deliver && o.node == 1).map(|o| o.len as u64).sum();
        proptest::prop_assert_eq!(arrived, took);
    }
}
