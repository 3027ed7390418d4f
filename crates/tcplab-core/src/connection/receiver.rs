//! The receive half of a TCP endpoint: what Linux does with incoming data
//! and how it acknowledges it (net/ipv4/tcp_input.c `tcp_data_queue` and
//! friends, the ACK-side halves of net/ipv4/tcp_output.c and
//! net/ipv4/tcp_timer.c, `struct inet_connection_sock::icsk_ack` of
//! include/net/inet_connection_sock.h).
//!
//! Modelled on Linux v6.13 (`linux-current`), with the receiver behaviours
//! that kernel eras changed behind [`RcvKnobs`]. Kernel citations below use
//! the form `linux:v6.13:<file>#<function>`.
//!
//! # Contracts
//!
//! - Payload is virtual: the receiver keeps byte counts and sequence
//!   ranges, never bytes. The out-of-order queue is a sorted `Vec` of
//!   disjoint `[start, end)` ranges, so the work per segment depends on the
//!   number of holes, never on the amount of data, and the only allocations
//!   are the amortized growth of that `Vec` and, once per connection, the
//!   box that holds it with the SACK state (at the first out-of-order
//!   segment or D-SACK).
//! - No method panics on any input: any `seq`/`ack`, any flags, zero-length
//!   segments, wrapped sequence numbers, and payload lengths up to
//!   `u32::MAX` (segments above [`MAX_SEGMENT_PAYLOAD`] are dropped, as no
//!   Linux skb can be that large).
//! - Time comes in as `now` and never goes backwards. Delayed-ACK logic runs
//!   on jiffies derived from it ([`Instant::jiffies32`]) as Linux does, so
//!   a 40 ms timer armed mid-jiffy fires on the jiffy boundary.

mod delack;
mod ecn;
mod knobs;
mod ofo_queue;
mod prediction;
mod rcv_rtt;
mod rcvbuf;
mod sack;
mod sack_compress;
mod window;

#[cfg(test)]
mod tests;

use super::negotiated::Negotiated;
use super::timer::TimerTable;
use crate::config::{TcpConfig, TsClock};
use crate::counters::{Counters, Mib};
use crate::rtt::msecs_to_jiffies;
use crate::time::{Duration, Instant};
use delack::{
    DelayedAck, ICSK_ACK_NOMEM, ICSK_ACK_NOW, ICSK_ACK_PUSHED, ICSK_ACK_PUSHED2, ICSK_ACK_SCHED, ICSK_ACK_TIMER,
    TCP_MAX_QUICKACKS,
};
use ecn::EcnEcho;
use knobs::RcvKnobs;
use ofo_queue::{OfoQueue, OfoRange};
use prediction::HeaderPrediction;
use rcv_rtt::RcvRttEst;
use rcvbuf::RcvBuf;
use sack::SackState;
use sack_compress::SackCompress;
use tcplab_wire::{SegmentRepr, SeqNum, TcpFlags, MAX_SACK_BLOCKS};
use window::RcvWindow;

// ---------------------------------------------------------------------------
// Constants (kernel names)
// ---------------------------------------------------------------------------

/// `TCP_MSS_DEFAULT` (include/net/tcp.h), bytes.
pub(super) const TCP_MSS_DEFAULT: u32 = 536;
/// `TCP_MIN_MSS` (include/net/tcp.h), bytes.
pub(super) const TCP_MIN_MSS: u32 = 88;
/// `sizeof(struct tcphdr)`, bytes.
pub(super) const TCP_HDR_LEN: u32 = 20;
/// `MAX_TCP_OPTION_SPACE`, bytes.
const MAX_TCP_OPTION_SPACE: u32 = 40;
/// `TCPOLEN_SACK_BASE_ALIGNED`, bytes.
const TCPOLEN_SACK_BASE_ALIGNED: u32 = 4;
/// `TCPOLEN_SACK_PERBLOCK`, bytes.
const TCPOLEN_SACK_PERBLOCK: u32 = 8;
/// `sysctl_tcp_invalid_ratelimit` default (`HZ/2`), ms.
const TCP_INVALID_RATELIMIT_MS: u32 = 500;
/// `sk_rcvlowat` default (SO_RCVLOWAT), bytes.
const SK_RCVLOWAT: u32 = 1;
/// Largest payload a single segment may carry (bytes); bigger ones are
/// dropped. A GSO/GRO skb is at most 64 KiB (256 KiB with BIG TCP).
pub(crate) const MAX_SEGMENT_PAYLOAD: u32 = 1 << 24;

// ---------------------------------------------------------------------------
// Inputs and outputs
// ---------------------------------------------------------------------------

/// What [`Receiver::on_segment`] and the ACK-timing methods need from the
/// rest of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RcvEnv {
    /// Smoothed RTT in µs, unscaled (`tp->srtt_us >> 3`); 0 before the
    /// first sample. Bounds the delayed-ACK timeout (`tcp_send_delayed_ack`)
    /// and the SACK-compression delay.
    pub srtt_us: u32,
    /// `icsk_rto` (without backoff): caps `ato` growth.
    pub rto: Duration,
    /// What the handshake settled (SACK, timestamps, `TCP_ECN_OK`): the
    /// connection's one copy, which the receiver reads and never keeps.
    pub negotiated: Negotiated,
    /// The congestion control needs ECN (`tcp_ca_needs_ecn`, DCTCP). It
    /// then owns `DEMAND_CWR` on CE marks: DCTCP sets it in its
    /// `CA_EVENT_ECN_IS_CE` handler before `__tcp_ecn_check_ce` tests it,
    /// so the generic CE quick-ACK never fires.
    pub ca_needs_ecn: bool,
    /// Our TSval clock now (`tcp_time_stamp_ts`, including the offset), for
    /// the receiver RTT estimate from echoed timestamps.
    pub tsval_now: u32,
    /// `tcp_ack` took its `old_ack` exit (the ACK is below `snd_una`): then
    /// neither `ts_recent` nor CWR is taken from this segment.
    pub old_ack: bool,
    /// We have sent our FIN (FIN-WAIT-1/2): `tcp_fin` ACKs a FIN at once
    /// instead of entering pingpong mode.
    pub fin_sent: bool,
    /// `skb_shinfo(skb)->gso_size` of the segment being received: the
    /// size of the segments GRO merged into it, 0 for a single one.
    pub gso_size: u32,
    /// The peer's window as its field says it (`snd_wnd >> snd_wscale`),
    /// for header prediction.
    pub snd_wnd_field: u16,
}

/// What one segment did on the receive side ([`Receiver::on_segment`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RcvOutcome {
    /// `tcp_send_ack` was called while processing: send a pure ACK
    /// ([`Receiver::fill_ack`] + [`Receiver::on_ack_sent`]) before anything
    /// else (FIN received in FIN-WAIT, or a compressed SACK flushed before
    /// its block is pushed out).
    pub ack_now: bool,
    /// In-order payload bytes newly readable.
    pub delivered: u32,
    /// The peer's FIN became in-order now.
    pub fin: bool,
    /// ECN event for the congestion control (`__tcp_ecn_check_ce`):
    /// `Some(true)` = `CA_EVENT_ECN_IS_CE`, `Some(false)` =
    /// `CA_EVENT_ECN_NO_CE`; `None` without ECN or for not-ECT segments.
    /// Linux raises them only if `tcp_ca_needs_ecn`.
    pub ce: Option<bool>,
    /// A D-SACK block was generated for this segment.
    pub dsack: bool,
    /// (Part of) the segment went to the out-of-order queue.
    pub ofo: bool,
    /// The segment's data was not accepted (duplicate, outside the window,
    /// or no receive memory).
    pub dropped: bool,
}

