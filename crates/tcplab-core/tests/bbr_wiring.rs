//! The wiring of the delivery-rate estimator (tcp_rate.c) and of BBR's
//! `cong_control` into the connection, on hand-made ACK traces: the test
//! plays the peer, so every time and sequence number is chosen and every
//! expected value is computed by hand from the kernel functions.

use tcplab_core::cc::{CcConfig, PacingStatus};
use tcplab_core::time::Instant;
use tcplab_core::wire::{SackBlock, SegmentRepr, SeqNum, TcpFlags, TcpOptions};
use tcplab_core::{Connection, TcpConfig, TcpState};

const CPORT: u16 = 40_000;
const SPORT: u16 = 5001;
const ISS: u32 = 1000;
const PEER_ISS: u32 = 5000;
/// mss_cache without timestamps: 1500 − 40.
const MSS: u32 = 1460;

fn us(t: u64) -> Instant {
    Instant::from_micros(t)
}

/// Start of data segment `k` (0-based).
fn seg(k: u32) -> SeqNum {
    SeqNum(ISS + 1 + k * MSS)
}

fn config(cc: &str) -> TcpConfig {
    TcpConfig { congestion_control: CcConfig::from_name(cc).unwrap(), tcp_timestamps: false, ..TcpConfig::default() }
}

/// An ACK from the peer for `ack`, with SACK blocks `sack`.
fn ack(ack: SeqNum, sack: &[(SeqNum, SeqNum)]) -> SegmentRepr {
    let mut options = TcpOptions::default();
    for &(start, end) in sack {
        options.push_sack(SackBlock { start, end });
    }
    SegmentRepr {
        src_port: SPORT,
        dst_port: CPORT,
        seq: SeqNum(PEER_ISS + 1),
        ack,
        flags: TcpFlags::ACK,
        window: u16::MAX,
        options,
        ..SegmentRepr::default()
    }
}

/// Every segment the connection sends now.
fn drain(c: &mut Connection, now: Instant) -> Vec<SegmentRepr> {
    std::iter::from_fn(|| c.poll_transmit(now)).collect()
}

/// SYN at 1 ms, SYN-ACK back at 101 ms (RTT 100 ms), then `bytes` written
/// at 101 ms. Returns the connection and the data segments sent then.
fn established(cc: &str, bytes: u64) -> (Connection, Vec<SegmentRepr>) {
    let mut c = Connection::client(config(cc), CPORT, SPORT, SeqNum(ISS), us(1_000));
    let syn = drain(&mut c, us(1_000));
    assert!(syn[0].flags.syn());
    let synack = SegmentRepr {
        src_port: SPORT,
        dst_port: CPORT,
        seq: SeqNum(PEER_ISS),
        ack: SeqNum(ISS + 1),
        flags: TcpFlags::SYN | TcpFlags::ACK,
        window: u16::MAX,
        options: TcpOptions { mss: Some(1460), sack_permitted: true, wscale: Some(7), ..TcpOptions::default() },
        ..SegmentRepr::default()
    };
    c.handle_segment(us(101_000), &synack);
    assert_eq!(c.state(), TcpState::Established);
    let _ack = drain(&mut c, us(101_000));
    c.write(bytes);
    let data = drain(&mut c, us(101_000));
    (c, data)
}

/// tcp_rate_skb_sent / tcp_rate_skb_delivered / tcp_rate_gen through a
/// Connection (Reno: the estimator runs for every module, as in Linux).
#[test]
fn test_rate_samples_on_a_small_sack_trace() {
    let (mut c, data) = established("reno", 20 * MSS as u64);
    // IW10 at 101 ms. The write found nothing unsent and nothing in flight:
    // tcp_rate_check_app_limited marked the connection app-limited until
    // delivered passes 1 + 0 (the SYN was delivered).
    assert_eq!(data.len(), 10);
    assert_eq!(c.rate().app_limited, 1);
    // The first skb after idle restarts the sample clocks.
    assert_eq!(c.rate().delivered_mstamp, 101_000);
    assert_eq!(c.rate().first_tx_mstamp, 101_000);

    // 201 ms: cumulative ACK of segments 0-1. Both were sent at 101 ms with
    // tx.delivered = 1, tx.delivered_mstamp = 101 ms: delivered 3 − 1 = 2
    // over max(send phase 0, ACK phase 201 − 101 ms) = 100 ms, which is
    // not below min_rtt (100 ms). The sample is app-limited (tx), but the
    // first one is always recorded (2·0 ≥ 0·100000).
    c.handle_segment(us(201_000), &ack(seg(2), &[]));
    let r = c.rate();
    assert_eq!((r.rate_delivered, r.rate_interval_us, r.rate_app_limited), (2, 100_000, true));
    assert_eq!(r.app_limited, 0, "delivered 3 passed the marker 1");
    assert_eq!(r.delivered_mstamp, 201_000);
    assert_eq!(c.delivery_rate(), 2 * 1460 * 1_000_000 / 100_000);
    // Reno slow start: cwnd 12, 8 in flight: 4 more, at 201 ms with
    // tx.delivered 3, tx.delivered_mstamp 201 ms, not app-limited.
    assert_eq!(drain(&mut c, us(201_000)).iter().filter(|s| s.payload_len > 0).count(), 4);

    // 211 ms: segment 3 SACKed (2 is missing). Sent at 101 ms: delivered
    // 4 − 1 = 3 over max(0, 211 − 101 ms) = 110 ms. App-limited, recorded
    // since its rate beats the recorded one: 3·100000 ≥ 2·110000.
    c.handle_segment(us(211_000), &ack(seg(2), &[(seg(3), seg(4))]));
    let r = c.rate();
    assert_eq!((r.rate_delivered, r.rate_interval_us), (3, 110_000));

    // 221 ms: the hole fills; ACK up to segment 4. Segment 2 gives the
    // sample (the SACKed 3 was used and zeroed): delivered 5 − 1 = 4 over
    // 221 − 101 ms = 120 ms; 4·110000 ≥ 3·120000, recorded.
    c.handle_segment(us(221_000), &ack(seg(4), &[]));
    let r = c.rate();
    assert_eq!((r.rate_delivered, r.rate_interval_us, r.rate_app_limited), (4, 120_000, true));

    // 321 ms: ACK of segments 4-11. The newest send wins
    // (tcp_skb_sent_after): 10-11, sent at 201 ms with tx.delivered 3,
    // tx.delivered_mstamp 201 ms, tx.first_tx_mstamp 101 ms, not
    // app-limited. delivered = 13 − 3 = 10 over max(send phase 201 − 101
    // ms, ACK phase 321 − 201 ms) = 120 ms; recorded (not app-limited).
    c.handle_segment(us(321_000), &ack(seg(12), &[]));
    let r = c.rate();
    assert_eq!((r.rate_delivered, r.rate_interval_us, r.rate_app_limited), (10, 120_000, false));
}

