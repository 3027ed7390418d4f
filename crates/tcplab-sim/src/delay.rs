//! Propagation delay models of a link direction.
//!
//! A model turns the time a packet finishes serialization (`depart`) into
//! the time it reaches the far end. Randomness comes from the direction's
//! own PCG32 stream; [`DelayModel::Fixed`] draws nothing, so a fixed-delay
//! link consumes no random numbers at all.
//!
//! - `Fixed(d)`: `arrive = depart + d`. FIFO.
//! - `Uniform { min, max }`: `arrive = depart + U[min, max]` (integer ns,
//!   both ends inclusive), drawn independently per packet; a later packet
//!   may overtake an earlier one, like netem's `delay X Y` whose tfifo sorts
//!   by time to send.
//! - `OrderedJitter { base, jitter }`: `arrive = max(depart + base +
//!   U[0, jitter], previous arrive)`. The jitter is the same draw as above,
//!   but a packet never arrives before its predecessor: it waits behind it
//!   (head-of-line), so order is kept and ties arrive in sending order.
//! - `RandomWalk { base, amplitude, step, interval }`: `arrive =
//!   max(depart + base + x, previous arrive)`, where the walk `x` starts at
//!   `U[0, amplitude]` (first packet) and then takes steps
//!   `x ← clamp(x + U[0, 2·step] − step, 0, amplitude)`: one per packet
//!   (`interval = None`), or, with an interval `I`, one per whole `I`
//!   elapsed since the last update (`⌊t/I⌋` counts ticks; at most
//!   [`MAX_WALK_STEPS`] are taken at once, after a long idle time).
//! - `OnOff { base, delay, mean_on, mean_off, slot }`: a two-state Markov
//!   chain in discrete time slots, with per-slot switching probabilities
//!   `slot/mean_off` (off → on) and `slot/mean_on` (on → off), so sojourns
//!   are geometric with means `mean_off` and `mean_on`. A packet that
//!   leaves while the chain is on gets `delay` of queueing: `arrive =
//!   max(depart + base + (on ? delay : 0), previous arrive)`. The chain is
//!   one realization per run seed and direction
//!   ([`OnOffSchedule`](crate::on_off::OnOffSchedule)), the one the kernel
//!   backend replays as a netem timeline, so both backends see the same
//!   noise. Packets queued behind a burst (when the chain turns off)
//!   arrive together, right behind the last delayed one, as a drained
//!   queue would release them.
//!
//! FIFO models ([`DelaySampler::is_fifo`]) let the link keep its packets in
//! a ring with only the head in the event list (htsim `Pipe`); `Uniform`
//! schedules one event per packet instead.

use crate::config::DelayModel;
use crate::on_off::OnOffSchedule;
use crate::rng::Pcg32;
use tcplab_core::time::Instant;

/// Most random-walk steps taken for one packet (after an idle period of
/// more than this many intervals, the walk takes only this many).
pub const MAX_WALK_STEPS: u64 = 65_536;

#[derive(Clone, Debug)]
pub(crate) enum DelaySampler {
    Fixed { delay: u64 },
    Uniform { min: u64, span: u64 },
    Ordered { base: u64, jitter: u64, last: u64 },
    Walk(Box<Walk>),
    OnOff(Box<OnOffDelay>),
}

/// State of a [`DelayModel::RandomWalk`].
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    base: u64,
    amplitude: u64,
    step: u64,
    /// 0 = one step per packet.
    interval: u64,
    x: u64,
    tick: u64,
    started: bool,
    last: u64,
}

/// State of a [`DelayModel::OnOff`].
#[derive(Clone, Debug)]
pub(crate) struct OnOffDelay {
    base: u64,
    delay: u64,
    chain: OnOffSchedule,
    last: u64,
}

