//! The DCTCP RPC stall of "tcp: force cwnd at least 2 in
//! tcp_cwnd_reduction" (Brakmo, 2018), reproduced on two hosts: the last
//! packet of a request is CE-marked; the ECE on the response's ACK puts
//! the client in CWR, and PRR with nothing in flight leaves cwnd at 1. The
//! next request's single segment then waits for the receiver's delayed
//! ACK. The floor of 2, and the receiver's ACK on CWR (v4.18+), each remove
//! the wait.

mod common;

use common::{Fate, Pair, Side};
use tcplab_core::time::Duration;
use tcplab_core::{TcpConfig, TcpState};

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
    // The RPC after the marked one waits for a delayed ACK (≥ 40 ms).
    assert!(lat[4] > Duration::from_millis(30), "stall expected after the CE mark: {lat:?}");
    assert!(lat[5] < Duration::from_millis(2), "{lat:?}");
}

#[test]
fn test_cwnd_floor_2_removes_the_stall() {
    let mut cfg = dctcp("v4.17");
    cfg.cwnd_reduction_floor = 2;
    let lat = rpcs(&cfg, 6, 3);
    assert!(lat.iter().all(|l| *l < Duration::from_millis(2)), "{lat:?}");
}

#[test]
fn test_ack_on_cwr_removes_the_stall() {
    let mut cfg = dctcp("v4.17");
    cfg.ack_on_cwr = true;
    let lat = rpcs(&cfg, 6, 3);
    assert!(lat.iter().all(|l| *l < Duration::from_millis(2)), "{lat:?}");
}

#[test]
fn test_current_linux_has_no_stall() {
    let lat = rpcs(&dctcp("linux-current"), 6, 3);
    assert!(lat.iter().all(|l| *l < Duration::from_millis(2)), "{lat:?}");
}

/// The DCTCP receiver (v4.18+, `dctcp_ece_ack_update`) ACKs at once when
/// the CE state of incoming data changes; v4.17 does not (the current
/// segment waits for the normal delayed-ACK rules).
#[test]
fn test_dctcp_receiver_acks_at_once_on_ce_state_change_only_since_v418() {
    for (preset, immediate) in [("linux-current", true), ("v4.17", false)] {
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
        p.filter = Box::new(
            |_, side, seg| if side == Side::Client && seg.payload_len > 0 { Fate::MarkCe } else { Fate::Deliver },
        );
        let sent_at = p.now;
        let before = p.log.len();
        p.client.write(100);
        assert!(p.drive_until(100_000, |p| p.log[before..]
            .iter()
            .any(|(_, s, g)| *s == Side::Server && g.flags.ack() && g.payload_len == 0)));
        let (t, _, ack) =
            p.log[before..].iter().find(|(_, s, g)| *s == Side::Server && g.payload_len == 0).copied().unwrap();
        assert!(ack.flags.ece(), "{preset}: the ACK echoes the CE mark");
        let delay = t - sent_at;
        if immediate {
            assert!(delay < Duration::from_millis(1), "{preset}: ACK after {delay:?}");
        } else {
            assert!(delay >= Duration::from_millis(30), "{preset}: ACK after {delay:?} (delayed ACK expected)");
        }
    }
}
