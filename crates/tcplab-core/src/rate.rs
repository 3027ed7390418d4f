//! The delivery-rate estimator of net/ipv4/tcp_rate.c (Linux 6.12), as
//! plain state and functions: no dependency on the connection.
//!
//! One rate sample per ACK: the packets delivered between the send of the
//! most recently sent packet this ACK (S)ACKs and now, divided by the
//! longer of two phases, the send phase (first to last send of those
//! packets) and the ACK phase (the ACK that preceded that send to this
//! ACK). Taking the longer phase keeps ACK compression from inflating the
//! estimate. A sample is flagged application-limited when the sender ran
//! out of data at some point while the sampled packets were in flight.
//!
//! Calling protocol (the kernel's, see the wiring notes in docs/bbr.md):
//!
//! 1. [`TcpRate::skb_sent`] on every successful transmission of an skb,
//!    new or retransmitted (`__tcp_transmit_skb`), **before** `packets_out`
//!    counts a new skb; keep the returned [`SkbTxRate`] in the skb.
//! 2. Per ACK, start from `RateSample { prior_in_flight, ..Default }` and
//!    call [`TcpRate::skb_delivered`] for each skb that becomes SACKed
//!    (`tcp_sacktag_walk`, `tcp_shifted_skb`) and each skb cumulatively
//!    acked (`tcp_clean_rtx_queue`), in that order; set `rtt_us` (the ca
//!    RTT, −1 if none) and `is_ack_delayed`.
//! 3. [`TcpRate::gen`] once the ACK's `tp->delivered` and `tp->lost` are
//!    final (`tcp_ack`, just before `tcp_cong_control`); then hand the sample
//!    to congestion control.
//! 4. [`TcpRate::check_app_limited`] when the application writes
//!    (`tcp_sendmsg_locked`), and BBR may set [`TcpRate::app_limited`] in
//!    PROBE_RTT.
//!
//! `tp->delivered`, `tp->delivered_ce`, `tp->lost` and `tcp_min_rtt()` are
//! the connection's counters and filter; they are passed in, not kept
//! here, so that there is one copy of each.
//!
//! Times are `tcp_mstamp`-style µs (u64). 0 means "no timestamp" as in the
//! kernel, so a caller must never send at virtual time 0 µs and expect a
//! sample. Arithmetic is the kernel's: u32 counters wrap, time differences
//! saturate at 0 and are truncated to u32 (`tcp_stamp_us_delta`). Nothing
//! here panics.

use tcplab_wire::SeqNum;

/// `TCPCB_DELIVERED_CE_MASK` (include/net/tcp.h): the skb keeps only 20
/// bits of `tp->delivered_ce`.
pub const TCPCB_DELIVERED_CE_MASK: u32 = (1 << 20) - 1;

/// `USEC_PER_SEC`.
const USEC_PER_SEC: u64 = 1_000_000;

/// `tcp_stamp_us_delta(t1, t0)` (include/net/tcp.h): `t1 − t0` in µs,
/// 0 if negative, truncated to u32 as the kernel's return type does.
#[inline]
pub fn tcp_stamp_us_delta(t1: u64, t0: u64) -> u32 {
    (t1.wrapping_sub(t0) as i64).max(0) as u32
}

/// `tcp_skb_sent_after(t1, t2, seq1, seq2)` (include/net/tcp.h): was the
/// skb (t1, seq1) sent after (t2, seq2)? Later send time wins; on a tie
/// (one TSO burst) the higher end sequence.
#[inline]
pub fn tcp_skb_sent_after(t1: u64, t2: u64, seq1: SeqNum, seq2: SeqNum) -> bool {
    t1 > t2 || (t1 == t2 && seq1.after(seq2))
}

