//! Row-for-row checks of the tcp_cong.c helpers and CUBIC against numbers
//! computed by the real kernel functions
//! (`shared/conformance/linux-vectors/README.md` describes every column):
//! reno_helpers.csv, cubic_root.csv, cubic_recalc_ssthresh.csv and the
//! `bictcp_update` traces cubic_update_v{6.13.7,3.19.8,3.18.30}.csv.
//!
//! If `../shared` is absent the tests print "SKIPPED: ../shared not found"
//! and return.

mod cc_vectors;

use cc_vectors::{load, Checker, Row};
use tcplab_core::cc::cubic::{cubic_root, Cubic, CubicParams, CubicVersion, UpdatePath};
use tcplab_core::cc::{
    tcp_cong_avoid_ai, tcp_cong_avoid_ai_v3_18, tcp_reno_ssthresh, tcp_reno_undo_cwnd, tcp_slow_start,
    tcp_slow_start_v3_18, tcp_slow_start_v3_19, AckSample, CaCtx, CaEvent, CaState, CongestionOps,
};
use tcplab_core::time::Instant;
use tcplab_core::wire::SeqNum;

/// MSS the vector harness uses where sequence numbers matter.
const MSS: u32 = 1448;

fn cubic_version(v: &str) -> CubicVersion {
    match v {
        "6.13.7" => CubicVersion::Current,
        "3.19.8" => CubicVersion::V3_19,
        "3.18.30" => CubicVersion::V3_18,
        _ => panic!("unknown version {v}"),
    }
}

// ------------------------------------------------------------------------
// reno_helpers.csv
// ------------------------------------------------------------------------

#[test]
fn test_vectors_reno_helpers() {
    let Some(csv) = load("reno_helpers.csv") else {
        return;
    };
    let mut ck = Checker::new(&csv.name);
    for r in &csv.rows {
        let version = r.s("version");
        let function = r.s("function");
        ck.at(&format!("{version}/{function}"), "-", r.line);
        // The model has no WARN: every row must be one where none fired.
        assert!(
            r.is_blank("warn") || r.s("warn") == "0",
            "reno_helpers.csv line {}: a kernel WARN fired (warn={}); the model does not report WARNs",
            r.line,
            r.s("warn")
        );
        let mut tp = CaCtx { snd_cwnd: r.u32("cwnd_in"), ..CaCtx::default() };
        if let Some(ss) = r.opt_u32("ssthresh") {
            tp.snd_ssthresh = ss;
        }
        if let Some(c) = r.opt_u32("clamp") {
            tp.snd_cwnd_clamp = c;
        }
        if let Some(c) = r.opt_u32("cwnd_cnt_in") {
            tp.snd_cwnd_cnt = c;
        }
        match (function, version) {
            ("tcp_slow_start", "6.13.7") => {
                let ret = tcp_slow_start(&mut tp, r.u32("acked"));
                ck.eq_opt("ret", r.opt_u32("ret"), ret);
            }
            ("tcp_slow_start", "3.19.8") => {
                let ret = tcp_slow_start_v3_19(&mut tp, r.u32("acked"));
                ck.eq_opt("ret", r.opt_u32("ret"), ret);
            }
            ("tcp_slow_start", "3.18.30") => {
                assert!(r.is_blank("ret"), "3.18 tcp_slow_start returns nothing");
                tcp_slow_start_v3_18(&mut tp, r.u32("acked"));
            }
            ("tcp_cong_avoid_ai", "6.13.7" | "3.19.8") => {
                tcp_cong_avoid_ai(&mut tp, r.u32("w"), r.u32("acked"));
            }
            ("tcp_cong_avoid_ai", "3.18.30") => {
                assert!(r.is_blank("acked"), "3.18 tcp_cong_avoid_ai takes no acked");
                tcp_cong_avoid_ai_v3_18(&mut tp, r.u32("w"));
            }
            ("tcp_reno_ssthresh", _) => {
                ck.eq("ret", r.u32("ret"), tcp_reno_ssthresh(&tp));
            }
            ("tcp_reno_undo_cwnd", _) => {
                tp.prior_cwnd = r.u32("prior_cwnd");
                ck.eq("ret", r.u32("ret"), tcp_reno_undo_cwnd(&tp));
            }
            _ => panic!("line {}: unexpected {function} for {version}", r.line),
        }
        ck.eq_opt("cwnd_out", r.opt_u32("cwnd_out"), tp.snd_cwnd);
        ck.eq_opt("cwnd_cnt_out", r.opt_u32("cwnd_cnt_out"), tp.snd_cwnd_cnt);
        ck.rows_checked += 1;
    }
    ck.finish(csv.rows.len(), 0);
}

