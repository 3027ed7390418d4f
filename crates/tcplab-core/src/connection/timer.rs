//! The connection's timers as one small table indexed by kind, after
//! quinn's `TimerTable` and Linux's `ICSK_TIME_*` (include/net/
//! inet_connection_sock.h). `next()` is the earliest deadline, so
//! `Connection::poll_timeout` has this one source; a spurious expiry is
//! harmless because each handler re-checks its condition.

use crate::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Timer {
    /// `ICSK_TIME_RETRANS`: the retransmission timeout (also SYN/SYN-ACK).
    Retrans = 0,
    /// `ICSK_TIME_PROBE0`: zero-window probe.
    Probe0 = 1,
    /// `ICSK_TIME_LOSS_PROBE`: tail loss probe.
    LossProbe = 2,
    /// `ICSK_TIME_REO_TIMEOUT`: RACK reordering timer; with the v3.x
    /// `tcp_ack` the slot's earlier use, `ICSK_TIME_EARLY_RETRANS`, the
    /// early-retransmit delay (3.6–4.10).
    ReoTimeout = 3,
    /// `ICSK_TIME_DACK`: the delayed-ACK timer (`icsk_delack_timer`),
    /// armed by the receiver's `tcp_send_delayed_ack`.
    Dack = 4,
    /// `tp->compressed_ack_timer`: the SACK-compression hrtimer, armed by
    /// the receiver's `__tcp_ack_snd_check` (`tcp_compressed_ack_kick`).
    CompressedAck = 5,
    /// `tp->pacing_timer`: the internal-pacing hrtimer, armed at
    /// `tcp_wstamp_ns` by `tcp_pacing_check` when a socket that paces
    /// itself (`SK_PACING_NEEDED`) must wait; its expiry
    /// (`tcp_pace_kick` → `tcp_tsq_handler`) pushes pending data again.
    Pacing = 6,
}

impl Timer {
    /// Every timer, in the order `handle_timeout` runs the expired ones:
    /// the ACK timers first, then the transmit timers.
    pub const VALUES: [Timer; 7] = [
        Timer::Dack,
        Timer::CompressedAck,
        Timer::Retrans,
        Timer::Probe0,
        Timer::LossProbe,
        Timer::ReoTimeout,
        Timer::Pacing,
    ];
    /// The timers that share Linux's single `icsk_pending` slot.
    const XMIT: [Timer; 4] = [Timer::Retrans, Timer::Probe0, Timer::LossProbe, Timer::ReoTimeout];

    /// One of the [`XMIT`](Self::XMIT) timers (`icsk_pending`), as opposed
    /// to the receiver's ACK timers.
    pub fn is_xmit(self) -> bool {
        !matches!(self, Timer::Dack | Timer::CompressedAck | Timer::Pacing)
    }
}

/// When each timer runs, by kind, and a bit per armed one: half the size
/// of seven `Option<Instant>`s, in every connection. (No deadline value
/// can mean "unarmed": time saturates at `Instant::MAX`.) The xmit timers
/// also keep the deadline they were armed for, `icsk_timeout`, which the
/// timer wheel may run after (crate::timer_wheel).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerTable {
    at: [Instant; 7],
    icsk_timeout: Instant,
    armed: u8,
}

impl TimerTable {
    #[inline]
    pub fn stop(&mut self, t: Timer) {
        self.armed &= !(1 << t as u8);
    }
    /// When `t` runs, if armed.
    #[inline]
    pub fn get(&self, t: Timer) -> Option<Instant> {
        self.is_set(t).then_some(self.at[t as usize])
    }
    #[inline]
    pub fn is_set(&self, t: Timer) -> bool {
        self.armed & 1 << t as u8 != 0
    }
    /// Earliest deadline of any timer.
    ///
    /// Walks the armed bits only (one or two of the seven, nearly always):
    /// the simulator asks after every segment in and out.
    #[inline]
    pub fn next(&self) -> Option<Instant> {
        let mut bits = self.armed;
        let mut min: Option<Instant> = None;
        while bits != 0 {
            let at = self.at[bits.trailing_zeros() as usize];
            min = Some(min.map_or(at, |m| m.min(at)));
            bits &= bits - 1;
        }
        min
    }
    /// Arms one of the timers with a slot of its own: the receiver's ACK
    /// timers (`icsk_delack_timer`, `compressed_ack_timer`) and the
    /// pacing hrtimer.
    #[inline]
    pub fn set(&mut self, t: Timer, at: Instant) {
        debug_assert!(!t.is_xmit(), "xmit timers go through set_xmit");
        self.at[t as usize] = at;
        self.armed |= 1 << t as u8;
    }
    /// Linux keeps RETRANS, PROBE0, LOSS_PROBE and REO_TIMEOUT in one
    /// `icsk_pending` slot: arming one disarms the others. `timeout` is
    /// `icsk_timeout`, `runs` when the timer wheel runs it.
    #[inline]
    pub fn set_xmit(&mut self, t: Timer, timeout: Instant, runs: Instant) {
        debug_assert!(t.is_xmit());
        self.clear();
        self.at[t as usize] = runs;
        self.icsk_timeout = timeout;
        self.armed |= 1 << t as u8;
    }
    /// `icsk_pending`: which xmit timer is armed.
    pub fn pending(&self) -> Option<Timer> {
        Timer::XMIT.into_iter().find(|t| self.is_set(*t))
    }
    /// `icsk_pending` with its deadline, `icsk_timeout`.
    pub fn pending_at(&self) -> Option<(Timer, Instant)> {
        self.pending().map(|t| (t, self.icsk_timeout))
    }
    /// Disarms the xmit timers (`icsk_pending`). The ACK timers stay: the
    /// receiver disarms them when the ACK they hold is sent.
    pub fn clear(&mut self) {
        for t in Timer::XMIT {
            self.stop(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `next` is the least armed deadline, whatever the armed set.
    #[test]
    fn test_next_is_min_of_armed_deadlines() {
        let ats = [70u64, 10, 50, 30, 60, 20, 40];
        for armed in 0u8..128 {
            let t = TimerTable { at: ats.map(Instant::from_nanos), armed, ..TimerTable::default() };
            let want = (0..7).filter(|i| armed & 1 << i != 0).map(|i| Instant::from_nanos(ats[i])).min();
            assert_eq!(t.next(), want, "armed={armed:#09b}");
        }
    }
}
