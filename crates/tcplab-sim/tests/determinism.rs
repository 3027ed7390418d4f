//! Determinism, RNG stream independence and the delay models' ordering
//! guarantees, with injected traffic (no TCP).

mod common;
use common::*;
use proptest::prelude::*;
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{PacketEventKind, Sim};
use tcplab_wire::Ecn;

/// a -(10 Gbit/s, `delay`)- b, 200 back-to-back 1500-byte packets
/// (1.2 µs apart) from a; returns the log of deliveries and the result.
fn jitter_run(delay: DelayModel, seed: u64) -> (Vec<Obs>, tcplab_sim::RunResult) {
    let mut cfg = config(
        vec![host("a"), host("b")],
        vec![link("l", 0, 1, 10_000_000_000, delay, queue(Limit::Packets(1000)))],
        vec![route_only_flow("f", 0, 1)],
    );
    cfg.seed = seed;
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    for i in 0..200 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    sim.run_until(Instant::from_millis(50));
    let log = log.borrow().clone();
    (log, sim.result())
}

fn uniform() -> DelayModel {
    DelayModel::Uniform { min: Duration::from_micros(100), max: Duration::from_micros(1100) }
}

fn inversions(seqs: &[u32]) -> usize {
    seqs.windows(2).filter(|w| w[1] < w[0]).count()
}

#[test]
fn test_sim_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Sim>();
}

#[test]
fn test_same_seed_same_results_different_seed_differs() {
    let (log1, r1) = jitter_run(uniform(), 7);
    let (log2, r2) = jitter_run(uniform(), 7);
    assert_eq!(log1, log2);
    assert_eq!(r1, r2);
    let (log3, _) = jitter_run(uniform(), 8);
    assert_ne!(deliveries(&log1), deliveries(&log3));
    // Fixed delay draws no random numbers: the seed does not matter.
    let (f1, _) = jitter_run(fixed(Duration::from_micros(100)), 7);
    let (f2, _) = jitter_run(fixed(Duration::from_micros(100)), 8);
    assert_eq!(f1, f2);
}

#[test]
fn test_adding_link_and_flow_leaves_other_link_randomness_unchanged() {
    let base = || {
        config(
            vec![host("a"), host("b")],
            vec![link("l0", 0, 1, 10_000_000_000, uniform(), queue(Limit::Packets(1000)))],
            vec![route_only_flow("f0", 0, 1)],
        )
    };
    let mut extended = base();
    extended.nodes.push(host("c"));
    extended.links.push(link("l1", 1, 2, 10_000_000_000, uniform(), queue(Limit::Packets(1000))));
    extended.flows.push(route_only_flow("f1", 2, 1));
    let run = |cfg: &SimConfig| {
        let mut sim = Sim::new(cfg).unwrap();
        let log = record(&mut sim);
        for i in 0..100 {
            sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
            if cfg.flows.len() > 1 {
                sim.inject_raw(1, true, data_seg(1000 + i, 1460, Ecn::NotEct));
            }
        }
        sim.run_until(Instant::from_millis(50));
        let log = log.borrow();
        log.iter()
            .filter(|o| o.kind == PacketEventKind::Deliver && o.flow == 0)
            .map(|o| (o.t, o.seq))
            .collect::<Vec<_>>()
    };
    let a = run(&base());
    let b = run(&extended);
    assert_eq!(a.len(), 100);
    assert_eq!(a, b);
}

proptest! {
    // Fixed seed for CI; PROPTEST_RNG_SEED / PROPTEST_CASES search further.
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xde7e),
        ..ProptestConfig::default()
    })]

    #[test]
    fn prop_uniform_delay_reorders_within_bounds(seed in any::<u64>()) {
        let (log, _) = jitter_run(uniform(), seed);
        let departs: Vec<(u32, u64)> =
            log.iter().filter(|o| o.kind == PacketEventKind::Depart).map(|o| (o.seq, o.t)).collect();
        let d = deliveries(&log);
        prop_assert_eq!(d.len(), 200);
        for &(t, seq) in &d {
            let sent = departs.iter().find(|x| x.0 == seq).unwrap().1;
            prop_assert!(t >= sent + 100_000 && t <= sent + 1_100_000);
        }
        let seqs: Vec<u32> = d.iter().map(|x| x.1).collect();
        prop_assert!(inversions(&seqs) > 0, "jitter of 1 ms over 1.2 µs spacing must reorder");
    }

    #[test]
    fn prop_ordered_jitter_never_reorders(seed in any::<u64>(), jitter_us in 0u64..2000) {
        let delay = DelayModel::OrderedJitter {
            base: Duration::from_micros(100),
            jitter: Duration::from_micros(jitter_us),
        };
        let (log, _) = jitter_run(delay, seed);
        let d = deliveries(&log);
        prop_assert_eq!(d.len(), 200);
        let seqs: Vec<u32> = d.iter().map(|x| x.1).collect();
        prop_assert_eq!(inversions(&seqs), 0);
        prop_assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
        // Each packet still gets at least the base delay after serialization.
        for &(t, seq) in &d {
            prop_assert!(t >= (seq as u64 + 1) * 1_200 + 100_000);
        }
    }
}