// ------------------------------------------------------------------------
// cubic_root.csv
// ------------------------------------------------------------------------

#[test]
fn test_vectors_cubic_root() {
    let Some(csv) = load("cubic_root.csv") else {
        return;
    };
    let mut ck = Checker::new(&csv.name);
    for r in &csv.rows {
        ck.at(r.s("category"), r.s("a"), r.line);
        ck.eq("cubic_root", r.u32("cubic_root"), cubic_root(r.u64("a")));
        ck.rows_checked += 1;
    }
    ck.finish(csv.rows.len(), 0);
}

// ------------------------------------------------------------------------
// cubic_recalc_ssthresh.csv
// ------------------------------------------------------------------------

#[test]
fn test_vectors_cubic_recalc_ssthresh() {
    let Some(csv) = load("cubic_recalc_ssthresh.csv") else {
        return;
    };
    let mut ck = Checker::new(&csv.name);
    for r in &csv.rows {
        let version = r.s("version");
        ck.at(version, r.s("cwnd"), r.line);
        let mut cubic = Cubic::new(CubicParams::for_version(cubic_version(version)));
        let mut tp = CaCtx::default();
        cubic.init(&mut tp);
        tp.snd_cwnd = r.u32("cwnd");
        cubic.ca_mut().last_max_cwnd = r.u32("last_max_cwnd_in");
        cubic.ca_mut().epoch_start = 12345;
        let ret = cubic.ssthresh(&mut tp);
        ck.eq("ssthresh_ret", r.u32("ssthresh_ret"), ret);
        ck.eq("last_max_cwnd_out", r.u32("last_max_cwnd_out"), cubic.ca().last_max_cwnd);
        ck.eq_opt("loss_cwnd_out", r.opt_u32("loss_cwnd_out"), cubic.ca().loss_cwnd);
        ck.eq("epoch_start", 0, cubic.ca().epoch_start);
        ck.rows_checked += 1;
    }
    ck.finish(csv.rows.len(), 0);
}

// ------------------------------------------------------------------------
// cubic_update_v*.csv
// ------------------------------------------------------------------------

fn path_name(p: Option<UpdatePath>) -> &'static str {
    match p {
        Some(UpdatePath::EarlyReturn) => "early_return",
        Some(UpdatePath::FriendlinessOnly) => "friendliness_only",
        Some(UpdatePath::NewEpoch) => "new_epoch",
        Some(UpdatePath::Recompute) => "recompute",
        Some(UpdatePath::SlowStartOnly) => "slow_start_only",
        Some(UpdatePath::NotCwndLimited) => "not_cwnd_limited",
        None => "",
    }
}

/// Compares the state columns present in `r` with the model.
fn check_cubic_state(ck: &mut Checker, r: &Row, cubic: &Cubic, tp: &CaCtx) {
    let ca = cubic.ca();
    ck.eq("cnt", r.u32("cnt"), ca.cnt);
    ck.eq("last_max_cwnd", r.u32("last_max_cwnd"), ca.last_max_cwnd);
    ck.eq("last_cwnd", r.u32("last_cwnd"), ca.last_cwnd);
    ck.eq("last_time", r.u32("last_time"), ca.last_time);
    ck.eq("bic_origin_point", r.u32("bic_origin_point"), ca.bic_origin_point);
    ck.eq("bic_K", r.u32("bic_K"), ca.bic_k);
    ck.eq("delay_min", r.u32("delay_min"), ca.delay_min);
    ck.eq("epoch_start", r.u32("epoch_start"), ca.epoch_start);
    ck.eq("ack_cnt", r.u32("ack_cnt"), ca.ack_cnt);
    ck.eq("tcp_cwnd", r.u32("tcp_cwnd"), ca.tcp_cwnd);
    if r.has("loss_cwnd") {
        ck.eq("loss_cwnd", r.u32("loss_cwnd"), ca.loss_cwnd);
    }
    if r.has("delayed_ack") {
        ck.eq("delayed_ack", r.u32("delayed_ack"), ca.delayed_ack as u32);
    }
    ck.eq("snd_cwnd", r.u32("snd_cwnd"), tp.snd_cwnd);
    ck.eq("snd_cwnd_cnt", r.u32("snd_cwnd_cnt"), tp.snd_cwnd_cnt);
    ck.eq("snd_ssthresh", r.u32("snd_ssthresh"), tp.snd_ssthresh);
    ck.eq("snd_cwnd_clamp", r.u32("snd_cwnd_clamp"), tp.snd_cwnd_clamp);
}

