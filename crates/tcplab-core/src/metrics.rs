//! The per-destination metrics cache (net/ipv4/tcp_metrics.c): what one
//! connection leaves behind for the next one to the same host — RTT,
//! RTT variance, ssthresh, cwnd and reordering. Linux keeps it per
//! destination address; the driver (the simulator's host) owns one per
//! destination and hands it to each new connection.
//!
//! `net.ipv4.tcp_no_metrics_save = 1` stops saving;
//! `tcp_no_ssthresh_metrics_save = 1` (default since v5.x) keeps ssthresh
//! out of it.

/// One `struct tcp_metrics_block`'s values (`TCP_METRIC_*`). Zero means
/// "not set", as in the kernel.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TcpMetrics {
    /// `TCP_METRIC_RTT`, in `srtt_us` units (µs × 8).
    pub rtt: u32,
    /// `TCP_METRIC_RTTVAR`, in `mdev_us` units (µs × 4).
    pub rttvar: u32,
    /// `TCP_METRIC_SSTHRESH`, packets.
    pub ssthresh: u32,
    /// `TCP_METRIC_CWND`, packets.
    pub cwnd: u32,
    /// `TCP_METRIC_REORDERING`, packets.
    pub reordering: u32,
}
