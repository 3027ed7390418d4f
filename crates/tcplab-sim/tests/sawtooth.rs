//! Reno's sawtooth in the simulator: each loss halves cwnd, and the time
//! between losses matches the AIMD period W/2 · RTT within 10 %.

mod common;

use common::*;
use std::sync::Arc;
use tcplab_core::cc::CcConfig;
use tcplab_core::time::Duration;
use tcplab_core::CaState;
use tcplab_sim::config::*;

#[test]
fn test_reno_sawtooth_halves_and_period_matches_theory() {
    let mut f = bulk_flow("reno", 0, 2, None);
    Arc::make_mut(&mut f.tcp).congestion_control = CcConfig::from_name("reno").unwrap();
    let mut cfg = config(
        vec![host("a"), switch("s"), host("b")],
        vec![
            link("access", 0, 1, 1_000_000_000, fixed(Duration::from_micros(10)), queue(Limit::Packets(10_000))),
            // 20 Mbit/s, 40 ms RTT: BDP ≈ 69 packets; 1-BDP buffer.
            link("bottleneck", 1, 2, 20_000_000, fixed(Duration::from_millis(20)), queue(Limit::Packets(69))),
        ],
        vec![f],
    );
    cfg.duration = Duration::from_secs(60);
    cfg.trace_interval = Some(Duration::from_millis(1));
    let r = tcplab_sim::run(&cfg).unwrap();
    let rows = &r.flows[0].trace;

    // Recovery episodes: cwnd just before entering and ssthresh set there.
    let mut episodes = vec![]; // (time, cwnd before, ssthresh)
    for w in rows.windows(2) {
        if w[0].ca_state != CaState::Recovery && w[1].ca_state == CaState::Recovery {
            episodes.push((w[1].time, w[0].cwnd, w[1].ssthresh));
        }
    }
    // Skip slow start's overshoot; look at the steady sawtooth.
    let steady: Vec<_> = episodes.iter().filter(|e| e.0 > Duration::from_secs(15)).collect();
    assert!(steady.len() >= 3, "too few loss episodes: {episodes:?}");
    for (_, before, ssthresh) in &steady {
        // tcp_reno_ssthresh: max(cwnd/2, 2), from the cwnd at the loss
        // (which may have grown by a packet within the detection RTT).
        let half = before / 2;
        assert!(ssthresh.abs_diff(half) <= 1, "cwnd {before} → ssthresh {ssthresh}");
    }
    for pair in steady.windows(2) {
        let (t0, w0, _) = *pair[0];
        let (t1, _, _) = *pair[1];
        let period = (t1 - t0).as_secs_f64();
        // Average RTT over the period from the trace.
        let in_period: Vec<_> = rows.iter().filter(|r| r.time >= t0 && r.time < t1 && r.srtt_us > 0).collect();
        let rtt = in_period.iter().map(|r| r.srtt_us as f64).sum::<f64>() / in_period.len() as f64 / 1e6;
        // Additive increase of one packet per RTT from W/2 back to W.
        let theory = (w0 as f64 / 2.0) * rtt;
        let err = (period - theory).abs() / theory;
        eprintln!("W {w0}: period {period:.3}s theory {theory:.3}s ({:+.1}%)", (period - theory) / theory * 100.0);
        assert!(
            err < 0.10,
            "period {period:.3}s, theory {theory:.3}s (W {w0}, RTT {rtt:.4}s): {:.1}% off",
            err * 100.0
        );
    }
}
