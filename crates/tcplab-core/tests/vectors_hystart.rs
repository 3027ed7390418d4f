//! Row-for-row checks of HyStart (`hystart_update` reached through CUBIC's
//! `pkts_acked`, then `cong_avoid`) against hystart_v{6.13.7,3.19.8,3.18.30}.csv
//! (see `shared/conformance/linux-vectors/README.md`).
//!
//! If `../shared` is absent the tests print "SKIPPED: ../shared not found"
//! and return.

mod cc_vectors;

use cc_vectors::{load, Checker, Row};
use tcplab_core::cc::cubic::{Cubic, CubicParams, CubicVersion};
use tcplab_core::cc::hystart::HystartVersion;
use tcplab_core::cc::{AckSample, CaCtx, CaState, CongestionOps, PacingStatus};
use tcplab_core::counters::Mib;
use tcplab_core::time::Instant;
use tcplab_core::wire::SeqNum;

/// `hystart_detect` of a sequence: `detect2` sequences enable only the
/// delay test; fuzz sequences use the default (3).
fn detect_of(seq_id: &str) -> u8 {
    if seq_id.contains("detect2") {
        2
    } else {
        3
    }
}

/// Sets the clocks and sender fields the harness sets before each call.
fn set_inputs(tp: &mut CaCtx, r: &Row, v6: bool) {
    tp.jiffies = r.u32("jiffies");
    tp.hz = 1000;
    if v6 {
        tp.now = Instant::from_micros(r.u64("now_us"));
        tp.pacing_status = match r.u32("pacing_status") {
            0 => PacingStatus::None,
            1 => PacingStatus::Needed,
            2 => PacingStatus::Fq,
            x => panic!("line {}: pacing_status {x}", r.line),
        };
        tp.pacing_rate = r.u64("pacing_rate");
        tp.gso_max_size = r.u32("gso_max_size");
    } else {
        // 3.x HyStart at HZ=1000 reads jiffies_to_msecs(jiffies).
        assert_eq!(r.u32("now_ms"), tp.jiffies, "line {}: now_ms != jiffies at HZ 1000", r.line);
        tp.now = Instant::from_millis(r.u64("now_ms"));
    }
    tp.snd_una = SeqNum(r.u32("snd_una"));
    tp.snd_nxt = SeqNum(r.u32("snd_nxt"));
}

fn check_state(ck: &mut Checker, r: &Row, cubic: &Cubic, tp: &CaCtx) {
    let ca = cubic.ca();
    ck.eq("found", r.u32("found"), ca.hystart.found as u32);
    ck.eq("ssthresh_out", r.u32("ssthresh_out"), tp.snd_ssthresh);
    ck.eq("cwnd_out", r.u32("cwnd_out"), tp.snd_cwnd);
    ck.eq("delay_min", r.u32("delay_min"), ca.delay_min);
    ck.eq("curr_rtt", r.u32("curr_rtt"), ca.hystart.curr_rtt);
    ck.eq("sample_cnt", r.u32("sample_cnt"), ca.hystart.sample_cnt as u32);
    ck.eq("round_start", r.u32("round_start"), ca.hystart.round_start);
    ck.eq("last_ack", r.u32("last_ack"), ca.hystart.last_ack);
    ck.eq("end_seq", r.u32("end_seq"), ca.hystart.end_seq.0);
    ck.eq("epoch_start", r.u32("epoch_start"), ca.epoch_start);
}

fn mib_name(train: u64, delay: u64) -> &'static str {
    match (train, delay) {
        (0, 0) => "",
        (1, 0) => "TRAIN",
        (0, 1) => "DELAY",
        (1, 1) => "TRAIN+DELAY",
        _ => "MORE_THAN_ONE",
    }
}

