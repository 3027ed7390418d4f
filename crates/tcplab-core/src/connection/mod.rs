//! One TCP endpoint: Linux's `struct tcp_sock` and the code that drives it
//! (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c), as a sans-IO state
//! machine.
//!
//! # Calling protocol
//!
//! Like quinn-proto's `Connection`, this type never reads a clock and never
//! does I/O. The driver (simulator, packetdrill interpreter, test):
//!
//! 1. feeds inputs: [`handle_segment`](Connection::handle_segment) for every
//!    segment addressed to this endpoint, [`handle_timeout`](Connection::handle_timeout)
//!    once [`poll_timeout`](Connection::poll_timeout) has passed, and the
//!    application calls [`write`](Connection::write), [`read`](Connection::read),
//!    [`close`](Connection::close);
//! 2. after every input, calls [`poll_transmit`](Connection::poll_transmit)
//!    until it returns `None`, sending each segment;
//! 3. re-reads [`poll_timeout`](Connection::poll_timeout).
//!
//! `now` must never go backwards. A `handle_timeout` before any deadline is
//! a no-op.
//!
//! # Layout
//!
//! What the connection does, by kernel function:
//!
//! - `input`: `tcp_ack` and its helpers (window update, SACK tagging,
//!   cleaning the retransmit queue, RTT samples).
//! - `recovery`: the ca_state machine (`tcp_fastretrans_alert`), PRR
//!   reduction, the undo decisions, RTO recovery (`tcp_enter_loss`).
//! - `output`: what to send next (`tcp_write_xmit`,
//!   `tcp_xmit_retransmit_queue`, ACKs) and segment building; `skb`: the
//!   write queue's skbs (`tcp_sendmsg_locked`, PSH).
//! - `ca`: the only way to the congestion control (`ca_ops`), which
//!   refreshes the connection state `CaCtx` copies before each hook.
//!
//! Who owns which state (each file owns its type):
//!
//! - `rtx_queue::RtxQueue`: sent segments and their `TCPCB_*` bits;
//!   `scoreboard::Scoreboard`: the counters those bits add up to
//!   (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`) and the hints.
//! - `undo::Undo`: `undo_marker`, `undo_retrans`, `prior_ssthresh`,
//!   `retrans_stamp`.
//! - `rack::Rack`: RACK and the tail loss probe (`tlp_high_seq`).
//! - `negotiated::Negotiated`: the options the handshake settled.
//! - `era_v3::EraV3`: what only the 3.x eras read (FACK, `prior_unsacked`).
//! - `receiver::Receiver`: the receive half (delayed ACK, out-of-order
//!   queue, SACK generation); `timer::TimerTable`: the deadlines.

mod ca;
mod cork;
mod era_v3;
mod inline_deque;
mod input;
mod maxseg;
mod negotiated;
mod notsent_lowat;
mod output;
mod rack;
mod receiver;
mod recovery;
mod rtx_queue;
mod scoreboard;
mod shutdown;
mod skb;
mod stream_memory;
mod timer;
mod undo;

pub use cork::MsgFlags;
pub use maxseg::maxseg_unconnected;
pub use shutdown::Shutdown;

use crate::cc::{CaCtx, CaEvent, CaState, CcInfo, TCP_INFINITE_SSTHRESH};
use crate::config::{AckEra, TcpConfig, TsClock};
use crate::counters::{Counters, Mib};
use crate::flag::FLAG_SLOWPATH;
use crate::metrics::TcpMetrics;
use crate::minmax::MinRttFilter;
use crate::rate::TcpRate;
use crate::rtt::RttEstimator;
use crate::time::{Duration, Instant};
use era_v3::EraV3;
use negotiated::Negotiated;
use rack::Rack;
use receiver::Receiver;
use rtx_queue::RtxQueue;
use scoreboard::Scoreboard;
use std::sync::Arc;
use tcplab_wire::{SegmentRepr, SeqNum, TcpFlags};
use timer::{Timer, TimerTable};
use undo::Undo;

/// RFC 793 connection states (Linux `TCP_*`, include/net/tcp_states.h).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl TcpState {
    /// States in which data may be sent (`TCPF_ESTABLISHED | TCPF_CLOSE_WAIT`).
    fn can_send_data(self) -> bool {
        matches!(self, TcpState::Established | TcpState::CloseWait)
    }
    /// States after the handshake, before the connection is gone.
    fn synchronized(self) -> bool {
        !matches!(self, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
    }
}

/// A `struct tcp_info` snapshot (include/uapi/linux/tcp.h): the fields the
/// model maintains. Times in µs, as the kernel reports them.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TcpInfo {
    pub ca_state: CaState,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub rto_us: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub reordering: u32,
    /// `packets_out`.
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    /// `retrans_out`.
    pub retrans: u32,
    pub total_retrans: u32,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub backoff: u8,
    /// Bytes per second.
    pub pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub reord_seen: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub data_segs_out: u32,
    /// `tcpi_busy_time`: µs with data queued or in flight (all chrono
    /// states together).
    pub busy_time_us: u64,
    /// `tcpi_rwnd_limited`: µs the peer's window held data back.
    pub rwnd_limited_us: u64,
    /// `tcpi_sndbuf_limited`: µs the send buffer held the application back.
    pub sndbuf_limited_us: u64,
    /// `tcpi_last_data_recv`: ms since data last arrived.
    pub last_data_recv_ms: u32,
    /// `tcpi_probes`: unanswered zero-window / resource probes
    /// (`icsk_probes_out`).
    pub probes: u8,
    /// The congestion control's `get_info` (`TCP_CC_INFO`), if it has one.
    pub cc_info: Option<CcInfo>,
}

/// A socket error (`sk->sk_err`) the connection died of.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TcpError {
    /// `ETIMEDOUT`: retransmissions or probes went unanswered past
    /// `TCP_USER_TIMEOUT` (`tcp_write_err`).
    TimedOut,
    /// `ECONNRESET`: the connection was aborted (`tcp_reset`).
    Reset,
}

/// What `tcp_fastretrans_alert` asked `tcp_xmit_recovery` to send
/// (`REXMIT_*`, tcp_input.c).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum Rexmit {
    #[default]
    None,
    /// Retransmit packets marked lost.
    Lost,
    /// F-RTO: send new data first.
    New,
}

/// One TCP endpoint. See the module docs for the calling protocol.
pub struct Connection {
    /// Shared, never changed: the simulator's many connections of one
    /// configuration hold one copy.
    cfg: Arc<TcpConfig>,
    state: TcpState,
    local_port: u16,
    remote_port: u16,

    // ---- the handshake ----
    iss: SeqNum,
    /// The options both ends agreed on (negotiated.rs).
    negotiated: Negotiated,
    /// We asked for ECN on our SYN.
    ecn_requested: bool,
    /// `TCP_ECN_QUEUE_CWR` in `tp->ecn_flags`: put CWR on the next new
    /// data segment (after a reduction).
    ecn_queue_cwr: bool,
    /// TCP timestamp clock offset (`tp->tsoffset`).
    ts_offset: u32,

