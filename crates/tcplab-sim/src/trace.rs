//! Per-flow time series of the sender's state.
//!
//! When [`SimConfig::trace_interval`](crate::config::SimConfig) is set, the
//! sender is sampled after it processes an ACK (any segment from its peer),
//! at most once per interval: a periodic row is taken at the first ACK at or
//! after `last periodic row + interval` (so rows follow the ACK clock, and
//! an idle flow produces none). In addition a row is taken whenever
//! `ca_state` differs from the last row's, after an ACK or a timer (an RTO
//! enters Loss without any ACK); such rows do not move the periodic grid.

use crate::result::TraceRow;
use tcplab_core::cc::CcInfo;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::{CaState, TcpInfo};

#[derive(Clone, Debug)]
pub(crate) struct TraceSampler {
    interval: u64,
    next_at: u64,
    last_ca: Option<CaState>,
    pub rows: Vec<TraceRow>,
}

impl TraceSampler {
    pub fn new(interval: Duration) -> Self {
        TraceSampler { interval: interval.as_nanos().max(1), next_at: 0, last_ca: None, rows: Vec::new() }
    }

    /// After the sender processed an ACK.
    pub fn on_ack(&mut self, now: Instant, info: &TcpInfo) {
        let periodic = now.as_nanos() >= self.next_at;
        if periodic {
            self.next_at = now.as_nanos().saturating_add(self.interval);
        }
        if periodic || self.last_ca != Some(info.ca_state) {
            self.push(now, info);
        }
    }

    /// After any other sender event (timer, start): only state changes.
    pub fn on_other(&mut self, now: Instant, info: &TcpInfo) {
        if self.last_ca.is_some() && self.last_ca != Some(info.ca_state) {
            self.push(now, info);
        }
    }

    fn push(&mut self, now: Instant, info: &TcpInfo) {
        self.last_ca = Some(info.ca_state);
        self.rows.push(row(now, info));
    }
}

/// A trace row from a `tcp_info` snapshot. In flight is Linux
/// `tcp_packets_in_flight`: `packets_out - (sacked_out + lost_out) +
/// retrans_out` (include/net/tcp.h).
pub(crate) fn row(now: Instant, info: &TcpInfo) -> TraceRow {
    let inflight = info.unacked.saturating_sub(info.sacked.saturating_add(info.lost)).saturating_add(info.retrans);
    TraceRow {
        time: Duration::from_nanos(now.as_nanos()),
        cwnd: info.snd_cwnd,
        ssthresh: info.snd_ssthresh,
        srtt_us: info.rtt_us,
        inflight,
        ca_state: info.ca_state,
        delivered: info.delivered as u64,
        pacing_rate: info.pacing_rate,
        reordering: info.reordering,
        dctcp_alpha: info.cc_info.map(|CcInfo::Dctcp { alpha, .. }| alpha),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(ca_state: CaState) -> TcpInfo {
        TcpInfo { ca_state, snd_cwnd: 10, unacked: 10, sacked: 3, lost: 2, retrans: 1, ..Default::default() }
    }

    #[test]
    fn test_periodic_rows_at_most_once_per_interval_plus_state_changes() {
        let mut s = TraceSampler::new(Duration::from_millis(10));
        let ms = Instant::from_millis;
        s.on_ack(ms(0), &info(CaState::Open)); // periodic
        s.on_ack(ms(5), &info(CaState::Open)); // too soon
        s.on_ack(ms(6), &info(CaState::Recovery)); // state change
        s.on_ack(ms(7), &info(CaState::Recovery)); // too soon
        s.on_other(ms(8), &info(CaState::Loss)); // state change (timer)
        s.on_other(ms(9), &info(CaState::Loss));
        s.on_ack(ms(12), &info(CaState::Loss)); // periodic
        let times: Vec<u64> = s.rows.iter().map(|r| r.time.as_millis()).collect();
        assert_eq!(times, [0, 6, 8, 12]);
        assert_eq!(s.rows[0].inflight, 10 - 5 + 1);
        assert_eq!(s.rows[2].ca_state, CaState::Loss);
    }
}
