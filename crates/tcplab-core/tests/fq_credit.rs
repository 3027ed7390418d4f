//! A connection whose driver's fq paces by credit (pre-4.20): the driver
//! applies TCP Small Queues between polls, so the core commits an skb
//! (counts it in flight and stamps it for RTT samples) only when the one
//! before it has been handed out, as `tcp_write_xmit` checks
//! `tcp_small_queue_check` before each `tcp_transmit_skb`.

mod common;

use common::Pair;
use tcplab_core::time::Duration;
use tcplab_core::{TcpConfig, TcpState};

fn established() -> Pair {
    let cfg = TcpConfig::default();
    let mut p = Pair::new(&cfg, &cfg, Duration::from_millis(10));
    assert!(
        p.drive_until(100, |p| p.client.state() == TcpState::Established && p.server.state() == TcpState::Established)
    );
    p
}

/// `tcpi_unacked` after each poll of a 30 KB write, until the initial
/// window is out.
fn unacked_per_poll(p: &mut Pair) -> Vec<u32> {
    p.client.write(30_000);
    let now = p.now;
    let mut out = Vec::new();
    while p.client.poll_transmit(now).is_some() {
        out.push(p.client.info().unacked);
    }
    out
}

#[test]
fn test_without_fq_the_initial_window_is_committed_at_once() {
    let mut p = established();
    // IW10 in skbs of two segments (TSO autosize = tcp_min_tso_segs):
    // write_xmit commits all five before the first segment comes out.
    assert_eq!(unacked_per_poll(&mut p), [10; 10]);
}

#[test]
fn test_under_fq_credit_pacing_an_skb_is_committed_when_the_one_before_has_left() {
    let mut p = established();
    p.client.set_pacing_fq(false);
    // One skb (two segments) at a time: its second segment leaves before
    // the next skb is committed.
    assert_eq!(unacked_per_poll(&mut p), [2, 2, 4, 4, 6, 6, 8, 8, 10, 10]);
}
