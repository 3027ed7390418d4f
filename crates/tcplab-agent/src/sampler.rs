//! The periodic sampler: every `interval` on an absolute grid (`t0 +
//! k·interval`, so that sampling work never shifts later samples), one
//! `TCP_INFO` row per flow with an open client socket and one queue
//! sample (length, backlog, drops) per link probe.

use crate::flows::{lock, Scenario};
use crate::links::LinkProber;
use std::sync::Mutex;

/// Samples at `k·interval_ns` for k = 1, 2, ... while before `end_ns`
/// (the end-of-scenario snapshot takes the last look). A failing qdisc
/// dump is reported once and stops the queue sampling only.
pub fn run(sc: &Scenario, prober: &Mutex<LinkProber>, interval_ns: u64, end_ns: u64) {
    let mut links_ok = true;
    for k in 1u64.. {
        let t = k.saturating_mul(interval_ns);
        if t >= end_ns || interval_ns == 0 {
            return;
        }
        sc.epoch.sleep_until(t);
        for f in &sc.flows {
            f.sample(&sc.epoch);
        }
        if links_ok {
            if let Err(e) = lock(prober).sample(t) {
                sc.errors.push(format!("queue sampling at {t} ns: {e}"));
                links_ok = false;
            }
        }
    }
}
