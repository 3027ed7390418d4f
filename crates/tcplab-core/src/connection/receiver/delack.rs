//! The delayed-ACK engine: Linux's `struct inet_connection_sock::icsk_ack`
//! (include/net/inet_connection_sock.h) and what drives it — quick-ACK and
//! pingpong (interactive) mode, the `ato` estimate of `tcp_event_data_recv`,
//! the timer (`tcp_send_delayed_ack` in tcp_output.c,
//! `tcp_delack_timer_handler` in tcp_timer.c), and its cancellation when an
//! ACK or a reply leaves (`tcp_event_ack_sent`, `tcp_event_data_sent`).
//!
//! The receiver decides *whether* an ACK is owed (`ICSK_ACK_SCHED` and the
//! other `pending` bits it sets); this type decides *when* it leaves. It
//! runs on jiffies, as Linux does, so a 40 ms timer armed mid-jiffy fires
//! on the jiffy boundary; the timer's deadline itself lives in the
//! connection's [`TimerTable`] (`Timer::Dack`), armed exactly while
//! `ICSK_ACK_TIMER` is set.

use super::{AckDecision, TCP_HDR_LEN, TCP_MIN_MSS, TCP_MSS_DEFAULT};
use crate::connection::timer::{Timer, TimerTable};
use crate::counters::{Counters, Mib};
use crate::rtt::usecs_to_jiffies_unclamped;
use crate::time::{Duration, Instant};
use crate::timer_wheel::TimerWheel;
use tcplab_wire::{SegmentRepr, TcpFlags};

/// `TCP_MAX_QUICKACKS` (include/net/tcp.h): most quick ACKs granted at once.
pub(super) const TCP_MAX_QUICKACKS: u8 = 16;
/// `TCP_PINGPONG_THRESH` / `sysctl_tcp_pingpong_thresh` default (1 since
/// v6.0; 3 in v5.1–5.19).
const TCP_PINGPONG_THRESH: u8 = 1;

// `enum inet_csk_ack_state_t` (include/net/inet_connection_sock.h).
/// `ICSK_ACK_SCHED`: an ACK is owed.
pub(super) const ICSK_ACK_SCHED: u8 = 1;
/// `ICSK_ACK_TIMER`: the delayed-ACK timer is armed.
pub(super) const ICSK_ACK_TIMER: u8 = 2;
/// `ICSK_ACK_PUSHED`: a pushed or short segment was received.
pub(super) const ICSK_ACK_PUSHED: u8 = 4;
/// `ICSK_ACK_PUSHED2`: two of them.
pub(super) const ICSK_ACK_PUSHED2: u8 = 8;
/// `ICSK_ACK_NOW`: "Protocol state mandates a one-time immediate ACK".
pub(super) const ICSK_ACK_NOW: u8 = 16;
/// `ICSK_ACK_NOMEM`: an ACK is owed because data was dropped for memory.
pub(super) const ICSK_ACK_NOMEM: u8 = 32;

/// `icsk_ack` (with its estimate of the peer's MSS, which sizes the
/// "ACK every second full-sized segment" rule) plus the receive time
/// stamp pingpong detection compares a reply with (`lrcvtime`).
#[derive(Clone, Debug)]
pub(super) struct DelayedAck {
    /// `HZ`: the jiffy clock's rate.
    hz: u32,
    /// The timer wheel that runs `icsk_delack_timer`.
    wheel: TimerWheel,
    /// `ICSK_ACK_*` bits.
    pub(super) pending: u8,
    /// Quick ACKs left.
    pub(super) quick: u8,
    /// Pingpong (interactive) counter.
    pub(super) pingpong: u8,
    /// ACK timeout estimate, jiffies; 0 until the first data.
    pub(super) ato: u32,
    /// Delayed-ACK deadline, jiffies (`icsk_ack.timeout`).
    pub(super) timeout: u32,
    /// ≤ v4.17 DCTCP's `delayed_ack_reserved`: `tcp_send_delayed_ack` ran
    /// and no `tcp_send_ack` since (see `RcvKnobs::special_ack_keeps_delack`).
    pub(super) delayed_ack_reserved: bool,
    /// Last data receive time, jiffies.
    lrcvtime: u32,
    /// `icsk_ack.last_seg_size`, bytes.
    last_seg_size: u32,
    /// `icsk_ack.rcv_mss`: estimated peer MSS, bytes.
    pub(super) rcv_mss: u32,
}

