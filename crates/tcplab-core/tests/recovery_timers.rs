//! The timers of loss recovery on hand-built ACK traces: RFC 5827 early
//! retransmit with its delay (`tcp_pause_early_retransmit` /
//! `tcp_resume_early_retransmit`, tcp_input.c 3.6–4.10), the 3.x and the
//! current tail loss probe (`tcp_schedule_loss_probe` /
//! `tcp_send_loss_probe`, tcp_output.c), the RTO re-armed from the head
//! when a probe timer sends nothing; and the 3.x TSval clock
//! (`tcp_time_stamp` = jiffies until 4.13).
//!
//! HZ 1000 keeps the arithmetic in milliseconds. The handshake's RTT is
//! 10 ms, so srtt = 10 ms and the RTO 210 ms (srtt + rto_min); each SACK
//! below adds an RTT sample from the 10 ms transmission. A timer armed
//! `n` jiffies after an event mid-jiffy expires at that jiffy plus `n`, and
//! the v3.x presets' cascading timer wheel runs it on that tick
//! (crate::timer_wheel): jiffy 220 for a deadline of 220.2 ms. The current
//! wheel runs it one jiffy later, or on the next multiple of 8 jiffies
//! from 63 jiffies away.

mod common;

use common::sender::{Sender, MSS};
use common::Pair;
use tcplab_core::config::{TlpRule, TsClock};
use tcplab_core::time::{Duration, Instant};
use tcplab_core::{CaState, Mib, TcpConfig, TcpMetrics};

fn v312(tcp_early_retrans: u8) -> TcpConfig {
    TcpConfig { hz: 1000, tcp_early_retrans, ..TcpConfig::preset("v3.12").unwrap() }
}

/// Three segments out at 10 ms (all the application wrote: nothing more
/// may be sent); at 10.1 ms the peer's window update, then at 10.2 ms a
/// duplicate ACK: segment 0 missing, segment 1 SACKed.
fn three_out_one_sacked(cfg: TcpConfig, cached: Option<TcpMetrics>) -> Sender {
    let mut s = Sender::new(cfg, cached, 3 * MSS as u64);
    assert_eq!(s.c.info().unacked, 3);
    s.ack(0, &[], None);
    s.ack(0, &[(1, 2)], None);
    assert_eq!(s.now, Instant::from_micros(10_200));
    s
}

/// When the RTO runs after the loss probe pending at 10.2 ms (the window
/// update re-armed it) went back to it: 210 jiffies from the head's
/// transmission at 10 ms is 209.8 ms from 10.2 ms, rounded up to 210
/// jiffies: due at 220.2 ms, so jiffy 220 on the cascading wheel.
const RTO_FROM_HEAD: Instant = Instant::from_millis(220);

/// Retransmissions of segment 0 sent so far.
fn head_retransmits(s: &Sender) -> usize {
    s.sent.iter().filter(|g| g.payload_len > 0 && g.seq == Sender::seq(0)).count()
}

/// Runs the connection's timers up to `until`.
fn advance(s: &mut Sender, until: Instant) {
    while let Some(t) = s.c.poll_timeout().filter(|t| *t <= until) {
        s.now = t;
        s.c.handle_timeout(t);
        s.drain();
    }
    s.now = until;
}

#[test]
fn test_early_retransmit_waits_a_quarter_rtt_then_retransmits_the_head() {
    // fackets_out = 2 is not above reordering (3): no fast retransmit. But
    // with 3 packets out and 2 of them... 1 SACKed, nothing retransmitted
    // and nothing new to send, RFC 5827 applies; tcp_early_retrans = 3
    // delays it by max(srtt/4, 2 ms) = usecs_to_jiffies(2,500 µs) = 3 ms.
    let mut s = three_out_one_sacked(v312(3), None);
    let sacked_at = s.now;
    assert_eq!(s.c.ca_state(), CaState::Disorder);
    // srtt after the 0.2 ms SACK RTT: 10 − 10/8 + 0.2/8 = 8.775 ms; a
    // quarter is 2.19 ms, 3 jiffies: jiffy 10 + 3, which the cascading
    // wheel runs at 13 ms.
    assert_eq!(sacked_at, Instant::from_micros(10_200));
    assert_eq!(head_retransmits(&s), 1, "only the original so far");
    assert_eq!(s.c.poll_timeout(), Some(Instant::from_millis(13)));
    advance(&mut s, Instant::from_micros(12_999));
    assert_eq!(head_retransmits(&s), 1, "still waiting at 12.999 ms");
    advance(&mut s, Instant::from_millis(13));
    assert_eq!(s.c.ca_state(), CaState::Recovery);
    assert_eq!(head_retransmits(&s), 2, "the head is retransmitted when the delay ends");
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPSackRecovery), 1);
    // The retransmission of the head restarts the RTO from now (a tick)
    // with icsk_rto: 8.775 ms + 200 ms rounded up, 209 jiffies.
    assert_eq!(s.c.info().rto_us, 209_000);
    assert_eq!(s.c.poll_timeout(), Some(s.now + Duration::from_millis(209)));
}

