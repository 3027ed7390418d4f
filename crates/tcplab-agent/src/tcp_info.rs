//! `struct tcp_info` as Linux 6.12 defines it (include/uapi/linux/tcp.h),
//! read with `getsockopt(IPPROTO_TCP, TCP_INFO)`, and its mapping to the
//! result's [`TcpInfoOut`] and [`TraceOut`].
//!
//! The libc crate's `tcp_info` stops at `tcpi_total_retrans` and drops the
//! second bit-field byte, so the layout is spelled out here. The kernel
//! copies `min(optlen, sizeof(struct tcp_info))` bytes: an older kernel
//! leaves the newer fields zero, a newer one truncates its own.

use crate::job::{TcpInfoOut, TraceOut};
use std::io;
use std::os::fd::RawFd;

/// `tcpi_state` values (include/net/tcp_states.h).
pub const TCP_ESTABLISHED: u8 = 1;
pub const TCP_SYN_SENT: u8 = 2;
pub const TCP_CLOSE: u8 = 7;

/// Linux's `struct tcp_info` up to 6.12's last field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub tcpi_state: u8,
    pub tcpi_ca_state: u8,
    pub tcpi_retransmits: u8,
    pub tcpi_probes: u8,
    pub tcpi_backoff: u8,
    pub tcpi_options: u8,
    /// `tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4`.
    pub tcpi_wscale: u8,
    /// `tcpi_delivery_rate_app_limited : 1, tcpi_fastopen_client_fail : 2`.
    pub tcpi_app_limited_fo_fail: u8,

    pub tcpi_rto: u32,
    pub tcpi_ato: u32,
    pub tcpi_snd_mss: u32,
    pub tcpi_rcv_mss: u32,

    pub tcpi_unacked: u32,
    pub tcpi_sacked: u32,
    pub tcpi_lost: u32,
    pub tcpi_retrans: u32,
    pub tcpi_fackets: u32,

    pub tcpi_last_data_sent: u32,
    pub tcpi_last_ack_sent: u32,
    pub tcpi_last_data_recv: u32,
    pub tcpi_last_ack_recv: u32,

    pub tcpi_pmtu: u32,
    pub tcpi_rcv_ssthresh: u32,
    pub tcpi_rtt: u32,
    pub tcpi_rttvar: u32,
    pub tcpi_snd_ssthresh: u32,
    pub tcpi_snd_cwnd: u32,
    pub tcpi_advmss: u32,
    pub tcpi_reordering: u32,

    pub tcpi_rcv_rtt: u32,
    pub tcpi_rcv_space: u32,

    pub tcpi_total_retrans: u32,

    pub tcpi_pacing_rate: u64,
    pub tcpi_max_pacing_rate: u64,
    pub tcpi_bytes_acked: u64,
    pub tcpi_bytes_received: u64,
    pub tcpi_segs_out: u32,
    pub tcpi_segs_in: u32,

    pub tcpi_notsent_bytes: u32,
    pub tcpi_min_rtt: u32,
    pub tcpi_data_segs_in: u32,
    pub tcpi_data_segs_out: u32,

    pub tcpi_delivery_rate: u64,

    pub tcpi_busy_time: u64,
    pub tcpi_rwnd_limited: u64,
    pub tcpi_sndbuf_limited: u64,

    pub tcpi_delivered: u32,
    pub tcpi_delivered_ce: u32,

    pub tcpi_bytes_sent: u64,
    pub tcpi_bytes_retrans: u64,
    pub tcpi_dsack_dups: u32,
    pub tcpi_reord_seen: u32,

    pub tcpi_rcv_ooopack: u32,

    pub tcpi_snd_wnd: u32,
    pub tcpi_rcv_wnd: u32,

    pub tcpi_rehash: u32,

    pub tcpi_total_rto: u16,
    pub tcpi_total_rto_recoveries: u16,
    pub tcpi_total_rto_time: u32,
}

/// `getsockopt(fd, IPPROTO_TCP, opt)` into a `T`: the value and the length
/// the kernel wrote (at most `size_of::<T>()`).
fn tcp_getsockopt<T: Copy + Default>(fd: RawFd, opt: libc::c_int) -> io::Result<(T, usize)> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `T` is one of this module's `repr(C)` plain-old-data structs,
    // `len` writable bytes; the kernel writes at most `len` bytes and
    // updates `len`.
    let rc = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, opt, (&mut v as *mut T).cast(), &mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((v, len as usize))
}

/// Reads `TCP_INFO` of socket `fd`.
pub fn read(fd: RawFd) -> io::Result<TcpInfo> {
    tcp_getsockopt(fd, libc::TCP_INFO).map(|(info, _)| info)
}

/// `TCP_CC_INFO` (include/uapi/linux/tcp.h).
const TCP_CC_INFO: libc::c_int = 26;

/// `struct tcp_dctcp_info` (include/uapi/linux/inet_diag.h), the DCTCP
/// member of `union tcp_cc_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct TcpDctcpInfo {
    dctcp_enabled: u16,
    dctcp_ce_state: u16,
    dctcp_alpha: u32,
    dctcp_ab_ecn: u32,
    dctcp_ab_tot: u32,
}

/// DCTCP's alpha of socket `fd` (`getsockopt(TCP_CC_INFO)`, which
/// `dctcp_get_info` fills); `None` when the socket does not run DCTCP
/// (no `get_info`, or its Reno fallback with `dctcp_enabled = 0`).
pub fn read_dctcp_alpha(fd: RawFd) -> Option<u32> {
    let (info, len) = tcp_getsockopt::<TcpDctcpInfo>(fd, TCP_CC_INFO).ok()?;
    (len == std::mem::size_of::<TcpDctcpInfo>() && info.dctcp_enabled != 0).then_some(info.dctcp_alpha)
}