    // ---- send sequence space ----
    snd_una: SeqNum,
    snd_nxt: SeqNum,
    /// End of the data the application wrote (`write_seq`).
    write_seq: SeqNum,
    /// The application closed; a FIN follows the data.
    fin_queued: bool,
    snd_wnd: u32,
    snd_wl1: SeqNum,
    max_window: u32,
    /// `sk_sndbuf`, bytes (payload accounting; see docs/linux-differences.md).
    sk_sndbuf: u32,

    // ---- congestion control ----
    /// `struct tcp_sock`'s cwnd fields, `delivered`, the clock and the MIB:
    /// the real storage of what congestion control may read or write. Its
    /// copies of connection state (`snd_una`, `packets_out`, `srtt_us`, …)
    /// are current only inside a hook: read their owners instead.
    tp: CaCtx,
    /// Reached only through [`ca_ops`](Connection::ca_ops) (ca.rs).
    cc: ca::CongestionControl,
    /// The delivery-rate estimator's `tcp_sock` fields (tcp_rate.c),
    /// sampled on every ACK as Linux does (`tcpi_delivery_rate`, and the
    /// `rate_sample` a `cong_control` module such as BBR runs on).
    rate: TcpRate,
    /// `tp->is_sack_reneg`: the receiver reneged on SACKs; rate samples
    /// are invalid until the loss episode ends (`tcp_timeout_mark_lost`
    /// sets it, `tcp_try_undo_recovery` / `tcp_try_undo_loss` clear it).
    is_sack_reneg: bool,
    /// `tp->tcp_wstamp_ns`: the earliest departure time of the next skb,
    /// advanced by `tcp_update_skb_after_send` for a socket that paces
    /// (`sk_pacing_status != SK_PACING_NONE`). The internal pacing of an
    /// `SK_PACING_NEEDED` socket waits for it (`tcp_pacing_check`), and so
    /// does an fq-paced one whose driver holds it (`edt_hold`).
    tcp_wstamp_ns: u64,
    /// The driver's fq paces by departure time but cannot hold early skbs
    /// ([`Connection::set_pacing_fq`]).
    edt_hold: bool,

    // ---- loss recovery (tcp_sock) ----
    rtx: RtxQueue,
    /// What the retransmit queue's `TCPCB_*` bits add up to (scoreboard.rs).
    scoreboard: Scoreboard,
    total_retrans: u32,
    reordering: u32,
    reord_seen: u32,
    high_seq: SeqNum,
    /// What undoing a spurious reduction needs (undo.rs).
    undo: Undo,
    prr_delivered: u32,
    prr_out: u32,
    frto: bool,
    rexmit: Rexmit,
    /// The RTO handler retransmits the head outside tcp_xmit_retransmit_queue.
    rto_head_pending: bool,
    /// RACK loss detection and the tail loss probe (rack.rs).
    rack: Rack,
    /// The state only the 3.x eras read: FACK and the older `tcp_ack`'s
    /// inputs (era_v3.rs).
    v3: EraV3,
    /// `dsack_dups`: segments reported duplicate by D-SACKs.
    dsack_dups: u32,
    /// `is_cwnd_limited` bookkeeping of tcp_cwnd_validate.
    cwnd_usage_seq: SeqNum,
    snd_cwnd_used: u32,
    snd_cwnd_stamp: u32,

    // ---- RTT / RTO ----
    rtt: RttEstimator,
    min_rtt: MinRttFilter,
    icsk_backoff: u8,
    icsk_retransmits: u32,
    /// TSecr of the segment being processed, when it carried timestamps.
    rcv_tsecr: Option<u32>,

    timers: TimerTable,
    rcv: Receiver,

    // ---- pending control segments ----
    syn_pending: bool,
    ack_pending: bool,
    /// A zero-window probe is owed (`tcp_xmit_probe_skb`): an ACK at
    /// `snd_una − 1`, old to the peer, so that it answers with its window.
    probe_pending: bool,
    /// A segment was received; decide on an ACK once any data went out.
    ack_check_due: bool,
    /// DCTCP receiver: CE mark of the latest data, `rcv_nxt` before it,
    /// and an ACK owed for that prior point with the prior ECE value.
    ce_state: bool,
    prior_rcv_nxt: SeqNum,
    prior_state_ack: Option<(SeqNum, bool)>,
    /// See [`Connection::app_output_owed`].
    app_output: bool,
    /// Boxed: rarely set, and 64 bytes more in every connection inline.
    rst_pending: Option<Box<SegmentRepr>>,

    bytes_acked: u64,
    data_segs_out: u32,
    /// The destination's metrics to start from (`tcp_init_metrics`).
    /// Boxed: most connections start without any (16 bytes less each).
    cached_metrics: Option<Box<TcpMetrics>>,
    /// `tp->nonagle`: `TCP_NAGLE_OFF` (`TCP_NODELAY`), `TCP_NAGLE_CORK`
    /// (`TCP_CORK`), `TCP_NAGLE_PUSH` (cork.rs).
    nonagle: u8,
    /// End of the last sub-MSS segment sent (`snd_sml`, Minshall's Nagle).
    snd_sml: SeqNum,
    /// The application found the send buffer full (`SOCK_NOSPACE`).
    app_nospace: bool,
    /// The send path's skb structure (write queue, PSH marks, chrono).
    sq: skb::SendQueue,
    /// `icsk_ack.lrcvtime`: jiffies of the last data received.
    lrcvtime: u32,
    /// `icsk_probes_out`.
    probes_out: u8,
    /// `icsk_probes_tstamp`: jiffies of the first unanswered probe.
    probes_tstamp: Option<u32>,
    /// `TCP_USER_TIMEOUT` (`icsk_user_timeout`), ms; 0 = off.
    user_timeout_ms: u32,
    /// `RCV_SHUTDOWN` in `sk->sk_shutdown`: the application reads no more.
    rcv_shutdown: bool,
    /// `sk->sk_err`.
    sk_err: Option<TcpError>,
    /// `tcp_close` zapped the connection: a RST|ACK is owed (shutdown.rs).
    active_reset_pending: bool,
    /// `tcp_notsent_lowat(tp)`: `TCP_NOTSENT_LOWAT`, else the sysctl;
    /// `u32::MAX` = no limit (notsent_lowat.rs).
    notsent_lowat: u32,
    /// Every transmission fails locally (a qdisc that drops everything).
    xmit_blocked: bool,
}

