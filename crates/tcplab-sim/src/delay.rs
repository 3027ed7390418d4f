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
//!
//! FIFO models ([`DelaySampler::is_fifo`]) let the link keep its packets in
//! a ring with only the head in the event list (htsim `Pipe`); `Uniform`
//! schedules one event per packet instead.

use crate::config::DelayModel;
use crate::rng::Pcg32;
use tcplab_core::time::Instant;

#[derive(Clone, Debug)]
pub(crate) enum DelaySampler {
    Fixed { delay: u64 },
    Uniform { min: u64, span: u64 },
    Ordered { base: u64, jitter: u64, last: u64 },
}

impl DelaySampler {
    /// The model's sampler. `Uniform` must have `min <= max` (validated).
    pub fn new(model: &DelayModel) -> Self {
        match *model {
            DelayModel::Fixed(d) => DelaySampler::Fixed { delay: d.as_nanos() },
            DelayModel::Uniform { min, max } => {
                DelaySampler::Uniform { min: min.as_nanos(), span: max.as_nanos().saturating_sub(min.as_nanos()) }
            }
            DelayModel::OrderedJitter { base, jitter } => {
                DelaySampler::Ordered { base: base.as_nanos(), jitter: jitter.as_nanos(), last: 0 }
            }
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
        let mut d = DelaySampler::new(&DelayModel::Fixed(Duration::from_micros(5)));
        assert_eq!(d.arrival(Instant::from_nanos(10), &mut rng), Instant::from_nanos(5010));
        assert_eq!(rng, before);
    }

    #[test]
    fn test_uniform_stays_in_bounds() {
        let mut rng = Pcg32::new(3, 4);
        let mut d =
            DelaySampler::new(&DelayModel::Uniform { min: Duration::from_nanos(100), max: Duration::from_nanos(200) });
        for _ in 0..1000 {
            let a = d.arrival(Instant::from_nanos(1000), &mut rng).as_nanos();
            assert!((1100..=1200).contains(&a));
        }
    }

    #[test]
    fn test_ordered_jitter_is_monotonic() {
        let mut rng = Pcg32::new(5, 6);
        let mut d = DelaySampler::new(&DelayModel::OrderedJitter {
            base: Duration::from_nanos(100),
            jitter: Duration::from_nanos(1000),
        });
        let mut last = 0;
        for i in 0..1000 {
            let a = d.arrival(Instant::from_nanos(i * 10), &mut rng).as_nanos();
            assert!(a >= last);
            assert!(a >= i * 10 + 100);
            last = a;
        }
    }
}
