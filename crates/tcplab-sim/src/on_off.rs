//! The on-off delay's two-state chain as one realization per run seed
//! and link direction, the same for both backends: the simulator asks it
//! the state when a packet leaves, the kernel backend turns its changes
//! into a netem timeline (crates/tcplab-kernel/src/timeline.rs). So a
//! seed means the same noise on the model and on Linux, and their runs
//! compare seed by seed.
//!
//! The chain lives in slots of `slot`: while off it turns on with
//! probability `slot/mean_off` per slot, while on it turns off with
//! `slot/mean_on`, so sojourns are geometric with those means; it starts
//! from its stationary distribution. Sojourns are drawn whole, a number of
//! slots `k = ⌈ln U / ln(1 − p)⌉`, from SplitMix64 seeded by
//! [`on_off_seed`]. (`ln` is the platform's: a seed gives the same chain
//! on one platform; another libm could round a sojourn differently.)

use crate::rng::splitmix64;

/// The generator of one direction's chain: the run's seed mixed with the
/// direction's index (`2·link + reverse`, [`crate::dir_index`]).
pub fn on_off_seed(run_seed: u64, dir: usize) -> u64 {
    run_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ dir as u64
}

/// SplitMix64 as a generator (the simulator's seed mixer): small,
/// seedable, enough for drawing sojourns.
#[derive(Clone, Debug)]
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        let r = splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        r
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Slots spent in a state left with probability `p` per slot (≥ 1).
fn sojourn_slots(rng: &mut SplitMix, p: f64) -> u64 {
    if p >= 1.0 {
        return 1;
    }
    if p <= 0.0 {
        return u64::MAX;
    }
    let k = (rng.unit().ln() / (1.0 - p).ln()).ceil();
    if k.is_finite() && k >= 1.0 {
        k as u64
    } else {
        1
    }
}

/// One direction's chain, walked forward in time.
#[derive(Clone, Debug)]
pub struct OnOffSchedule {
    rng: SplitMix,
    slot: u64,
    /// P(on → off) per slot.
    p_off: f64,
    /// P(off → on) per slot.
    p_on: f64,
    on: bool,
    /// When the current state ends (ns).
    next_change: u64,
}

impl OnOffSchedule {
    /// The chain of `seed` with sojourn means `mean_on_ns` and `mean_off_ns`
    /// in slots of `slot_ns`, at time 0.
    pub fn new(slot_ns: u64, mean_on_ns: u64, mean_off_ns: u64, seed: u64) -> Self {
        let mut rng = SplitMix(seed);
        let slot = slot_ns.max(1);
        let (on_ns, off_ns) = (mean_on_ns.max(1), mean_off_ns.max(1));
        let p_off = (slot as f64 / on_ns as f64).min(1.0);
        let p_on = (slot as f64 / off_ns as f64).min(1.0);
        let on = rng.unit() <= on_ns as f64 / (on_ns as f64 + off_ns as f64);
        let mut s = OnOffSchedule { rng, slot, p_off, p_on, on, next_change: 0 };
        s.next_change = s.sojourn_ns();
        s
    }

    fn sojourn_ns(&mut self) -> u64 {
        let p = if self.on { self.p_off } else { self.p_on };
        sojourn_slots(&mut self.rng, p).saturating_mul(self.slot)
    }

    /// Whether the chain is on now (at the time the walk has reached).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// When the state changes next (ns; `u64::MAX`: never).
    pub fn next_change(&self) -> u64 {
        self.next_change
    }

    /// Moves to the next change.
    pub fn advance(&mut self) {
        self.on = !self.on;
        let d = self.sojourn_ns();
        self.next_change = self.next_change.saturating_add(d);
    }

    /// The state at time `t` (ns), `t` not before the last asked.
    pub fn state_at(&mut self, t: u64) -> bool {
        while self.next_change <= t && self.next_change != u64::MAX {
            self.advance();
        }
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_the_chain_is_on_its_stationary_share_of_the_time_with_the_mean_sojourns() {
        // mean_on 20 slots, mean_off 80: on a fifth of the time, sojourns
        // of 20 and 80 slots on average.
        let ms = 1_000_000;
        let mut c = OnOffSchedule::new(ms, 20 * ms, 80 * ms, 7);
        let (mut on_ns, mut t, mut sojourns) = (0u64, 0u64, [(0u64, 0u64); 2]);
        let end = 200_000 * ms;
        while t < end {
            let next = c.next_change().min(end);
            let s = &mut sojourns[c.is_on() as usize];
            s.0 += 1;
            s.1 += next - t;
            if c.is_on() {
                on_ns += next - t;
            }
            t = next;
            c.advance();
        }
        let share = on_ns as f64 / end as f64;
        assert!((share - 0.2).abs() < 0.01, "on {share}");
        let mean = |s: (u64, u64)| s.1 as f64 / s.0 as f64 / ms as f64;
        assert!((mean(sojourns[1]) - 20.0).abs() < 1.0, "on sojourn {}", mean(sojourns[1]));
        assert!((mean(sojourns[0]) - 80.0).abs() < 4.0, "off sojourn {}", mean(sojourns[0]));
    }

    #[test]
    fn test_changes_fall_on_slots_and_the_seed_fixes_them() {
        let walk = |seed| {
            let mut c = OnOffSchedule::new(250_000, 5_000_000, 20_000_000, seed);
            (0..50).map(|_| (c.next_change(), c.advance())).map(|(t, ())| t).collect::<Vec<u64>>()
        };
        let a = walk(3);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a.iter().all(|t| t % 250_000 == 0), "{a:?}");
        assert_eq!(a, walk(3));
        assert_ne!(a, walk(4));
        // state_at agrees with the walk of changes.
        let mut c = OnOffSchedule::new(250_000, 5_000_000, 20_000_000, 3);
        let start = c.is_on();
        assert_eq!(c.state_at(a[0] - 1), start);
        assert_eq!(c.state_at(a[0]), !start);
        assert_eq!(c.state_at(a[2]), !start);
    }
}
