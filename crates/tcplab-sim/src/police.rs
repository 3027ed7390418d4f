//! A token-bucket policer in front of a link direction's queue: tc's
//! `police` action (net/sched/act_police.c, `tcf_police_act`) as the kernel
//! backend installs it, a `matchall` filter on the sending end's root qdisc
//! with `action police rate R burst B drop`, which runs when the packet is
//! classified, before it is queued.
//!
//! Linux keeps the tokens as time: the bucket holds at most
//! `burst = B·8·10⁹/R` ns, a packet costs its transmission time at the
//! rate (`psched_l2t_ns`), and tokens accrue with the time since the last
//! packet that passed (`tcfp_t_c`). A packet that finds too few tokens is
//! dropped and changes nothing (neither the tokens nor `tcfp_t_c`). The
//! bucket starts full. The model does the same in integer nanoseconds
//! (truncating, as `psched_l2t_ns` does), so its decisions are exact and
//! deterministic; Linux's `mult`/`shift` approximation of the division and
//! iproute2's 64 ns ticks for the burst differ by under a nanosecond per
//! packet and 64 ns per bucket.

use crate::config::Police;

/// A direction's policer with its bucket.
#[derive(Clone, Debug)]
pub(crate) struct Policer {
    rate_bps: u64,
    /// The bucket's depth in ns of transmission at the rate (`tcfp_burst`).
    burst_ns: u64,
    /// Tokens (ns) as of `t_c` (`tcfp_toks`).
    toks_ns: u64,
    /// When the last packet passed (`tcfp_t_c`).
    t_c: u64,
    /// Packets dropped (the action's `drops`).
    pub drops: u64,
}

impl Policer {
    pub fn new(p: &Police) -> Self {
        let rate_bps = p.rate_bps.max(1);
        let burst_ns = Self::l2t_ns(rate_bps, p.burst_bytes);
        Policer { rate_bps, burst_ns, toks_ns: burst_ns, t_c: 0, drops: 0 }
    }

    /// `len` bytes' transmission time at `rate_bps`, ns, truncated
    /// (`psched_l2t_ns`).
    fn l2t_ns(rate_bps: u64, len: u64) -> u64 {
        (len as u128 * 8_000_000_000 / rate_bps as u128).min(u64::MAX as u128) as u64
    }

    /// Whether a packet of `len` IP bytes arriving at `now_ns` conforms
    /// (and takes its tokens); `false`: drop it (counted in `drops`).
    #[inline]
    pub fn admit(&mut self, now_ns: u64, len: u32) -> bool {
        // `toks = min(now - t_c, burst) + toks; toks = min(toks, burst)`.
        let toks = now_ns.saturating_sub(self.t_c).min(self.burst_ns).saturating_add(self.toks_ns).min(self.burst_ns);
        let cost = Self::l2t_ns(self.rate_bps, len as u64);
        if toks >= cost {
            self.t_c = now_ns;
            self.toks_ns = toks - cost;
            true
        } else {
            self.drops += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 Mbit/s = 1 byte per µs: a 1000-byte packet costs 1 ms of tokens.
    fn policer(burst_bytes: u64) -> Policer {
        Policer::new(&Police { rate_bps: 8_000_000, burst_bytes })
    }

    #[test]
    fn test_a_burst_passes_and_the_excess_drops() {
        // A 3000-byte bucket passes three back-to-back 1000-byte packets
        // at t = 0, then drops the fourth and fifth.
        let mut p = policer(3000);
        let got: Vec<bool> = (0..5).map(|_| p.admit(0, 1000)).collect();
        assert_eq!(got, [true, true, true, false, false]);
        assert_eq!(p.drops, 2);
    }

    #[test]
    fn test_tokens_refill_at_the_rate_up_to_the_burst() {
        let mut p = policer(3000);
        for _ in 0..3 {
            assert!(p.admit(0, 1000));
        }
        // 999 µs refill 999 bytes: one short of a packet.
        assert!(!p.admit(999_000, 1000));
        // The drop took nothing and did not move t_c: at 1 ms there is
        // exactly one packet's worth.
        assert!(p.admit(1_000_000, 1000));
        assert!(!p.admit(1_000_000, 1000));
        // A long idle period refills only up to the burst: 10 s later,
        // three packets pass and the fourth drops.
        let t = 10_000_000_000;
        let got: Vec<bool> = (0..4).map(|_| p.admit(t, 1000)).collect();
        assert_eq!(got, [true, true, true, false]);
        // Tokens left over are kept: 500 bytes now, plus 500 µs, pass
        // a 1000-byte packet.
        let mut q = policer(3000);
        assert!(q.admit(0, 2500));
        assert!(q.admit(500_000, 1000));
        assert!(!q.admit(500_000, 1));
    }

    #[test]
    fn test_steady_arrivals_above_the_rate_pass_the_rate() {
        // 1000-byte packets every 500 µs (16 Mbit/s) into an 8 Mbit/s
        // policer with a one-packet bucket: every other one passes.
        let mut p = policer(1000);
        let passed = (0..1000u64).filter(|i| p.admit(i * 500_000, 1000)).count();
        assert_eq!(passed, 500);
        // A packet larger than the bucket never passes (act_police's
        // burst must hold a full-sized packet).
        let mut small = policer(999);
        assert!(!small.admit(1_000_000_000, 1000));
    }
}
