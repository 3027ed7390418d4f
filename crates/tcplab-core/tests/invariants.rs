//! Property tests over random loss and reordering: every byte is delivered
//! exactly once and in order, the in-flight accounting never goes
//! negative, and cwnd never drops below 1.

mod common;

use common::{check_accounting, Fate, Lcg, Pair, Side};
use proptest::prelude::*;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::{TcpConfig, TcpState};

fn transfer(cc: &str, seed: u64, loss_per_mille: u32, reorder_per_mille: u32, total: u64, sack: bool, ts: bool) {
    transfer_with(cc, seed, loss_per_mille, reorder_per_mille, total, sack, ts, false)
}

/// `fq_credit`: both ends are paced by a driver's fq with pre-4.20 credit
/// pacing (the core commits an skb only once the one before it has been
/// handed out); the harness polls at once, as a driver with TSQ room would.
#[allow(clippy::too_many_arguments)]
fn transfer_with(
    cc: &str,
    seed: u64,
    loss_per_mille: u32,
    reorder_per_mille: u32,
    total: u64,
    sack: bool,
    ts: bool,
    fq_credit: bool,
) {
    let cfg = TcpConfig {
        congestion_control: tcplab_core::cc::CcConfig::from_name(cc).unwrap(),
        tcp_sack: sack,
        tcp_timestamps: ts,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(&cfg, &cfg, Duration::from_millis(5));
    if fq_credit {
        p.client.set_pacing_fq(false);
        p.server.set_pacing_fq(false);
    }
    p.ns_per_byte = 80; // 100 Mbit/s
    let mut rng = Lcg(seed);
    let data_drops = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let dropped = data_drops.clone();
    p.filter = Box::new(move |_, side, seg| {
        // Keep the handshake intact; everything else may be hit.
        if seg.flags.syn() {
            return Fate::Deliver;
        }
        if rng.chance(loss_per_mille) {
            if side == Side::Client && seg.payload_len > 0 {
                dropped.set(dropped.get() + 1);
            }
            Fate::Drop
        } else if rng.chance(reorder_per_mille) {
            Fate::Delay(Duration::from_micros((rng.next() % 3000) as u64))
        } else {
            Fate::Deliver
        }
    });
    assert!(p.drive_until(1000, |p| p.client.state() == TcpState::Established));
    // The deadline is generous in virtual time: without SACK and
    // timestamps, heavy reordering can raise tp->reordering past what
    // dupacks reach, F-RTO can call a real RTO spurious, and Karn's rule
    // keeps the backed-off 120 s RTO, so progress can come one RTO at a
    // time, as it would in Linux.
    p.send_and_close(total, Instant::from_millis(100_000_000), |p| {
        check_accounting(&p.client.info(), "client");
        assert!(p.server_read <= total, "delivered more than was sent");
    });
    assert_eq!(p.server_read, total, "seed {seed} loss {loss_per_mille}‰ reorder {reorder_per_mille}‰");
    assert!(p.server.read_closed(), "FIN delivered after all data");
    // Every data byte crossed at least once; the receiver counted each once.
    assert_eq!(p.server.info().bytes_received, total + 1);
    // Every dropped data segment was sent again.
    let data_segs = p.log.iter().filter(|(_, s, g)| *s == Side::Client && g.payload_len > 0).count() as u64;
    if data_drops.get() > 0 {
        let mss = u64::from(p.client.info().snd_mss);
        assert!(p.client.info().total_retrans > 0, "data was dropped but never retransmitted");
        assert!(data_segs > total.div_ceil(mss), "{data_segs} data segments for {total} bytes after drops");
    }
}

proptest! {
    #![proptest_config(common::proptest_config(64, 0x7c1ab))]

    #[test]
    fn prop_every_byte_once_in_order_cubic(seed in any::<u64>(), loss in 0u32..60, reorder in 0u32..200, sack in any::<bool>(), ts in any::<bool>()) {
        transfer("cubic", seed, loss, reorder, 1_000_000, sack, ts);
    }

    #[test]
    fn prop_every_byte_once_in_order_reno(seed in any::<u64>(), loss in 0u32..60, reorder in 0u32..200, sack in any::<bool>(), ts in any::<bool>()) {
        transfer("reno", seed, loss, reorder, 1_000_000, sack, ts);
    }

    #[test]
    fn prop_every_byte_once_in_order_cubic_under_fq_credit_pacing(seed in any::<u64>(), loss in 0u32..60, reorder in 0u32..200, sack in any::<bool>()) {
        transfer_with("cubic", seed, loss, reorder, 1_000_000, sack, true, true);
    }

    #[test]
    fn prop_every_byte_once_in_order_dctcp(seed in any::<u64>(), loss in 0u32..30, reorder in 0u32..100) {
        transfer("dctcp", seed, loss, reorder, 500_000, true, true);
    }
}
