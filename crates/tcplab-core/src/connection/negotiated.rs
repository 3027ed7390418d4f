//! What the handshake settled: the options both ends agreed on, as the
//! negotiated part of Linux's `struct tcp_options_received` (`tp->rx_opt`:
//! `sack_ok`, `tstamp_ok`, `snd_wscale`, `mss_clamp`) and the `TCP_ECN_OK`
//! bit of `tp->ecn_flags`.
//!
//! Fixed once the connection is synchronized, read by both halves of the
//! socket: the sender's SACK processing and header size, the receiver's
//! SACK blocks, timestamps, window scale and ECN echo. The receiver keeps
//! no copy: it is handed this struct (`Receiver::on_syn`, `RcvEnv`).

use super::receiver::TCP_MSS_DEFAULT;
use crate::config::TcpConfig;
use tcplab_wire::TcpOptions;

/// `TCPOLEN_TSTAMP_ALIGNED`: the timestamp option with its padding.
const TCPOLEN_TSTAMP_ALIGNED: u32 = 12;
/// `TCP_MAX_WSCALE` (include/net/tcp.h, RFC 7323 §2.3): the largest window
/// shift either end may use.
pub(super) const TCP_MAX_WSCALE: u8 = 14;
/// `TCP_MIN_SND_MSS` (include/net/tcp.h): the least MSS a peer may
/// announce.
const TCP_MIN_SND_MSS: u32 = 48;

/// The options negotiated at the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Negotiated {
    /// `rx_opt.sack_ok`: both ends sent SACK-permitted (and
    /// `tcp_sack` is on).
    pub sack_ok: bool,
    /// `rx_opt.tstamp_ok`: timestamps on every segment (RFC 7323).
    pub tstamp_ok: bool,
    /// `rx_opt.wscale_ok`: both ends sent the window-scale option (and
    /// `tcp_window_scaling` is on), so our window is scaled too.
    pub wscale_ok: bool,
    /// `rx_opt.snd_wscale`: the peer's window shift, 0 without scaling.
    pub snd_wscale: u8,
    /// `rx_opt.mss_clamp`: the peer's MSS option (536 without one).
    pub mss_clamp: u32,
    /// `TCP_ECN_OK` in `tp->ecn_flags`: ECN was agreed (RFC 3168).
    pub ecn_ok: bool,
}

impl Default for Negotiated {
    /// Before the handshake: nothing agreed, the RFC 1122 default MSS.
    fn default() -> Self {
        Negotiated {
            sack_ok: false,
            tstamp_ok: false,
            wscale_ok: false,
            snd_wscale: 0,
            mss_clamp: TCP_MSS_DEFAULT,
            ecn_ok: false,
        }
    }
}

impl Negotiated {
    /// Records what the peer's SYN (or SYN-ACK) offered and our sysctls
    /// allow (`tcp_parse_options` with `tcp_openreq_init` /
    /// `tcp_rcv_synsent_state_process`): SACK, timestamps, the window shift
    /// (at most [`TCP_MAX_WSCALE`]) and the MSS clamp (at least
    /// [`TCP_MIN_SND_MSS`]; [`TCP_MSS_DEFAULT`] without the option). ECN is decided by the caller, from the
    /// SYN's flags.
    pub(super) fn parse_syn_options(&mut self, cfg: &TcpConfig, o: &TcpOptions) {
        self.sack_ok = cfg.tcp_sack && o.sack_permitted;
        self.tstamp_ok = cfg.tcp_timestamps && o.timestamp.is_some();
        self.wscale_ok = cfg.tcp_window_scaling && o.wscale.is_some();
        self.snd_wscale = match (self.wscale_ok, o.wscale) {
            (true, Some(s)) => s.min(TCP_MAX_WSCALE),
            _ => 0,
        };
        // tcp_parse_options: the peer's MSS, capped by TCP_MAXSEG.
        let mut in_mss = o.mss.map(u32::from).unwrap_or(TCP_MSS_DEFAULT);
        if cfg.user_mss != 0 && cfg.user_mss < in_mss {
            in_mss = cfg.user_mss;
        }
        self.mss_clamp = in_mss.max(TCP_MIN_SND_MSS);
    }

    /// The option bytes every segment carries (`tp->tcp_header_len` less
    /// the 20-byte header): the timestamp option when agreed.
    pub(super) fn options_len(&self) -> u32 {
        if self.tstamp_ok {
            TCPOLEN_TSTAMP_ALIGNED
        } else {
            0
        }
    }

    /// The peer's window field scaled (`ntohs(th->window) << snd_wscale`);
    /// a SYN's window is never scaled (RFC 7323 §2.2).
    pub(super) fn scaled_window(&self, window: u16, syn: bool) -> u32 {
        if syn {
            window as u32
        } else {
            (window as u32) << self.snd_wscale
        }
    }
}
