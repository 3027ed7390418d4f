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

    #[test]
    fn timespec_splits_seconds() {
        let ts = timespec(3_000_000_007);
        assert_eq!((ts.tv_sec, ts.tv_nsec), (3, 7));
    }
}