impl Connection {
    fn new(cfg: Arc<TcpConfig>, local_port: u16, remote_port: u16, iss: SeqNum, state: TcpState) -> Connection {
        let tp = CaCtx {
            snd_cwnd: cfg.initcwnd.max(1),
            hz: cfg.hz,
            mss_cache: cfg.advmss().saturating_sub(if cfg.tcp_timestamps { 12 } else { 0 }).max(1),
            snd_una: iss,
            snd_nxt: iss,
            ..CaCtx::default()
        };
        // The module's randomness (BBR's gain-cycle start) from the ISN and
        // ports, so that the same seed gives the same run.
        let seed = u64::from(iss.0) | u64::from(local_port) << 32 | u64::from(remote_port) << 48;
        let cc = ca::CongestionControl::new(&cfg.congestion_control, seed);
        Connection {
            cfg: Arc::clone(&cfg),
            state,
            local_port,
            remote_port,
            iss,
            negotiated: Negotiated::default(),
            ecn_requested: false,
            ecn_queue_cwr: false,
            ts_offset: iss.0.rotate_left(13) | 1,
            snd_una: iss,
            snd_nxt: iss,
            write_seq: iss + 1,
            fin_queued: false,
            snd_wnd: 0,
            snd_wl1: SeqNum(0),
            max_window: 0,
            sk_sndbuf: if cfg.so_sndbuf > 0 { cfg.so_sndbuf.saturating_mul(2) } else { cfg.tcp_wmem[1] },
            tp,
            cc,
            rate: TcpRate::default(),
            is_sack_reneg: false,
            tcp_wstamp_ns: 0,
            edt_hold: false,
            // Grown on first use: a connection that only receives (or is idle)
            // never holds a retransmit queue (64 slots were 3.6 KB each).
            rtx: RtxQueue::default(),
            scoreboard: Scoreboard::new(iss),
            total_retrans: 0,
            reordering: cfg.tcp_reordering.max(1),
            reord_seen: 0,
            high_seq: iss,
            undo: Undo::default(),
            prr_delivered: 0,
            prr_out: 0,
            frto: false,
            rexmit: Rexmit::None,
            rto_head_pending: false,
            rack: Rack::default(),
            dsack_dups: 0,
            v3: EraV3::new(cfg.tcp_fack, cfg.tcp_early_retrans, cfg.tcp_reordering),
            cwnd_usage_seq: iss,
            snd_cwnd_used: 0,
            snd_cwnd_stamp: 0,
            rtt: RttEstimator::new(cfg.hz, cfg.tcp_rto_min_us),
            min_rtt: MinRttFilter::new(Instant::ZERO.jiffies32(cfg.hz)),
            icsk_backoff: 0,
            icsk_retransmits: 0,
            rcv_tsecr: None,
            timers: TimerTable::default(),
            rcv: Receiver::new(&cfg),
            syn_pending: false,
            ack_pending: false,
            probe_pending: false,
            ack_check_due: false,
            ce_state: false,
            prior_rcv_nxt: SeqNum(0),
            prior_state_ack: None,
            app_output: false,
            rst_pending: None,
            active_reset_pending: false,
            notsent_lowat: u32::MAX,
            bytes_acked: 0,
            data_segs_out: 0,
            cached_metrics: None,
            nonagle: 0,
            snd_sml: iss,
            app_nospace: false,
            sq: skb::SendQueue::new(iss),
            lrcvtime: 0,
            probes_out: 0,
            probes_tstamp: None,
            user_timeout_ms: 0,
            rcv_shutdown: false,
            sk_err: None,
            xmit_blocked: false,
        }
    }

    /// Active open (`tcp_v4_connect` → `tcp_connect`): the SYN is ready for
    /// [`poll_transmit`](Self::poll_transmit).
    pub fn client(
        cfg: impl Into<Arc<TcpConfig>>,
        local_port: u16,
        remote_port: u16,
        iss: SeqNum,
        now: Instant,
    ) -> Connection {
        let mut c = Connection::new(cfg.into(), local_port, remote_port, iss, TcpState::SynSent);
        c.tp.now = now;
        // tcp_ecn_send_syn: ask for ECN when the sysctl says so or the
        // congestion control needs it.
        c.ecn_requested = c.cfg.tcp_ecn == 1 || c.cc.needs_ecn();
        c.syn_pending = true;
        c.tp.mib.inc(Mib::TcpActiveOpens);
        c
    }

    /// Active open that starts from the destination's cached metrics
    /// (`tcp_init_metrics` at the end of the handshake).
    pub fn client_with_metrics(
        cfg: impl Into<Arc<TcpConfig>>,
        local_port: u16,
        remote_port: u16,
        iss: SeqNum,
        now: Instant,
        cached: Option<&TcpMetrics>,
    ) -> Connection {
        let mut c = Connection::client(cfg, local_port, remote_port, iss, now);
        c.cached_metrics = cached.map(|m| Box::new(*m));
        c
    }

    /// Passive open for one expected peer: LISTEN until its SYN arrives.
    pub fn server(cfg: impl Into<Arc<TcpConfig>>, local_port: u16, remote_port: u16, iss: SeqNum) -> Connection {
        Connection::new(cfg.into(), local_port, remote_port, iss, TcpState::Listen)
    }

    // ------------------------------------------------------------------
    // Getters
    // ------------------------------------------------------------------

    pub fn state(&self) -> TcpState {
        self.state
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn counters(&self) -> &Counters {
        &self.tp.mib
    }
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }
    /// `sk_pacing_rate`, bytes per second (0 until an RTT is known).
    pub fn pacing_rate(&self) -> u64 {
        self.tp.pacing_rate
    }
    /// `sk_pacing_status`: `Needed` once BBR asked the stack to pace
    /// itself (no fq), `Fq` on an fq host.
    pub fn pacing_status(&self) -> crate::cc::PacingStatus {
        self.tp.pacing_status
    }
    /// `tp->tcp_wstamp_ns`: earliest departure of the next skb (ns).
    pub fn tcp_wstamp_ns(&self) -> u64 {
        self.tcp_wstamp_ns
    }
    /// Segments of an skb already transmitted (and stamped) that
    /// [`poll_transmit`](Self::poll_transmit) still has to hand out: GSO
    /// sends them together, at that skb's departure time.
    pub fn skb_segments_pending(&self) -> bool {
        self.sq.emit_next < self.rtx.next_id()
    }
    /// The segment [`poll_transmit`](Self::poll_transmit) just returned is
    /// not the last of its skb (new data): a qdisc sees the skb as one
    /// packet, which GSO segments after it (sch_fq dequeues, credits and
    /// paces it whole).
    pub fn skb_continues(&self) -> bool {
        self.sq.unit_continues
    }
    /// The delivery-rate estimator's `tcp_sock` fields (tcp_rate.c): the
    /// last recorded sample (`rate_delivered`, `rate_interval_us`,
    /// `rate_app_limited`, behind `tcpi_delivery_rate`), `app_limited`,
    /// `delivered_mstamp`.
    pub fn rate(&self) -> TcpRate {
        self.rate
    }
    /// `tcpi_delivery_rate` (`tcp_compute_delivery_rate`), bytes/s.
    pub fn delivery_rate(&self) -> u64 {
        self.rate.delivery_rate(self.tp.mss_cache)
    }
    pub fn ca_state(&self) -> CaState {
        self.tp.ca_state
    }
    /// `tcp_packets_in_flight()`: packets_out − (sacked_out + lost_out) + retrans_out.
    pub fn packets_in_flight(&self) -> u32 {
        self.scoreboard.in_flight()
    }