#[test]
fn test_an_ack_during_the_delay_takes_it_back_and_the_delay_restarts() {
    // 3.x tcp_ack turns a pending early retransmit back into the RTO; the
    // second SACK (segment 2) meets the same conditions (fackets_out 3 is
    // not above 3) and pauses again from its own arrival. Its 2.3 ms RTT
    // sample brings srtt to 8.775 − 8.775/8 + 2.3/8 = 7.97 ms: a quarter
    // is 1.99 ms, 2 jiffies, and the 2 ms floor. The first delay would
    // have ended at jiffy 13, the second at jiffy 12 + 2.
    let mut s = three_out_one_sacked(v312(3), None);
    let first = s.now;
    advance(&mut s, first + Duration::from_millis(2));
    s.ack(0, &[(1, 3)], None);
    let second = s.now;
    assert_eq!(second, Instant::from_micros(12_300));
    assert_eq!(s.c.poll_timeout(), Some(Instant::from_millis(14)));
    advance(&mut s, Instant::from_millis(13));
    assert_eq!(head_retransmits(&s), 1, "the first delay's end passed without a retransmission");
    advance(&mut s, Instant::from_millis(14));
    assert_eq!(head_retransmits(&s), 2);
    assert_eq!(s.c.ca_state(), CaState::Recovery);
}

#[test]
fn test_tcp_early_retrans_1_retransmits_at_once_and_4_not_at_all() {
    let s = three_out_one_sacked(v312(1), None);
    assert_eq!(s.c.ca_state(), CaState::Recovery, "ER without the delay");
    assert_eq!(head_retransmits(&s), 2);
    // 4 is TLP only: the hole waits for the RTO (no TLP outside Open).
    let s = three_out_one_sacked(v312(4), None);
    assert_eq!(s.c.ca_state(), CaState::Disorder);
    assert_eq!(head_retransmits(&s), 1);
    assert_eq!(s.c.poll_timeout(), Some(RTO_FROM_HEAD), "the RTO");
}

#[test]
fn test_reordering_or_a_changed_dupthresh_switches_early_retransmit_off() {
    // A cached reordering (tcp_init_metrics) disables ER, as does a
    // tcp_reordering other than 3 (tcp_enable_early_retrans).
    let cached = Some(TcpMetrics { reordering: 4, ..Default::default() });
    let s = three_out_one_sacked(v312(3), cached);
    assert_eq!(s.c.info().reordering, 4);
    assert_eq!(s.c.ca_state(), CaState::Disorder);
    assert_eq!(s.c.poll_timeout(), Some(RTO_FROM_HEAD), "the RTO");
    let s = three_out_one_sacked(TcpConfig { tcp_reordering: 4, ..v312(3) }, None);
    assert_eq!(s.c.poll_timeout(), Some(RTO_FROM_HEAD), "the RTO");
    // The current era has no early retransmit (RACK took its place).
    let cur = TcpConfig { hz: 1000, tcp_recovery: 0, ..TcpConfig::linux_current() };
    let s = three_out_one_sacked(cur, None);
    assert_eq!(s.c.ca_state(), CaState::Disorder);
    assert_eq!(head_retransmits(&s), 1);
}

#[test]
fn test_v3_loss_probe_fires_after_two_srtt_where_current_adds_two_ms() {
    // Three segments out at 10 ms, application-limited. 3.x: PTO = 2·srtt
    // = 20 ms (at least 10 ms). Current: 2·srtt + TCP_TIMEOUT_MIN_US.
    for (rule, pto_ms) in [(TlpRule::V3_10, 20), (TlpRule::Current, 22)] {
        let cfg = TcpConfig { tlp_rule: rule, ..v312(3) };
        let mut s = Sender::new(cfg, None, 3 * MSS as u64);
        let sent_at = Instant::from_millis(10);
        assert_eq!(s.c.poll_timeout(), Some(sent_at + Duration::from_millis(pto_ms)), "{rule:?}");
        advance(&mut s, sent_at + Duration::from_millis(pto_ms));
        assert_eq!(s.c.counters().get(Mib::TcpExtTCPLossProbes), 1, "{rule:?}");
        let last = s.sent.last().unwrap();
        assert_eq!(last.seq, Sender::seq(2), "{rule:?}: the probe retransmits the last segment");
    }
}