impl TcpInfo {
    /// The fields the result reports.
    pub fn to_out(&self) -> TcpInfoOut {
        TcpInfoOut {
            state: self.tcpi_state,
            ca_state: self.tcpi_ca_state,
            retransmits: self.tcpi_retransmits,
            probes: self.tcpi_probes,
            backoff: self.tcpi_backoff,
            snd_mss: self.tcpi_snd_mss,
            rcv_mss: self.tcpi_rcv_mss,
            unacked: self.tcpi_unacked,
            sacked: self.tcpi_sacked,
            lost: self.tcpi_lost,
            retrans: self.tcpi_retrans,
            rtt_us: self.tcpi_rtt,
            rttvar_us: self.tcpi_rttvar,
            snd_ssthresh: self.tcpi_snd_ssthresh,
            snd_cwnd: self.tcpi_snd_cwnd,
            reordering: self.tcpi_reordering,
            total_retrans: self.tcpi_total_retrans,
            pacing_rate: self.tcpi_pacing_rate,
            bytes_acked: self.tcpi_bytes_acked,
            bytes_received: self.tcpi_bytes_received,
            segs_out: self.tcpi_segs_out,
            segs_in: self.tcpi_segs_in,
            data_segs_out: self.tcpi_data_segs_out,
            min_rtt_us: self.tcpi_min_rtt,
            delivered: self.tcpi_delivered,
            delivered_ce: self.tcpi_delivered_ce,
            busy_time_us: self.tcpi_busy_time,
            rwnd_limited_us: self.tcpi_rwnd_limited,
            sndbuf_limited_us: self.tcpi_sndbuf_limited,
            reord_seen: self.tcpi_reord_seen,
            snd_wnd: self.tcpi_snd_wnd,
            rcv_wnd: self.tcpi_rcv_wnd,
            last_data_recv_ms: self.tcpi_last_data_recv,
            rto_us: self.tcpi_rto,
        }
    }

    /// Packets in flight as `tcp_packets_in_flight()` counts them:
    /// `packets_out - (sacked_out + lost_out) + retrans_out`.
    pub fn inflight(&self) -> u32 {
        self.tcpi_unacked
            .saturating_sub(self.tcpi_sacked.saturating_add(self.tcpi_lost))
            .saturating_add(self.tcpi_retrans)
    }

    /// A trace row taken at scenario time `time_ns`, with DCTCP's alpha
    /// if the socket runs DCTCP.
    pub fn to_trace(&self, time_ns: u64, dctcp_alpha: Option<u32>) -> TraceOut {
        TraceOut {
            time_ns,
            cwnd: self.tcpi_snd_cwnd,
            ssthresh: self.tcpi_snd_ssthresh,
            srtt_us: self.tcpi_rtt,
            inflight: self.inflight(),
            ca_state: self.tcpi_ca_state,
            delivered: self.tcpi_delivered,
            pacing_rate: self.tcpi_pacing_rate,
            reordering: self.tcpi_reordering,
            dctcp_alpha,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Offsets counted by hand from 6.12's include/uapi/linux/tcp.h (eight
    /// u8 and bit-field bytes, then u32s from 8; the first u64 lands on
    /// 104, already aligned; the struct ends at 248, a multiple of 8).
    #[test]
    fn layout_matches_linux_6_12() {
        assert_eq!(offset_of!(TcpInfo, tcpi_rto), 8);
        assert_eq!(offset_of!(TcpInfo, tcpi_unacked), 24);
        assert_eq!(offset_of!(TcpInfo, tcpi_last_data_recv), 52);
        assert_eq!(offset_of!(TcpInfo, tcpi_rtt), 68);
        assert_eq!(offset_of!(TcpInfo, tcpi_snd_cwnd), 80);
        assert_eq!(offset_of!(TcpInfo, tcpi_total_retrans), 100);
        assert_eq!(offset_of!(TcpInfo, tcpi_pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, tcpi_segs_out), 136);
        assert_eq!(offset_of!(TcpInfo, tcpi_min_rtt), 148);
        assert_eq!(offset_of!(TcpInfo, tcpi_delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, tcpi_busy_time), 168);
        assert_eq!(offset_of!(TcpInfo, tcpi_delivered), 192);
        assert_eq!(offset_of!(TcpInfo, tcpi_delivered_ce), 196);
        assert_eq!(offset_of!(TcpInfo, tcpi_bytes_sent), 200);
        assert_eq!(offset_of!(TcpInfo, tcpi_reord_seen), 220);
        assert_eq!(offset_of!(TcpInfo, tcpi_snd_wnd), 228);
        assert_eq!(offset_of!(TcpInfo, tcpi_rcv_wnd), 232);
        assert_eq!(offset_of!(TcpInfo, tcpi_rehash), 236);
        assert_eq!(offset_of!(TcpInfo, tcpi_total_rto), 240);
        assert_eq!(offset_of!(TcpInfo, tcpi_total_rto_time), 244);
        assert_eq!(size_of::<TcpInfo>(), 248);
    }

    #[test]
    fn inflight_saturates() {
        let i = TcpInfo { tcpi_unacked: 10, tcpi_sacked: 3, tcpi_lost: 2, tcpi_retrans: 1, ..Default::default() };
        assert_eq!(i.inflight(), 6);
        let i = TcpInfo { tcpi_unacked: 1, tcpi_sacked: 3, tcpi_lost: 2, tcpi_retrans: 1, ..Default::default() };
        assert_eq!(i.inflight(), 1);
    }

    #[test]
    fn a_non_socket_is_an_error() {
        assert!(read(-1).is_err());
    }
}