/// `TCP_SKB_CB(skb)->tx` (include/net/tcp.h): the connection's delivery
/// state when the skb was last sent, from [`TcpRate::skb_sent`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct SkbTxRate {
    /// `tx.first_tx_mstamp`: `tp->first_tx_mstamp` at send (µs): start of
    /// the send phase of the sample this skb will give.
    pub first_tx_mstamp: u64,
    /// `tx.delivered_mstamp`: `tp->delivered_mstamp` at send (µs); 0 once
    /// the skb was SACKed and used, so the cumulative ACK skips it.
    pub delivered_mstamp: u64,
    /// `tx.delivered`: `tp->delivered` at send (packets).
    pub delivered: u32,
    /// `tx.delivered_ce`: `tp->delivered_ce` at send, 20 bits.
    pub delivered_ce: u32,
    /// `tx.is_app_limited`: `tp->app_limited` was set at send.
    pub is_app_limited: bool,
}

/// What [`TcpRate::skb_delivered`] reads from the (S)ACKed skb besides its
/// [`SkbTxRate`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DeliveredSkb {
    /// `tcp_skb_timestamp_us(skb)`: when the skb was last sent (µs).
    pub tx_mstamp_us: u64,
    /// `TCP_SKB_CB(skb)->end_seq`.
    pub end_seq: SeqNum,
    /// `sacked & TCPCB_RETRANS`: the skb was retransmitted.
    pub retrans: bool,
    /// `sacked & TCPCB_SACKED_ACKED`: the skb is (now) SACKed; true when
    /// called from SACK tagging, false from the cumulative ACK.
    pub sacked_acked: bool,
}

/// `struct rate_sample` (include/net/tcp.h, 6.12): one ACK's delivery-rate
/// sample, as congestion control's `cong_control` receives it. `Default`
/// is the kernel's zero initialiser in `tcp_ack`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct RateSample {
    /// Start of the sampling interval (µs): `tx.delivered_mstamp` of the
    /// chosen skb; 0 if no skb with timing was delivered.
    pub prior_mstamp: u64,
    /// `tp->delivered` at `prior_mstamp`.
    pub prior_delivered: u32,
    /// `tp->delivered_ce` at `prior_mstamp` (20 bits).
    pub prior_delivered_ce: u32,
    /// Packets delivered over the interval; −1 if the sample is invalid.
    pub delivered: i32,
    /// Of which CE-marked (20-bit arithmetic).
    pub delivered_ce: i32,
    /// The interval (µs), `max(snd, rcv)`; −1 if invalid or too short.
    pub interval_us: i64,
    /// Send phase (µs).
    pub snd_interval_us: u32,
    /// ACK phase (µs).
    pub rcv_interval_us: u32,
    /// RTT of the last (S)ACKed packet (ca RTT, µs), or −1. Set by the
    /// connection (`tcp_ack_update_rtt`).
    pub rtt_us: i64,
    /// Packets newly marked lost by this ACK.
    pub losses: i32,
    /// Packets newly (S)ACKed by this ACK.
    pub acked_sacked: u32,
    /// `tcp_packets_in_flight()` before this ACK. Set by the connection.
    pub prior_in_flight: u32,
    /// `end_seq` of the chosen (most recently sent) skb.
    pub last_end_seq: SeqNum,
    /// The chosen skb was sent while application-limited.
    pub is_app_limited: bool,
    /// The chosen skb was a retransmission.
    pub is_retrans: bool,
    /// The ACK is likely delayed (`FLAG_ACK_MAYBE_DELAYED`). Set by the
    /// connection.
    pub is_ack_delayed: bool,
}

/// The `tcp_sock` values [`TcpRate::gen`] reads, after the ACK's
/// accounting.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RateGenInput {
    /// `tp->tcp_mstamp`: now (µs).
    pub now_us: u64,
    /// `tp->delivered`, including this ACK.
    pub delivered: u32,
    /// `tp->delivered_ce`, including this ACK.
    pub delivered_ce: u32,
    /// `tcp_min_rtt(tp)` (µs; `u32::MAX` before any RTT sample, which
    /// makes every sample too short).
    pub min_rtt_us: u32,
}