/// BBR through the connection: `init` sets the pacing rate from the
/// handshake RTT and asks the stack to pace itself (no fq); on an ACK
/// `cong_control` runs, not `cong_avoid` + `tcp_update_pacing_rate`; the
/// internal pacing (`tcp_pacing_check`, the pacing hrtimer) spaces skbs
/// by `len / sk_pacing_rate` once 10 data segments went out.
#[test]
fn test_bbr_cong_control_and_internal_pacing() {
    let (mut c, data) = established("bbr", 40 * MSS as u64);
    assert_eq!(c.pacing_status(), PacingStatus::Needed);
    // bbr_init_pacing_rate_from_rtt: srtt 100 ms; bw = 10 << 24 / 100000
    // = 1677; (1677·1460·739 >> 8)·990000 >> 24 = 417066 B/s
    // (tcp_update_pacing_rate would give 2·10·1460/0.1 = 292000).
    assert_eq!(c.pacing_rate(), 417_066);
    // IW10 in skbs of bbr_min_tso_segs = 2 segments; the 10th data segment
    // starts the pacing: 2920 B / 417066 B/s = 7001289 ns after 101 ms.
    assert_eq!(data.len(), 10);
    assert_eq!(c.tcp_wstamp_ns(), 101_000_000 + 7_001_289);
    // tcp_write_xmit checks pacing before cwnd: the hrtimer is armed for
    // then, fires, and finds cwnd full.
    let t = Instant::from_nanos(108_001_289);
    assert_eq!(c.poll_timeout(), Some(t));
    c.handle_timeout(t);
    assert!(drain(&mut c, t).is_empty());

    // 201 ms: ACK of 2 segments. bbr_main: bw sample 2 << 24 / 100000 =
    // 335, a round starts; STARTUP keeps the higher pacing rate; cwnd
    // 10 + 2 (bbr_set_cwnd: below the target 12 and delivered < 10).
    c.handle_segment(us(201_000), &ack(seg(2), &[]));
    assert_eq!(c.info().snd_cwnd, 12);
    assert_eq!(c.pacing_rate(), 417_066, "cong_avoid + tcp_update_pacing_rate would give 350400");
    assert_eq!(c.info().snd_ssthresh, 0x7fff_ffff);

    // 4 segments may go, but pacing lets one skb (2 segments) out now: the
    // stamp jumps to 201 ms (credit 92998711 ns) and advances by
    // 7001289 − min(7001289 / 2, credit) = 3500645 ns.
    let sent = drain(&mut c, us(201_000));
    assert_eq!(sent.iter().filter(|s| s.payload_len > 0).count(), 2);
    assert_eq!(c.tcp_wstamp_ns(), 204_500_645);
    assert_eq!(c.poll_timeout(), Some(Instant::from_nanos(204_500_645)));
    // Before the hrtimer: nothing. At it: the next skb, then the full
    // 7001289 ns (no credit).
    assert!(drain(&mut c, Instant::from_nanos(204_500_000)).is_empty());
    let t = Instant::from_nanos(204_500_645);
    c.handle_timeout(t);
    assert_eq!(drain(&mut c, t).iter().filter(|s| s.payload_len > 0).count(), 2);
    assert_eq!(c.tcp_wstamp_ns(), 204_500_645 + 7_001_289);
}
