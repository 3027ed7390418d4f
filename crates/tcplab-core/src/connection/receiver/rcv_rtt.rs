//! The receiver's own RTT estimate (`tp->rcv_rtt_est`; tcp_input.c
//! `tcp_rcv_rtt_update`, `tcp_rcv_rtt_measure`, `tcp_rcv_rtt_measure_ts`).
//! A receiver that sends no data gets no RTT samples from ACKs, yet
//! receive-buffer autotuning (`tcp_rcv_space_adjust`) runs once per RTT and
//! SACK compression waits 5 % of it: Linux measures it from echoed
//! timestamps, or from the time one window of data takes to arrive.

use crate::config::TsClock;
use crate::time::Instant;
use tcplab_wire::SeqNum;

/// `struct tcp_sock::rcv_rtt_est` plus `rcv_rtt_last_tsecr`.
#[derive(Clone, Debug, Default)]
pub(super) struct RcvRttEst {
    /// `rcv_rtt_est.rtt_us`, µs scaled by 8; 0 = no estimate.
    pub(super) rtt_us: u32,
    /// `rcv_rtt_est.seq`: the window edge the current measurement waits for.
    seq: SeqNum,
    /// `rcv_rtt_est.time` (`None` = 0 in Linux).
    time: Option<Instant>,
    /// `rcv_rtt_last_tsecr`.
    last_tsecr: u32,
}

impl RcvRttEst {
    /// `tcp_rcv_rtt_update`: a sample below the estimate replaces it at
    /// once (either kind); a larger timestamp sample is smoothed in (gain
    /// 1/8), a larger window-based one ignored ("we are only going for a
    /// minimum in the non-timestamp case"). This is 6.12.118's form: the
    /// older one smoothed every timestamp sample, so an estimate raised by
    /// one long first sample came down over many samples, and DRS
    /// (`tcp_rcv_space_adjust`, once per estimate) grew the buffer later
    /// than on the kernel (docs/ALIGNMENT.md).
    fn update(&mut self, sample_us: u32, win_dep: bool) {
        //= linux:v6.12:net/ipv4/tcp_input.c#tcp_rcv_rtt_update
        let old = self.rtt_us as i64;
        let m = (sample_us as i64) << 3;
        let new = if old == 0 || m < old {
            m
        } else if win_dep {
            return;
        } else {
            old - (old >> 3) + sample_us as i64
        };
        self.rtt_us = new.clamp(0, u32::MAX as i64) as u32;
    }

    /// `tcp_rcv_rtt_measure`: without timestamps, the time to receive one
    /// window of data (`rcv_wnd` past `rcv_nxt`) approximates the RTT.
    pub(super) fn measure(&mut self, now: Instant, rcv_nxt: SeqNum, rcv_wnd: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_rcv_rtt_measure
        if let Some(t) = self.time {
            if rcv_nxt.before(self.seq) {
                return;
            }
            let delta = now.saturating_since(t).as_micros().clamp(1, u32::MAX as u64) as u32;
            self.update(delta, true);
        }
        self.seq = rcv_nxt + rcv_wnd;
        self.time = Some(now);
    }

    /// `tcp_rcv_rtt_measure_ts`: a full-sized segment echoing a new TSecr
    /// gives an RTT sample against our TSval clock `tsval_now`
    /// (`tcp_rtt_tsopt_us`), whose ticks are `clock`'s.
    pub(super) fn measure_ts(&mut self, tsecr: u32, tsval_now: u32, full_sized: bool, clock: TsClock, hz: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_rcv_rtt_measure_ts
        if tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if full_sized {
            let us = clock.ticks_to_us(tsval_now.wrapping_sub(tsecr).max(1), hz);
            if us < i32::MAX as u64 {
                self.update(us as u32, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 6.12.118's tcp_rcv_rtt_update: a smaller timestamp sample replaces
    /// the estimate, a larger one moves it by 1/8.
    #[test]
    fn test_a_smaller_timestamp_sample_replaces_the_estimate() {
        let mut e = RcvRttEst::default();
        e.update(60_000, false);
        assert_eq!(e.rtt_us, 60_000 << 3);
        e.update(40_000, false);
        assert_eq!(e.rtt_us, 40_000 << 3);
        e.update(48_000, false);
        assert_eq!(e.rtt_us, (40_000 << 3) - (40_000 << 3 >> 3) + 48_000);
        // Window-based samples only ever lower it.
        e.update(90_000, true);
        assert_eq!(e.rtt_us, (40_000 << 3) - 40_000 + 48_000);
        e.update(30_000, true);
        assert_eq!(e.rtt_us, 30_000 << 3);
    }
}
