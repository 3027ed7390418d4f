//! The scenario's clock: `CLOCK_MONOTONIC` in nanoseconds, and sleeps to
//! absolute times.
//!
//! Under UML's `time-travel=inf-cpu` the guest's monotonic clock is
//! virtual: it only advances while every guest thread is idle. Sleeping to
//! an absolute time (`TIMER_ABSTIME`) rather than for a duration keeps
//! periodic schedules (the sampler, the end of the run) exactly on their
//! grid no matter how long the work in between took on the host.

/// Makes the calling thread's sleeps, and those of every thread it
/// starts afterwards, wake on time. Linux lets an hrtimer sleep end up to
/// the thread's *timer slack* late (50 µs by default) so that wake-ups can
/// be batched; in virtual time that delay is all there is, and every
/// sleep (a run's start, a sample, the end) would land 50 µs late. The
/// slack is per thread and inherited: call this before starting threads.
pub fn precise_timers() -> Result<(), String> {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) } != 0 {
        return Err(format!("PR_SET_TIMERSLACK: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// `CLOCK_MONOTONIC` now, in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always
    // exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

/// `ns` as a `timespec`.
pub fn timespec(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `deadline_ns` (at once if it
/// already has). Interrupted sleeps resume to the same absolute time.
///
/// A deadline already passed does not call `clock_nanosleep` at all: under
/// UML time travel such a call still waits for the timer interrupt's
/// next turn, which was seen to cost milliseconds of virtual time.
pub fn sleep_until(deadline_ns: u64) {
    if now_ns() >= deadline_ns {
        return;
    }
    let ts = timespec(deadline_ns);
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be
        // null with TIMER_ABSTIME.
        let rc =
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        // clock_nanosleep returns the error number instead of setting errno.
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Jiffies modulo which `t0` is aligned ([`aligned_tick`]): the timer
/// wheel's levels 0 to 3 round to at most 512 jiffies (timers up to 32,767
/// jiffies away, over two minutes at HZ 250), so aligned modulo 512 they
/// round a timer armed at the same scenario time to the same tick on both
/// backends.
pub const JIFFY_ALIGN: u64 = 512;

/// `TICK_NSEC` (include/linux/jiffies.h): a jiffy in nanoseconds.
const fn tick_nsec(hz: u32) -> u64 {
    (1_000_000_000 + hz as u64 / 2) / hz as u64
}

/// `INITIAL_JIFFIES` on a 64-bit kernel: where the model's jiffies stand
/// at its time 0.
const fn initial_jiffies(hz: u32) -> u64 {
    (-300i64 * hz as i64) as u32 as u64
}

/// The first tick at or after `earliest_ns` whose jiffies are
/// `INITIAL_JIFFIES` modulo [`JIFFY_ALIGN`], given that jiffies read
/// `jiffies` at `now_ns`. Since 6.x the tick is aligned to multiples of
/// `TICK_NSEC` of `CLOCK_MONOTONIC` (`tick_init_jiffy_update`,
/// kernel/time/tick-sched.c), and jiffies count those ticks.
pub fn aligned_tick_from(now_ns: u64, jiffies: u64, earliest_ns: u64, hz: u32) -> u64 {
    let tick = tick_nsec(hz);
    let k0 = earliest_ns.div_ceil(tick);
    let j0 = jiffies.wrapping_add(k0.wrapping_sub(now_ns / tick));
    let wait = initial_jiffies(hz).wrapping_sub(j0) % JIFFY_ALIGN;
    (k0 + wait) * tick
}

/// [`aligned_tick_from`] with `now` and `jiffies` read from
/// `/proc/timer_list` ("now at N nsecs", then the CPU's "jiffies: J").
pub fn aligned_tick(earliest_ns: u64, hz: u32) -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/timer_list").map_err(|e| format!("/proc/timer_list: {e}"))?;
    let field = |prefix: &str, suffix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix)?.trim().strip_suffix(suffix)?.trim().parse::<u64>().ok())
    };
    let now = field("now at", "nsecs").ok_or("/proc/timer_list: no \"now at N nsecs\" line")?;
    let jiffies = field("jiffies:", "").ok_or("/proc/timer_list: no \"jiffies: J\" line")?;
    Ok(aligned_tick_from(now, jiffies, earliest_ns, hz))
}

/// The scenario's origin: every time in the result is nanoseconds since
/// `t0`.
#[derive(Clone, Copy, Debug)]
pub struct Epoch {
    pub t0: u64,
}

impl Epoch {
    /// Starts the scenario's clock now.
    pub fn start() -> Epoch {
        Epoch { t0: now_ns() }
    }

    /// Starts the scenario's clock at `t0_ns`, after sleeping until then.
    pub fn start_at(t0_ns: u64) -> Epoch {
        sleep_until(t0_ns);
        Epoch { t0: t0_ns }
    }

    /// Nanoseconds since `t0`.
    pub fn elapsed(&self) -> u64 {
        now_ns().saturating_sub(self.t0)
    }

    /// The absolute monotonic time of scenario time `ns`.
    pub fn at(&self, ns: u64) -> u64 {
        self.t0.saturating_add(ns)
    }

    /// Sleeps until scenario time `ns`.
    pub fn sleep_until(&self, ns: u64) {
        sleep_until(self.at(ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_until_reaches_the_deadline() {
        let e = Epoch::start();
        e.sleep_until(2_000_000);
        assert!(e.elapsed() >= 2_000_000);
        // A deadline in the past returns at once.
        sleep_until(0);
    }

    #[test]
    fn timer_slack_can_be_set() {
        std::thread::spawn(|| precise_timers().unwrap()).join().unwrap();
    }

    /// HZ 250: INITIAL_JIFFIES = 2^32 - 75,000, which is 264 modulo 512.
    /// Jiffies read 1,000 at 10.5 ms; the first tick at or after 11 ms is
    /// 12 ms (jiffies 1,000 + 1), so t0 waits (264 - 1,001) mod 512 = 287
    /// more ticks: 12 ms + 287 × 4 ms.
    #[test]
    fn aligned_tick_lands_on_initial_jiffies_modulo_512() {
        assert_eq!(initial_jiffies(250) % JIFFY_ALIGN, 264);
        let t0 = aligned_tick_from(10_500_000, 1_000, 11_000_000, 250);
        assert_eq!(t0, 12_000_000 + 287 * 4_000_000);
        // Already aligned: the earliest tick itself.
        let j = initial_jiffies(250) + 5 * JIFFY_ALIGN;
        assert_eq!(aligned_tick_from(8_000_000, j - 1, 8_000_001, 250), 12_000_000);
        // HZ 300: ticks of 3,333,333 ns (TICK_NSEC rounds).
        let t0 = aligned_tick_from(0, initial_jiffies(300), 0, 300);
        assert_eq!(t0, 0);
        assert_eq!(aligned_tick_from(0, initial_jiffies(300), 1, 300), 512 * 3_333_333);
    }

    #[test]
    fn timespec_splits_seconds() {
        let ts = timespec(3_000_000_007);
        assert_eq!((ts.tv_sec, ts.tv_nsec), (3, 7));
    }
}
