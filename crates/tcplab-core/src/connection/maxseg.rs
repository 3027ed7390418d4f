//! `TCP_MAXSEG` as the application reads it, and `tp->advmss`.
//!
//! Setting it is configuration (`TcpConfig::user_mss`, before the
//! connection: `tp->rx_opt.user_mss`), which caps the MSS announced
//! (`tcp_mss_clamp`, `TcpConfig::advmss`) and the one sent with
//! (`tcp_parse_options`, `Negotiated::parse_syn_options`).

use super::receiver::TCP_MSS_DEFAULT;
use super::{Connection, TcpState};

impl Connection {
    /// `getsockopt(TCP_MAXSEG)` (net/ipv4/tcp.c `do_tcp_getsockopt`):
    /// `mss_cache`, but `user_mss` when it is set and the socket is CLOSE
    /// or LISTEN.
    pub fn maxseg(&self) -> u32 {
        if self.cfg.user_mss != 0 && matches!(self.state, TcpState::Closed | TcpState::Listen) {
            self.cfg.user_mss
        } else {
            self.tp.mss_cache
        }
    }

    /// `tcpi_advmss`: `tp->advmss`, the MSS we announced (less the
    /// timestamp option on the active side).
    pub fn advmss(&self) -> u32 {
        self.rcv.adv_mss()
    }
}

/// `getsockopt(TCP_MAXSEG)` on a socket with no connection yet: the
/// option if set, else `mss_cache`'s initial `TCP_MSS_DEFAULT` (536,
/// `tcp_init_sock`).
pub fn maxseg_unconnected(user_mss: u32) -> u32 {
    if user_mss != 0 {
        user_mss
    } else {
        TCP_MSS_DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::time::Instant;
    use crate::wire::{SegmentRepr, SeqNum, TcpFlags};

    /// mss-setsockopt-tcp_maxseg-server.pkt's exchange: TCP_MAXSEG 1100 on
    /// the listener; the SYN offers 1300 (no timestamps); the SYN-ACK
    /// announces 1100 and the connection sends 1100-byte segments.
    #[test]
    fn test_user_mss_caps_the_announced_and_the_sending_mss() {
        let cfg = TcpConfig { user_mss: 1100, ..TcpConfig::default() };
        assert_eq!(cfg.advmss(), 1100);
        let mut c = Connection::server(cfg, 8, 9, SeqNum(0));
        assert_eq!(c.maxseg(), 1100);
        let mut syn =
            SegmentRepr { src_port: 9, dst_port: 8, flags: TcpFlags::SYN, window: 32792, ..Default::default() };
        syn.options.mss = Some(1300);
        syn.options.wscale = Some(7);
        let t0 = Instant::from_nanos(0);
        c.handle_segment(t0, &syn);
        let synack = c.poll_transmit(t0).expect("SYN-ACK");
        assert_eq!(synack.options.mss, Some(1100));
        let ack = SegmentRepr {
            src_port: 9,
            dst_port: 8,
            seq: SeqNum(1),
            ack: SeqNum(1),
            flags: TcpFlags::ACK,
            window: 257,
            ..Default::default()
        };
        let t1 = Instant::from_nanos(100_000_000);
        c.handle_segment(t1, &ack);
        while c.poll_transmit(t1).is_some() {}
        assert_eq!((c.maxseg(), c.advmss(), c.info().snd_mss), (1100, 1100, 1100));
        c.write(12000);
        let first = std::iter::from_fn(|| c.poll_transmit(t1)).find(|s| s.payload_len > 0).expect("data");
        assert_eq!(first.payload_len, 1100);
    }

    /// Without the option a socket reads 536 before it connects.
    #[test]
    fn test_maxseg_unconnected_is_the_option_or_536() {
        assert_eq!((maxseg_unconnected(0), maxseg_unconnected(1100)), (536, 1100));
    }
}