    /// `tcp_get_info()` as of the last input.
    pub fn info(&self) -> TcpInfo {
        self.info_at(self.tp.now)
    }

    /// `tcp_get_info()` read at `now` (not before the last input): the
    /// time-based fields (chrono stats, `last_data_recv`) count up to it.
    pub fn info_at(&self, now: Instant) -> TcpInfo {
        let jiffies = now.max(self.tp.now).jiffies32(self.cfg.hz);
        let (busy, rwnd, sndbuf) = self.sq.chrono.info_us(jiffies, self.cfg.hz);
        TcpInfo {
            ca_state: self.tp.ca_state,
            snd_cwnd: self.tp.snd_cwnd,
            snd_ssthresh: self.tp.snd_ssthresh,
            rto_us: self.rtt.rto().as_micros() as u32,
            rtt_us: self.rtt.srtt_us() >> 3,
            rttvar_us: self.rtt.mdev_us() >> 2,
            min_rtt_us: self.min_rtt.get(),
            reordering: self.reordering,
            unacked: self.scoreboard.packets_out,
            sacked: self.scoreboard.sacked_out,
            lost: self.scoreboard.lost_out,
            retrans: self.scoreboard.retrans_out,
            total_retrans: self.total_retrans,
            delivered: self.tp.delivered,
            delivered_ce: self.tp.delivered_ce,
            snd_mss: self.tp.mss_cache,
            rcv_mss: self.rcv.rcv_mss(),
            backoff: self.icsk_backoff,
            pacing_rate: self.tp.pacing_rate,
            bytes_acked: self.bytes_acked,
            bytes_received: self.rcv.bytes_received(),
            reord_seen: self.reord_seen,
            snd_wnd: self.snd_wnd,
            rcv_wnd: self.rcv.rcv_wnd(),
            data_segs_out: self.data_segs_out,
            busy_time_us: busy,
            rwnd_limited_us: rwnd,
            sndbuf_limited_us: sndbuf,
            last_data_recv_ms: crate::rtt::jiffies_to_duration(jiffies.wrapping_sub(self.lrcvtime) as u64, self.cfg.hz)
                .as_millis() as u32,
            probes: self.probes_out,
            cc_info: self.cc.get_info(),
        }
    }

    // ------------------------------------------------------------------
    // Application interface
    // ------------------------------------------------------------------

    /// Payload bytes the send buffer can still take (`sk_stream_wspace`,
    /// counted in payload bytes).
    pub fn send_space(&self) -> u64 {
        if !(self.state.can_send_data() || matches!(self.state, TcpState::SynSent | TcpState::SynReceived))
            || self.fin_queued
        {
            return 0;
        }
        let queued = self.write_seq - self.snd_una;
        (self.sk_sndbuf as u64).saturating_sub(queued as u64)
    }

    /// Queues `bytes` of (virtual) application data; returns how many fit.
    pub fn write(&mut self, bytes: u64) -> u64 {
        self.send(bytes, false)
    }

    /// `send(..., MSG_EOR)`: as [`write`](Self::write), and the data ends a
    /// record: later writes never share an skb (or a segment) with it
    /// (`TCP_SKB_CB(skb)->eor`, `tcp_skb_can_collapse_to`).
    pub fn write_eor(&mut self, bytes: u64) -> u64 {
        self.send(bytes, true)
    }

    fn send(&mut self, bytes: u64, eor: bool) -> u64 {
        self.send_msg(bytes, MsgFlags { eor, more: false })
    }

    /// `sendmsg` with `flags` (cork.rs has the `MSG_MORE` part).
    pub fn send_msg(&mut self, bytes: u64, flags: MsgFlags) -> u64 {
        let n = bytes.min(self.send_space()).min(u32::MAX as u64 / 4) as u32;
        self.app_nospace = (n as u64) < bytes;
        if n > 0 {
            // Turned into skbs by the next poll_transmit (skb.rs).
            self.queue_send(n, bytes, flags);
            self.app_output = true;
        }
        n as u64
    }

    /// `setsockopt(TCP_USER_TIMEOUT)`, ms (0 = off): give up once data
    /// stayed unacknowledged, or probes unanswered, that long
    /// (`icsk_user_timeout`).
    pub fn set_user_timeout(&mut self, ms: u32) {
        self.user_timeout_ms = ms;
    }

    /// Makes every transmission fail locally, as behind a qdisc that drops
    /// every packet (`tc qdisc ... pfifo limit 0`): `tcp_transmit_skb`
    /// returns an error, so new data is not sent, a retransmission is only
    /// attempted, and the probe timer retries every
    /// `TCP_RESOURCE_PROBE_INTERVAL` (net/ipv4/tcp_output.c
    /// `tcp_send_probe0`). Segments `poll_transmit` would return are dropped.
    pub fn set_xmit_blocked(&mut self, on: bool) {
        self.xmit_blocked = on;
        self.sq.xmit_owed = true;
        self.app_output = true;
    }

    /// The error the connection died of (`sk->sk_err`), if any.
    pub fn error(&self) -> Option<TcpError> {
        self.sk_err
    }

    /// Reads and clears the error (`sock_error`), as the next system call
    /// on the socket reports it.
    pub fn take_error(&mut self) -> Option<TcpError> {
        self.sk_err.take()
    }

    /// In-order bytes ready for the application.
    pub fn readable(&self) -> u64 {
        self.rcv.readable()
    }

    /// Consumes up to `max` readable bytes (at the time of the last input).
    pub fn read(&mut self, max: u64) -> u64 {
        let out = self.rcv.read(self.tp.now, max);
        if out.ack_now {
            // tcp_cleanup_rbuf: an owed ACK, or a window that grew a lot.
            self.ack_pending = true;
            self.app_output = true;
        }
        out.bytes
    }

    /// Whether an application call since the last [`poll_transmit`]
    /// may have made output (a write, a close, an ACK `tcp_cleanup_rbuf`
    /// owes, a socket option), so that a driver which already drained the
    /// connection after an input knows whether to poll again.
    ///
    /// [`poll_transmit`]: Self::poll_transmit
    pub fn app_output_owed(&self) -> bool {
        self.app_output
    }

    /// The peer sent FIN and all data before it was read.
    pub fn read_closed(&self) -> bool {
        self.rcv.fin_received() && self.rcv.readable() == 0
    }

    /// `tcp_close` / `shutdown(SHUT_WR)`: a FIN follows the queued data.
    pub fn close(&mut self) {
        self.app_output = true;
        match self.state {
            TcpState::Listen | TcpState::SynSent => {
                self.state = TcpState::Closed;
                self.timers.clear();
            }
            TcpState::SynReceived | TcpState::Established => {
                self.fin_queued = true;
                self.state = TcpState::FinWait1;
            }
            TcpState::CloseWait => {
                self.fin_queued = true;
                self.state = TcpState::LastAck;
            }
            _ => {}
        }
    }

