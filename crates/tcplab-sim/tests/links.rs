//! Link mechanics with injected traffic (no TCP): serialization and
//! propagation timing, drop-tail limits, ECN marking, routing.

mod common;
use common::*;
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{dir_index, PacketEventKind, Sim};
use tcplab_wire::Ecn;

// ---- timing -------------------------------------------------------------

#[test]
fn test_serialization_and_propagation_exact_on_one_link() {
    // 1 Mbit/s, 10 ms: a 1500-byte packet takes 12 ms to serialize.
    let cfg = config(
        vec![host("a"), host("b")],
        vec![link("l", 0, 1, 1_000_000, fixed(Duration::from_millis(10)), queue(Limit::Packets(10)))],
        vec![route_only_flow("f", 0, 1)],
    );
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    assert!(sim.inject_raw(0, true, data_seg(1, 1460, Ecn::NotEct)));
    assert!(sim.inject_raw(0, true, data_seg(2, 1460, Ecn::NotEct)));
    sim.run_until(Instant::from_millis(100));
    let log = log.borrow();
    let departs: Vec<u64> = log.iter().filter(|o| o.kind == PacketEventKind::Depart).map(|o| o.t).collect();
    assert_eq!(departs, [ms(12), ms(24)]);
    // Back to back: 12 + 10 and 24 + 10.
    assert_eq!(deliveries(&log), [(ms(22), 1), (ms(34), 2)]);
    let r = sim.result();
    assert_eq!(r.sim_time, Duration::from_millis(100));
    let ab = &r.links[0];
    assert_eq!(ab.id, "l:a->b");
    assert_eq!((ab.tx_packets, ab.tx_bytes, ab.drops), (2, 3000, 0));
    assert_eq!(ab.utilization, 0.24);
    assert_eq!(r.links[1].tx_packets, 0);
    assert_eq!(r.data_segments, 0, "raw packets are not TCP deliveries");
}

