//! Kathleen Nichols' windowed min/max filter, as Linux implements it in
//! lib/win_minmax.c, and the TCP min-RTT tracker built on it.
//!
//! `//= linux:v6.13:lib/win_minmax.c#minmax_running_min`
//!
//! The filter keeps the best, second-best and third-best samples of a
//! window, with non-decreasing timestamps, spread out over the window. That
//! is constant space and constant time per sample, and almost always gives
//! the same answer as keeping every sample of the window. A new best sample
//! (or a window with nothing left in it) resets all three. As time passes
//! without a new best, the second and third choices are refreshed from the
//! second quarter and the second half of the window, so that when the best
//! sample expires a reasonable successor is ready.
//!
//! Contracts:
//! - times and values are `u32`, compared with wrapping subtraction exactly
//!   like the kernel, so the filter works across the 32-bit jiffies wrap as
//!   long as consecutive samples are less than 2^32 ticks apart;
//! - a zeroed [`Minmax`] (the `Default`) is what a zero-initialised kernel
//!   struct holds. TCP resets its min-RTT filter to `~0U` at socket init
//!   ([`MinRttFilter::new`]) so that the first sample always wins;
//! - nothing here panics on any input.

use crate::flag;

/// One sample: `struct minmax_sample` (include/linux/win_minmax.h).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct MinmaxSample {
    /// Time of the sample, in the caller's unit (TCP: jiffies).
    pub t: u32,
    /// Measured value (TCP: RTT in µs).
    pub v: u32,
}

