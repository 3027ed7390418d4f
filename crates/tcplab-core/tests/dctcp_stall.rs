//! The DCTCP RPC stall of "tcp: force cwnd at least 2 in
//! tcp_cwnd_reduction" (Brakmo, 2018), reproduced on two hosts: the last
//! packet of a request is CE-marked; the ECE on the response's ACK puts
//! the client in CWR, and PRR with nothing in flight leaves cwnd at 1. The
//! next request's single segment carries CWR and changes the receiver's CE
//! state back; before v4.18 DCTCP's special ACK for the data before it
//! cancelled the segment's own ACK, so it waited for the sender's loss
//! probe (about 200 ms). The floor of 2 sends a second segment that the
//! receiver ACKs; mainline fixed the receiver (v4.18).

mod common;

use common::{Fate, Pair, Side};
use tcplab_core::time::Duration;
use tcplab_core::{TcpConfig, TcpState};
use tcplab_wire::{SegmentRepr, SeqNum};

const REQ: u64 = 10_000;
const RESP: u64 = 100;

/// Runs back-to-back 10 KB RPCs; the last data packet of request `marked`
/// is CE-marked. Returns each RPC's latency.
fn rpcs(cfg: &TcpConfig, n: usize, marked: usize) -> Vec<Duration> {
    let mut p = Pair::new(cfg, cfg, Duration::from_micros(25));
    p.ns_per_byte = 1; // 8 Gbit/s: serialization is negligible
    p.filter = Box::new(move |_, side, seg| {
        if side == Side::Client && seg.payload_len > 0 {
            // Track request boundaries by stream offset.
            let off = seg.seq.0.wrapping_sub(1_000_001) as u64;
            let end = off + seg.payload_len as u64;
            if end == (marked as u64 + 1) * REQ && off >= marked as u64 * REQ {
                return Fate::MarkCe;
            }
        }
        Fate::Deliver
    });
    assert!(
        p.drive_until(100, |p| p.client.state() == TcpState::Established && p.server.state() == TcpState::Established)
    );
    let mut lat = vec![];
    for i in 0..n {
        let start = p.now;
        assert_eq!(p.client.write(REQ), REQ);
        // Server answers once the whole request is in.
        let want_req = (i as u64 + 1) * REQ;
        assert!(p.drive_until(100_000, |p| p.server_read >= want_req), "request {i} never arrived");
        assert_eq!(p.server.write(RESP), RESP);
        let want_resp = (i as u64 + 1) * RESP;
        assert!(p.drive_until(100_000, |p| p.client_read >= want_resp), "response {i} never arrived");
        lat.push(p.now - start);
    }
    lat
}

fn dctcp(preset: &str) -> TcpConfig {
    let c = TcpConfig::preset(preset).unwrap();
    TcpConfig { congestion_control: c.congestion_control_named("dctcp").unwrap(), ..c }
}

#[test]
fn test_v417_dctcp_ce_on_last_request_packet_stalls_next_rpc() {
    let lat = rpcs(&dctcp("v4.17"), 6, 3);
    let normal = lat[1];
    assert!(normal < Duration::from_millis(2), "an unmarked RPC is fast: {lat:?}");
    // The RPC after the marked one waits for the sender's loss probe
    // (about 200 ms; the patch measured p99.9 of 208-212 ms).
    assert!(lat[4] > Duration::from_millis(150), "stall expected after the CE mark: {lat:?}");
    assert!(lat[5] < Duration::from_millis(2), "{lat:?}");
}

#[test]
fn test_cwnd_floor_2_shortens_the_stall_to_milliseconds() {
    // The patch's claim: p99.9 from about 210 ms to a few ms. With two
    // segments out the receiver's ACK rules (one ACK per two segments)
    // answer without waiting for the sender's loss probe.
    let mut cfg = dctcp("v4.17");
    cfg.cwnd_reduction_floor = 2;
    let lat = rpcs(&cfg, 6, 3);
    assert!(lat[4] < Duration::from_millis(10), "{lat:?}");
    assert!(lat.iter().enumerate().all(|(i, l)| i == 4 || *l < Duration::from_millis(2)), "{lat:?}");
}

#[test]
fn test_ack_on_cwr_alone_leaves_the_special_ack_stall() {
    // The CWR segment is ACKed at once, but it is also the segment that
    // changes the receiver's CE state back (1 → 0): v4.17's special ACK
    // for the data before it cancels that ACK (see
    // test_dctcp_v417_special_ack_cancels_the_ack_of_the_segment).
    let mut cfg = dctcp("v4.17");
    cfg.ack_on_cwr = true;
    let lat = rpcs(&cfg, 6, 3);
    assert!(lat[4] > Duration::from_millis(150), "{lat:?}");
}

#[test]
fn test_current_linux_has_no_stall() {
    let lat = rpcs(&dctcp("linux-current"), 6, 3);
    assert!(lat.iter().all(|l| *l < Duration::from_millis(2)), "{lat:?}");
}