    /// `shutdown(SHUT_RD)`, which `close()` of the socket implies
    /// (`sk_shutdown = SHUTDOWN_MASK` in `tcp_close`): the application
    /// reads no more. Data arriving after our FIN then aborts the
    /// connection with a RST (RFC 1122; `tcp_rcv_state_process`).
    pub fn shutdown_read(&mut self) {
        self.rcv_shutdown = true;
    }

    /// `tcp_rcv_state_process` step 7 after a full close: new data in
    /// FIN-WAIT-1/2 (or below `rcv_nxt` in CLOSING/LAST-ACK) with the
    /// receive side shut is answered by a RST and the connection is
    /// reset (`TcpExtTCPAbortOnData`).
    fn abort_on_data(&mut self, seg: &SegmentRepr) -> bool {
        if !self.rcv_shutdown {
            return false;
        }
        let rcv_nxt = self.rcv.rcv_nxt();
        let check = match self.state {
            TcpState::FinWait1 | TcpState::FinWait2 => true,
            TcpState::Closing | TcpState::LastAck | TcpState::CloseWait => seg.seq.before(rcv_nxt),
            _ => false,
        };
        let end = seg.seq + seg.payload_len;
        if !check || seg.payload_len == 0 || !end.after(rcv_nxt) {
            return false;
        }
        self.reset_unexpected(seg);
        self.sk_err = Some(TcpError::Reset);
        self.enter_closed();
        true
    }

    /// All data and the FIN were acknowledged, or the connection is gone.
    pub fn is_closed(&self) -> bool {
        matches!(self.state, TcpState::Closed | TcpState::TimeWait)
    }