impl DelaySampler {
    /// The model's sampler. `Uniform` must have `min <= max` (validated).
    /// `on_off_seed` seeds an on-off chain ([`crate::on_off::on_off_seed`]).
    pub fn new(model: &DelayModel, on_off_seed: u64) -> Self {
        match *model {
            DelayModel::Fixed(d) => DelaySampler::Fixed { delay: d.as_nanos() },
            DelayModel::Uniform { min, max } => {
                DelaySampler::Uniform { min: min.as_nanos(), span: max.as_nanos().saturating_sub(min.as_nanos()) }
            }
            DelayModel::OrderedJitter { base, jitter } => {
                DelaySampler::Ordered { base: base.as_nanos(), jitter: jitter.as_nanos(), last: 0 }
            }
            DelayModel::RandomWalk { base, amplitude, step, interval } => DelaySampler::Walk(Box::new(Walk {
                base: base.as_nanos(),
                amplitude: amplitude.as_nanos(),
                step: step.as_nanos(),
                interval: interval.map_or(0, |i| i.as_nanos()),
                x: 0,
                tick: 0,
                started: false,
                last: 0,
            })),
            DelayModel::OnOff { base, delay, mean_on, mean_off, slot } => DelaySampler::OnOff(Box::new(OnOffDelay {
                base: base.as_nanos(),
                delay: delay.as_nanos(),
                chain: OnOffSchedule::new(slot.as_nanos(), mean_on.as_nanos(), mean_off.as_nanos(), on_off_seed),
                last: 0,
            })),
        }
    }

    /// Packets leave in the order they entered.
    #[inline]
    pub fn is_fifo(&self) -> bool {
        !matches!(self, DelaySampler::Uniform { .. })
    }

