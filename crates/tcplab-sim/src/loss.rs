//! Random loss on a link direction: netem's loss models
//! (net/sched/sch_netem.c, `loss_event`), drawn with the kernel's
//! comparisons so that the same probabilities mean the same thing on both
//! backends, and blackouts (outages of fixed windows). A lost packet has
//! been serialized (it used the link) and never arrives.

use crate::config::{Blackout, LossModel};
use crate::rng::Pcg32;
use tcplab_core::time::Instant;

/// A direction's loss model with its state.
#[derive(Clone, Debug)]
pub(crate) struct LossSampler {
    model: LossModel,
    /// Gilbert-Elliott: in the bad state.
    bad: bool,
    rng: Pcg32,
    /// Outage windows not yet over, earliest first.
    blackouts: Vec<Blackout>,
}

impl LossSampler {
    pub fn new(model: LossModel, blackouts: &[Blackout], rng: Pcg32) -> Self {
        let mut b = blackouts.to_vec();
        // Popped from the end: latest first.
        b.reverse();
        LossSampler { model, bad: false, rng, blackouts: b }
    }

    /// Whether the packet finishing serialization at `now` is lost. A
    /// packet in a blackout draws nothing from the loss model, as netem
    /// with 100 % loss switched in would not.
    #[inline]
    pub fn lose(&mut self, now: Instant) -> bool {
        while let Some(b) = self.blackouts.last() {
            if now.as_nanos() < b.start.as_nanos() {
                break;
            }
            if now.as_nanos() < b.end.as_nanos() {
                return true;
            }
            self.blackouts.pop();
        }
        match self.model {
            LossModel::None => false,
            // `q->loss && q->loss >= get_crandom(...)` (no correlation).
            LossModel::Random { p } => p != 0 && p >= self.rng.next_u32(),
            // `loss_gilb_ell`: the state moves first, then the loss draw
            // uses the probability of the state the packet found.
            LossModel::GilbertElliott { p, r, bad_loss, good_loss } => {
                if self.bad {
                    if self.rng.next_u32() < r {
                        self.bad = false;
                    }
                    // `prandom_u32() > h` with h = 1 − bad_loss.
                    self.rng.next_u32() > u32::MAX - bad_loss
                } else {
                    if self.rng.next_u32() < p {
                        self.bad = true;
                    }
                    self.rng.next_u32() < good_loss
                }
            }
        }
    }
}

/// `percent` as netem's 32-bit probability (iproute2 `get_percent`:
/// `rint(percent / 100 × UINT32_MAX)`).
pub fn probability(percent: f64) -> u32 {
    (percent / 100.0 * u32::MAX as f64).round().clamp(0.0, u32::MAX as f64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Component, Pcg32};

    fn rng() -> Pcg32 {
        Pcg32::for_component(1, Component::LinkLoss { link: 0, reverse: false })
    }

    #[test]
    fn test_random_loss_rate_and_edges() {
        let mut s = LossSampler::new(LossModel::Random { p: probability(1.0) }, &[], rng());
        let lost = (0..1_000_000).filter(|_| s.lose(Instant::ZERO)).count();
        assert!((9_500..10_500).contains(&lost), "{lost} of 1e6 at 1 %");
        let mut never = LossSampler::new(LossModel::Random { p: 0 }, &[], rng());
        assert!(!(0..10_000).any(|_| never.lose(Instant::ZERO)));
        let mut always = LossSampler::new(LossModel::Random { p: u32::MAX }, &[], rng());
        assert!((0..10_000).all(|_| always.lose(Instant::ZERO)));
    }

    #[test]
    fn test_gilbert_elliott_bursts_and_stationary_rate() {
        // p = 1 %, r = 10 %, all lost in bad, none in good: bad a fraction
        // p / (p + r) = 1/11 of the packets (the loss draw sees the state
        // the packet found), bursts of 1/r = 10 packets on average.
        let m = LossModel::GilbertElliott {
            p: probability(1.0),
            r: probability(10.0),
            bad_loss: probability(100.0),
            good_loss: 0,
        };
        let mut s = LossSampler::new(m, &[], rng());
        let seq: Vec<bool> = (0..2_000_000).map(|_| s.lose(Instant::ZERO)).collect();
        let lost = seq.iter().filter(|&&l| l).count() as f64 / seq.len() as f64;
        assert!((lost - 1.0 / 11.0).abs() < 0.005, "loss rate {lost}");
        let bursts = seq.windows(2).filter(|w| !w[0] && w[1]).count() as f64;
        let mean_burst = seq.iter().filter(|&&l| l).count() as f64 / bursts;
        assert!((mean_burst - 10.0).abs() < 0.5, "mean burst {mean_burst}");
    }

    #[test]
    fn test_blackout_loses_every_packet_inside_its_window_only() {
        use tcplab_core::time::Duration;
        let w = [
            Blackout { start: Duration::from_millis(10), end: Duration::from_millis(20) },
            Blackout { start: Duration::from_millis(30), end: Duration::from_millis(31) },
        ];
        let mut s = LossSampler::new(LossModel::None, &w, rng());
        let at = |ms: u64| Instant::from_micros(ms * 1000);
        let lost: Vec<bool> = [0, 9, 10, 15, 19, 20, 25, 30, 31, 40].iter().map(|&t| s.lose(at(t))).collect();
        assert_eq!(lost, [false, false, true, true, true, false, false, true, false, false]);
    }

    #[test]
    fn test_percent_conversion_is_netems() {
        assert_eq!(probability(0.0), 0);
        assert_eq!(probability(100.0), u32::MAX);
        assert_eq!(probability(1.0), 42_949_673);
    }
}