/// `struct minmax`: the best, second- and third-best samples.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// `minmax_get`: the current windowed extreme.
    #[doc(alias = "minmax_get")]
    #[inline]
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`: forget everything; `(t, meas)` becomes all three
    /// choices. Returns `meas`.
    #[doc(alias = "minmax_reset")]
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        self.s = [val; 3];
        meas
    }

    /// `minmax_subwin_update`: as time advances without a new best sample,
    /// age out the first choice once it leaves the window and pick fresh
    /// second/third choices from the later quarters of the window.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The whole window passed without a new best: promote the 2nd
            // and 3rd choices. The new 1st (old 2nd) may itself be outside
            // the window, so this can happen twice (the 3rd choice was
            // checked to be inside the window by the caller).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new best: take a 2nd
            // choice from the second quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a new best: take a 3rd choice from
            // the second half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_min`: feed `meas` taken at `t` into a min filter
    /// over a window of `win` time units; returns the windowed minimum.
    #[doc(alias = "minmax_running_min")]
    pub fn running_min(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        // A new minimum, or nothing left in the window: start over.
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_max`: the max filter (BBR's bandwidth filter).
    #[doc(alias = "minmax_running_max")]
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// Default of `net.ipv4.tcp_min_rtt_wlen`, seconds [≥ v4.6].
#[doc(alias = "sysctl_tcp_min_rtt_wlen")]
pub const TCP_MIN_RTT_WLEN_DEFAULT: u32 = 300;

/// `tp->rtt_min`: the sender's windowed minimum RTT, fed by
/// `tcp_update_rtt_min` (net/ipv4/tcp_input.c) with the "ca RTT" of each
/// ACK and read by `tcp_min_rtt()` (RACK, TSO autosizing, BBR).
///
/// The clock is `tcp_jiffies32` and the window is `tcp_min_rtt_wlen · HZ`
/// jiffies, both as in the kernel, so expiry happens on jiffy boundaries.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MinRttFilter {
    pub rtt_min: Minmax,
}

impl MinRttFilter {
    /// `tcp_init_sock`: `minmax_reset(&tp->rtt_min, tcp_jiffies32, ~0U)`.
    pub fn new(now_jiffies: u32) -> MinRttFilter {
        let mut rtt_min = Minmax::default();
        rtt_min.reset(now_jiffies, u32::MAX);
        MinRttFilter { rtt_min }
    }

    /// `tcp_min_rtt()`: the windowed minimum RTT in µs; `u32::MAX` before
    /// the first sample.
    #[doc(alias = "tcp_min_rtt")]
    #[inline]
    pub fn get(&self) -> u32 {
        self.rtt_min.get()
    }

    /// `tcp_update_rtt_min` [v6.13]: add one ca-RTT sample `rtt_us` taken at
    /// `now_jiffies`. `flag` is the ACK's `FLAG_*` set: a sample on an ACK
    /// flagged [`flag::FLAG_ACK_MAYBE_DELAYED`] that exceeds the current minimum
    /// is skipped, because a peer that keeps delaying ACKs would otherwise
    /// make the filter settle on the delayed RTT once the true minimum
    /// expires. A zero sample is stored as one jiffy in µs, since a 0 in the
    /// filter would read as "no sample" elsewhere. The caller passes only
    /// valid samples (`tcp_ack_update_rtt` returns before this when the
    /// sequence RTT is negative).
    #[doc(alias = "tcp_update_rtt_min")]
    pub fn update(&mut self, now_jiffies: u32, rtt_us: u32, flag: u32, wlen_secs: u32, hz: u32) -> u32 {
        // u32 product, as `sysctl_tcp_min_rtt_wlen * HZ` is in the kernel.
        let wlen = wlen_secs.wrapping_mul(hz);
        if flag & flag::FLAG_ACK_MAYBE_DELAYED != 0 && rtt_us > self.get() {
            return self.get();
        }
        let meas = if rtt_us != 0 { rtt_us } else { crate::rtt::jiffies_to_usecs(1, hz) };
        self.rtt_min.running_min(wlen, now_jiffies, meas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- Min filter -------------------------------------------------------

    #[test]
    fn test_running_min_new_min_resets_all_choices() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        assert_eq!(m.running_min(100, 10, 50), 50);
        assert_eq!(m.s, [MinmaxSample { t: 10, v: 50 }; 3]);
    }

    #[test]
    fn test_running_min_window_expiry_promotes_later_choices() {
        let win = 100;
        let mut m = Minmax::default();
        m.reset(0, 10); // best: 10 at t=0
                        // Within the first quarter a larger value changes nothing.
        assert_eq!(m.running_min(win, 10, 30), 10);
        assert_eq!(m.s, [MinmaxSample { t: 0, v: 10 }; 3]);
        // After a quarter of the window it becomes the 2nd (and 3rd) choice.
        assert_eq!(m.running_min(win, 30, 30), 10);
        assert_eq!(m.s[1], MinmaxSample { t: 30, v: 30 });
        assert_eq!(m.s[2], MinmaxSample { t: 30, v: 30 });
        // After half the window, a sample becomes the 3rd choice.
        assert_eq!(m.running_min(win, 60, 40), 10);
        assert_eq!(m.s[2], MinmaxSample { t: 60, v: 40 });
        // Still inside the window of the best sample (dt = 100 is not > win).
        assert_eq!(m.running_min(win, 100, 50), 10);
        // dt = 101 > win: the best (t=0) expires, the 2nd choice (30 @ 30)
        // takes over.
        assert_eq!(m.running_min(win, 101, 50), 30);
        assert_eq!(m.s[0], MinmaxSample { t: 30, v: 30 });
        // And when that one expires as well, the 40 @ 60 takes over.
        assert_eq!(m.running_min(win, 131, 55), 40);
        // A window with nothing left in it resets to the new sample.
        assert_eq!(m.running_min(win, 1000, 99), 99);
        assert_eq!(m.s, [MinmaxSample { t: 1000, v: 99 }; 3]);
    }

    #[test]
    fn test_running_min_double_promotion_when_second_also_expired() {
        let win = 100;
        let mut m = Minmax::default();
        m.reset(0, 10);
        m.running_min(win, 30, 20); // 2nd choice (quarter passed): 20 @ 30
        assert_eq!(m.s[1], MinmaxSample { t: 30, v: 20 });
        m.running_min(win, 90, 25); // 3rd choice (half passed): 25 @ 90
        assert_eq!(m.s[2], MinmaxSample { t: 90, v: 25 });
        // At t=135 both the 1st (t=0) and 2nd (t=30) are older than win.
        assert_eq!(m.running_min(win, 135, 90), 25);
        assert_eq!(m.s[0], MinmaxSample { t: 90, v: 25 });
    }

    #[test]
    fn test_running_min_across_u32_time_wrap() {
        let win = 100;
        let mut m = Minmax::default();
        m.reset(u32::MAX - 10, 10);
        assert_eq!(m.running_min(win, 50, 20), 10); // 61 ticks later
        assert_eq!(m.running_min(win, 95, 20), 20); // 106 ticks: expired
    }

    #[test]
    fn test_running_max_tracks_maximum() {
        let mut m = Minmax::default();
        assert_eq!(m.running_max(10, 0, 5), 5);
        assert_eq!(m.running_max(10, 1, 3), 5);
        assert_eq!(m.running_max(10, 2, 7), 7);
        assert_eq!(m.running_max(10, 20, 1), 1);
    }

    // ---- TCP min RTT ------------------------------------------------------

    #[test]
    fn test_min_rtt_first_sample_wins_and_expires_after_wlen() {
        let hz = 1000;
        let mut f = MinRttFilter::new(0);
        assert_eq!(f.get(), u32::MAX);
        assert_eq!(f.update(0, 50_000, 0, TCP_MIN_RTT_WLEN_DEFAULT, hz), 50_000);
        assert_eq!(f.update(1_000, 80_000, 0, TCP_MIN_RTT_WLEN_DEFAULT, hz), 50_000);
        assert_eq!(f.update(300_000, 80_000, 0, TCP_MIN_RTT_WLEN_DEFAULT, hz), 50_000);
        // 300 s + 1 jiffy after the minimum, it expires.
        assert_eq!(f.update(300_001, 90_000, 0, TCP_MIN_RTT_WLEN_DEFAULT, hz), 80_000);
    }

    #[test]
    fn test_min_rtt_skips_larger_maybe_delayed_and_zero_is_one_jiffy() {
        let mut f = MinRttFilter::new(0);
        f.update(0, 10_000, 0, 300, 250);
        assert_eq!(f.update(1, 20_000, flag::FLAG_ACK_MAYBE_DELAYED, 300, 250), 10_000);
        assert_eq!(f.rtt_min.s[1].v, 10_000);
        assert_eq!(f.update(2, 0, flag::FLAG_ACK_MAYBE_DELAYED, 300, 250), 4_000);
    }
}