fn run_hystart(file: &str, version: CubicVersion) {
    let Some(csv) = load(file) else { return };
    let v6 = version == CubicVersion::Current;
    let mut ck = Checker::new(&csv.name);
    for (seq_id, rows) in csv.sequences() {
        let init = rows[0];
        assert_eq!(init.s("event"), "init", "{file}: {seq_id} does not start with init");
        let mut params = CubicParams::for_version(version);
        params.hystart_detect = detect_of(&seq_id);
        assert_eq!(params.hystart_version, version.hystart_version());
        let mut cubic = Cubic::new(params);
        let mut tp = CaCtx::default();
        set_inputs(&mut tp, init, v6);
        tp.snd_cwnd = init.u32("cwnd_out");
        tp.snd_ssthresh = init.u32("ssthresh_out");
        cubic.init(&mut tp);

        ck.at(&seq_id, init.s("step"), init.line);
        let fuzz = seq_id.starts_with("fuzz");
        if !fuzz {
            // A simulated flow starts from init itself: check it.
            check_state(&mut ck, init, &cubic, &tp);
        }
        // Fuzz sequences start from an arbitrary state: seed it.
        {
            let ca = cubic.ca_mut();
            ca.hystart.found = init.u32("found") as u8;
            ca.delay_min = init.u32("delay_min");
            ca.hystart.curr_rtt = init.u32("curr_rtt");
            ca.hystart.sample_cnt = init.u32("sample_cnt") as u8;
            ca.hystart.round_start = init.u32("round_start");
            ca.hystart.last_ack = init.u32("last_ack");
            ca.hystart.end_seq = SeqNum(init.u32("end_seq"));
            ca.epoch_start = init.u32("epoch_start");
        }
        check_state(&mut ck, init, &cubic, &tp);
        ck.rows_checked += 1;

        for r in &rows[1..] {
            ck.at(&seq_id, r.s("step"), r.line);
            set_inputs(&mut tp, r, v6);
            tp.snd_cwnd = r.u32("cwnd_in");
            tp.snd_ssthresh = r.u32("ssthresh_in");
            tp.ca_state = CaState::Open;
            tp.is_cwnd_limited = true;
            tp.max_packets_out = tp.snd_cwnd;
            let acked = r.u32("acked");
            let before = tp.mib.clone();
            let _ = cubic.take_trace();
            let sample = AckSample { pkts_acked: acked, rtt_us: r.i64("rtt_us"), in_flight: tp.snd_cwnd };
            cubic.pkts_acked(&mut tp, &sample);
            match r.s("event") {
                "ack" => {
                    let ack = tp.snd_una;
                    cubic.cong_avoid(&mut tp, ack, acked);
                }
                "ack_only" => {}
                e => panic!("{file}: line {}: unknown event {e}", r.line),
            }
            let trace = cubic.take_trace();
            ck.eq("hystart_called", r.u32("hystart_called"), trace.hystart_called as u32);
            ck.eq("round_reset", r.u32("round_reset"), trace.round_resets as u32);
            let train = tp.mib.get(Mib::TcpExtTCPHystartTrainDetect) - before.get(Mib::TcpExtTCPHystartTrainDetect);
            let delay = tp.mib.get(Mib::TcpExtTCPHystartDelayDetect) - before.get(Mib::TcpExtTCPHystartDelayDetect);
            let cwnd_sum = tp.mib.get(Mib::TcpExtTCPHystartTrainCwnd) - before.get(Mib::TcpExtTCPHystartTrainCwnd)
                + tp.mib.get(Mib::TcpExtTCPHystartDelayCwnd)
                - before.get(Mib::TcpExtTCPHystartDelayCwnd);
            ck.eq("mib", r.s("mib"), mib_name(train, delay));
            ck.eq("mib_cwnd", r.opt_u64("mib_cwnd").unwrap_or(0), cwnd_sum);
            if version.hystart_version() == HystartVersion::V3_18 {
                // 3.18 has no HyStart counters at all.
                ck.eq("mib (3.18 none)", 0, train + delay + cwnd_sum);
            }
            check_state(&mut ck, r, &cubic, &tp);
            ck.rows_checked += 1;
        }
    }
    ck.finish(csv.rows.len(), 0);
}

#[test]
fn test_vectors_hystart_v6_13_7() {
    run_hystart("hystart_v6.13.7.csv", CubicVersion::Current);
}

#[test]
fn test_vectors_hystart_v3_19_8() {
    run_hystart("hystart_v3.19.8.csv", CubicVersion::V3_19);
}

#[test]
fn test_vectors_hystart_v3_18_30() {
    run_hystart("hystart_v3.18.30.csv", CubicVersion::V3_18);
}
