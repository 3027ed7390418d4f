//! The connection's timers as one small table indexed by kind, after
//! quinn's `TimerTable` and Linux's `ICSK_TIME_*` (include/net/
//! inet_connection_sock.h). `next()` is the earliest deadline; a spurious
//! expiry is harmless because each handler re-checks its condition.

use crate::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Timer {
    /// `ICSK_TIME_RETRANS`: the retransmission timeout (also SYN/SYN-ACK).
    Retrans = 0,
    /// `ICSK_TIME_PROBE0`: zero-window probe.
    Probe0 = 1,
    /// `ICSK_TIME_LOSS_PROBE`: tail loss probe.
    LossProbe = 2,
    /// `ICSK_TIME_REO_TIMEOUT`: RACK reordering timer.
    ReoTimeout = 3,
}

impl Timer {
    pub const VALUES: [Timer; 4] = [Timer::Retrans, Timer::Probe0, Timer::LossProbe, Timer::ReoTimeout];
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TimerTable {
    data: [Option<Instant>; 4],
}

impl TimerTable {
    #[inline]
    pub fn stop(&mut self, t: Timer) {
        self.data[t as usize] = None;
    }
    #[inline]
    pub fn get(&self, t: Timer) -> Option<Instant> {
        self.data[t as usize]
    }
    #[inline]
    pub fn is_set(&self, t: Timer) -> bool {
        self.data[t as usize].is_some()
    }
    /// Earliest deadline of any timer.
    #[inline]
    pub fn next(&self) -> Option<Instant> {
        self.data.iter().flatten().min().copied()
    }
    /// Linux keeps RETRANS, PROBE0, LOSS_PROBE and REO_TIMEOUT in one
    /// `icsk_pending` slot: arming one disarms the others.
    #[inline]
    pub fn set_xmit(&mut self, t: Timer, at: Instant) {
        self.data = [None; 4];
        self.data[t as usize] = Some(at);
    }
    /// `icsk_pending`: which xmit timer is armed.
    pub fn pending(&self) -> Option<Timer> {
        Timer::VALUES.into_iter().find(|t| self.is_set(*t))
    }
    pub fn clear(&mut self) {
        self.data = [None; 4];
    }
}
