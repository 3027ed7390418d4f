//! Delays that change during a run: a link direction's on-off cross
//! traffic ([`DelaySchedule`]), replayed on its netem qdisc.
//!
//! The schedule is drawn ahead: a sojourn in a state of a slotted Markov
//! chain that leaves the state with probability `p` per slot lasts a
//! geometric number of slots, `k = ⌈ln U / ln(1 − p)⌉` for `U` uniform in
//! (0, 1]. At each change the thread sleeps to the absolute time and runs
//! `tc qdisc change`; a program run costs the guest CPU time only, which
//! under `time-travel=inf-cpu` is no virtual time. netem keeps the queued
//! packets across a change, and with its `rate` it never reorders, so a
//! packet behind a delayed one waits for it, as in the model.

use crate::flows::Scenario;
use crate::job::DelaySchedule;
use crate::setup;

/// splitmix64: small, seedable, enough for drawing sojourns.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Slots spent in a state left with probability `p` per slot (≥ 1).
fn sojourn_slots(rng: &mut Rng, p: f64) -> u64 {
    if p >= 1.0 {
        return 1;
    }
    if p <= 0.0 {
        return u64::MAX;
    }
    let k = (rng.unit().ln() / (1.0 - p).ln()).ceil();
    if k.is_finite() && k >= 1.0 {
        (k as u64).max(1)
    } else {
        1
    }
}

/// The state at `t0` and the times (ns since `t0`) of every change
/// before `end_ns`.
pub fn schedule(s: &DelaySchedule, end_ns: u64) -> (bool, Vec<u64>) {
    let mut rng = Rng(s.seed);
    let slot = s.slot_ns.max(1);
    let p_off = (slot as f64 / s.mean_on_ns.max(1) as f64).min(1.0);
    let p_on = (slot as f64 / s.mean_off_ns.max(1) as f64).min(1.0);
    let on_share = s.mean_on_ns as f64 / (s.mean_on_ns as f64 + s.mean_off_ns as f64).max(1.0);
    let start_on = rng.unit() <= on_share;
    let (mut on, mut t, mut changes) = (start_on, 0u64, Vec::new());
    loop {
        let slots = sojourn_slots(&mut rng, if on { p_off } else { p_on });
        t = t.saturating_add(slots.saturating_mul(slot));
        if t >= end_ns {
            return (start_on, changes);
        }
        changes.push(t);
        on = !on;
    }
}

fn command(s: &DelaySchedule, on: bool) -> Vec<String> {
    let mut argv = s.change_argv.clone();
    argv.extend(if on { s.on_args.iter() } else { s.off_args.iter() }.cloned());
    argv
}

/// Before `t0`: sets the chain's initial state; returns it and the
/// changes.
pub fn prepare(s: &DelaySchedule, end_ns: u64) -> Result<(bool, Vec<u64>), String> {
    let (start_on, changes) = schedule(s, end_ns);
    if start_on {
        setup::exec(&command(s, true)).map_err(|e| format!("{}: {e}", s.what))?;
    }
    Ok((start_on, changes))
}

/// From `t0`: each change at its time. The first state after `t0` is the
/// opposite of the initial one.
pub fn run(sc: &Scenario, s: &DelaySchedule, start_on: bool, changes: &[u64]) {
    let mut on = start_on;
    for &t in changes {
        sc.epoch.sleep_until(t);
        on = !on;
        if let Err(e) = setup::exec(&command(s, on)) {
            sc.errors.push(format!("{} at {t} ns: {e}", s.what));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(mean_on_ms: u64, mean_off_ms: u64, seed: u64) -> DelaySchedule {
        DelaySchedule {
            what: "t".into(),
            change_argv: vec![],
            off_args: vec![],
            on_args: vec![],
            slot_ns: 1_000_000,
            mean_on_ns: mean_on_ms * 1_000_000,
            mean_off_ns: mean_off_ms * 1_000_000,
            seed,
        }
    }

    #[test]
    fn the_chain_is_on_its_stationary_share_of_the_time() {
        // 200 ms on, 1 s off: on 1/6 of the time, over 2000 s.
        let end = 2_000_000_000_000;
        let (mut on_ns, mut flips) = (0u64, 0usize);
        for seed in 0..4 {
            let (start_on, changes) = schedule(&sched(200, 1000, seed), end);
            let mut on = start_on;
            let mut last = 0;
            for &t in changes.iter().chain(std::iter::once(&end)) {
                if on {
                    on_ns += t - last;
                }
                last = t;
                on = !on;
            }
            flips += changes.len();
        }
        let share = on_ns as f64 / (4.0 * end as f64);
        assert!((share - 1.0 / 6.0).abs() < 0.01, "on share {share}");
        // A cycle lasts 1.2 s on average: about 2 changes per 1.2 s.
        let expected = 4.0 * 2.0 * 2000.0 / 1.2;
        assert!((flips as f64 / expected - 1.0).abs() < 0.05, "{flips} changes, about {expected} expected");
    }

    #[test]
    fn changes_are_whole_slots_increasing_and_seeded() {
        let (a, ca) = schedule(&sched(100, 400, 7), 10_000_000_000);
        let (b, cb) = schedule(&sched(100, 400, 7), 10_000_000_000);
        assert_eq!((a, &ca), (b, &cb), "same seed, same schedule");
        assert!(ca.windows(2).all(|w| w[0] < w[1]));
        assert!(ca.iter().all(|t| t % 1_000_000 == 0));
        assert_ne!(ca, schedule(&sched(100, 400, 8), 10_000_000_000).1);
    }
}