/// The inputs of [`TcpRate::check_app_limited`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct AppLimitedInput {
    /// `tp->write_seq`: end of the data the application has written.
    pub write_seq: SeqNum,
    /// `tp->snd_nxt`.
    pub snd_nxt: SeqNum,
    /// `tp->mss_cache`.
    pub mss_cache: u32,
    /// `sk_wmem_alloc_get(sk) < SKB_TRUESIZE(1)`: nothing of this socket
    /// waits in the host's qdisc or NIC queue.
    pub host_queue_empty: bool,
    /// `tcp_packets_in_flight(tp)`.
    pub packets_in_flight: u32,
    /// `tcp_snd_cwnd(tp)`.
    pub snd_cwnd: u32,
    /// `tp->lost_out`.
    pub lost_out: u32,
    /// `tp->retrans_out`.
    pub retrans_out: u32,
    /// `tp->delivered`.
    pub delivered: u32,
}

/// The connection-level fields of `struct tcp_sock` that tcp_rate.c keeps.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TcpRate {
    /// `tp->delivered_mstamp`: time `tp->delivered` last grew (µs), or the
    /// send time of the first skb after idle.
    pub delivered_mstamp: u64,
    /// `tp->first_tx_mstamp`: send time of the most recently (S)ACKed
    /// skb, or of the first skb after idle (µs).
    pub first_tx_mstamp: u64,
    /// `tp->app_limited`: 0, or the `tp->delivered` value whose passing
    /// ends the application-limited period.
    pub app_limited: u32,
    /// `tp->rate_delivered`: packets of the last recorded sample (tcp_info).
    pub rate_delivered: u32,
    /// `tp->rate_interval_us`: its interval (µs).
    pub rate_interval_us: u32,
    /// `tp->rate_app_limited`: it was application-limited.
    pub rate_app_limited: bool,
}