    /// Bytes the peer has cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.bytes_acked
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// The earliest deadline at which [`handle_timeout`](Self::handle_timeout)
    /// must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    /// Runs every timer whose deadline is at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.set_now(now);
        self.sq.xmit_owed = true;
        for t in Timer::VALUES {
            if self.timers.get(t).is_some_and(|d| d <= now) {
                // The receiver's ACK timers re-check their jiffies deadline
                // and disarm themselves; an xmit timer is spent.
                if t.is_xmit() {
                    self.timers.stop(t);
                }
                match t {
                    Timer::Dack => {
                        let env = self.rcv_env(false);
                        if self.rcv.on_delack_timer(now, &env, &mut self.timers, &mut self.tp.mib) {
                            self.ack_pending = true;
                        }
                    }
                    Timer::CompressedAck => {
                        if self.rcv.on_comp_sack_timer(now, &mut self.timers) {
                            self.ack_pending = true;
                        }
                    }
                    Timer::Retrans => {
                        // tcp_write_timeout (the TCP_USER_TIMEOUT part).
                        if self.user_timeout_expired() {
                            self.write_err();
                            return;
                        }
                        self.retransmit_timer(now);
                        self.clamp_rto_to_user_timeout(now);
                    }
                    Timer::Probe0 => self.probe_timer(now),
                    Timer::LossProbe => self.loss_probe_timer(now),
                    // One slot, ICSK_TIME_EARLY_RETRANS until 4.10 and
                    // ICSK_TIME_REO_TIMEOUT since.
                    Timer::ReoTimeout if self.cfg.ack_era == AckEra::V3_12 => self.resume_early_retransmit(now),
                    Timer::ReoTimeout => self.rack_reo_timeout(now),
                    // tcp_pace_kick → tcp_tsq_handler → tcp_tsq_write: the
                    // next poll_transmit retransmits and pushes what
                    // waits (`xmit_owed` is set above).
                    Timer::Pacing => self.timers.stop(Timer::Pacing),
                }
            }
        }
    }

    fn set_now(&mut self, now: Instant) {
        self.tp.now = now;
        self.tp.jiffies = now.jiffies32(self.cfg.hz);
    }

    /// `inet_csk_reset_xmit_timer`: arms the xmit timer `t` for `timeout`
    /// (`icsk_timeout`, now plus a delay in jiffies); the timer wheel
    /// decides on which tick it runs. `mod_timer` leaves a pending timer
    /// where it is when its expiry jiffy does not change.
    //= linux:v6.12:include/net/inet_connection_sock.h#inet_csk_reset_xmit_timer
    fn reset_xmit_timer(&mut self, t: Timer, timeout: Instant) {
        let hz = self.cfg.hz;
        let unchanged = self
            .timers
            .pending_at()
            .filter(|&(_, armed_for)| armed_for.jiffies64(hz) == timeout.jiffies64(hz))
            .and_then(|(p, _)| self.timers.get(p));
        let runs = self.cfg.timer_wheel.rearm(self.tp.now, timeout, hz, unchanged);
        self.timers.set_xmit(t, timeout, runs);
    }

    /// TCP timestamp clock (`tcp_time_stamp_ts`: ms, or jiffies with the
    /// 3.x `ts_clock`) including `tsoffset`.
    fn ts_now(&self) -> u32 {
        let ticks = match self.cfg.ts_clock {
            TsClock::Ms => self.tp.now.as_millis() as u32,
            TsClock::Jiffies => self.tp.jiffies,
        };
        ticks.wrapping_add(self.ts_offset)
    }

    /// Milliseconds since `stamp`, a TSval of ours (`retrans_stamp`).
    fn ts_ms_since(&self, stamp: u32) -> i64 {
        let ticks = self.ts_now().wrapping_sub(stamp) as i32;
        let us = self.cfg.ts_clock.ticks_to_us(ticks.unsigned_abs(), self.cfg.hz) as i64;
        ticks.signum() as i64 * us / 1000
    }

    // ------------------------------------------------------------------
    // Segment arrival (tcp_v4_rcv → tcp_rcv_state_process)
    // ------------------------------------------------------------------

    /// Processes a segment that GRO merged from segments of `gso_size`
    /// payload bytes each (net/ipv4/tcp_offload.c `tcp_gro_receive`): TCP
    /// sees one skb, so it answers once, and measures the peer's MSS by
    /// `gso_size` (`tcp_measure_rcv_mss`).
    pub fn handle_gro_segment(&mut self, now: Instant, seg: &SegmentRepr, gso_size: u32) {
        self.handle_skb(now, seg, gso_size);
    }

    /// Processes one segment addressed to this endpoint.
    pub fn handle_segment(&mut self, now: Instant, seg: &SegmentRepr) {
        self.handle_skb(now, seg, 0);
    }

    /// One skb: a segment, or `gso_size` > 0 for one GRO merged.
    fn handle_skb(&mut self, now: Instant, seg: &SegmentRepr, gso_size: u32) {
        self.set_now(now);
        self.tp.mib.inc(Mib::TcpInSegs);
        self.rcv_tsecr =
            if self.negotiated.tstamp_ok || self.state == TcpState::SynSent || self.state == TcpState::Listen {
                seg.options.timestamp.map(|(_, ecr)| ecr)
            } else {
                None
            };
        let prior_received = self.rcv.bytes_received();
        self.sq.xmit_owed = true;
        // tcp_ack: an ACK neither old nor ahead of snd_nxt answers the
        // probes (`icsk_probes_out = 0`).
        let ack_ok = (self.probes_out != 0 || self.probes_tstamp.is_some())
            && seg.flags.ack()
            && !seg.ack.before(self.snd_una)
            && !seg.ack.after(self.snd_nxt);
        match self.state {
            TcpState::Closed => self.reset_unexpected(seg),
            TcpState::TimeWait => self.rcv_time_wait(seg),
            TcpState::Listen => self.rcv_listen(seg),
            TcpState::SynSent => self.rcv_synsent(now, seg),
            _ => self.rcv_synchronized(now, seg, gso_size),
        }
        if ack_ok && self.state.synchronized() {
            self.probes_out = 0;
            self.probes_tstamp = None;
        }
        if self.rcv.bytes_received() != prior_received {
            // tcp_event_data_recv: icsk_ack.lrcvtime.
            self.lrcvtime = self.tp.jiffies;
        }
        self.after_ack_chrono();
    }

    /// `tcp_timewait_state_process`: a retransmitted FIN (our ACK of it was
    /// lost) is ACKed again; a RST ends TIME-WAIT; anything else is
    /// dropped (the model does not reopen from TIME-WAIT).
    fn rcv_time_wait(&mut self, seg: &SegmentRepr) {
        if seg.flags.rst() {
            self.enter_closed();
        } else if seg.flags.fin() || seg.payload_len > 0 {
            self.ack_pending = true;
        }
    }

    /// `tcp_v4_send_reset`: answer a segment that makes no sense here.
    fn reset_unexpected(&mut self, seg: &SegmentRepr) {
        if seg.flags.rst() {
            return;
        }
        let mut rst = SegmentRepr { src_port: self.local_port, dst_port: self.remote_port, ..Default::default() };
        if seg.flags.ack() {
            rst.seq = seg.ack;
            rst.flags = TcpFlags::RST;
        } else {
            rst.ack = seg.seq + seg.seq_len();
            rst.flags = TcpFlags::RST | TcpFlags::ACK;
        }
        self.rst_pending = Some(Box::new(rst));
        self.tp.mib.inc(Mib::TcpOutRsts);
    }

    /// LISTEN: a SYN creates the connection (`tcp_conn_request`).
    fn rcv_listen(&mut self, seg: &SegmentRepr) {
        if seg.flags.rst() {
            return;
        }
        if seg.flags.ack() || !seg.flags.syn() {
            self.reset_unexpected(seg);
            return;
        }
        self.negotiate(seg, true);
        // tcp_ecn_create_request: the peer asked with ECE+CWR; accept if
        // the sysctl allows and the SYN is not ECT (RFC 3168 forbids ECT
        // SYNs), or if our congestion control needs ECN (DCTCP).
        let th_ecn = seg.flags.ece() && seg.flags.cwr();
        self.negotiated.ecn_ok = th_ecn && ((!seg.ecn.is_ect() && self.cfg.tcp_ecn != 0) || self.cc.needs_ecn());
        self.snd_wnd = seg.window as u32;
        self.max_window = self.snd_wnd;
        self.snd_wl1 = seg.seq;
        self.state = TcpState::SynReceived;
        self.syn_pending = true;
        self.tp.mib.inc(Mib::TcpPassiveOpens);
    }

    /// Records what the peer's SYN offered (`tcp_parse_options`,
    /// `tcp_openreq_init` / `tcp_rcv_synsent_state_process`).
    fn negotiate(&mut self, seg: &SegmentRepr, passive: bool) {
        let o = &seg.options;
        self.negotiated.parse_syn_options(&self.cfg, o);
        self.v3.fack = self.cfg.tcp_fack && self.negotiated.sack_ok;
        // tcp_sync_mss: the path MSS less the timestamp option.
        let mss = self.negotiated.mss_clamp.min(self.cfg.advmss());
        self.tp.mss_cache = mss.saturating_sub(self.negotiated.options_len()).max(8);
        self.rcv.on_syn(seg.seq, o, &self.negotiated, passive);
    }

    /// SYN-SENT (`tcp_rcv_synsent_state_process`).
    fn rcv_synsent(&mut self, now: Instant, seg: &SegmentRepr) {
        if seg.flags.ack() && (seg.ack.before_eq(self.iss) || seg.ack.after(self.snd_nxt)) {
            self.reset_unexpected(seg);
            return;
        }
        if seg.flags.rst() {
            if seg.flags.ack() {
                self.enter_closed();
            }
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.negotiate(seg, false);
        if !seg.flags.ack() {
            // Simultaneous open is not modelled; Linux would go to SYN-RECV.
            return;
        }
        // tcp_ecn_rcv_synack: ECE without CWR confirms.
        self.negotiated.ecn_ok = self.ecn_requested && seg.flags.ece() && !seg.flags.cwr();
        self.snd_wnd = seg.window as u32;
        self.max_window = self.snd_wnd;
        self.snd_wl1 = seg.seq;
        self.tcp_ack(now, seg, FLAG_SLOWPATH);
        self.state = TcpState::Established;
        self.init_transfer(now);
        // tcp_finish_connect: headers are predicted from the start only
        // without window scaling.
        if self.negotiated.snd_wscale == 0 {
            self.rcv.fast_path_on(self.negotiated.tstamp_ok, self.snd_wnd_field());
        }
        // Linux sends the third-way ACK at once (no deferred accept).
        self.ack_pending = true;
        // Data on a SYN-ACK (not produced by Linux) is ignored.
    }

    /// Synchronized states, and SYN-RECEIVED (`tcp_rcv_state_process`).
    fn rcv_synchronized(&mut self, now: Instant, seg: &SegmentRepr, gso_size: u32) {
        if self.state == TcpState::Established
            && seg.payload_len == 0
            && self.rcv.header_predicted(seg, self.negotiated.tstamp_ok)
            && !seg.ack.before(self.snd_una)
            && !seg.ack.after(self.snd_nxt)
        {
            self.rcv_predicted_ack(now, seg);
            return;
        }
        // tcp_validate_incoming: PAWS and tcp_sequence.
        let paws = self.rcv.paws_reject(seg, &self.negotiated);
        if paws && !seg.flags.rst() {
            // LINUX_MIB_PAWSESTABREJECTED
            self.tp.mib.inc(Mib::TcpExtPAWSEstab);
        }
        if paws || !self.rcv.acceptable(seg) {
            if !seg.flags.rst() && self.rcv.on_unacceptable(now, seg, &self.negotiated, &mut self.tp.mib) {
                self.ack_pending = true;
            }
            return;
        }
        if seg.flags.rst() {
            self.enter_closed();
            return;
        }
        if seg.flags.syn() {
            // A SYN in the window: challenge ACK (RFC 5961).
            if self.state == TcpState::SynReceived && seg.seq + 1 == self.rcv.rcv_nxt() {
                // Retransmitted SYN: repeat the SYN-ACK.
                self.syn_pending = true;
            } else {
                self.ack_pending = true;
            }
            return;
        }
        if !seg.flags.ack() {
            return;
        }
        if self.state == TcpState::SynReceived {
            if seg.ack.before_eq(self.snd_una) || seg.ack.after(self.snd_nxt) {
                self.reset_unexpected(seg);
                return;
            }
            self.snd_wnd = self.negotiated.scaled_window(seg.window, false);
            self.snd_wl1 = seg.seq;
            self.tcp_ack(now, seg, FLAG_SLOWPATH);
            self.state = TcpState::Established;
            self.init_transfer(now);
            self.rcv.fast_path_on(self.negotiated.tstamp_ok, self.snd_wnd_field());
        } else if self.tcp_ack(now, seg, FLAG_SLOWPATH).is_none() {
            return;
        }
        let old_ack = seg.ack.before(self.snd_una);
        self.fin_acked_transitions();

        if self.state == TcpState::Closed {
            return;
        }
        if self.abort_on_data(seg) {
            return;
        }
        let env = receiver::RcvEnv { gso_size, ..self.rcv_env(old_ack) };
        let out = self.rcv.on_segment(now, seg, &env, &mut self.timers, &mut self.tp.mib);
        if let Some(ce) = out.ce {
            if self.cc.needs_ecn() {
                self.ca_ops().cwnd_event(if ce { CaEvent::EcnIsCe } else { CaEvent::EcnNoCe });
                self.dctcp_ce_state(ce);
            }
        }
        if out.ack_now {
            self.ack_pending = true;
        }
        // __tcp_ack_snd_check runs after any data went out (poll_transmit).
        self.ack_check_due = true;
        if out.fin {
            self.state = match self.state {
                TcpState::Established => TcpState::CloseWait,
                TcpState::FinWait1 => TcpState::Closing,
                TcpState::FinWait2 => TcpState::TimeWait,
                s => s,
            };
            if self.state == TcpState::TimeWait {
                self.timers.clear();
            }
        }
    }

    /// `tcp_rcv_established`'s fast path for a pure ACK ("Bulk data
    /// transfer: sender"): no validation, `tcp_ack` without
    /// `FLAG_SLOWPATH`, and no ACK check after it. The receive half still
    /// takes `ts_recent` and the echoed timestamp, as the fast path's
    /// `tcp_store_ts_recent` and `rcv_rtt_last_tsecr` do.
    fn rcv_predicted_ack(&mut self, now: Instant, seg: &SegmentRepr) {
        self.tcp_ack(now, seg, 0);
        let env = self.rcv_env(false);
        self.rcv.on_segment(now, seg, &env, &mut self.timers, &mut self.tp.mib);
    }

    /// The DCTCP receiver's CE state machine (tcp_dctcp.h
    /// `dctcp_ece_ack_update`; v4.17 `dctcp_ce_state_0_to_1` / `_1_to_0`):
    /// ECE mirrors the CE mark of the latest data. On a change, a pending
    /// delayed ACK is first sent for the data before it, with the old ECE
    /// value; since v4.18 the current segment is also ACKed at once.
    fn dctcp_ce_state(&mut self, is_ce: bool) {
        if self.ce_state != is_ce {
            if self.rcv.dctcp_prior_ack_due() {
                self.prior_state_ack = Some((self.prior_rcv_nxt, self.ce_state));
            }
            if self.cfg.dctcp_ack_on_ce_change {
                self.rcv.force_ack_now();
            }
        }
        self.prior_rcv_nxt = self.rcv.rcv_nxt();
        self.ce_state = is_ce;
        self.rcv.set_demand_cwr(is_ce);
    }

    /// Our FIN was acknowledged: FIN-WAIT-1 → FIN-WAIT-2, CLOSING →
    /// TIME-WAIT, LAST-ACK → CLOSED (`tcp_rcv_state_process`).
    fn fin_acked_transitions(&mut self) {
        let fin_acked = self.fin_queued && self.snd_una == self.write_seq + 1;
        if !fin_acked {
            return;
        }
        match self.state {
            TcpState::FinWait1 => self.state = TcpState::FinWait2,
            TcpState::Closing => {
                self.state = TcpState::TimeWait;
                self.timers.clear();
            }
            TcpState::LastAck => self.enter_closed(),
            _ => {}
        }
    }

    fn enter_closed(&mut self) {
        self.state = TcpState::Closed;
        self.timers.clear();
    }

    /// What the receive half needs to know of the rest of the socket.
    ///
    /// Built where it is used (inlined): returned through the stack it was
    /// written field by field and then copied with wider loads, which the
    /// CPU cannot forward from the pending narrow stores (a stall on every
    /// segment received).
    #[inline(always)]
    fn rcv_env(&self, old_ack: bool) -> receiver::RcvEnv {
        receiver::RcvEnv {
            srtt_us: self.rtt.srtt_us() >> 3,
            rto: self.rtt.rto(),
            negotiated: self.negotiated,
            ca_needs_ecn: self.cc.needs_ecn(),
            tsval_now: self.ts_now(),
            old_ack,
            fin_sent: matches!(self.state, TcpState::FinWait1 | TcpState::FinWait2 | TcpState::Closing),
            gso_size: 0,
            snd_wnd_field: self.snd_wnd_field(),
        }
    }

    /// The peer's window as its field carries it (`snd_wnd >> snd_wscale`).
    pub(super) fn snd_wnd_field(&self) -> u16 {
        (self.snd_wnd >> self.negotiated.snd_wscale).min(u16::MAX as u32) as u16
    }

    /// `tcp_init_transfer` after the handshake: initial cwnd, RTO from the
    /// handshake RTT, receive buffer, congestion control init, pacing rate.
    fn init_transfer(&mut self, now: Instant) {
        self.rcv.on_established(now);
        // tcp_finish_connect / tcp_create_openreq_child: icsk_ack.lrcvtime.
        self.lrcvtime = self.tp.jiffies;
        self.icsk_backoff = 0;
        self.tp.snd_cwnd = self.cfg.initcwnd.max(1).min(self.tp.snd_cwnd_clamp);
        self.tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        // tcp_init_metrics: the destination cache, or (none, or no
        // handshake RTT sample) TCP_TIMEOUT_FALLBACK.
        self.init_metrics();
        self.snd_cwnd_stamp = self.tp.jiffies;
        self.tp.ecn_ok = self.negotiated.ecn_ok;
        self.ca_ops().init();
        // tcp_rcv_state_process (SYN_RECV): "if
        // (!inet_csk(sk)->icsk_ca_ops->cong_control) tcp_update_pacing_rate";
        // a cong_control module (BBR) set the rate in its init.
        if !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
        self.sndbuf_expand();
        if self.scoreboard.packets_out == 0 {
            self.timers.stop(Timer::Retrans);
        }
    }

    /// `tcp_update_pacing_rate` (tcp_input.c): 200 % of cwnd·mss/srtt in
    /// slow start (while cwnd < ssthresh/2), 120 % after.
    fn update_pacing_rate(&mut self) {
        let ratio = if self.tp.snd_cwnd < self.tp.snd_ssthresh / 2 {
            self.cfg.tcp_pacing_ss_ratio
        } else {
            self.cfg.tcp_pacing_ca_ratio
        };
        let pkts = self.tp.snd_cwnd.max(self.scoreboard.packets_out);
        self.tp.pacing_rate = pacing_rate(self.tp.mss_cache, ratio, pkts, self.rtt.srtt_us());
    }

    /// Unsent application bytes.
    fn unsent_bytes(&self) -> u32 {
        if self.write_seq.after(self.snd_nxt) {
            self.write_seq - self.snd_nxt
        } else {
            0
        }
    }

    /// The current `icsk_rto` (already doubled by each timeout).
    fn rto_now(&self) -> Duration {
        self.rtt.rto()
    }
}