/// [`Receiver::ack_snd_check`]'s decision (`__tcp_ack_snd_check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckDecision {
    /// No ACK is owed.
    None,
    /// Send a pure ACK now.
    Now,
    /// A delayed-ACK or SACK-compression timer holds it (`Timer::Dack`,
    /// `Timer::CompressedAck` in the connection's [`TimerTable`]).
    Delayed,
}

/// Result of [`Receiver::read`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReadOutcome {
    /// Bytes handed to the application.
    pub bytes: u64,
    /// `tcp_cleanup_rbuf` wants an ACK now (window update or owed ACK).
    pub ack_now: bool,
}

/// Counters that [`Mib`] may not list yet, looked up by nstat name once.
#[derive(Clone, Copy, Debug, Default)]
struct ExtraMibs {
    ack_compressed: Option<Mib>,
    ofo_drop: Option<Mib>,
    ofo_merge: Option<Mib>,
    rcvq_drop: Option<Mib>,
    zero_window_drop: Option<Mib>,
    prune_called: Option<Mib>,
    rcv_pruned: Option<Mib>,
    ofo_pruned: Option<Mib>,
    ack_skipped_seq: Option<Mib>,
}

impl ExtraMibs {
    fn resolve() -> ExtraMibs {
        ExtraMibs {
            ack_compressed: Mib::from_name("TcpExtTCPAckCompressed"),
            ofo_drop: Mib::from_name("TcpExtTCPOFODrop"),
            ofo_merge: Mib::from_name("TcpExtTCPOFOMerge"),
            rcvq_drop: Mib::from_name("TcpExtTCPRcvQDrop"),
            zero_window_drop: Mib::from_name("TcpExtTCPZeroWindowDrop"),
            prune_called: Mib::from_name("TcpExtPruneCalled"),
            rcv_pruned: Mib::from_name("TcpExtRcvPruned"),
            ofo_pruned: Mib::from_name("TcpExtOfoPruned"),
            ack_skipped_seq: Mib::from_name("TcpExtTCPACKSkippedSeq"),
        }
    }
}

#[inline]
fn mib_add(mib: &mut Counters, m: Option<Mib>, v: u64) {
    if let Some(m) = m {
        mib.add(m, v);
    }
}

// ---------------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------------

/// Linux's receive side: `rcv_nxt`, the receive and out-of-order queues
/// (as byte counts and ranges), window selection, SACK/D-SACK generation,
/// the ECN echo, and the delayed-ACK engine (`icsk_ack`).
///
/// # Calling protocol
///
/// 1. **Handshake.** Client: [`new`](Self::new) sizes the SYN's window
///    ([`syn_window`](Self::syn_window), [`offered_wscale`](Self::offered_wscale));
///    on the SYN-ACK call [`on_syn`](Self::on_syn)`(.., passive = false)`
///    then [`on_established`](Self::on_established). Server: on the SYN
///    call `on_syn(.., passive = true)` (this sizes the SYN-ACK's window),
///    and `on_established` when the handshake's final ACK arrives.
/// 2. **Every segment** in a synchronized state: the connection validates
///    it first (PAWS: [`paws_reject`](Self::paws_reject); sequence:
///    [`acceptable`](Self::acceptable), else [`on_unacceptable`](Self::on_unacceptable)
///    decides the dup-ACK), runs `tcp_ack`, then calls
///    [`on_segment`](Self::on_segment) — also for pure ACKs, which update
///    `ts_recent` and may carry CWR. If the outcome says `ack_now`, send a
///    pure ACK at once.
/// 3. Then, as `tcp_rcv_established` does, transmit whatever data may go
///    (each segment carries the ACK), and **only then** call
///    [`ack_snd_check`](Self::ack_snd_check): an ACK that rode on data is
///    no longer owed. `AckDecision::Now` means send a pure ACK. (Linux's
///    header-prediction fast path skips this check for pure ACKs, and so
///    does the connection for an ACK that [`header_predicted`](Self::header_predicted).)
/// 4. **Every segment sent** except SYNs: [`fill_ack`](Self::fill_ack)
///    writes ack, window, SACK/D-SACK, timestamps and ECE (D-SACK and
///    window state are consumed here, so call it once per segment actually
///    sent); after sending, [`on_ack_sent`](Self::on_ack_sent) with the
///    segment's ack number, and for segments with payload also
///    [`on_data_sent`](Self::on_data_sent).
/// 5. **Timers**: the receiver arms and disarms `Timer::Dack` and
///    `Timer::CompressedAck` in the connection's [`TimerTable`] (passed to
///    the methods that may change them), so the connection's
///    `poll_timeout` has one source. When one expires call
///    [`on_delack_timer`](Self::on_delack_timer) or
///    [`on_comp_sack_timer`](Self::on_comp_sack_timer); `true` means send
///    an ACK now. Spurious calls are no-ops.
/// 6. **Application reads**: [`read`](Self::read); `ack_now` in its result
///    is `tcp_cleanup_rbuf`'s window update.
#[derive(Clone, Debug)]
pub(crate) struct Receiver {
    // ---- configuration ----
    knobs: RcvKnobs,
    /// `ack_on_cwr`: CWR is taken from any segment in `tcp_ack` and ACKed at
    /// once if it carries data (≥ v5.8); else only from data segments in
    /// `tcp_data_queue`, without the immediate ACK (≤ v4.17).
    ack_on_cwr: bool,
    /// The TSval clock's ticks (jiffies ≤ 4.12, ms since), for RTT samples
    /// from echoed timestamps.
    ts_clock: TsClock,
    /// MSS we announced (`tp->advmss`), less the timestamp option on the
    /// active side, bytes.
    advmss: u32,

    // ---- sequence space ----
    rcv_nxt: SeqNum,
    /// First byte the application has not read.
    copied_seq: SeqNum,
    /// `tcpi_bytes_received`.
    bytes_received: u64,
    /// In-order payload bytes not yet read.
    unread: u64,
    fin_received: bool,

    // ---- out-of-order queue, SACK, D-SACK and SACK compression ----
    /// Made by the first out-of-order segment or D-SACK ([`ooo`](Self::ooo)):
    /// most connections never see one, and boxed it costs them 8 bytes
    /// instead of 140 (issue 15: memory per idle connection).
    ooo: Option<Box<OutOfOrder>>,
    /// `net.ipv4.tcp_dsack`: D-SACKs may be sent.
    dsack: bool,

    // ---- the advertised window ----
    win: RcvWindow,

    // ---- receive buffer and its autotuning (DRS) ----
    buf: RcvBuf,
    /// The receiver's RTT estimate (`tp->rcv_rtt_est`).
    rcv_rtt: RcvRttEst,

    // ---- delayed ACK ----
    delack: DelayedAck,

    // ---- timestamps ----
    ts_recent: u32,

    // ---- header prediction ----
    pred: HeaderPrediction,

    // ---- ECN echo ----
    ecn: EcnEcho,

    // ---- misc ----
    /// `tp->last_oow_ack_time`, jiffies; `None` = never.
    last_oow_ack_time: Option<u32>,
    extra_mib: ExtraMibs,
}

/// What a receiver keeps only once data arrives out of order or a
/// duplicate is D-SACKed: `tp->out_of_order_queue`, the SACK blocks and
/// D-SACK it sends (`tp->selective_acks`, `tp->duplicate_sack`) and SACK
/// compression's state.
///
/// Made later than Linux makes it, at that first segment: until then it
/// would hold its initial values, except `tp->compressed_ack_rcv_nxt`,
/// which Linux sets at the handshake and the model leaves at 0. That
/// changes nothing: the dup-ACK count restarts from 0 whenever `rcv_nxt`
/// differs from it, and it is 0 until out-of-order data arrives.
#[derive(Clone, Debug)]
struct OutOfOrder {
    ofo: OfoQueue,
    sack: SackState,
    comp: SackCompress,
}