#[test]
fn test_store_and_forward_across_a_switch() {
    // a -(1 Mbit/s, 10 ms)- s -(0.5 Mbit/s, 5 ms)- b.
    let cfg = config(
        vec![host("a"), switch("s"), host("b")],
        vec![
            link("l0", 0, 1, 1_000_000, fixed(Duration::from_millis(10)), queue(Limit::Packets(10))),
            link("l1", 1, 2, 500_000, fixed(Duration::from_millis(5)), queue(Limit::Packets(10))),
        ],
        vec![route_only_flow("f", 0, 2)],
    );
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    sim.inject_raw(0, true, data_seg(1, 1460, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(2, 1460, Ecn::NotEct));
    sim.run_until(Instant::from_millis(200));
    // p1: 12 ms + 10 ms at s (22), 24 ms on l1 (46), + 5 ms = 51 ms.
    // p2: at s at 34 ms, waits for l1 until 46, leaves 70, arrives 75 ms.
    assert_eq!(deliveries(&log.borrow()), [(ms(51), 1), (ms(75), 2)]);
    let arrivals: Vec<(u64, usize)> =
        log.borrow().iter().filter(|o| o.kind == PacketEventKind::Arrive).map(|o| (o.t, o.node)).collect();
    assert_eq!(arrivals, [(ms(22), 1), (ms(34), 1), (ms(51), 2), (ms(75), 2)]);
}

#[test]
fn test_reverse_direction_uses_ba_config() {
    let mut l = link("l", 0, 1, 1_000_000, fixed(Duration::from_millis(10)), queue(Limit::Packets(10)));
    l.ba.delay = fixed(Duration::from_millis(1));
    let cfg = config(vec![host("a"), host("b")], vec![l], vec![route_only_flow("f", 0, 1)]);
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    sim.inject_raw(0, false, data_seg(9, 85, Ecn::NotEct)); // 125 bytes: 1 ms
    sim.run_until(Instant::from_millis(10));
    assert_eq!(deliveries(&log.borrow()), [(ms(2), 9)]);
    assert_eq!(sim.result().links[1].id, "l:b->a");
}

// ---- drop-tail ----------------------------------------------------------

/// a -(1 Gbit/s)- s -(1 Mbit/s, queue q)- b: a burst from `a` reaches the
/// slow link faster than it drains.
fn bottleneck(q: QueueConfig) -> SimConfig {
    let mut slow = link("slow", 1, 2, 1_000_000, fixed(Duration::ZERO), q);
    slow.ba.queue = queue(Limit::Packets(1000));
    config(
        vec![host("a"), switch("s"), host("b")],
        vec![link("fast", 0, 1, 1_000_000_000, fixed(Duration::ZERO), queue(Limit::Packets(1000))), slow],
        vec![route_only_flow("f", 0, 2)],
    )
}

#[test]
fn test_drop_tail_packet_limit() {
    let cfg = bottleneck(queue(Limit::Packets(3)));
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    for i in 0..10 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    sim.run_until(Instant::from_millis(1000));
    // One in service, three waiting, six dropped.
    let seqs: Vec<u32> = deliveries(&log.borrow()).iter().map(|d| d.1).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    let r = sim.result();
    assert_eq!(r.links[2].drops, 6);
    assert_eq!(r.links[2].peak_queue_packets, 3);
    let drops: Vec<(usize, Option<usize>)> =
        log.borrow().iter().filter(|o| o.kind == PacketEventKind::Drop).map(|o| (o.node, o.dir)).collect();
    assert_eq!(drops, vec![(1, Some(2)); 6]);
}

#[test]
fn test_drop_tail_byte_limit() {
    let cfg = bottleneck(queue(Limit::Bytes(4000)));
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    // 1500 in service; then 1500 + 1500 wait (3000); 1500 more would
    // exceed 4000, but a 540-byte packet (4000 - 3000 = 1000 left) fits.
    sim.inject_raw(0, true, data_seg(0, 1460, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(1, 1460, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(2, 1460, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(3, 1460, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(4, 500, Ecn::NotEct));
    sim.inject_raw(0, true, data_seg(5, 500, Ecn::NotEct));
    sim.run_until(Instant::from_millis(1000));
    let seqs: Vec<u32> = deliveries(&log.borrow()).iter().map(|d| d.1).collect();
    assert_eq!(seqs, [0, 1, 2, 4]);
    assert_eq!(sim.result().links[2].drops, 2);
}

#[test]
fn test_queue_occupancy_reports_waiting_packets() {
    let cfg = bottleneck(queue(Limit::Packets(100)));
    let mut sim = Sim::new(&cfg).unwrap();
    for i in 0..5 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    // All five reach s within 60 µs; one is on the wire (12 ms each).
    sim.run_until(Instant::from_micros(100));
    assert_eq!(sim.queue_occupancy(2), Some((4, 6000)));
    sim.run_until(Instant::from_millis(13));
    assert_eq!(sim.queue_occupancy(2), Some((3, 4500)));
    assert_eq!(sim.queue_occupancy(99), None);
    assert_eq!(sim.packets_in_flight(), 4);
}

#[test]
fn test_queue_trace_samples_the_grid_as_a_step_series() {
    // Ten packets at once into the 1 Mbit/s link (12 ms each) with a
    // queue of 5: one on the wire, five waiting, four dropped; then one
    // leaves every 12 ms. Sampled every 5 ms over 100 ms.
    let mut cfg = bottleneck(queue(Limit::Packets(5)));
    cfg.trace_interval = Some(Duration::from_millis(5));
    cfg.duration = Duration::from_millis(100);
    let mut sim = Sim::new(&cfg).unwrap();
    for i in 0..10 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    sim.run_to_end();
    let r = sim.result();
    let rows: Vec<(u64, u32, u64, u64)> =
        r.links[2].queue_trace.iter().map(|q| (q.time.as_millis(), q.packets, q.bytes, q.drops)).collect();
    // The first packet reaches s after 12 µs on the fast link, so the
    // slow link's departures (the next packet enters service) are at
    // 12.012, 24.012, ... 60.012 ms: waiting 5 until then, 4, 3, 2, 1,
    // and 0 from 60.012 ms on, first seen at 65 ms. A row only where the
    // sample changed.
    assert_eq!(
        rows,
        [(5, 5, 7500, 4), (15, 4, 6000, 4), (25, 3, 4500, 4), (40, 2, 3000, 4), (50, 1, 1500, 4), (65, 0, 0, 4)]
    );
    // The untouched reverse direction: one row of zeros at the first sample.
    assert_eq!(r.links[3].queue_trace.len(), 1);
    assert_eq!((r.links[3].queue_trace[0].packets, r.links[3].queue_trace[0].drops), (0, 0));
    // Without tracing, no samples.
    cfg.trace_interval = None;
    let mut sim = Sim::new(&cfg).unwrap();
    sim.run_to_end();
    assert!(sim.result().links.iter().all(|l| l.queue_trace.is_empty()));
}

// ---- ECN ----------------------------------------------------------------

#[test]
fn test_ecn_marks_ect_only_above_threshold() {
    let q = QueueConfig { limit: Limit::Packets(100), ecn_threshold: Some(Limit::Packets(2)) };
    let cfg = bottleneck(q);
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    for i in 0..8 {
        let ecn = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
        sim.inject_raw(0, true, data_seg(i, 1460, ecn));
    }
    sim.run_until(Instant::from_millis(1000));
    // Packet i (i >= 1) finds i - 1 waiting; marked when i - 1 > 2 and ECT.
    let got: Vec<(u32, Ecn)> =
        log.borrow().iter().filter(|o| o.kind == PacketEventKind::Deliver).map(|o| (o.seq, o.ecn)).collect();
    let want: Vec<(u32, Ecn)> = (0..8)
        .map(|i| {
            let ecn = match (i % 2 == 0, i >= 4) {
                (true, true) => Ecn::Ce,
                (true, false) => Ecn::Ect0,
                (false, _) => Ecn::NotEct,
            };
            (i, ecn)
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(sim.result().links[2].ce_marks, 2);
}

// ---- routing ------------------------------------------------------------

#[test]
fn test_routing_across_switches_both_directions() {
    // a - s1 - s2 - b, plus a longer detour a - s3 - s4 - s2.
    let q = queue(Limit::Packets(10));
    let d = fixed(Duration::from_micros(1));
    let cfg = config(
        vec![host("a"), switch("s1"), switch("s2"), host("b"), switch("s3"), switch("s4")],
        vec![
            link("a-s3", 0, 4, 1_000_000_000, d.clone(), q.clone()),
            link("s3-s4", 4, 5, 1_000_000_000, d.clone(), q.clone()),
            link("s4-s2", 5, 2, 1_000_000_000, d.clone(), q.clone()),
            link("a-s1", 0, 1, 1_000_000_000, d.clone(), q.clone()),
            link("s1-s2", 1, 2, 1_000_000_000, d.clone(), q.clone()),
            link("s2-b", 2, 3, 1_000_000_000, d.clone(), q.clone()),
        ],
        vec![route_only_flow("f", 0, 3)],
    );
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    sim.inject_raw(0, true, data_seg(1, 100, Ecn::NotEct));
    sim.inject_raw(0, false, data_seg(2, 100, Ecn::NotEct));
    sim.run_until(Instant::from_millis(1));
    let path = |seq: u32| -> Vec<usize> {
        log.borrow().iter().filter(|o| o.kind == PacketEventKind::Arrive && o.seq == seq).map(|o| o.node).collect()
    };
    assert_eq!(path(1), [1, 2, 3]);
    assert_eq!(path(2), [2, 1, 0]);
    let dirs: Vec<usize> =
        log.borrow().iter().filter(|o| o.kind == PacketEventKind::Depart && o.seq == 1).filter_map(|o| o.dir).collect();
    assert_eq!(dirs, [dir_index(&cfg.links, 3, 0), dir_index(&cfg.links, 4, 1), dir_index(&cfg.links, 5, 2)]);
}

#[test]
fn test_tap_sees_every_stage_in_order() {
    let cfg = config(
        vec![host("a"), switch("s"), host("b")],
        vec![
            link("l0", 0, 1, 1_000_000_000, fixed(Duration::ZERO), queue(Limit::Packets(10))),
            link("l1", 1, 2, 1_000_000_000, fixed(Duration::ZERO), queue(Limit::Packets(10))),
        ],
        vec![route_only_flow("f", 0, 2)],
    );
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    sim.inject_raw(0, true, data_seg(1, 100, Ecn::NotEct));
    sim.run_until(Instant::from_millis(1));
    use PacketEventKind::*;
    let kinds: Vec<(PacketEventKind, usize)> = log.borrow().iter().map(|o| (o.kind, o.node)).collect();
    assert_eq!(
        kinds,
        [(Send, 0), (Enqueue, 0), (Depart, 0), (Arrive, 1), (Enqueue, 1), (Depart, 1), (Arrive, 2), (Deliver, 2)]
    );
    assert_eq!(sim.packets_in_flight(), 0);
}

// ---- order-keeping delay models -----------------------------------------------

#[test]
fn test_slowly_varying_and_on_off_delays_keep_order() {
    let ms = Duration::from_millis;
    for model in [
        DelayModel::RandomWalk { base: ms(10), amplitude: ms(5), step: Duration::from_micros(200), interval: None },
        DelayModel::RandomWalk { base: ms(10), amplitude: ms(5), step: ms(1), interval: Some(ms(1)) },
        DelayModel::OnOff { base: ms(10), delay: ms(5), mean_on: ms(5), mean_off: ms(5), slot: ms(1) },
        DelayModel::OrderedJitter { base: ms(10), jitter: ms(5) },
    ] {
        // 100 Mbit/s: a 1500-byte packet every 120 µs, far less than the
        // delay's variation, so keeping order matters.
        let cfg = config(
            vec![host("a"), host("b")],
            vec![link("l", 0, 1, 100_000_000, model.clone(), queue(Limit::Packets(1000)))],
            vec![route_only_flow("f", 0, 1)],
        );
        let mut sim = Sim::new(&cfg).unwrap();
        let log = record(&mut sim);
        for i in 0..500 {
            sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
        }
        sim.run_until(Instant::from_millis(200));
        let d = deliveries(&log.borrow());
        assert_eq!(d.len(), 500, "{model:?}");
        let seqs: Vec<u32> = d.iter().map(|x| x.1).collect();
        assert_eq!(seqs, (0..500).collect::<Vec<_>>(), "{model:?} reordered");
        // Each packet's delay is within [base, base + 5 ms] of its departure,
        // or it waits behind its predecessor.
        let departs: Vec<u64> =
            log.borrow().iter().filter(|o| o.kind == PacketEventKind::Depart).map(|o| o.t).collect();
        let mut prev = 0;
        let mut varied = std::collections::BTreeSet::new();
        for (k, (t, _)) in d.iter().enumerate() {
            let delay = t - departs[k];
            assert!(delay >= ms(10).as_nanos() && (delay <= ms(15).as_nanos() || *t == prev), "{model:?}: {delay}");
            varied.insert(delay / 100_000);
            prev = *t;
        }
        assert!(varied.len() > 5, "{model:?}: the delay should vary");
    }
}

// ---- netem's slot ---------------------------------------------------------

/// One link a → b of `rate_bps`, 10 ms, with netem's `slot`.
fn slotted(rate_bps: u64, slot: Duration) -> SimConfig {
    let mut l = link("l", 0, 1, rate_bps, fixed(Duration::from_millis(10)), queue(Limit::Packets(100)));
    l.ab.slot = Some(slot);
    config(vec![host("a"), host("b")], vec![l], vec![route_only_flow("f", 0, 1)])
}

#[test]
fn test_slot_releases_what_came_due_together_when_the_slot_opens() {
    // 12 Mbit/s: a 1500-byte packet every 1 ms, due at 11, 12, ... 16 ms.
    // Each enqueue (at 0..5 ms) redraws the slot to 3 ms later (8 at the
    // last); the watchdog at 11 finds it open at 8 < 11 and redraws it to
    // 14, when the four packets due by then leave together; the next head
    // (due 15) redraws it to 17.
    let cfg = slotted(12_000_000, Duration::from_millis(3));
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    for i in 1..=6 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    sim.run_until(Instant::from_millis(100));
    assert_eq!(
        deliveries(&log.borrow()),
        [(ms(14), 1), (ms(14), 2), (ms(14), 3), (ms(14), 4), (ms(17), 5), (ms(17), 6)]
    );
}

#[test]
fn test_slot_holds_a_packet_one_slot_past_its_due_time_when_the_last_draw_came_earlier() {
    // 1 Mbit/s: 12 ms per packet, due at 22, 34 and 46 ms. A 5 ms slot drawn
    // at each due time (nothing else calls netem's dequeue within 5 ms of
    // it) holds each packet 5 ms: 27, 39, 51.
    let cfg = slotted(1_000_000, Duration::from_millis(5));
    let mut sim = Sim::new(&cfg).unwrap();
    let log = record(&mut sim);
    for i in 1..=3 {
        sim.inject_raw(0, true, data_seg(i, 1460, Ecn::NotEct));
    }
    sim.run_until(Instant::from_millis(100));
    assert_eq!(deliveries(&log.borrow()), [(ms(27), 1), (ms(39), 2), (ms(51), 3)]);
}