impl Connection {
    /// `tcp_update_metrics` (net/ipv4/tcp_metrics.c): fold what this
    /// connection learned into the destination's cache when it ends
    /// (Linux calls it on entering TIME-WAIT or closing from LAST-ACK).
    /// Does nothing with `tcp_no_metrics_save`.
    pub fn update_metrics(&self, m: &mut TcpMetrics) {
        if self.cfg.tcp_no_metrics_save {
            return;
        }
        let srtt = self.rtt.srtt_us();
        if self.icsk_backoff > 0 || srtt == 0 {
            // "This session failed to estimate rtt": forget the cached one.
            m.rtt = 0;
            return;
        }
        // RTT: a larger sample replaces, a smaller one decays in by 1/8
        // ("rtt overestimation is always better than underestimation").
        let diff = m.rtt as i64 - srtt as i64;
        m.rtt = if diff <= 0 { srtt } else { m.rtt - (diff >> 3) as u32 };
        let mut dev = (diff.unsigned_abs() >> 1) as u32;
        dev = dev.max(self.rtt.mdev_us());
        m.rttvar = if dev >= m.rttvar { dev } else { m.rttvar - ((m.rttvar - dev) >> 2) };

        let save_ssthresh = !self.cfg.tcp_no_ssthresh_metrics_save;
        let cwnd = self.tp.snd_cwnd;
        let ssthresh = self.tp.snd_ssthresh;
        if ssthresh >= TCP_INFINITE_SSTHRESH {
            // Slow start never finished.
            if save_ssthresh && m.ssthresh != 0 && (cwnd >> 1) > m.ssthresh {
                m.ssthresh = cwnd >> 1;
            }
            if cwnd > m.cwnd {
                m.cwnd = cwnd;
            }
        } else if !self.tp.in_slow_start() && self.tp.ca_state == CaState::Open {
            // Congestion avoidance: cwnd is reliable.
            if save_ssthresh {
                m.ssthresh = (cwnd >> 1).max(ssthresh);
            }
            m.cwnd = (m.cwnd + cwnd) >> 1;
        } else {
            // Slow start did not finish, or recovery: cwnd is nonsense.
            m.cwnd = (m.cwnd + ssthresh) >> 1;
            if save_ssthresh && m.ssthresh != 0 && ssthresh > m.ssthresh {
                m.ssthresh = ssthresh;
            }
            if m.reordering < self.reordering && self.reordering != self.cfg.tcp_reordering {
                m.reordering = self.reordering;
            }
        }
    }