impl OutOfOrder {
    fn new(dsack: bool) -> OutOfOrder {
        OutOfOrder { ofo: OfoQueue::default(), sack: SackState::new(dsack), comp: SackCompress::new() }
    }
}

impl Receiver {
    // ------------------------------------------------------------------
    // Construction and handshake
    // ------------------------------------------------------------------

    /// A receiver for an active open: the SYN's window is sized as
    /// `tcp_connect_init` does. Era knobs follow [`RcvKnobs::for_config`].
    pub(crate) fn new(cfg: &TcpConfig) -> Receiver {
        let knobs = RcvKnobs::for_config(cfg);
        let advmss = cfg.advmss().max(TCP_MIN_MSS);
        let mut r = Receiver {
            knobs,
            ack_on_cwr: cfg.ack_on_cwr,
            ts_clock: cfg.ts_clock,
            advmss,
            rcv_nxt: SeqNum(0),
            copied_seq: SeqNum(0),
            bytes_received: 0,
            unread: 0,
            fin_received: false,
            ooo: None,
            dsack: cfg.tcp_dsack,
            win: RcvWindow::new(cfg.tcp_window_scaling),
            buf: RcvBuf::new(cfg, knobs.measured_scaling_ratio),
            rcv_rtt: RcvRttEst::default(),
            delack: DelayedAck::new(if cfg.hz == 0 { 1000 } else { cfg.hz }, cfg.timer_wheel),
            ts_recent: 0,
            pred: HeaderPrediction::default(),
            ecn: EcnEcho::default(),
            last_oow_ack_time: None,
            extra_mib: ExtraMibs::resolve(),
        };
        // tcp_connect_init: a locked buffer also clamps the window.
        let clamp = if r.buf.locked() { r.buf.full_space().max(0) as u32 } else { 0 };
        let space = r.buf.full_space().max(0) as u32;
        r.win.select_initial(space, r.advmss, clamp, cfg.tcp_window_scaling, r.buf.rmem_max(), r.knobs.init_rwnd_segs);
        r
    }

    /// The peer's SYN (`passive`, `tcp_openreq_init_rwin` and
    /// `tcp_create_openreq_child`) or SYN-ACK (`!passive`,
    /// `tcp_rcv_synsent_state_process`): records the peer's ISN and
    /// `ts_recent`, applies what the handshake settled (`negotiated`,
    /// already parsed from `opts` by the connection: SACK, timestamps,
    /// window scaling, the peer's MSS), and sizes the SYN-ACK's window on
    /// the passive side.
    pub(crate) fn on_syn(
        &mut self,
        irs: SeqNum,
        opts: &tcplab_wire::TcpOptions,
        negotiated: &Negotiated,
        passive: bool,
    ) {
        //= linux:v6.13:net/ipv4/tcp_minisocks.c#tcp_openreq_init_rwin
        let base_mss = self.advmss;
        let ts_len = negotiated.options_len();
        if passive {
            // tcp_openreq_init_rwin: the SYN-ACK window is computed for the
            // MSS the peer's segments will carry (less timestamps).
            let full = self.buf.full_space().max(0) as u32;
            let clamp = if self.buf.locked() { full } else { 0 };
            let mss = self.advmss.saturating_sub(ts_len);
            let wscale_ok = negotiated.wscale_ok;
            self.win.select_initial(full, mss, clamp, wscale_ok, self.buf.rmem_max(), self.knobs.init_rwnd_segs);
        } else {
            if !negotiated.wscale_ok {
                // "RFC1323: The window in SYN & SYN/ACK segments is never
                // scaled" — and without the peer's option we do not scale.
                self.win.rcv_wscale = 0;
                self.win.wscale_ok = false;
                self.win.window_clamp = self.win.window_clamp.min(u16::MAX as u32);
            }
            if negotiated.tstamp_ok {
                // The active side subtracts the option from advmss.
                self.advmss = self.advmss.saturating_sub(ts_len).max(TCP_MIN_MSS);
            }
        }
        if let (true, Some((tsval, _))) = (negotiated.tstamp_ok, opts.timestamp) {
            self.ts_recent = tsval;
        }
        self.rcv_nxt = irs + 1;
        self.win.rcv_wup = self.rcv_nxt;
        self.copied_seq = self.rcv_nxt;
        self.buf.on_syn(self.rcv_nxt);
        // tcp_initialize_rcv_mss: under-estimate the peer's MSS. (The
        // clamp's floor of 48 is below TCP_MIN_MSS, which bounds the hint.)
        let mss_cache = negotiated.mss_clamp.min(base_mss).saturating_sub(ts_len);
        let hint = self.advmss.min(mss_cache).min(self.win.rcv_wnd / 2).clamp(TCP_MIN_MSS, TCP_MSS_DEFAULT);
        self.delack.rcv_mss = hint;
        if passive && negotiated.tstamp_ok {
            // tcp_rcv_state_process, TCP_SYN_RECV: the passive side too
            // subtracts the option from advmss, when the handshake
            // completes and before tcp_init_transfer, so that
            // tcp_init_buffer_space's reserved segment and
            // tcp_grow_window's 2·advmss steps are 1,448 bytes, as the
            // kernel backend's capture shows (docs/ALIGNMENT.md).
            //= linux:v6.12:net/ipv4/tcp_input.c#tcp_rcv_state_process
            self.advmss = self.advmss.saturating_sub(ts_len).max(TCP_MIN_MSS);
        }
    }

