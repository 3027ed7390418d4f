//! When a `timer_list` runs (kernel/time/timer.c).
//!
//! TCP's retransmission, zero-window-probe, loss-probe, reordering and
//! delayed-ACK timers are `timer_list`s armed in jiffies (`sk_reset_timer`
//! → `mod_timer`); the SACK-compression and pacing timers are hrtimers and
//! run at their nanosecond. A timer wheel runs a `timer_list` on a tick, and
//! which tick depends on the wheel:
//!
//! - since 4.8 ("timer: Switch to a non-cascading wheel") a timer goes into
//!   a bucket of a level chosen by how far away it is, and
//!   `calc_wheel_index` rounds its expiry **up** past that level's
//!   granularity so that it never runs early: at least one jiffy late, and
//!   for timers 63 jiffies or more away 8 jiffies of granularity, 64 from
//!   504 jiffies, and so on (at HZ 250 an RTO of 1 s runs up to 32 ms
//!   late, one of 3.2 s up to 256 ms);
//! - before, the cascading wheel ran a timer on the tick its expiry names,
//!   after `apply_slack` (2.6.38–4.7) moved an expiry 256 jiffies or more
//!   away to a round value within 1/256 of the delay;
//! - `exact` is not a kernel: every timer at its nanosecond deadline, the
//!   model's timing before it followed the wheel, kept to measure what the
//!   wheel changes.

use crate::time::Instant;

/// Which timer wheel runs the connection's `timer_list`s.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum TimerWheel {
    /// 4.8 and since: `calc_wheel_index`'s rounding.
    #[default]
    Wheel,
    /// 2.6.38–4.7: the cascading wheel with `apply_slack`.
    Cascade,
    /// No wheel: each timer at its exact deadline (not a kernel).
    Exact,
}

crate::names::named_enum!(TimerWheel { Wheel => "wheel", Cascade => "cascade", Exact => "exact" });

/// `LVL_CLK_SHIFT`: each level's granularity is 8 times the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets per level.
const LVL_SIZE: u64 = 1 << 6;

/// `LVL_DEPTH`: 9 levels above HZ 100, 8 at HZ 100 and below.
const fn lvl_depth(hz: u32) -> u32 {
    if hz > 100 {
        9
    } else {
        8
    }
}

/// `LVL_SHIFT(n)`.
const fn lvl_shift(n: u32) -> u32 {
    n * LVL_CLK_SHIFT
}

/// `LVL_START(n)`: the first delay that level `n` holds.
const fn lvl_start(n: u32) -> u64 {
    (LVL_SIZE - 1) << lvl_shift(n - 1)
}

/// `calc_index`'s rounding: the first multiple of the level's granularity
/// strictly after `expires`, the tick on which the bucket runs.
const fn bucket_expiry(expires: u64, lvl: u32) -> u64 {
    ((expires >> lvl_shift(lvl)) + 1) << lvl_shift(lvl)
}

/// `calc_wheel_index`'s `bucket_expiry` for a timer due at `expires`
/// armed while the wheel's clock reads `clk`.
//= linux:v6.12:kernel/time/timer.c#calc_wheel_index
pub fn wheel_bucket_expiry(expires: u64, clk: u64, hz: u32) -> u64 {
    let Some(delta) = expires.checked_sub(clk) else {
        // "(long) delta < 0": the current bucket.
        return clk;
    };
    let depth = lvl_depth(hz);
    if let Some(lvl) = (0..depth - 1).find(|&l| delta < lvl_start(l + 1)) {
        return bucket_expiry(expires, lvl);
    }
    // "Force expire obscene large timeouts to expire at the capacity limit
    // of the wheel": WHEEL_TIMEOUT_CUTOFF and WHEEL_TIMEOUT_MAX.
    let cutoff = lvl_start(depth);
    let expires = if delta >= cutoff { clk + cutoff - (1 << lvl_shift(depth - 1)) } else { expires };
    bucket_expiry(expires, depth - 1)
}

/// `apply_slack` with the default slack (`timer->slack = -1`, which TCP's
/// timers keep): an expiry 256 jiffies or more after `jiffies` may move up
/// by 1/256 of the delay, to the value in that range with the most
/// trailing zero bits, so that timers batch.
//= linux:v4.7:kernel/time/timer.c#apply_slack
pub fn apply_slack(expires: u64, jiffies: u64) -> u64 {
    let delta = expires.wrapping_sub(jiffies) as i64;
    if delta < 256 {
        return expires;
    }
    let limit = expires + delta as u64 / 256;
    let mask = expires ^ limit;
    if mask == 0 {
        return expires;
    }
    let bit = 63 - mask.leading_zeros();
    limit & !((1u64 << bit) - 1)
}