    /// `tcp_init_metrics`: start from the destination's cache at the end
    /// of the handshake (ssthresh unless `tcp_no_ssthresh_metrics_save`,
    /// reordering, and an RTO seeded from a larger cached RTT).
    fn init_metrics(&mut self) {
        let cached = if self.cfg.tcp_no_metrics_save { None } else { self.cached_metrics.as_deref().copied() };
        let Some(m) = cached else {
            self.rtt.init_metrics(0);
            return;
        };
        let ssthresh = if self.cfg.tcp_no_ssthresh_metrics_save { 0 } else { m.ssthresh };
        self.tp.snd_ssthresh = if ssthresh != 0 { ssthresh.min(self.tp.snd_cwnd_clamp) } else { TCP_INFINITE_SSTHRESH };
        if m.reordering != 0 && self.reordering != m.reordering {
            self.reordering = m.reordering;
            // 3.x tcp_init_metrics: a cached reordering also disables FACK
            // and early retransmit.
            self.v3.fack = false;
            self.v3.do_early_retrans = false;
        }
        self.rtt.init_metrics(m.rtt);
    }

    /// Tell the connection that its packets go through an fq qdisc, which
    /// paces them (`sk_pacing_status = SK_PACING_FQ`, set by sch_fq on the
    /// first packet). HyStart's ACK-train test depends on it.
    ///
    /// `edt`: fq paces by departure time (Linux ≥ 4.20), and the driver
    /// cannot hold an skb sent early until its time as sch_fq does, so the
    /// connection stops sending at an skb whose `tcp_wstamp_ns` is still
    /// ahead (as `tcp_pacing_check` does for internal pacing, without
    /// arming the pacing timer: the driver polls again at
    /// [`Self::tcp_wstamp_ns`]). Each skb then leaves at its stamp, its
    /// segments together.
    pub fn set_pacing_fq(&mut self, edt: bool) {
        self.tp.pacing_status = crate::cc::PacingStatus::Fq;
        self.edt_hold = edt;
    }
}

/// The arithmetic of `tcp_update_pacing_rate`: `mss · 8·10^4 · ratio ·
/// pkts / srtt_us` (srtt in µs << 3), in the kernel's `u64`, which wraps:
/// with a huge cwnd (grown by forged ACKs, or a large clamp) the product
/// passes 2^64 in Linux too. With no RTT sample (`srtt_us` 0) the division
/// is skipped, as in the kernel.
//= linux:v6.13:net/ipv4/tcp_input.c#tcp_update_pacing_rate
fn pacing_rate(mss: u32, ratio: u32, pkts: u32, srtt_us: u32) -> u64 {
    let rate = u64::from(mss)
        .wrapping_mul((1_000_000 / 100) << 3)
        .wrapping_mul(u64::from(ratio))
        .wrapping_mul(u64::from(pkts));
    rate.checked_div(u64::from(srtt_us)).unwrap_or(rate)
}

#[cfg(test)]
mod tests {
    use super::pacing_rate;

    #[test]
    fn test_pacing_rate_wraps_as_the_kernels_u64() {
        // 1448 B, 200 %, 10 packets, srtt 10 ms (<< 3): 2 · 1448 · 10 / 10 ms.
        assert_eq!(pacing_rate(1448, 200, 10, 80_000), 2_896_000);
        assert_eq!(pacing_rate(1448, 200, 10, 0), 1448 * 80_000 * 200 * 10);
        // Found by fuzzing (fuzz/corpus/core_segments/regression-pacing-overflow):
        // an overflow panic with overflow checks. Linux's u64 wraps.
        let wrapped = 65_535u64.wrapping_mul(80_000).wrapping_mul(1000).wrapping_mul(u64::from(u32::MAX));
        assert_eq!(pacing_rate(65_535, 1000, u32::MAX, 0), wrapped);
    }
}
