//! Virtual time. The core never reads a clock: every entry point takes `now`.
//!
//! Integer nanoseconds (like htsim's `simtime_picosec`, smoltcp's
//! `Instant`), so one scenario and seed give the same result on any machine.
//! Linux's coarser clocks are derived from it: `tcp_mstamp` (µs),
//! `tcp_jiffies32` (at a configurable `HZ`) and the millisecond TCP
//! timestamp clock.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// `a · b / d` rounded down (`ceil`: up), saturating at `u64::MAX`. The
/// clock conversions run on every segment and timer: u64 arithmetic while
/// the product fits (hours of virtual time), and the u128 division (a
/// `__udivti3` call) only past that; the same quotient either way.
#[inline]
pub(crate) fn mul_div(a: u64, b: u64, d: u64, ceil: bool) -> u64 {
    let d = d.max(1);
    match a.checked_mul(b) {
        Some(p) if ceil => p.div_ceil(d),
        Some(p) => p / d,
        None => {
            let p = u128::from(a) * u128::from(b);
            let q = if ceil { p.div_ceil(u128::from(d)) } else { p / u128::from(d) };
            u64::try_from(q).unwrap_or(u64::MAX)
        }
    }
}

/// A point in virtual time, nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

/// A span of virtual time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    pub const MAX: Instant = Instant(u64::MAX);

    #[inline]
    pub const fn from_nanos(ns: u64) -> Instant {
        Instant(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Instant {
        Instant(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Instant {
        Instant(ms * 1_000_000)
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Linux `tcp_mstamp` / `tcp_clock_us()`.
    #[inline]
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    #[inline]
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self - earlier`, or zero if `earlier` is later.
    #[inline]
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// Linux `tcp_jiffies32` at `hz`, starting from `INITIAL_JIFFIES`
    /// (-300·HZ, include/linux/jiffies.h) so that the 32-bit wrap is
    /// exercised five minutes into a run, as on a freshly booted kernel.
    #[inline]
    pub fn jiffies32(self, hz: u32) -> u32 {
        self.jiffies64(hz) as u32
    }

    /// `jiffies` as a 64-bit kernel counts it: `INITIAL_JIFFIES` is the
    /// 32-bit value widened (`(unsigned long)(unsigned int)(-300*HZ)`), so
    /// the 64-bit counter never wraps. The timer wheel rounds these
    /// (its buckets are aligned on them, not on the start of the run).
    #[inline]
    pub fn jiffies64(self, hz: u32) -> u64 {
        // Called on every segment in and out (`set_now`): the product fits
        // in u64 for the first 5 hours at HZ=1000, and then a u64 division
        // (a multiply by the reciprocal) replaces the u128 one (a
        // `__udivti3` call); same quotient either way. Past u64 the ticks
        // wrap (only their low 32 bits matter to `jiffies32`).
        let ticks = match self.0.checked_mul(u64::from(hz)) {
            Some(p) => p / 1_000_000_000,
            None => (self.0 as u128 * hz as u128 / 1_000_000_000) as u64,
        };
        initial_jiffies(hz).wrapping_add(ticks)
    }

    /// The first instant at which [`jiffies64`](Self::jiffies64) reads `j`:
    /// the tick on which a timer due at `j` runs (`MAX` past the clock's
    /// range, the start of the run for a `j` before it).
    #[inline]
    pub fn at_jiffy(j: u64, hz: u32) -> Instant {
        let ticks = j.saturating_sub(initial_jiffies(hz));
        Instant(mul_div(ticks, 1_000_000_000, u64::from(hz), true))
    }
}

/// `INITIAL_JIFFIES` on a 64-bit kernel (include/linux/jiffies.h).
#[inline]
const fn initial_jiffies(hz: u32) -> u64 {
    (-300i64 * hz as i64) as u32 as u64
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    #[inline]
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * 1_000_000_000)
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    #[inline]
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    #[inline]
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    #[inline]
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: a difference never goes negative.
    #[inline]
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_since(earlier)
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000_000, (self.0 / 1_000) % 1_000_000)
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}us", self.0 / 1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mul_div`'s u64 fast path gives the u128 quotient, saturated, on both
    /// sides of the point where `a · b` stops fitting.
    #[test]
    fn test_mul_div_matches_u128_and_saturates() {
        for b in [1u64, 250, 1000, 1_000_000_000, u64::from(u32::MAX)] {
            for d in [1u64, 250, 1000, 1_000_000_000] {
                let edge = u64::MAX / b;
                for a in [0, 1, 7, 999_999_999, edge - 1, edge, edge.saturating_add(1), u64::MAX] {
                    let p = u128::from(a) * u128::from(b);
                    let floor = u64::try_from(p / u128::from(d)).unwrap_or(u64::MAX);
                    let ceil = u64::try_from(p.div_ceil(u128::from(d))).unwrap_or(u64::MAX);
                    assert_eq!(super::mul_div(a, b, d, false), floor, "{a}*{b}/{d}");
                    assert_eq!(super::mul_div(a, b, d, true), ceil, "{a}*{b}/{d} up");
                }
            }
        }
        assert_eq!(super::mul_div(5, 3, 0, false), 15, "a zero divisor counts as 1");
    }

    /// `jiffies32`'s u64 fast path gives the u128 result on both sides of
    /// the point where `ns · hz` stops fitting.
    #[test]
    fn test_jiffies32_fast_path_matches_u128() {
        for hz in [0u32, 1, 100, 250, 300, 1000, 1024, u32::MAX] {
            let edge = u64::MAX / u64::from(hz.max(1));
            for t in [0, 1, 999_999_999, 1_000_000_000, edge - 1, edge, edge.saturating_add(1), u64::MAX] {
                let ticks = (t as u128 * hz as u128 / 1_000_000_000) as u64;
                let want = ((-300i64 * hz as i64) as u32).wrapping_add(ticks as u32);
                assert_eq!(Instant::from_nanos(t).jiffies32(hz), want, "t={t} hz={hz}");
            }
        }
    }

    #[test]
    fn test_jiffies_start_at_initial_jiffies_and_wrap() {
        assert_eq!(Instant::ZERO.jiffies32(1000), (-300_000i64) as u32);
        assert_eq!(Instant::from_millis(300_000).jiffies32(1000), 0);
        assert_eq!(Instant::from_millis(300_004).jiffies32(250), 1);
        assert_eq!(Instant::from_millis(300_004).jiffies64(250), 1 << 32 | 1, "the 64-bit counter does not wrap");
    }

    /// A tick's instant is the first nanosecond whose jiffies read it: at
    /// HZ 300 a tick is 3,333,333.3 ns, so the third starts at 10 ms but
    /// the first at 3,333,334 ns.
    #[test]
    fn test_at_jiffy_is_the_first_instant_of_the_tick() {
        let j0 = Instant::ZERO.jiffies64(300);
        assert_eq!(Instant::at_jiffy(j0, 300), Instant::ZERO);
        assert_eq!(Instant::at_jiffy(j0 + 1, 300), Instant::from_nanos(3_333_334));
        assert_eq!(Instant::at_jiffy(j0 + 3, 300), Instant::from_millis(10));
        assert_eq!(Instant::from_nanos(3_333_333).jiffies64(300), j0);
        assert_eq!(Instant::from_nanos(3_333_334).jiffies64(300), j0 + 1);
        assert_eq!(Instant::at_jiffy(j0 - 5, 300), Instant::ZERO, "before the run: its start");
        assert_eq!(Instant::at_jiffy(u64::MAX, 250), Instant::MAX);
    }
}