#[test]
fn test_v3_loss_probe_waits_while_cwnd_allows_more_and_data_waits() {
    // 3.x schedules a probe only when cwnd or the application limits the
    // sender. A peer window of 1,920 bytes (15 << 7) holds back the rest
    // of 40 segments while cwnd (11 after one ACK in slow start) has room
    // over the 9 out: no probe, the RTO restarted by the ACK.
    for (rule, probe) in [(TlpRule::V3_10, false), (TlpRule::Current, true)] {
        let cfg = TcpConfig { tlp_rule: rule, ..v312(3) };
        let mut s = Sender::new(cfg, None, 40 * MSS as u64);
        s.ack_window(1, &[], None, 15);
        let info = s.c.info();
        assert_eq!((info.snd_cwnd, info.unacked), (11, 9), "{rule:?}");
        // The probe timeout (2·srtt + 2 ms) is a tenth of the RTO.
        let rto = Duration::from_micros(info.rto_us as u64);
        let due = s.c.poll_timeout().unwrap();
        let half_rto = Duration::from_nanos(rto.as_nanos() / 2);
        assert_eq!(due < s.now + half_rto, probe, "{rule:?}: next timer at {due:?}, RTO {rto:?} from {:?}", s.now);
    }
}

#[test]
fn test_tsval_counts_jiffies_in_the_v3_presets_and_milliseconds_today() {
    // A 1 Mbit/s path (12 ms per full segment) and HZ 250: the jiffies
    // clock ticks every 4 ms. Each data segment's TSval, less its send
    // time on the era's clock, is the connection's constant offset; less
    // the other clock, it is not.
    fn jiffies(t: Instant) -> u32 {
        t.jiffies32(250)
    }
    fn millis(t: Instant) -> u32 {
        t.as_millis() as u32
    }
    type Clock = fn(Instant) -> u32;
    for (preset, clock, era, other) in [
        ("v3.12", TsClock::Jiffies, jiffies as Clock, millis as Clock),
        ("linux-current", TsClock::Ms, millis as Clock, jiffies as Clock),
    ] {
        let cfg = TcpConfig::preset(preset).unwrap();
        assert_eq!((cfg.ts_clock, cfg.hz), (clock, 250), "{preset}");
        let mut p = Pair::new(&cfg, &cfg, Duration::from_millis(10));
        p.ns_per_byte = 8_000;
        p.send_and_close(40 * MSS as u64, Instant::ZERO + Duration::from_secs(10), |_| {});
        let stamps: Vec<(Instant, u32)> =
            p.client_data_segments().map(|(t, _, g)| (*t, g.options.timestamp.expect("timestamps on").0)).collect();
        assert!(stamps.len() >= 40, "{preset}");
        let offsets = |c: Clock| -> Vec<u32> { stamps.iter().map(|(t, v)| v.wrapping_sub(c(*t))).collect() };
        let on_era = offsets(era);
        assert!(on_era.iter().all(|o| *o == on_era[0]), "{preset}: TSval − era clock varies: {on_era:?}");
        let on_other = offsets(other);
        assert!(on_other.iter().any(|o| *o != on_other[0]), "{preset}: the other clock fits too");
    }
}

#[test]
fn test_a_loss_probe_timer_that_sends_nothing_rearms_the_rto_from_the_head() {
    // Current TLP. Three segments out at 10 ms; the probe due at 32 ms
    // (2·srtt + 2 ms), run by the timer wheel at 33 ms, retransmits
    // segment 2 and opens the episode. An ACK
    // of segment 0 at 40 ms schedules the next probe; when it fires the
    // episode is still open, so nothing is sent (tcp_send_loss_probe's
    // rearm_timer) and the RTO is re-armed while icsk_pending is still the
    // probe's: from segment 1's transmission at 10 ms, not from now.
    let cfg = TcpConfig { hz: 1000, ..TcpConfig::linux_current() };
    let mut s = Sender::new(cfg, None, 3 * MSS as u64);
    advance(&mut s, Instant::from_micros(32_999));
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPLossProbes), 0);
    advance(&mut s, Instant::from_millis(33));
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPLossProbes), 1);
    s.now = Instant::from_micros(39_900);
    s.ack(1, &[], None);
    let probe_at = s.c.poll_timeout().unwrap();
    advance(&mut s, probe_at);
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPLossProbes), 1, "no second probe");
    let rto = Duration::from_micros(s.c.info().rto_us as u64);
    let due = s.c.poll_timeout().unwrap();
    // Over 63 jiffies away: the wheel's level 1 runs it on the next
    // multiple of 8 jiffies after its expiry.
    let from_head = Instant::from_millis(10) + rto;
    assert!(due > from_head && due <= from_head + Duration::from_millis(8), "RTO at {due:?}, head + RTO {from_head:?}");
    assert!(due < s.now + rto, "not from now ({:?})", s.now);
}