/// One small CE-marked segment after a few RPCs (the receiver's last
/// delayed ACK rode out on its reply). Returns the pure ACKs the server
/// sent for it, with their delay, until one covers it.
fn lone_ce_segment(preset: &str) -> (SeqNum, Vec<(Duration, SegmentRepr)>) {
    ce_marked_write(preset, 100)
}

/// As [`lone_ce_segment`], with `len` bytes written at once, every data
/// segment of them CE-marked.
fn ce_marked_write(preset: &str, len: u64) -> (SeqNum, Vec<(Duration, SegmentRepr)>) {
    let cfg = dctcp(preset);
    let mut p = Pair::new(&cfg, &cfg, Duration::from_micros(25));
    p.ns_per_byte = 1;
    assert!(p.drive_until(100, |p| p.server.state() == TcpState::Established));
    // Leave quick-ACK mode with a few full RPC exchanges.
    for i in 0..4u64 {
        p.client.write(REQ);
        assert!(p.drive_until(100_000, |p| p.server_read >= (i + 1) * REQ));
        p.server.write(RESP);
        assert!(p.drive_until(100_000, |p| p.client_read >= (i + 1) * RESP));
    }
    // One small segment, CE-marked: a change of CE state (0 → 1).
    p.filter =
        Box::new(|_, side, seg| if side == Side::Client && seg.payload_len > 0 { Fate::MarkCe } else { Fate::Deliver });
    let sent_at = p.now;
    let before = p.log.len();
    p.client.write(len);
    let end = SeqNum(1_000_001u32.wrapping_add((4 * REQ + len) as u32));
    assert!(p.drive_until(1_000_000, |p| p.log[before..]
        .iter()
        .any(|(_, s, g)| *s == Side::Server && g.flags.ack() && !g.ack.before(end))));
    let acks = p.log[before..]
        .iter()
        .filter(|(_, s, g)| *s == Side::Server && g.payload_len == 0)
        .map(|(t, _, g)| (*t - sent_at, *g))
        .collect();
    (end, acks)
}

/// The DCTCP receiver (v4.18+, `dctcp_ece_ack_update`) ACKs at once when
/// the CE state of incoming data changes.
#[test]
fn test_dctcp_receiver_acks_at_once_on_ce_state_change_since_v418() {
    let (end, acks) = lone_ce_segment("linux-current");
    let (delay, ack) = acks[0];
    assert_eq!(ack.ack, end);
    assert!(ack.flags.ece(), "the ACK echoes the CE mark");
    assert!(delay < Duration::from_millis(1), "ACK after {delay:?}");
}

/// v4.17: the receiver's `delayed_ack_reserved` is still set from its last
/// delayed ACK (the reply carried that ACK; only `tcp_send_ack` clears
/// it), so `dctcp_ce_state_0_to_1` sends an ACK for the data before the
/// mark, without ECE, and its `tcp_event_ack_sent` cancels the ACK the
/// new segment had scheduled. The segment is ACKed only when the sender's
/// loss probe repeats it, about 200 ms later (`TCP_DELACK_MAX` in the PTO
/// of a single packet out) — the stall "tcp: do not cancel delay-AcK on
/// DCTCP special ACK" (v4.18) fixed.
#[test]
fn test_dctcp_v417_special_ack_cancels_the_ack_of_the_segment() {
    let (end, acks) = lone_ce_segment("v4.17");
    let (delay, special) = acks[0];
    assert!(special.ack.before(end), "the first ACK is for the data before the mark: {acks:?}");
    assert!(!special.flags.ece(), "with the old CE state");
    assert!(delay < Duration::from_millis(1));
    let (delay, ack) = *acks.last().unwrap();
    assert_eq!(ack.ack, end);
    assert!(ack.flags.ece());
    assert!(delay > Duration::from_millis(200), "the segment's ACK after {delay:?}");
    assert_eq!(acks.len(), 2, "nothing in between: {acks:?}");
}

/// v4.17 sent the special ACK with `tp->rcv_nxt` rewound to the prior
/// state's (`dctcp_ce_state_0_to_1`), so `tcp_select_window` left `rcv_wup`
/// there: the second full segment finds two unacknowledged and is ACKed at
/// once, though the special ACK cancelled the first one's ACK. (With
/// `rcv_wup` at the real `rcv_nxt`, as `__tcp_send_ack(sk, prior_rcv_nxt)`
/// leaves it since v4.18, it would wait for the delayed-ACK timer or the
/// sender's loss probe: the kernel backend showed 8 ms probes before its
/// switch rewound `rcv_nxt` too.)
#[test]
fn test_dctcp_v417_special_ack_leaves_rcv_wup_at_the_prior_state() {
    let (end, acks) = ce_marked_write("v4.17", 2 * 1448);
    let (_, special) = acks[0];
    assert!(special.ack.before(end) && !special.flags.ece(), "{acks:?}");
    let (delay, ack) = *acks.last().unwrap();
    assert_eq!(ack.ack, end);
    assert!(delay < Duration::from_millis(1), "the second segment is ACKed at once, not after {delay:?}");
    assert_eq!(acks.len(), 2, "{acks:?}");
}