impl TimerWheel {
    /// When a `timer_list` armed at `now` for the deadline `at` runs. `at`
    /// is the model's exact deadline (`now` plus the delay in jiffies); its
    /// jiffy is the kernel's `expires`. Never earlier than the next tick:
    /// a timer due now or in the past runs on the next softirq.
    pub fn fires_at(self, now: Instant, at: Instant, hz: u32) -> Instant {
        let (j, expires) = (now.jiffies64(hz), at.jiffies64(hz));
        let tick = match self {
            TimerWheel::Exact => return at,
            // base->clk is jiffies: forward_timer_base brings an idle base
            // up to date before the timer is queued.
            TimerWheel::Wheel => wheel_bucket_expiry(expires, j, hz),
            TimerWheel::Cascade => apply_slack(expires, j),
        };
        Instant::at_jiffy(tick.max(j + 1), hz)
    }

    /// `mod_timer` re-arming a timer for `at`. `unchanged` is when the
    /// timer runs if it is pending with the same expiry jiffy: the 4.8
    /// wheel then leaves it in its bucket (`timer->expires == expires`, or
    /// the same bucket index); otherwise, and on the other wheels, it runs
    /// as [`fires_at`](Self::fires_at) says.
    //= linux:v6.12:kernel/time/timer.c#__mod_timer
    pub fn rearm(self, now: Instant, at: Instant, hz: u32, unchanged: Option<Instant>) -> Instant {
        match unchanged {
            Some(runs) if self == TimerWheel::Wheel => runs,
            _ => self.fires_at(now, at, hz),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u32 = 250;
    const TICK_NS: u64 = 4_000_000;

    fn j0() -> u64 {
        Instant::ZERO.jiffies64(HZ)
    }

    /// At HZ 250 jiffies start at 2^32 - 75,000, 8 past a multiple of 64:
    /// the wheel's buckets are aligned on the counter, not on the run.
    #[test]
    fn test_initial_jiffies_sit_8_past_a_multiple_of_64() {
        assert_eq!(j0() % 64, 8);
        assert_eq!(j0(), (1 << 32) - 75_000);
    }

    /// Level 0 (under 63 jiffies): one jiffy late. Level 1 (63–503): the
    /// next multiple of 8 after the expiry. Level 2 (504–4031): of 64.
    #[test]
    fn test_bucket_expiry_rounds_up_past_each_levels_granularity() {
        let clk = 1_000_000; // a multiple of 64
        assert_eq!(wheel_bucket_expiry(clk + 1, clk, HZ), clk + 2);
        assert_eq!(wheel_bucket_expiry(clk + 62, clk, HZ), clk + 63);
        assert_eq!(wheel_bucket_expiry(clk + 63, clk, HZ), clk + 64, "level 1: 63 rounds to 64");
        assert_eq!(wheel_bucket_expiry(clk + 64, clk, HZ), clk + 72, "strictly after: 64 goes to 72");
        assert_eq!(wheel_bucket_expiry(clk + 503, clk, HZ), clk + 504);
        assert_eq!(wheel_bucket_expiry(clk + 504, clk, HZ), clk + 512, "level 2 from 504");
        assert_eq!(wheel_bucket_expiry(clk + 800, clk, HZ), clk + 832);
        assert_eq!(wheel_bucket_expiry(clk - 3, clk, HZ), clk, "overdue: the current bucket");
    }

    /// Timers beyond the wheel's range (`WHEEL_TIMEOUT_CUTOFF`, 63·2^24
    /// jiffies at 9 levels) run at its capacity limit.
    #[test]
    fn test_bucket_expiry_caps_obscene_timeouts() {
        let cutoff = 63u64 << 24;
        let max = cutoff - (1 << 24);
        assert_eq!(wheel_bucket_expiry(cutoff * 4, 0, HZ), bucket_expiry(max, 8));
        assert_eq!(wheel_bucket_expiry(u64::MAX, 0, 100), bucket_expiry((63u64 << 21) - (1 << 21), 7));
    }

    /// `apply_slack` leaves delays under 256 jiffies alone; 1,000 jiffies
    /// from 0 may reach 1,003, and 1,000 ^ 1,003 = 3 has its top bit at 1,
    /// so the expiry is 1,003 with bit 0 cleared: 1,002.
    #[test]
    fn test_apply_slack_rounds_long_delays_within_a_256th() {
        assert_eq!(apply_slack(255, 0), 255);
        assert_eq!(apply_slack(1_000, 0), 1_002);
        assert_eq!(apply_slack(1_024, 0), 1_028, "1024 ^ 1028 = 4: 1028 with bits 0-1 cleared");
        assert_eq!(apply_slack(4_000, 0), 4_008, "4000 ^ 4015 = 15: 4015 with bits 0-2 cleared");
    }

    /// An RTO of 200 ms (50 jiffies) armed 1.5 ms into a tick: the model's
    /// deadline is 200 ms later; the wheel runs it one jiffy after the
    /// tick of its expiry (202.5 ms later); the cascading wheel on that
    /// tick (198.5 ms later, early by the part of the tick already gone).
    #[test]
    fn test_a_200ms_rto_on_each_wheel() {
        let tick0 = Instant::at_jiffy(j0() + 100, HZ);
        let now = Instant::from_nanos(tick0.as_nanos() + 1_500_000);
        let at = Instant::from_nanos(now.as_nanos() + 50 * TICK_NS);
        assert_eq!(TimerWheel::Exact.fires_at(now, at, HZ), at);
        assert_eq!(TimerWheel::Wheel.fires_at(now, at, HZ).as_nanos() - now.as_nanos(), 202_500_000);
        assert_eq!(TimerWheel::Cascade.fires_at(now, at, HZ).as_nanos() - now.as_nanos(), 198_500_000);
    }

    /// An RTO backed off to 1.6 s (400 jiffies, level 1) runs on the next
    /// multiple of 8 jiffies after its expiry: up to 32 ms late.
    #[test]
    fn test_a_backed_off_rto_runs_on_level_ones_grid() {
        let now_j = j0() + 3; // 11 past a multiple of 64
        let now = Instant::at_jiffy(now_j, HZ);
        let at = Instant::at_jiffy(now_j + 400, HZ);
        let fired = TimerWheel::Wheel.fires_at(now, at, HZ);
        assert_eq!(fired.jiffies64(HZ), now_j + 405, "expiry 411 past a multiple of 64 runs at 416");
        assert_eq!(fired, Instant::at_jiffy(now_j + 405, HZ));
    }

    /// A timer due now or already overdue runs on the next tick, never at
    /// once.
    #[test]
    fn test_overdue_timers_run_on_the_next_tick() {
        let now = Instant::from_nanos(Instant::at_jiffy(j0() + 10, HZ).as_nanos() + 1);
        let next = Instant::at_jiffy(j0() + 11, HZ);
        for w in [TimerWheel::Wheel, TimerWheel::Cascade] {
            assert_eq!(w.fires_at(now, now, HZ), next, "{w:?}");
            assert_eq!(w.fires_at(now, Instant::ZERO, HZ), next, "{w:?}");
        }
    }

    /// Re-arming with the expiry jiffy unchanged keeps the pending timer's
    /// tick on the 4.8 wheel (even when re-armed from a lower level's
    /// range); the others recompute it.
    #[test]
    fn test_rearm_keeps_an_unchanged_timer_on_the_wheel_only() {
        let now = Instant::at_jiffy(j0() + 100, HZ);
        let at = Instant::at_jiffy(j0() + 150, HZ);
        let kept = Instant::at_jiffy(j0() + 160, HZ);
        assert_eq!(TimerWheel::Wheel.rearm(now, at, HZ, Some(kept)), kept);
        assert_eq!(TimerWheel::Wheel.rearm(now, at, HZ, None), Instant::at_jiffy(j0() + 151, HZ));
        assert_eq!(TimerWheel::Cascade.rearm(now, at, HZ, Some(kept)), at);
        assert_eq!(TimerWheel::Exact.rearm(now, at, HZ, Some(kept)), at);
    }

    /// Every wheel but `exact` runs on a tick, no earlier than the next
    /// one; the 4.8 wheel never before the deadline.
    #[test]
    fn test_fires_on_a_tick_and_the_wheel_never_early() {
        for hz in [100, 250, 300, 1000] {
            for now_ns in [0u64, 1, 3_999_999, 123_456_789] {
                for delay_ns in [0u64, 1, 4_000_000, 251_000_000, 2_100_000_000, 20_000_000_000] {
                    let now = Instant::from_nanos(now_ns);
                    let at = Instant::from_nanos(now_ns + delay_ns);
                    for w in [TimerWheel::Wheel, TimerWheel::Cascade] {
                        let f = w.fires_at(now, at, hz);
                        assert_eq!(Instant::at_jiffy(f.jiffies64(hz), hz), f, "{w:?} on a tick");
                        assert!(f > now, "{w:?} after now");
                    }
                    assert!(TimerWheel::Wheel.fires_at(now, at, hz) > at);
                }
            }
        }
    }
}