/// Sets the clock fields of `tp` for jiffies `j` at `hz` (the µs clock is
/// only a consistent stand-in: these traces never reach HyStart's µs test).
fn set_clock(tp: &mut CaCtx, j: u32, hz: u32) {
    tp.jiffies = j;
    tp.hz = hz;
    tp.now = Instant::from_micros(j as u64 * (1_000_000 / hz as u64));
}

fn run_cubic_update(file: &str, version: CubicVersion) {
    let Some(csv) = load(file) else { return };
    let mut ck = Checker::new(&csv.name);
    for (seq_id, rows) in csv.sequences() {
        let init = rows[0];
        assert_eq!(init.s("event"), "init", "{file}: {seq_id} does not start with init");
        let hz = init.u32("hz");
        let mut tp = CaCtx::default();
        set_clock(&mut tp, init.u32("jiffies"), hz);
        let mut snd_una = SeqNum(1_000_000);
        tp.snd_una = snd_una;
        tp.snd_cwnd = init.u32("snd_cwnd");
        tp.snd_nxt = snd_una + tp.snd_cwnd * MSS;
        let mut cubic = Cubic::new(CubicParams::for_version(version));
        cubic.init(&mut tp);
        // What the harness sets after init.
        cubic.ca_mut().delay_min = init.u32("delay_min");
        cubic.ca_mut().last_max_cwnd = init.u32("last_max_cwnd");
        tp.snd_ssthresh = init.u32("snd_ssthresh");
        tp.snd_cwnd_clamp = init.u32("snd_cwnd_clamp");
        tp.snd_cwnd_cnt = init.u32("snd_cwnd_cnt");
        ck.at(&seq_id, init.s("step"), init.line);
        check_cubic_state(&mut ck, init, &cubic, &tp);
        ck.rows_checked += 1;

        for r in &rows[1..] {
            ck.at(&seq_id, r.s("step"), r.line);
            assert_eq!(r.u32("hz"), hz);
            set_clock(&mut tp, r.u32("jiffies"), hz);
            match r.s("event") {
                "loss" => {
                    ck.eq("cwnd_in", r.u32("cwnd_in"), tp.snd_cwnd);
                    let ret = cubic.ssthresh(&mut tp);
                    ck.eq("ret", r.u32("ret"), ret);
                    // As at the end of recovery.
                    tp.snd_ssthresh = ret;
                    tp.snd_cwnd = ret;
                    tp.snd_cwnd_cnt = 0;
                }
                "ack" => {
                    ck.eq("cwnd_in", r.u32("cwnd_in"), tp.snd_cwnd);
                    let acked = r.u32("acked");
                    tp.ca_state = CaState::Open;
                    tp.is_cwnd_limited = true;
                    tp.max_packets_out = tp.snd_cwnd;
                    let _ = cubic.take_trace();
                    let sample = AckSample { pkts_acked: acked, rtt_us: r.i64("rtt_us"), in_flight: tp.snd_cwnd };
                    cubic.pkts_acked(&mut tp, &sample);
                    snd_una += acked.wrapping_mul(MSS);
                    tp.snd_una = snd_una;
                    cubic.cong_avoid(&mut tp, snd_una, acked);
                    tp.snd_nxt = snd_una + tp.snd_cwnd.wrapping_mul(MSS);
                    let trace = cubic.take_trace();
                    ck.eq("path", r.s("path"), path_name(trace.path));
                }
                "tx_start" => {
                    // The harness set lsndtime, then let 3 s pass.
                    tp.lsndtime = tp.jiffies.wrapping_sub(3 * hz);
                    cubic.cwnd_event(&mut tp, CaEvent::TxStart);
                }
                e => panic!("{file}: line {}: unknown event {e}", r.line),
            }
            check_cubic_state(&mut ck, r, &cubic, &tp);
            ck.rows_checked += 1;
        }
    }
    ck.finish(csv.rows.len(), 0);
}

#[test]
fn test_vectors_cubic_update_v6_13_7() {
    run_cubic_update("cubic_update_v6.13.7.csv", CubicVersion::Current);
}

#[test]
fn test_vectors_cubic_update_v3_19_8() {
    run_cubic_update("cubic_update_v3.19.8.csv", CubicVersion::V3_19);
}

#[test]
fn test_vectors_cubic_update_v3_18_30() {
    run_cubic_update("cubic_update_v3.18.30.csv", CubicVersion::V3_18);
}