    /// The connection reached ESTABLISHED (`tcp_finish_connect` /
    /// `tcp_create_openreq_child` time stamps, then `tcp_init_buffer_space`):
    /// fixes `window_clamp` below the buffer, keeping one segment and
    /// `1/2^tcp_app_win` for the application, and starts the first DRS round.
    pub(crate) fn on_established(&mut self, now: Instant) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_init_buffer_space
        self.delack.on_established(now);
        let maxwin = self.buf.full_space().max(0) as u32;
        let space = self.win.init_buffer_space(maxwin, self.advmss);
        self.buf.init_space(now, self.copied_seq, space);
    }

    /// Window field of our SYN or SYN-ACK (never scaled).
    pub(crate) fn syn_window(&self) -> u16 {
        self.win.rcv_wnd.min(u16::MAX as u32) as u16
    }

    /// `tp->advmss` (`tcpi_advmss`).
    pub(crate) fn adv_mss(&self) -> u32 {
        self.advmss
    }

    /// Window-scale option for our SYN or SYN-ACK, if we send one.
    pub(crate) fn offered_wscale(&self) -> Option<u8> {
        self.win.wscale_ok.then_some(self.win.rcv_wscale)
    }

    // ------------------------------------------------------------------
    // Incoming segments
    // ------------------------------------------------------------------

    /// `tcp_sequence`: does any part of `seg` fall inside the window?
    /// (Controls are checked against `rcv_wup`, "borrowed from freebsd".)
    pub(crate) fn acceptable(&self, seg: &SegmentRepr) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_sequence
        let end = seg_end_syn(seg);
        !end.before(self.win.rcv_wup) && !seg.seq.after(self.rcv_nxt + self.receive_window())
    }

    /// PAWS (`tcp_paws_discard` without its disordered-ACK exception, which
    /// needs sender state): the segment's TSval is older than `ts_recent`
    /// by more than `TCP_PAWS_WINDOW`.
    pub(crate) fn paws_reject(&self, seg: &SegmentRepr, negotiated: &Negotiated) -> bool {
        match (negotiated.tstamp_ok, seg.options.timestamp) {
            (true, Some((tsval, _))) => !self.paws_check(tsval, 1),
            _ => false,
        }
    }

    /// `tcp_paws_check`: `tsval` is recent enough (within `paws_win`), or
    /// `ts_recent` is 0 ("Some OSes send SYN and SYNACK messages with
    /// tsval=0").
    fn paws_check(&self, tsval: u32, paws_win: i32) -> bool {
        //= linux:v6.13:include/net/tcp.h#tcp_paws_check
        (self.ts_recent.wrapping_sub(tsval) as i32) <= paws_win || self.ts_recent == 0
    }

    /// An unacceptable segment (failed [`acceptable`](Self::acceptable) or
    /// PAWS): `tcp_send_dupack` behind `tcp_oow_rate_limited`. Duplicate
    /// data counts `DelayedACKLost`, enters quick-ACK mode and yields a
    /// D-SACK. Returns whether to send an ACK now.
    pub(crate) fn on_unacceptable(
        &mut self,
        now: Instant,
        seg: &SegmentRepr,
        negotiated: &Negotiated,
        mib: &mut Counters,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_send_dupack
        if seg.flags.rst() {
            return false;
        }
        let seq = seg.seq;
        let end = seg_end_syn(seg);
        // tcp_oow_rate_limited: data without SYN is never rate limited.
        if seq == end || seg.flags.syn() {
            let j = self.delack.jiffies(now);
            if let Some(last) = self.last_oow_ack_time {
                let elapsed = j.wrapping_sub(last) as i32;
                if elapsed >= 0 && (elapsed as u64) < msecs_to_jiffies(TCP_INVALID_RATELIMIT_MS, self.delack.hz()) {
                    mib_add(mib, self.extra_mib.ack_skipped_seq, 1);
                    return false;
                }
            }
            self.last_oow_ack_time = Some(j);
        }
        if seq != end && seq.before(self.rcv_nxt) {
            mib.inc(Mib::TcpExtDelayedACKLost);
            self.enter_quickack_mode(TCP_MAX_QUICKACKS);
            let e = if end.after(self.rcv_nxt) { self.rcv_nxt } else { end };
            self.dsack_set(negotiated.sack_ok, seq, e, mib);
        }
        true
    }

    /// One acceptable segment in a synchronized state, after `tcp_ack`:
    /// the receiver's part of `tcp_ack` (`tcp_replace_ts_recent`,
    /// `tcp_ecn_accept_cwr`), `tcp_rcv_rtt_measure_ts`, and
    /// `tcp_data_queue`. The ACK decision follows in
    /// [`ack_snd_check`](Self::ack_snd_check).
    ///
    /// Inlined into its one caller so that the outcome is not copied out
    /// through the stack: written a byte at a time and read back with
    /// wider loads, that copy stalled on store forwarding for every
    /// segment.
    #[inline(always)]
    pub(crate) fn on_segment(
        &mut self,
        now: Instant,
        seg: &SegmentRepr,
        env: &RcvEnv,
        timers: &mut TimerTable,
        mib: &mut Counters,
    ) -> RcvOutcome {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_rcv_established
        let mut out = RcvOutcome::default();
        if let Some(o) = self.ooo.as_deref_mut() {
            o.sack.dsack_this_seg = false;
        }
        if seg.payload_len > MAX_SEGMENT_PAYLOAD {
            out.dropped = true;
            return out;
        }
        let seq = seg.seq;
        let end_seq = seg_end(seg);

        let tstamp_ok = env.negotiated.tstamp_ok;
        if !env.old_ack {
            self.replace_ts_recent(seg, tstamp_ok);
            if self.ack_on_cwr {
                // tcp_ack: "We accept CWR on pure ACKs to be more robust
                // with widely-deployed TCP implementations that do this."
                self.ecn_accept_cwr(seg, seq != end_seq);
            }
        }
        if let (true, Some((_, tsecr))) = (tstamp_ok, seg.options.timestamp) {
            let full_sized = end_seq - seq >= self.delack.rcv_mss;
            self.rcv_rtt.measure_ts(tsecr, env.tsval_now, full_sized, self.ts_clock, self.delack.hz());
        }

        // After our FIN-reception, data at or beyond rcv_nxt is not queued
        // (tcp_rcv_state_process in CLOSE-WAIT/CLOSING/LAST-ACK).
        let after_fin = self.fin_received && !seq.before(self.rcv_nxt);
        if seq != end_seq && !after_fin {
            self.data_queue(now, seg, seq, end_seq, env, timers, mib, &mut out);
        }
        out.dsack = self.ooo.as_deref().is_some_and(|o| o.sack.dsack_this_seg);
        out
    }

    /// `tcp_replace_ts_recent`: take the peer's TSval if the segment starts
    /// at or before the last window edge we ACKed (RFC 7323
    /// `Last.ACK.sent`) and is not older than `ts_recent`.
    fn replace_ts_recent(&mut self, seg: &SegmentRepr, tstamp_ok: bool) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_replace_ts_recent
        if let (true, Some((tsval, _))) = (tstamp_ok, seg.options.timestamp) {
            if !seg.seq.after(self.win.rcv_wup) && self.paws_check(tsval, 0) {
                self.ts_recent = tsval;
            }
        }
    }

    /// `tcp_ecn_accept_cwr`: the sender reduced its window, stop echoing
    /// ECE. Current kernels also ACK a CWR data segment at once: "its cwnd
    /// may be very low (even just 1 packet)".
    fn ecn_accept_cwr(&mut self, seg: &SegmentRepr, has_data: bool) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_ecn_accept_cwr
        if self.ecn.accept_cwr(seg.flags.cwr()) && self.ack_on_cwr && has_data {
            self.delack.pending |= ICSK_ACK_NOW;
        }
    }

    /// `tcp_data_queue`: in-order data goes to the receive queue, old data
    /// is D-SACKed and ACKed quickly, data beyond the window is dropped,
    /// the rest goes to the out-of-order queue.
    #[allow(clippy::too_many_arguments)]
    fn data_queue(
        &mut self,
        now: Instant,
        seg: &SegmentRepr,
        seq: SeqNum,
        end_seq: SeqNum,
        env: &RcvEnv,
        timers: &mut TimerTable,
        mib: &mut Counters,
        out: &mut RcvOutcome,
    ) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_data_queue
        if !self.ack_on_cwr {
            // ≤ v4.17: CWR is taken from data segments only, here.
            self.ecn_accept_cwr(seg, true);
        }
        // "tp->rx_opt.dsack = 0": an unsent D-SACK is superseded.
        if let Some(o) = self.ooo.as_deref_mut() {
            o.sack.duplicate_sack = None;
        }
        let rwin = self.receive_window();

        if seq == self.rcv_nxt {
            // "Some stacks are known to send bare FIN packets in a loop
            // even if we send RWIN 0": accept a bare FIN into a zero window.
            if rwin == 0 && !(seg.payload_len == 0 && seg.flags.fin()) {
                mib_add(mib, self.extra_mib.zero_window_drop, 1);
                self.out_of_window(out);
                return;
            }
            self.queue_and_out(now, seg, seq, end_seq, env, mib, out);
            return;
        }
        if !end_seq.after(self.rcv_nxt) {
            // "A retransmit, 2nd most common case. Force an immediate ack."
            mib.inc(Mib::TcpExtDelayedACKLost);
            self.dsack_set(env.negotiated.sack_ok, seq, end_seq, mib);
            self.out_of_window(out);
            return;
        }
        // "Out of window. F.e. zero window probe."
        if !seq.before(self.rcv_nxt + rwin) {
            self.out_of_window(out);
            return;
        }
        if seq.before(self.rcv_nxt) {
            // "Partial packet, seq < rcv_next < end_seq"
            self.dsack_set(env.negotiated.sack_ok, seq, self.rcv_nxt, mib);
            if rwin == 0 {
                mib_add(mib, self.extra_mib.zero_window_drop, 1);
                self.out_of_window(out);
                return;
            }
            self.queue_and_out(now, seg, seq, end_seq, env, mib, out);
            return;
        }
        self.data_queue_ofo(seg, seq, end_seq, env, timers, mib, out);
    }

    /// `tcp_data_queue`'s `out_of_window` exit: drop, and ACK quickly so
    /// the sender learns what we have.
    fn out_of_window(&mut self, out: &mut RcvOutcome) {
        self.enter_quickack_mode(TCP_MAX_QUICKACKS);
        self.delack.pending |= ICSK_ACK_SCHED;
        out.dropped = true;
    }

    /// `tcp_data_queue`'s `queue_and_out`: charge memory, advance
    /// `rcv_nxt` (`tcp_queue_rcv`), run `tcp_event_data_recv` and `tcp_fin`,
    /// pull what became in-order from the out-of-order queue.
    #[allow(clippy::too_many_arguments)]
    fn queue_and_out(
        &mut self,
        now: Instant,
        seg: &SegmentRepr,
        seq: SeqNum,
        end_seq: SeqNum,
        env: &RcvEnv,
        mib: &mut Counters,
        out: &mut RcvOutcome,
    ) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_data_queue
        let ts = self.buf.truesize(seg.payload_len);
        if !self.try_rmem_schedule(seq, mib) {
            // "TODO: maybe ratelimit these WIN 0 ACK ?"
            self.delack.pending |= ICSK_ACK_NOMEM | ICSK_ACK_NOW | ICSK_ACK_SCHED;
            if self.unread > 0 && seg.payload_len > 0 {
                mib_add(mib, self.extra_mib.rcvq_drop, 1);
                out.dropped = true;
                return;
            }
            // sk_forced_mem_schedule: an empty queue always takes one skb.
        }
        let fin = seg.flags.fin();
        let advance = end_seq - self.rcv_nxt;
        let data = advance.saturating_sub(fin as u32);
        self.rcv_nxt = end_seq;
        self.bytes_received += advance as u64;
        self.unread += data as u64;
        self.buf.rcvq_truesize += ts;
        out.delivered = out.delivered.saturating_add(data);

        if seg.payload_len > 0 {
            self.event_data_recv(now, seg, env, out);
        }
        if fin {
            self.tcp_fin(env, out);
        }
        if !self.ofo_is_empty() {
            self.ofo_queue(env, mib, out);
            // "RFC5681. 4.2. SHOULD send immediate ACK, when gap in queue
            // is filled."
            if self.ofo_is_empty() {
                if self.knobs.hole_fill_ack_now {
                    self.delack.pending |= ICSK_ACK_NOW;
                } else {
                    self.delack.exit_pingpong_mode();
                }
            }
        }
        if let Some(o) = self.ooo.as_deref_mut() {
            if o.sack.num_sacks > 0 {
                o.sack.remove(self.rcv_nxt, o.ofo.is_empty());
            }
        }
        self.fast_path_check(env.negotiated.tstamp_ok, env.snd_wnd_field);
    }

    /// `tcp_fast_path_check`: predict headers again once nothing stands
    /// in the way (no out-of-order data, an open window, memory within
    /// the buffer; urgent data is not modelled).
    pub(crate) fn fast_path_check(&mut self, tstamp_ok: bool, snd_wnd_field: u16) {
        if self.ofo_is_empty() && self.win.rcv_wnd != 0 && self.rmem_alloc() < self.buf.rcvbuf as u64 {
            self.pred.on(tstamp_ok, snd_wnd_field);
        }
    }

    /// `tcp_fast_path_on`: `tcp_rcv_state_process` entering ESTABLISHED,
    /// `tcp_finish_connect` without window scaling.
    pub(crate) fn fast_path_on(&mut self, tstamp_ok: bool, snd_wnd_field: u16) {
        self.pred.on(tstamp_ok, snd_wnd_field);
    }

    /// `pred_flags = 0`: `tcp_ack_update_window` on a new window, before
    /// it checks again.
    pub(crate) fn fast_path_off(&mut self) {
        self.pred.off();
    }

    /// `tcp_rcv_established`'s header prediction: the predicted header,
    /// `seq == rcv_nxt`, and with timestamps a TSval not older than
    /// `ts_recent` (the ACK's range is the caller's test).
    #[inline]
    pub(crate) fn header_predicted(&self, seg: &SegmentRepr, tstamp_ok: bool) -> bool {
        self.pred.matches(seg)
            && seg.seq == self.rcv_nxt
            && (!tstamp_ok
                || seg.options.timestamp.is_some_and(|(tsval, _)| tsval.wrapping_sub(self.ts_recent) as i32 >= 0))
    }

    /// `tcp_event_data_recv`, per in-order data segment: schedule an ACK,
    /// learn the peer's MSS, sample the receiver RTT, adapt `ato` to the
    /// inter-arrival gap (DaveM: "When a connection starts up, we want to
    /// ack as quickly as possible"), check ECN, and grow the window.
    fn event_data_recv(&mut self, now: Instant, seg: &SegmentRepr, env: &RcvEnv, out: &mut RcvOutcome) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_event_data_recv
        self.delack.pending |= ICSK_ACK_SCHED;
        self.measure_rcv_mss(seg, env);
        self.rcv_rtt.measure(now, self.rcv_nxt, self.win.rcv_wnd);
        self.delack.on_data_recv(now, env.rto, self.win.rcv_wnd);
        self.ecn_check_ce(seg, env, out);
        if seg.payload_len >= 128 {
            self.grow_window(seg.payload_len);
        }
    }

    /// `tcp_measure_rcv_mss` ([`DelayedAck::measure_rcv_mss`]). A segment
    /// above the MSS estimate also refreshes `scaling_ratio` (≥ v6.5) and
    /// `window_clamp` with it (≥ v6.12). A GRO-merged segment is measured
    /// by its `gso_size` ("skb->len may jitter"), its ratio by the whole.
    ///
    /// 6.12 writes the clamp as it is (`WRITE_ONCE(tp->window_clamp,
    /// val)`), leaving `rcv_ssthresh` where `tcp_init_buffer_space` put it
    /// (one segment below the buffer's first window of 65,536 with the
    /// default `tcp_rmem`); later kernels call `tcp_set_window_clamp`
    /// here, which first raises `rcv_ssthresh` to `min(rcv_wnd, clamp)`
    /// (65,160). The kernel backend's capture shows 6.12's: the first ACK
    /// of data advertises 524, not 532 (docs/ALIGNMENT.md).
    fn measure_rcv_mss(&mut self, seg: &SegmentRepr, env: &RcvEnv) {
        //= linux:v6.12:net/ipv4/tcp_input.c#tcp_measure_rcv_mss
        let negotiated = &env.negotiated;
        let len = if env.gso_size != 0 { env.gso_size } else { seg.payload_len };
        if len > self.delack.rcv_mss && self.buf.measure_scaling_ratio(seg.payload_len) {
            self.win.window_clamp = self.buf.full_space().max(0) as u32;
            self.buf.cap_space(self.win.window_clamp);
        }
        // tp->tcp_header_len: the header and the options every segment carries.
        let tcp_header_len = TCP_HDR_LEN + negotiated.options_len();
        self.delack.measure_rcv_mss(seg, len, self.advmss, tcp_header_len);
    }

    /// `tcp_grow_window` ([`RcvWindow::grow`]); a grown window earns a
    /// quick ACK so that the peer hears of it at once.
    fn grow_window(&mut self, len: u32) {
        let (buf, ofo) = (&self.buf, self.ofo_truesize());
        if self.win.grow(
            len,
            buf.truesize(len),
            buf,
            ofo,
            self.advmss,
            self.delack.rcv_mss,
            self.knobs.grow_window_room,
        ) {
            self.delack.quick |= 1;
        }
    }

    /// `__tcp_ecn_check_ce` ([`EcnEcho::check_ce`]), with the quick ACKs
    /// it may ask for.
    fn ecn_check_ce(&mut self, seg: &SegmentRepr, env: &RcvEnv, out: &mut RcvOutcome) {
        if env.negotiated.ecn_ok && self.ecn.check_ce(seg.ecn, env.ca_needs_ecn, &mut out.ce) {
            self.enter_quickack_mode(self.knobs.ecn_quickacks);
        }
    }

    /// `tcp_fin`: the peer is done sending. ESTABLISHED moves to CLOSE-WAIT
    /// in pingpong mode (a reply is expected); in FIN-WAIT we ACK at once.
    /// "It _is_ possible, that we have something out-of-order _after_ FIN
    /// ... For now drop them."
    fn tcp_fin(&mut self, env: &RcvEnv, out: &mut RcvOutcome) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_fin
        self.delack.pending |= ICSK_ACK_SCHED;
        self.fin_received = true;
        out.fin = true;
        if env.fin_sent {
            out.ack_now = true;
        } else {
            self.delack.enter_pingpong_mode();
        }
        if let Some(o) = self.ooo.as_deref_mut() {
            o.ofo.purge();
            if env.negotiated.sack_ok {
                o.sack.reset();
            }
        }
    }

    /// `tcp_ofo_queue`: move what `rcv_nxt` reached from the out-of-order
    /// queue, D-SACKing any overlap with data already in order.
    fn ofo_queue(&mut self, env: &RcvEnv, mib: &mut Counters, out: &mut RcvOutcome) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_ofo_queue
        let Some(o) = self.ooo.as_deref_mut() else {
            return;
        };
        let mut dsack_high = self.rcv_nxt;
        let mut taken = 0;
        let mut fin = false;
        while let Some(&r) = o.ofo.ranges().get(taken) {
            if r.start.after(self.rcv_nxt) {
                break;
            }
            if r.start.before(dsack_high) {
                let dsack = dsack_high;
                if r.end.before(dsack_high) {
                    dsack_high = r.end;
                }
                o.sack.dsack_extend(env.negotiated.sack_ok, r.start, dsack, self.rcv_nxt, mib);
            }
            taken += 1;
            if !r.end.after(self.rcv_nxt) {
                continue;
            }
            let advance = r.end - self.rcv_nxt;
            let data = advance.saturating_sub(r.fin as u32);
            self.rcv_nxt = r.end;
            self.bytes_received += advance as u64;
            self.unread += data as u64;
            self.buf.rcvq_truesize += r.truesize;
            out.delivered = out.delivered.saturating_add(data);
            if r.fin {
                fin = true;
                break;
            }
        }
        o.ofo.dequeue_front(taken);
        if fin {
            // tcp_fin purges the rest of the queue.
            self.tcp_fin(env, out);
        }
    }

    /// `tcp_data_queue_ofo`: queue a segment beyond a hole (overlaps are
    /// D-SACKed by [`OfoQueue::insert`]) and update the SACK blocks.
    #[allow(clippy::too_many_arguments)]
    fn data_queue_ofo(
        &mut self,
        seg: &SegmentRepr,
        seq: SeqNum,
        end_seq: SeqNum,
        env: &RcvEnv,
        timers: &mut TimerTable,
        mib: &mut Counters,
        out: &mut RcvOutcome,
    ) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_data_queue_ofo
        self.ecn_check_ce(seg, env, out);
        let ts = self.buf.truesize(seg.payload_len);
        if !self.try_rmem_schedule(seq, mib) {
            mib_add(mib, self.extra_mib.ofo_drop, 1);
            out.dropped = true;
            return;
        }
        // "Disable header prediction."
        self.pred.off();
        self.delack.pending |= ICSK_ACK_SCHED;
        mib.inc(Mib::TcpExtTCPOFOQueue);
        out.ofo = true;
        let fin = seg.flags.fin();
        let new = OfoRange { start: seq, end: end_seq, truesize: ts, fin };
        let sack_ok = env.negotiated.sack_ok;

        let (rcv_nxt, extra_mib) = (self.rcv_nxt, self.extra_mib);
        let OutOfOrder { ofo, sack, comp } = self.ooo();
        if ofo.is_empty() {
            // "Initial out of order segment, build 1 SACK."
            sack.first_ofo_skb(sack_ok, seq, end_seq);
            ofo.push_first(new);
            if sack_ok {
                self.grow_window(seg.payload_len);
            }
            return;
        }
        let kept = ofo.insert(new, rcv_nxt, sack, sack_ok, mib, extra_mib.ofo_merge);
        if sack_ok {
            let ack_compressed = extra_mib.ack_compressed;
            sack.new_ofo_skb(seq, end_seq, |sack| {
                if comp.send_ack(sack, timers, mib, ack_compressed) {
                    out.ack_now = true;
                }
            });
        }
        if !kept {
            out.dropped = true;
        } else if sack_ok {
            // "For non sack flows, do not grow window to force DUPACK and
            // trigger fast retransmit."
            self.grow_window(seg.payload_len);
        }
    }

    // ------------------------------------------------------------------
    // Receive memory
    // ------------------------------------------------------------------

    /// The out-of-order state, made on first use.
    fn ooo(&mut self) -> &mut OutOfOrder {
        let dsack = self.dsack;
        self.ooo.get_or_insert_with(|| Box::new(OutOfOrder::new(dsack)))
    }

    fn ofo_is_empty(&self) -> bool {
        self.ooo.as_deref().is_none_or(|o| o.ofo.is_empty())
    }

    /// Truesize of the out-of-order queue, bytes.
    fn ofo_truesize(&self) -> u64 {
        self.ooo.as_deref().map_or(0, |o| o.ofo.truesize())
    }

    /// `tcp_dsack_set` ([`SackState::dsack_set`]), making the out-of-order
    /// state only when a D-SACK will be sent.
    fn dsack_set(&mut self, sack_ok: bool, seq: SeqNum, end: SeqNum, mib: &mut Counters) {
        if sack_ok && self.dsack {
            let rcv_nxt = self.rcv_nxt;
            self.ooo().sack.dsack_set(sack_ok, seq, end, rcv_nxt, mib);
        }
    }

    /// `sk_rmem_alloc`: truesize of everything queued, bytes.
    fn rmem_alloc(&self) -> u64 {
        self.buf.rmem_alloc(self.ofo_truesize())
    }

    /// `tcp_try_rmem_schedule`: is there room to queue more data? (The
    /// model charges the segment after the check, so its size does not
    /// enter.) Over `sk_rcvbuf`, `tcp_prune_queue` first.
    fn try_rmem_schedule(&mut self, in_seq: SeqNum, mib: &mut Counters) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_try_rmem_schedule
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        self.prune_queue(in_seq, mib)
    }

    /// `tcp_prune_queue`: raise the buffer if autotuning may
    /// (`tcp_clamp_window`), collapse the queues, then drop out-of-order
    /// data from the top. Returns whether memory is within `sk_rcvbuf`.
    fn prune_queue(&mut self, in_seq: SeqNum, mib: &mut Counters) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_prune_queue
        mib_add(mib, self.extra_mib.prune_called, 1);
        if self.rmem_alloc() >= self.buf.rcvbuf as u64 {
            self.clamp_window();
        }
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        // tcp_collapse_ofo_queue + tcp_collapse of the receive queue.
        if let Some(o) = self.ooo.as_deref_mut() {
            o.ofo.collapse();
        }
        self.buf.collapse(self.unread);
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        self.prune_ofo_queue(in_seq, mib);
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        mib_add(mib, self.extra_mib.rcv_pruned, 1);
        // "Massive buffer overcommit."
        self.pred.off();
        false
    }

    /// `tcp_clamp_window`: "Recalculate window clamp after socket hit its
    /// memory bounds."
    fn clamp_window(&mut self) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_clamp_window
        self.delack.quick = 0;
        let rmem = self.rmem_alloc().min(u32::MAX as u64) as u32;
        self.buf.clamp(rmem);
        if rmem > self.buf.rcvbuf {
            self.win.rcv_ssthresh = self.win.window_clamp.min(2 * self.advmss);
        }
    }

    /// `tcp_prune_ofo_queue`: drop out-of-order ranges from the highest,
    /// stopping where the incoming segment would land last, and forget the
    /// SACK state (Linux tests `rx_opt.sack_ok` first; without SACK no block
    /// is ever recorded, so the reset is a no-op then).
    fn prune_ofo_queue(&mut self, in_seq: SeqNum, mib: &mut Counters) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_prune_ofo_queue
        let Some(o) = self.ooo.as_deref_mut() else {
            return;
        };
        if o.ofo.prune(in_seq, self.buf.rcvbuf, self.buf.rcvq_truesize) {
            mib_add(mib, self.extra_mib.ofo_pruned, 1);
            o.sack.reset();
        }
    }

    // ------------------------------------------------------------------
    // Window selection
    // ------------------------------------------------------------------

    /// `tcp_receive_window`: what is left of the window last advertised.
    fn receive_window(&self) -> u32 {
        self.win.receive_window(self.rcv_nxt)
    }

    /// `__tcp_select_window` for the buffer as it is now; a buffer under
    /// half free ends quick-ACK mode.
    fn select_window_raw(&mut self) -> u32 {
        let free_space = self.buf.tcp_space(self.ofo_truesize());
        let (window, short) = self.win.select_raw(self.delack.rcv_mss, free_space, self.buf.full_space());
        if short {
            self.delack.quick = 0;
        }
        window
    }

    /// `tcp_select_window`: the scaled window field for an outgoing segment.
    fn select_window(&mut self) -> u16 {
        let new_win = self.select_window_raw();
        let field = self.win.select(self.rcv_nxt, new_win);
        if field == 0 {
            // "If we advertise zero window, disable fast path."
            self.pred.off();
        }
        field
    }

    // ------------------------------------------------------------------
    // ACK decisions
    // ------------------------------------------------------------------

    /// `tcp_ack_snd_check` → `__tcp_ack_snd_check`, after the segment's
    /// data was queued and any data was sent. ACK now if more than one
    /// full segment is unacknowledged and the window's right edge does not
    /// move back, in quick-ACK mode, when `ICSK_ACK_NOW` is pending, or for
    /// out-of-order data (the first three dup-ACKs per `rcv_nxt`; later ones
    /// are compressed for min(1 ms, 5 % of RTT)); otherwise delay it.
    pub(crate) fn ack_snd_check(&mut self, now: Instant, env: &RcvEnv, timers: &mut TimerTable) -> AckDecision {
        //= linux:v6.13:net/ipv4/tcp_input.c#__tcp_ack_snd_check
        if self.delack.pending & ICSK_ACK_SCHED == 0 {
            // "We sent a data segment already."
            return AckDecision::None;
        }
        let unacked = self.rcv_nxt - self.win.rcv_wup;
        let more_than_one = unacked > self.delack.rcv_mss
            && ((self.rcv_nxt - self.copied_seq) < SK_RCVLOWAT || self.select_window_raw() >= self.win.rcv_wnd);
        if more_than_one || self.delack.in_quickack_mode() || self.delack.pending & ICSK_ACK_NOW != 0 {
            return AckDecision::Now;
        }
        let o = match self.ooo.as_deref_mut() {
            Some(o) if !o.ofo.is_empty() => o,
            _ => return self.delack.send_delayed_ack(now, env.srtt_us, self.knobs.delack_max_cap, timers),
        };
        if !env.negotiated.sack_ok {
            return AckDecision::Now;
        }
        o.comp.ack_snd_check(now, self.rcv_nxt, self.rcv_rtt.rtt_us, env.srtt_us, &self.knobs, timers)
    }

    /// `tcp_delack_timer_handler`: the delayed ACK is due. A missed delayed
    /// ACK means `ato` was too short: double it (up to the RTO); in pingpong
    /// mode leave it and restart from 40 ms. Counts `DelayedACKs`; `true` =
    /// send an ACK now.
    pub(crate) fn on_delack_timer(
        &mut self,
        now: Instant,
        env: &RcvEnv,
        timers: &mut TimerTable,
        mib: &mut Counters,
    ) -> bool {
        self.delack.on_timer(now, env.rto, timers, mib)
    }

    /// `tcp_compressed_ack_kick`: the SACK-compression delay is over; send
    /// one ACK standing for the compressed ones. `true` = send now.
    pub(crate) fn on_comp_sack_timer(&mut self, now: Instant, timers: &mut TimerTable) -> bool {
        // Only held ACKs arm the timer, and only out-of-order data holds them.
        self.ooo.as_deref_mut().is_some_and(|o| o.comp.on_timer(now, timers))
    }

    /// `tcp_enter_quickack_mode`, sized by the window last advertised.
    fn enter_quickack_mode(&mut self, max: u8) {
        self.delack.enter_quickack_mode(self.win.rcv_wnd, max);
    }

    // ------------------------------------------------------------------
    // Outgoing segments
    // ------------------------------------------------------------------

    /// Fills the receive-side fields of an outgoing segment, as
    /// `__tcp_transmit_skb` does: ack = `rcv_nxt` with the ACK flag, the
    /// window (`tcp_select_window`, which records it as advertised; raw
    /// `rcv_wnd` on a SYN), timestamps (TSval from the caller, TSecr =
    /// `ts_recent`), SACK blocks (`tcp_established_options`: D-SACK first,
    /// then most recent first, as many as fit — 3 with timestamps, 4
    /// without; the D-SACK is consumed), and ECE while `DEMAND_CWR`; the
    /// options as `negotiated`.
    pub(crate) fn fill_ack(&mut self, seg: &mut SegmentRepr, tsval: u32, negotiated: &Negotiated) {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_established_options
        seg.ack = self.rcv_nxt;
        seg.flags.insert(TcpFlags::ACK);
        let syn = seg.flags.syn();
        seg.window = if syn { self.syn_window() } else { self.select_window() };
        seg.options.timestamp = negotiated.tstamp_ok.then_some((tsval, self.ts_recent));
        seg.options.sack_len = 0;
        if syn {
            return;
        }
        let remaining = MAX_TCP_OPTION_SPACE - negotiated.options_len();
        let room = if remaining >= TCPOLEN_SACK_BASE_ALIGNED + TCPOLEN_SACK_PERBLOCK {
            ((remaining - TCPOLEN_SACK_BASE_ALIGNED) / TCPOLEN_SACK_PERBLOCK) as usize
        } else {
            0
        };
        let room = room.min(MAX_SACK_BLOCKS);
        if let Some(o) = self.ooo.as_deref_mut() {
            if !o.comp.write_preflush(seg, room) {
                o.sack.write_option(negotiated.sack_ok, seg, room);
            }
        }
        if self.ecn.ece(negotiated.ecn_ok) {
            seg.flags.insert(TcpFlags::ECE);
        }
    }

    /// DCTCP's ACK for the data before a CE-state change, `prior_rcv_nxt`
    /// (`dctcp_ece_ack_update`'s `__tcp_send_ack(sk, prior_rcv_nxt)`).
    /// ≤ v4.17 (`dctcp_ce_state_0_to_1`) sent it with `tp->rcv_nxt` rewound,
    /// so its window update counted from there: `rcv_wup` stays at
    /// `prior_rcv_nxt`, and the next full segment leaves more than one
    /// unacknowledged (an ACK at once); since v4.18 `rcv_wup` is the real
    /// `rcv_nxt`.
    pub(crate) fn fill_prior_state_ack(
        &mut self,
        seg: &mut SegmentRepr,
        prior_rcv_nxt: SeqNum,
        tsval: u32,
        negotiated: &Negotiated,
    ) {
        if self.knobs.special_ack_keeps_delack {
            self.fill_ack(seg, tsval, negotiated);
        } else {
            let rcv_nxt = std::mem::replace(&mut self.rcv_nxt, prior_rcv_nxt);
            self.fill_ack(seg, tsval, negotiated);
            self.rcv_nxt = rcv_nxt;
        }
        seg.ack = prior_rcv_nxt;
    }

    /// `tcp_event_ack_sent`: a segment carrying `ack` was sent. Flushes the
    /// SACK-compression count; unless this was a special ACK below
    /// `rcv_nxt` (DCTCP's old-state ACK), spends quick ACKs
    /// (`tcp_dec_quickack_mode`: "Leaving quickack mode we deflate ATO")
    /// and cancels the delayed ACK. `pcount` is the segment's GSO count
    /// (used before v6.6).
    pub(crate) fn on_ack_sent(&mut self, ack: SeqNum, pcount: u32, timers: &mut TimerTable, mib: &mut Counters) {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_event_ack_sent
        if let Some(o) = self.ooo.as_deref_mut() {
            o.comp.on_ack_sent(timers, mib, self.extra_mib.ack_compressed);
        }
        if ack != self.rcv_nxt && self.knobs.special_ack_keeps_delack {
            // "Special ACK sent by DCTCP to reflect ECN"
            return;
        }
        self.delack.on_ack_sent(pcount, self.knobs.quickack_per_ack, timers);
    }

    /// `tcp_event_data_sent`: a reply sent within `ato` of the data it
    /// answers marks the connection interactive (pingpong), which stops
    /// quick ACKs and lengthens delayed ACKs.
    pub(crate) fn on_data_sent(&mut self, now: Instant) {
        self.delack.on_data_sent(now);
    }

    // ------------------------------------------------------------------
    // The application
    // ------------------------------------------------------------------

    /// `tcp_recvmsg`: the application reads up to `max` bytes. Runs DRS
    /// (`tcp_rcv_space_adjust`) and `tcp_cleanup_rbuf`, which asks for an
    /// ACK if one is owed for a drained pushed segment or if "this read
    /// freed lots of space" (the window at least doubles).
    pub(crate) fn read(&mut self, now: Instant, max: u64) -> ReadOutcome {
        //= linux:v6.13:net/ipv4/tcp.c#tcp_recvmsg_locked
        let n = max.min(self.unread);
        if n > 0 {
            let before = self.unread;
            self.unread -= n;
            self.copied_seq += n.min(u32::MAX as u64) as u32;
            self.buf.on_read(before, self.unread);
        }
        if self.unread == 0 && self.fin_received {
            // Reading EOF consumes the FIN's sequence number and its skb.
            self.copied_seq = self.rcv_nxt;
            self.buf.rcvq_truesize = 0;
        }
        if n > 0 {
            self.rcv_space_adjust(now);
        }
        let ack_now = self.cleanup_rbuf(n);
        ReadOutcome { bytes: n, ack_now }
    }

    /// `__tcp_cleanup_rbuf`: should reading `copied` bytes trigger an ACK?
    fn cleanup_rbuf(&mut self, copied: u64) -> bool {
        //= linux:v6.13:net/ipv4/tcp.c#__tcp_cleanup_rbuf
        let mut time_to_ack = false;
        if self.delack.pending & ICSK_ACK_SCHED != 0 {
            // "Once-per-two-segments ACK was not sent by tcp_input.c", or
            // "If this read emptied read buffer, we send ACK, if connection
            // is not bidirectional, user drained receive buffer and there
            // was a small segment in queue."
            let pushed = self.delack.pending & ICSK_ACK_PUSHED2 != 0
                || (self.delack.pending & ICSK_ACK_PUSHED != 0 && !self.delack.in_pingpong_mode());
            if (self.rcv_nxt - self.win.rcv_wup) > self.delack.rcv_mss
                || (copied > 0 && pushed && self.rmem_alloc() == 0)
            {
                time_to_ack = true;
            }
        }
        if copied > 0 && !time_to_ack && !self.fin_received {
            let now_win = self.receive_window() as u64;
            // "Optimize, __tcp_select_window() is not cheap."
            if 2 * now_win <= self.win.window_clamp as u64 {
                let new_win = self.select_window_raw() as u64;
                if new_win != 0 && new_win >= 2 * now_win {
                    time_to_ack = true;
                }
            }
        }
        time_to_ack
    }

    /// `tcp_rcv_space_adjust` (DRS): autotune the buffer from what the
    /// application read in the last RTT ([`RcvBuf::space_adjust`]), and
    /// "Make the window clamp follow along."
    fn rcv_space_adjust(&mut self, now: Instant) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_rcv_space_adjust
        if let Some(clamp) = self.buf.space_adjust(now, self.copied_seq, self.rcv_rtt.rtt_us, self.advmss) {
            self.win.window_clamp = clamp;
        }
    }

    // ------------------------------------------------------------------
    // Hooks for the congestion control (DCTCP's receiver)
    // ------------------------------------------------------------------

    /// Sets or clears `TCP_ECN_DEMAND_CWR` (DCTCP's `dctcp_ece_ack_update`).
    pub(crate) fn set_demand_cwr(&mut self, on: bool) {
        self.ecn.demand_cwr = on;
    }

    /// Sets `ICSK_ACK_NOW` (DCTCP on a CE-state change, ≥ v4.18).
    pub(crate) fn force_ack_now(&mut self) {
        self.delack.pending |= ICSK_ACK_NOW;
    }

    /// `tcp_send_ack` sends a pure ACK: ≤ v4.17 it raised
    /// `CA_EVENT_NON_DELAYED_ACK`, clearing DCTCP's `delayed_ack_reserved`.
    pub(crate) fn on_send_ack(&mut self) {
        self.delack.delayed_ack_reserved = false;
    }

    /// DCTCP's CE state changed: is an ACK for the data before it owed?
    /// ≥ v4.18 when the delayed-ACK timer is armed (`dctcp_ece_ack_update`);
    /// before, when `delayed_ack_reserved` (`dctcp_ce_state_0_to_1`).
    pub(crate) fn dctcp_prior_ack_due(&self) -> bool {
        if self.knobs.special_ack_keeps_delack {
            self.delack.pending & ICSK_ACK_TIMER != 0
        } else {
            self.delack.delayed_ack_reserved
        }
    }

    // ------------------------------------------------------------------
    // Getters
    // ------------------------------------------------------------------

    /// In-order bytes the application has not read.
    pub(crate) fn readable(&self) -> u64 {
        self.unread
    }
    pub(crate) fn rcv_nxt(&self) -> SeqNum {
        self.rcv_nxt
    }
    /// The peer's FIN is in order.
    pub(crate) fn fin_received(&self) -> bool {
        self.fin_received
    }
    /// `tcpi_bytes_received` (sequence space covered, FIN included).
    pub(crate) fn bytes_received(&self) -> u64 {
        self.bytes_received
    }
    /// `icsk_ack.rcv_mss` (`tcpi_rcv_mss`).
    pub(crate) fn rcv_mss(&self) -> u32 {
        self.delack.rcv_mss
    }
    /// Window last advertised, bytes (`tcpi_rcv_wnd`).
    pub(crate) fn rcv_wnd(&self) -> u32 {
        self.win.rcv_wnd
    }
}

/// End of the segment's data: payload plus one for FIN. A SYN in a
/// synchronized state is the connection's business, so data processing
/// ignores it.
#[inline]
fn seg_end(seg: &SegmentRepr) -> SeqNum {
    seg.seq + seg.payload_len.wrapping_add(seg.flags.fin() as u32)
}

/// `TCP_SKB_CB(skb)->end_seq`: payload plus one each for SYN and FIN.
#[inline]
fn seg_end_syn(seg: &SegmentRepr) -> SeqNum {
    seg_end(seg) + seg.flags.syn() as u32
}