    /// Arrival time at the far end of a packet that finished serialization
    /// at `depart`.
    #[inline]
    pub fn arrival(&mut self, depart: Instant, rng: &mut Pcg32) -> Instant {
        let t = depart.as_nanos();
        let a = match self {
            DelaySampler::Fixed { delay } => t.saturating_add(*delay),
            DelaySampler::Uniform { min, span } => t.saturating_add(*min).saturating_add(rng.up_to(*span)),
            DelaySampler::Ordered { base, jitter, last } => {
                let a = t.saturating_add(*base).saturating_add(rng.up_to(*jitter)).max(*last);
                *last = a;
                a
            }
            DelaySampler::Walk(w) => {
                if !w.started {
                    w.started = true;
                    w.x = rng.up_to(w.amplitude);
                    w.tick = t.checked_div(w.interval).unwrap_or(0);
                } else {
                    // One step per packet, or per interval boundary crossed.
                    let steps = match t.checked_div(w.interval) {
                        None => 1,
                        Some(now_tick) => {
                            let k = now_tick.saturating_sub(w.tick);
                            w.tick = now_tick.max(w.tick);
                            k.min(MAX_WALK_STEPS)
                        }
                    };
                    for _ in 0..steps {
                        let d = rng.up_to(2 * w.step);
                        // x + d − step, clamped to [0, amplitude].
                        w.x = (w.x + d).saturating_sub(w.step).min(w.amplitude);
                    }
                }
                let a = t.saturating_add(w.base).saturating_add(w.x).max(w.last);
                w.last = a;
                a
            }
            DelaySampler::OnOff(c) => {
                let extra = if c.chain.state_at(t) { c.delay } else { 0 };
                let a = t.saturating_add(c.base).saturating_add(extra).max(c.last);
                c.last = a;
                a
            }
        };
        Instant::from_nanos(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::time::Duration;

    #[test]
    fn test_fixed_draws_no_random_numbers() {
        let mut rng = Pcg32::new(1, 2);
        let before = rng.clone();
        let mut d = DelaySampler::new(&DelayModel::Fixed(Duration::from_micros(5)), 0);
        assert_eq!(d.arrival(Instant::from_nanos(10), &mut rng), Instant::from_nanos(5010));
        assert_eq!(rng, before);
    }

    #[test]
    fn test_uniform_stays_in_bounds() {
        let mut rng = Pcg32::new(3, 4);
        let mut d = DelaySampler::new(
            &DelayModel::Uniform { min: Duration::from_nanos(100), max: Duration::from_nanos(200) },
            0,
        );
        for _ in 0..1000 {
            let a = d.arrival(Instant::from_nanos(1000), &mut rng).as_nanos();
            assert!((1100..=1200).contains(&a));
        }
    }

    #[test]
    fn test_random_walk_stays_in_band_moves_slowly_and_keeps_order() {
        let mut rng = Pcg32::new(7, 8);
        let (base, amp, step) = (10_000_000u64, 2_000_000u64, 20_000u64);
        let mut d = DelaySampler::new(
            &DelayModel::RandomWalk {
                base: Duration::from_nanos(base),
                amplitude: Duration::from_nanos(amp),
                step: Duration::from_nanos(step),
                interval: None,
            },
            0,
        );
        let (mut last, mut prev_delay) = (0u64, None::<u64>);
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for i in 0..200_000u64 {
            // One packet per 100 µs: far apart enough that order never binds.
            let t = i * 100_000;
            let a = d.arrival(Instant::from_nanos(t), &mut rng).as_nanos();
            assert!(a >= last);
            let delay = a - t;
            assert!((base..=base + amp).contains(&delay), "delay {delay}");
            if let Some(p) = prev_delay {
                assert!(delay.abs_diff(p) <= step, "step {p} -> {delay}");
            }
            prev_delay = Some(delay);
            lo = lo.min(delay);
            hi = hi.max(delay);
            last = a;
        }
        // It wanders over most of the band.
        assert!(lo < base + amp / 10 && hi > base + amp * 9 / 10, "{lo}..{hi}");
    }

    #[test]
    fn test_random_walk_per_interval_steps_with_elapsed_time() {
        let mut rng = Pcg32::new(9, 9);
        let model = DelayModel::RandomWalk {
            base: Duration::ZERO,
            amplitude: Duration::from_millis(100),
            step: Duration::from_micros(10),
            interval: Some(Duration::from_millis(1)),
        };
        let mut d = DelaySampler::new(&model, 0);
        let a0 = d.arrival(Instant::from_nanos(0), &mut rng).as_nanos();
        // Same interval: no step.
        let a1 = d.arrival(Instant::from_nanos(500_000), &mut rng).as_nanos();
        assert_eq!(a1 - 500_000, a0);
        // Five intervals later: at most five steps away.
        let a2 = d.arrival(Instant::from_nanos(5_000_000), &mut rng).as_nanos();
        assert!((a2 - 5_000_000).abs_diff(a0) <= 50_000);
        // A long idle time is bounded work.
        let _ = d.arrival(Instant::from_nanos(3_600_000_000_000), &mut rng);
    }

    #[test]
    fn test_on_off_delays_and_order() {
        let mut rng = Pcg32::new(13, 14);
        let ms = Duration::from_millis;
        let mut d = DelaySampler::new(
            &DelayModel::OnOff { base: ms(5), delay: ms(3), mean_on: ms(20), mean_off: ms(80), slot: ms(1) },
            7,
        );
        let (mut last, mut saw_on, mut saw_off) = (0u64, false, false);
        for i in 0..100_000u64 {
            let t = i * 250_000;
            let a = d.arrival(Instant::from_nanos(t), &mut rng).as_nanos();
            assert!(a >= last && a - t >= 5_000_000 && a - t <= 8_000_000);
            saw_on |= a - t == 8_000_000;
            saw_off |= a - t == 5_000_000;
            last = a;
        }
        assert!(saw_on && saw_off);
    }

    #[test]
    fn test_on_off_delay_follows_the_seeds_schedule() {
        // The extra delay is on exactly while the direction's schedule is:
        // the noise the kernel backend replays for the same seed.
        let mut rng = Pcg32::new(1, 1);
        let ms = Duration::from_millis;
        let model = DelayModel::OnOff { base: ms(5), delay: ms(3), mean_on: ms(5), mean_off: ms(20), slot: ms(1) };
        let mut d = DelaySampler::new(&model, 42);
        let mut sched = OnOffSchedule::new(1_000_000, 5_000_000, 20_000_000, 42);
        let (mut saw_on, mut saw_off) = (false, false);
        for i in 0..20_000u64 {
            let t = i * 100_000;
            let a = d.arrival(Instant::from_nanos(t), &mut rng).as_nanos();
            if sched.state_at(t) {
                saw_on = true;
                assert_eq!(a, t + 8_000_000, "at {t}");
            } else {
                saw_off = true;
                // FIFO: a packet right after a burst waits behind it.
                assert!((t + 5_000_000..=t + 8_000_000).contains(&a), "at {t}");
            }
        }
        assert!(saw_on && saw_off);
    }

    #[test]
    fn test_ordered_jitter_is_monotonic() {
        let mut rng = Pcg32::new(5, 6);
        let mut d = DelaySampler::new(
            &DelayModel::OrderedJitter { base: Duration::from_nanos(100), jitter: Duration::from_nanos(1000) },
            0,
        );
        let mut last = 0;
        for i in 0..1000 {
            let a = d.arrival(Instant::from_nanos(i * 10), &mut rng).as_nanos();
            assert!(a >= last);
            assert!(a >= i * 10 + 100);
            last = a;
        }
    }
}