impl TcpRate {
    /// `tcp_rate_skb_sent`: snapshot the delivery state into the skb being
    /// sent at `skb_mstamp_us` (`tcp_skb_timestamp_us(skb)`). When nothing
    /// is outstanding (`packets_out == 0`, counting neither this skb nor
    /// loss guesses), the sample's clock restarts at this send, so that
    /// the idle time before it is not counted.
    //= linux:v6.12:net/ipv4/tcp_rate.c#tcp_rate_skb_sent
    pub fn skb_sent(&mut self, skb_mstamp_us: u64, packets_out: u32, delivered: u32, delivered_ce: u32) -> SkbTxRate {
        if packets_out == 0 {
            self.first_tx_mstamp = skb_mstamp_us;
            self.delivered_mstamp = skb_mstamp_us;
        }
        SkbTxRate {
            first_tx_mstamp: self.first_tx_mstamp,
            delivered_mstamp: self.delivered_mstamp,
            delivered,
            delivered_ce: delivered_ce & TCPCB_DELIVERED_CE_MASK,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered`: an skb was SACKed or cumulatively ACKed.
    /// The sample takes its start from the most recently sent skb of the
    /// ACK (send time, then end sequence); the first skb always counts
    /// while `rs.prior_delivered` is 0. A SACKed skb is marked used (its
    /// `delivered_mstamp` zeroed) so that the later cumulative ACK of it
    /// gives nothing.
    //= linux:v6.12:net/ipv4/tcp_rate.c#tcp_rate_skb_delivered
    pub fn skb_delivered(&mut self, tx: &mut SkbTxRate, skb: &DeliveredSkb, rs: &mut RateSample) {
        if tx.delivered_mstamp == 0 {
            return;
        }
        if rs.prior_delivered == 0
            || tcp_skb_sent_after(skb.tx_mstamp_us, self.first_tx_mstamp, skb.end_seq, rs.last_end_seq)
        {
            rs.prior_delivered_ce = tx.delivered_ce;
            rs.prior_delivered = tx.delivered;
            rs.prior_mstamp = tx.delivered_mstamp;
            rs.is_app_limited = tx.is_app_limited;
            rs.is_retrans = skb.retrans;
            rs.last_end_seq = skb.end_seq;
            self.first_tx_mstamp = skb.tx_mstamp_us;
            // Send phase: first to last send of the sampled packets.
            rs.interval_us = tcp_stamp_us_delta(self.first_tx_mstamp, tx.first_tx_mstamp) as i64;
        }
        if skb.sacked_acked {
            tx.delivered_mstamp = 0;
        }
    }

    /// `tcp_rate_gen`: finish this ACK's sample. `delivered` and `lost` are
    /// the packets newly (S)ACKed and newly marked lost by the ACK;
    /// `is_sack_reneg` the receiver reneged on SACKs (the sample would count
    /// packets SACKed before). Ends the application-limited period once its
    /// marker was delivered past, and records the sample for tcp_info if it
    /// is not application-limited or beats the recorded rate.
    //= linux:v6.12:net/ipv4/tcp_rate.c#tcp_rate_gen
    pub fn gen(&mut self, tp: &RateGenInput, delivered: u32, lost: u32, is_sack_reneg: bool, rs: &mut RateSample) {
        if self.app_limited != 0 && SeqNum(tp.delivered).after(SeqNum(self.app_limited)) {
            self.app_limited = 0;
        }
        if delivered != 0 {
            self.delivered_mstamp = tp.now_us;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost as i32;
        if rs.prior_mstamp == 0 || is_sack_reneg {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = tp.delivered.wrapping_sub(rs.prior_delivered) as i32;
        rs.delivered_ce = (tp.delivered_ce.wrapping_sub(rs.prior_delivered_ce) & TCPCB_DELIVERED_CE_MASK) as i32;

        // Send and ACK phases; the longer one is the interval.
        let snd_us = rs.interval_us as u32;
        let ack_us = tcp_stamp_us_delta(tp.now_us, rs.prior_mstamp);
        rs.interval_us = snd_us.max(ack_us) as i64;
        rs.snd_interval_us = snd_us;
        rs.rcv_interval_us = ack_us;

        // Shorter than the path's min RTT: not a plausible interval.
        if rs.interval_us < tp.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }

        if !rs.is_app_limited
            || (rs.delivered as i64 as u64).wrapping_mul(self.rate_interval_us as u64)
                >= (self.rate_delivered as u64).wrapping_mul(rs.interval_us as u64)
        {
            self.rate_delivered = rs.delivered as u32;
            self.rate_interval_us = rs.interval_us as u32;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`: mark the connection
    /// application-limited when less than an MSS waits to be sent, nothing
    /// waits below TCP, cwnd is not full and every lost packet was
    /// retransmitted. The marker is `delivered + in_flight` (1 if that is
    /// 0): samples stay application-limited until the packets now in
    /// flight are delivered.
    //= linux:v6.12:net/ipv4/tcp_rate.c#tcp_rate_check_app_limited
    pub fn check_app_limited(&mut self, c: &AppLimitedInput) {
        if c.write_seq.0.wrapping_sub(c.snd_nxt.0) < c.mss_cache
            && c.host_queue_empty
            && c.packets_in_flight < c.snd_cwnd
            && c.lost_out <= c.retrans_out
        {
            self.app_limited = app_limited_marker(c.delivered, c.packets_in_flight);
        }
    }

    /// `tcp_compute_delivery_rate` (net/ipv4/tcp.c): `tcpi_delivery_rate`
    /// in bytes per second from the recorded sample; 0 if none.
    //= linux:v6.12:net/ipv4/tcp.c#tcp_compute_delivery_rate
    pub fn delivery_rate(&self, mss_cache: u32) -> u64 {
        if self.rate_delivered == 0 || self.rate_interval_us == 0 {
            return 0;
        }
        (self.rate_delivered as u64).wrapping_mul(mss_cache as u64).wrapping_mul(USEC_PER_SEC)
            / self.rate_interval_us as u64
    }
}

/// `(tp->delivered + tcp_packets_in_flight(tp)) ? : 1`: the
/// `tp->app_limited` marker set by `tcp_rate_check_app_limited` and by
/// BBR's PROBE_RTT.
#[inline]
pub fn app_limited_marker(delivered: u32, packets_in_flight: u32) -> u32 {
    match delivered.wrapping_add(packets_in_flight) {
        0 => 1,
        v => v,
    }
}

#[cfg(test)]
mod tests;
