//! How `tcp_ack` is entered and when it calls the congestion control
//! (net/ipv4/tcp_input.c `tcp_rcv_established`, `tcp_ack`), on hand-built
//! ACKs: header prediction on the sending side, which of the ACKs
//! `TCPHPAcks` (fast path, `snd_una` advanced) and `TCPPureAcks` (a pure
//! ACK through `tcp_ack`'s slow branch) count, and where `in_ack_event`
//! runs.

mod common;

use common::sender::Sender;
use tcplab_core::counters::Mib;
use tcplab_core::TcpConfig;

fn counts(s: &Sender) -> (u64, u64) {
    let c = s.c.counters();
    (c.get(Mib::TcpExtTCPHPAcks), c.get(Mib::TcpExtTCPPureAcks))
}

#[test]
fn test_pure_acks_take_the_fast_path_once_the_window_is_predicted() {
    // The active opener with window scaling starts with prediction off
    // (tcp_finish_connect); the SYN-ACK's 65535 becomes 2000 << 7.
    let mut s = Sender::new(TcpConfig::default(), None, 100_000);
    assert_eq!(s.sent.len(), 10, "the initial window");
    s.ack(2, &[], None);
    assert_eq!(counts(&s), (0, 1), "slow path; the new window turns prediction on");
    s.ack(4, &[], None);
    assert_eq!(counts(&s), (1, 1), "predicted, snd_una advances: TCPHPAcks");
    s.ack(4, &[], None);
    assert_eq!(counts(&s), (1, 2), "predicted, but a duplicate: tcp_ack's slow branch");
    s.ack_window(6, &[], None, 2001);
    assert_eq!(counts(&s), (1, 3), "another window misses the prediction, then sets it");
    s.ack_window(8, &[], None, 2001);
    assert_eq!(counts(&s), (2, 3));
    s.ack_window(8, &[(9, 10)], None, 2001);
    assert_eq!(counts(&s), (2, 4), "SACK blocks lengthen the header: slow path");
    s.ack_window(10, &[], None, 2001);
    assert_eq!(counts(&s), (3, 4));
}

/// The peer's segment: `data` bytes from `seq` (offset past its ISN),
/// acknowledging our segment `upto`, window field 2000.
fn peer(s: &mut Sender, seq: u32, data: u32, upto: u32) {
    use common::sender::IRS;
    use tcplab_core::time::Duration;
    use tcplab_core::wire::{SegmentRepr, SeqNum, TcpFlags};
    s.now += Duration::from_micros(100);
    let seg = SegmentRepr {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNum(IRS + 1 + seq),
        ack: Sender::seq(upto),
        flags: TcpFlags::ACK,
        window: 2000,
        payload_len: data,
        ..Default::default()
    };
    s.c.handle_segment(s.now, &seg);
    s.drain();
}

#[test]
fn test_out_of_order_data_stops_prediction_until_the_hole_fills() {
    // tcp_data_queue_ofo clears pred_flags; tcp_fast_path_check sets it
    // again once the in-order segment empties the out-of-order queue.
    let mut s = Sender::new(TcpConfig::default(), None, 100_000);
    s.ack(2, &[], None);
    s.ack(4, &[], None);
    assert_eq!(counts(&s), (1, 1), "predicted from the second ACK");
    peer(&mut s, 1000, 1000, 4);
    assert_eq!(counts(&s), (1, 1), "data is not a pure ACK");
    peer(&mut s, 0, 0, 6);
    assert_eq!(counts(&s), (1, 2), "the predicted header, but a hole in the receive queue");
    peer(&mut s, 0, 1000, 6);
    peer(&mut s, 2000, 0, 8);
    assert_eq!(counts(&s), (2, 2), "the hole filled: predicted again");
}

/// A DCTCP sender after an ECN handshake, its initial window out, and its
/// state after one ECE ACK for the first two segments.
fn dctcp_after_one_ece_ack(after_clean: bool) -> (u32, u32) {
    use common::sender::{IRS, ISS, MSS};
    use tcplab_core::cc::CcInfo;
    use tcplab_core::time::Instant;
    use tcplab_core::wire::{SegmentRepr, SeqNum, TcpFlags, TcpOptions};
    use tcplab_core::Connection;

    let mut cfg = TcpConfig::default();
    cfg.congestion_control = cfg.congestion_control_named("dctcp").unwrap();
    cfg.tcp_timestamps = false;
    cfg.in_ack_event_after_clean = after_clean;
    let mut c = Connection::client(cfg, 40000, 80, SeqNum(ISS), Instant::ZERO);
    let syn = c.poll_transmit(Instant::ZERO).unwrap();
    assert!(syn.flags.ece() && syn.flags.cwr(), "DCTCP asks for ECN");
    let now = Instant::from_millis(10);
    let synack = SegmentRepr {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNum(IRS),
        ack: SeqNum(ISS + 1),
        flags: TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE,
        window: 65535,
        options: TcpOptions { mss: Some(MSS as u16), sack_permitted: true, wscale: Some(7), ..Default::default() },
        ..Default::default()
    };
    c.handle_segment(now, &synack);
    c.write(100_000);
    while c.poll_transmit(now).is_some() {}
    let ack = SegmentRepr {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNum(IRS + 1),
        ack: SeqNum(ISS + 1 + 2 * MSS),
        flags: TcpFlags::ACK | TcpFlags::ECE,
        window: 2000,
        ..Default::default()
    };
    c.handle_segment(now + tcplab_core::time::Duration::from_millis(10), &ack);
    let i = c.info();
    let Some(CcInfo::Dctcp { alpha, .. }) = i.cc_info else { panic!("DCTCP reports its state") };
    (alpha, i.snd_ssthresh)
}

#[test]
fn test_dctcp_alpha_counts_the_ece_acks_delivery_when_in_ack_event_follows_the_rtx_queue() {
    // The ACK ends DCTCP's first window (next_seq = snd_nxt at init). After
    // tcp_clean_rtx_queue (6.12.118) its two delivered packets are CE:
    // alpha = 1024 - 1024/16 + (2 << 6) / 2 = 1024, and the CWR it starts
    // halves cwnd: ssthresh 10 - (10 * 1024 >> 11) = 5. Before it (<= 6.13)
    // the window saw no delivery: alpha = 960, ssthresh 10 - 4 = 6.
    assert_eq!(dctcp_after_one_ece_ack(true), (1024, 5));
    assert_eq!(dctcp_after_one_ece_ack(false), (960, 6));
}
