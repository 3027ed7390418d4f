//! Which wire segments carry PSH: Linux decides per skb (connection/skb.rs).

mod common;

use common::{Fate, Pair, Side};
use tcplab_core::time::Duration;
use tcplab_core::{TcpConfig, TcpState};

fn established(cfg: &TcpConfig) -> Pair {
    let mut p = Pair::new(cfg, cfg, Duration::from_millis(10));
    assert!(
        p.drive_until(100, |p| p.client.state() == TcpState::Established && p.server.state() == TcpState::Established)
    );
    p.log.clear();
    p
}

/// The client's data segments: (seq offset from the first, payload, PSH).
fn client_data(p: &Pair) -> Vec<(u32, u32, bool)> {
    let first = p.log.iter().find(|(_, s, g)| *s == Side::Client && g.payload_len > 0).map(|(_, _, g)| g.seq);
    p.log
        .iter()
        .filter(|(_, s, g)| *s == Side::Client && g.payload_len > 0)
        .map(|(_, _, g)| (g.seq - first.unwrap(), g.payload_len, g.flags.contains(tcplab_core::wire::TcpFlags::PSH)))
        .collect()
}

#[test]
fn test_established_write_psh_ends_each_tso_skb() {
    let cfg = TcpConfig::default();
    let mut p = established(&cfg);
    p.client.write(30_000);
    p.flush();
    // IW10 in skbs of min(cwnd/2, TSO autosize = tcp_min_tso_segs = 2)
    // segments: __tcp_transmit_skb forces PSH on each, GSO puts it on the
    // last segment.
    let d = client_data(&p);
    assert_eq!(d.len(), 10);
    let psh: Vec<bool> = d.iter().map(|x| x.2).collect();
    assert_eq!(psh, [false, true, false, true, false, true, false, true, false, true]);
}

#[test]
fn test_write_smaller_than_mss_pushes() {
    let cfg = TcpConfig::default();
    let mut p = established(&cfg);
    p.client.write(100);
    p.flush();
    assert_eq!(client_data(&p), vec![(0, 100, true)]);
}

#[test]
fn test_fast_retransmit_of_inner_mss_has_no_psh() {
    let cfg = TcpConfig::default();
    let mut p = established(&cfg);
    let mut dropped = false;
    p.filter = Box::new(move |_, side, seg| {
        if side == Side::Client && seg.payload_len > 0 && !dropped {
            dropped = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.client.write(14_480);
    p.client.close();
    assert!(p.drive_until(10_000, |p| p.client.state() == TcpState::FinWait2));
    // The first MSS of a two-segment skb goes again on its own, without
    // the PSH its skb's last segment had (tcp_fragment).
    let d = client_data(&p);
    let rtx: Vec<_> = d.iter().filter(|x| x.0 == 0).collect();
    assert_eq!(rtx.len(), 2);
    assert!(!rtx[1].2);
}

#[test]
fn test_eor_records_never_share_a_segment() {
    let cfg = TcpConfig { initcwnd: 2, ..TcpConfig::default() };
    let mut p = established(&cfg);
    // Fill the initial window so that later writes queue up.
    p.client.write(2 * 1448);
    p.client.write_eor(400);
    p.client.write_eor(400);
    p.client.write(2000);
    p.client.close();
    assert!(p.drive_until(10_000, |p| p.client.state() == TcpState::FinWait2));
    let d: Vec<_> = client_data(&p).into_iter().filter(|x| x.0 >= 2 * 1448).collect();
    // Each record ends a segment, with PSH; the next write starts a new skb.
    assert_eq!(d[0], (2 * 1448, 400, true));
    assert_eq!(d[1], (2 * 1448 + 400, 400, true));
    assert_eq!(d[2].0, 2 * 1448 + 800);
}