impl DelayedAck {
    pub(super) fn new(hz: u32, wheel: TimerWheel) -> DelayedAck {
        DelayedAck {
            hz,
            wheel,
            pending: 0,
            quick: 0,
            pingpong: 0,
            ato: 0,
            timeout: 0,
            delayed_ack_reserved: false,
            lrcvtime: 0,
            last_seg_size: 0,
            rcv_mss: TCP_MSS_DEFAULT,
        }
    }

    /// The connection reached ESTABLISHED: the receive time stamp starts
    /// now (`tcp_finish_connect`, `tcp_create_openreq_child`).
    pub(super) fn on_established(&mut self, now: Instant) {
        self.lrcvtime = self.jiffies(now);
    }

    // ------------------------------------------------------------------
    // Quick ACK and pingpong (inet_connection_sock.h, tcp_input.c)
    // ------------------------------------------------------------------

    /// `tcp_incr_quickack`: grant up to half a window (`rcv_wnd`) of quick
    /// ACKs (at least 2, at most `max`).
    fn incr_quickack(&mut self, rcv_wnd: u32, max: u8) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_incr_quickack
        let rcv_mss = self.rcv_mss.max(1);
        let mut quickacks = rcv_wnd / (2 * rcv_mss);
        if quickacks == 0 {
            quickacks = 2;
        }
        let quickacks = quickacks.min(max as u32) as u8;
        if quickacks > self.quick {
            self.quick = quickacks;
        }
    }

    /// `tcp_enter_quickack_mode`: ACK the next segments at once.
    pub(super) fn enter_quickack_mode(&mut self, rcv_wnd: u32, max: u8) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_enter_quickack_mode
        self.incr_quickack(rcv_wnd, max);
        self.pingpong = 0;
        self.ato = self.ato_min();
    }

    /// `tcp_in_quickack_mode`: "Send ACKs quickly, if "quick" count is not
    /// exhausted and the session is not interactive."
    pub(super) fn in_quickack_mode(&self) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_in_quickack_mode
        self.quick > 0 && !self.in_pingpong_mode()
    }

    /// `inet_csk_in_pingpong_mode`.
    pub(super) fn in_pingpong_mode(&self) -> bool {
        //= linux:v6.13:include/net/inet_connection_sock.h#inet_csk_in_pingpong_mode
        self.pingpong >= TCP_PINGPONG_THRESH
    }

    /// `inet_csk_enter_pingpong_mode`: a reply is expected (`tcp_fin`).
    pub(super) fn enter_pingpong_mode(&mut self) {
        self.pingpong = TCP_PINGPONG_THRESH;
    }

    /// `inet_csk_exit_pingpong_mode`.
    pub(super) fn exit_pingpong_mode(&mut self) {
        self.pingpong = 0;
    }

    // ------------------------------------------------------------------
    // Events
    // ------------------------------------------------------------------

    /// The `ato` half of `tcp_event_data_recv`, per in-order data segment:
    /// adapt `ato` to the inter-arrival gap (DaveM: "When a connection
    /// starts up, we want to ack as quickly as possible"), bounded by the
    /// RTO. `rcv_wnd` sizes the quick-ACK grants.
    pub(super) fn on_data_recv(&mut self, now: Instant, rto: Duration, rcv_wnd: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_event_data_recv
        let j = self.jiffies(now);
        let ato_min = self.ato_min();
        let rto = self.duration_to_jiffies(rto);
        if self.ato == 0 {
            // "The _first_ data packet received, initialize delayed ACK
            // engine."
            self.incr_quickack(rcv_wnd, TCP_MAX_QUICKACKS);
            self.ato = ato_min;
        } else {
            let m = j.wrapping_sub(self.lrcvtime) as i32;
            if m <= (ato_min / 2) as i32 {
                // "The fastest case is the first."
                self.ato = (self.ato >> 1) + ato_min / 2;
            } else if (m as u32) < self.ato {
                self.ato = (self.ato >> 1) + m as u32;
                if self.ato > rto {
                    self.ato = rto;
                }
            } else if (m as u32) > rto {
                // "Too long gap. Apparently sender failed to restart
                // window, so that we send ACKs quickly."
                self.incr_quickack(rcv_wnd, TCP_MAX_QUICKACKS);
            }
        }
        self.lrcvtime = j;
    }

    /// The `icsk_ack` part of `tcp_measure_rcv_mss`: track the peer's
    /// segment size for the "ACK every second full-sized segment" rule,
    /// learning a smaller MSS from two equal short segments in a row; a
    /// pushed or short segment marks `ICSK_ACK_PUSHED` (twice:
    /// `ICSK_ACK_PUSHED2`). `len` is the segment's `gso_size`, or its
    /// payload when it is not GRO-merged; `tcp_header_len` is the header we
    /// expect (20, or 32 with timestamps).
    pub(super) fn measure_rcv_mss(&mut self, seg: &SegmentRepr, len: u32, advmss: u32, tcp_header_len: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_measure_rcv_mss
        let lss = self.last_seg_size;
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(advmss);
            // "If the skb has a len of exactly 1*MSS and has the PSH bit set
            // then it is likely the end of an application write."
            if seg.flags.contains(TcpFlags::PSH) {
                self.pending |= ICSK_ACK_PUSHED;
            }
        } else {
            // "len" is invariant segment length, including TCP header.
            let hdr = TCP_HDR_LEN + seg.options.wire_len() as u32;
            let len = seg.payload_len + hdr;
            let remnant = seg.flags.0 & (TcpFlags::FIN.0 | TcpFlags::URG.0 | TcpFlags::SYN.0 | TcpFlags::PSH.0) != 0;
            if len >= TCP_MSS_DEFAULT + TCP_HDR_LEN || (len >= TCP_MIN_MSS + TCP_HDR_LEN && !remnant) {
                let len = len.saturating_sub(tcp_header_len);
                self.last_seg_size = len;
                if len == lss {
                    self.rcv_mss = len.max(1);
                    return;
                }
            }
            if self.pending & ICSK_ACK_PUSHED != 0 {
                self.pending |= ICSK_ACK_PUSHED2;
            }
            self.pending |= ICSK_ACK_PUSHED;
        }
    }

    /// `tcp_send_delayed_ack`: arm the delayed-ACK timer for `ato`, bounded
    /// by 200 ms (interactive or pushed) or 500 ms, and by max(srtt, 40 ms);
    /// ≥ v5.10 (`delack_max_cap`) also by `icsk_delack_max`. An already
    /// armed timer keeps its earlier deadline, and "If delack timer is about
    /// to expire, send ACK now". `srtt_us` is unscaled, 0 before a sample.
    pub(super) fn send_delayed_ack(
        &mut self,
        now: Instant,
        srtt_us: u32,
        delack_max_cap: bool,
        timers: &mut TimerTable,
    ) -> AckDecision {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_send_delayed_ack
        // ≤ v4.17: tcp_ca_event(sk, CA_EVENT_DELAYED_ACK), even when the ACK
        // then goes at once.
        self.delayed_ack_reserved = true;
        let delack_min = self.delack_min();
        let delack_max = self.delack_max();
        let mut ato = self.ato;
        if ato > delack_min {
            let mut max_ato = self.hz / 2;
            if self.in_pingpong_mode() || self.pending & ICSK_ACK_PUSHED != 0 {
                max_ato = delack_max;
            }
            // "If some rtt estimate is known, use it to bound delayed ack."
            if srtt_us != 0 {
                // Unclamped: the kernel's max_t(int, ...) would read a
                // clamped MAX_JIFFY_OFFSET (an srtt of ~71 min) as -2 and
                // take TCP_DELACK_MIN; the model keeps the RTT, above max_ato.
                let rtt = (usecs_to_jiffies_unclamped(srtt_us, self.hz).min(u32::MAX as u64) as u32).max(delack_min);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        if delack_max_cap {
            ato = ato.min(delack_max);
        }
        let j = self.jiffies(now);
        let mut timeout = j.wrapping_add(ato);
        if self.pending & ICSK_ACK_TIMER != 0 {
            if (self.timeout.wrapping_sub(j.wrapping_add(ato >> 2)) as i32) <= 0 {
                return AckDecision::Now;
            }
            if (timeout.wrapping_sub(self.timeout) as i32) >= 0 {
                timeout = self.timeout;
            }
        }
        let unchanged = self.pending & ICSK_ACK_TIMER != 0 && self.timeout == timeout;
        self.pending |= ICSK_ACK_SCHED | ICSK_ACK_TIMER;
        self.timeout = timeout;
        // sk_reset_timer → mod_timer.
        let kept = timers.get(Timer::Dack).filter(|_| unchanged);
        self.arm_timer(now, kept, timers);
        AckDecision::Delayed
    }

    /// `tcp_delack_timer_handler`: the delayed ACK is due. A missed delayed
    /// ACK means `ato` was too short: double it (up to the RTO); in pingpong
    /// mode leave it and restart from 40 ms. Counts `DelayedACKs`; `true` =
    /// send an ACK now.
    pub(super) fn on_timer(
        &mut self,
        now: Instant,
        rto: Duration,
        timers: &mut TimerTable,
        mib: &mut Counters,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_timer.c#tcp_delack_timer_handler
        if self.pending & ICSK_ACK_TIMER == 0 {
            return false;
        }
        let j = self.jiffies(now);
        if (self.timeout.wrapping_sub(j) as i32) > 0 {
            self.arm_timer(now, None, timers);
            return false;
        }
        self.pending &= !ICSK_ACK_TIMER;
        timers.stop(Timer::Dack);
        if self.pending & ICSK_ACK_SCHED == 0 {
            return false;
        }
        if !self.in_pingpong_mode() {
            // "Delayed ACK missed: inflate ATO."
            let rto = self.duration_to_jiffies(rto);
            self.ato = self.ato.saturating_mul(2).min(rto);
        } else {
            // "Delayed ACK missed: leave pingpong mode and deflate ATO."
            self.pingpong = 0;
            self.ato = self.ato_min();
        }
        mib.inc(Mib::TcpExtDelayedACKs);
        true
    }

    /// The `icsk_ack` half of `tcp_event_ack_sent` for an ACK of `rcv_nxt`:
    /// spend quick ACKs (`tcp_dec_quickack_mode`: "Leaving quickack mode we
    /// deflate ATO") — one per ACK that was owed (≥ v6.6,
    /// `quickack_per_ack`), else the segment's `pcount` — and cancel the
    /// delayed ACK (`inet_csk_clear_xmit_timer(ICSK_TIME_DACK)`).
    pub(super) fn on_ack_sent(&mut self, pcount: u32, quickack_per_ack: bool, timers: &mut TimerTable) {
        //= linux:v6.13:include/net/tcp.h#tcp_dec_quickack_mode
        if self.quick > 0 {
            let pkts = if quickack_per_ack { (self.pending & ICSK_ACK_SCHED != 0) as u32 } else { pcount };
            if pkts >= self.quick as u32 {
                self.quick = 0;
                self.ato = self.ato_min();
            } else {
                self.quick -= pkts as u8;
            }
        }
        self.pending = 0;
        timers.stop(Timer::Dack);
    }

    /// `tcp_event_data_sent`: a reply sent within `ato` of the last data
    /// received marks the connection interactive (pingpong), which stops
    /// quick ACKs and lengthens delayed ACKs. Every such reply counts
    /// (`inet_csk_inc_pingpong_cnt`; ≤ v4.20 `pingpong = 1`), as in v6.0
    /// and later and before v5.1: v5.1–v5.19 counted only the first reply
    /// sent in a later jiffy than the data (4a41f453bedf, reverted by
    /// 4d8f24eeedc5), an era no preset runs.
    pub(super) fn on_data_sent(&mut self, now: Instant) {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_event_data_sent
        if self.jiffies(now).wrapping_sub(self.lrcvtime) < self.ato {
            self.pingpong = self.pingpong.saturating_add(1);
        }
    }

    // ------------------------------------------------------------------
    // Clocks
    // ------------------------------------------------------------------

    /// `HZ`.
    pub(super) fn hz(&self) -> u32 {
        self.hz
    }

    pub(super) fn jiffies(&self, now: Instant) -> u32 {
        now.jiffies32(self.hz)
    }

    /// `TCP_ATO_MIN` = HZ/25 (40 ms), jiffies.
    fn ato_min(&self) -> u32 {
        (self.hz / 25).max(1)
    }
    /// `TCP_DELACK_MIN` = HZ/25 (40 ms), jiffies.
    fn delack_min(&self) -> u32 {
        (self.hz / 25).max(1)
    }
    fn delack_max(&self) -> u32 {
        crate::rtt::tcp_delack_max(self.hz)
    }

    fn duration_to_jiffies(&self, d: Duration) -> u32 {
        (d.as_nanos() as u128 * self.hz as u128).div_ceil(1_000_000_000).min(u32::MAX as u128) as u32
    }

    /// Arms `icsk_delack_timer` for `icsk_ack.timeout`: the deadline is
    /// the first instant of that jiffy (now, if it has passed), and the
    /// timer wheel runs it on its tick or later. `kept`: when the pending
    /// timer runs, if its expiry is unchanged ([`TimerWheel::rearm`]).
    fn arm_timer(&self, now: Instant, kept: Option<Instant>, timers: &mut TimerTable) {
        let j = now.jiffies64(self.hz);
        let delta = self.timeout.wrapping_sub(j as u32) as i32;
        let at = if delta <= 0 { now } else { Instant::at_jiffy(j + delta as u64, self.hz) };
        timers.set(Timer::Dack, self.wheel.rearm(now, at, self.hz, kept));
    }
}
