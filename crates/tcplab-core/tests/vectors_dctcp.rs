//! Row-for-row checks of DCTCP against dctcp_alpha_v6.13.7.csv (packet
//! counters), dctcp_alpha_v4.17.0.csv (bytes) and dctcp_ssthresh.csv (see
//! `shared/conformance/linux-vectors/README.md`).
//!
//! If `../shared` is absent the tests print "SKIPPED: ../shared not found"
//! and return.

mod cc_vectors;

use cc_vectors::{load, Checker, Row};
use tcplab_core::cc::dctcp::{Dctcp, DctcpParams, DctcpVersion};
use tcplab_core::cc::{CaCtx, CongestionOps};
use tcplab_core::wire::SeqNum;

fn params(r: &Row, version: DctcpVersion) -> DctcpParams {
    DctcpParams {
        shift_g: r.u32("shift_g"),
        alpha_on_init: r.u32("alpha_on_init"),
        ..DctcpParams::for_version(version)
    }
}

fn set_inputs(tp: &mut CaCtx, r: &Row, version: DctcpVersion) {
    tp.snd_una = SeqNum(r.u32("snd_una"));
    tp.snd_nxt = SeqNum(r.u32("snd_nxt"));
    match version {
        DctcpVersion::Current => {
            tp.delivered = r.u32("delivered");
            tp.delivered_ce = r.u32("delivered_ce");
        }
        DctcpVersion::V4_17 => tp.rcv_mss = r.u32("rcv_mss"),
    }
}

fn check_state(ck: &mut Checker, r: &Row, d: &Dctcp, version: DctcpVersion) {
    ck.eq("dctcp_alpha", r.u32("dctcp_alpha"), d.ca.dctcp_alpha);
    ck.eq("next_seq", r.u32("next_seq"), d.ca.next_seq.0);
    match version {
        DctcpVersion::Current => {
            ck.eq("old_delivered", r.u32("old_delivered"), d.ca.old_delivered);
            ck.eq("old_delivered_ce", r.u32("old_delivered_ce"), d.ca.old_delivered_ce);
        }
        DctcpVersion::V4_17 => {
            ck.eq("acked_bytes_total", r.u32("acked_bytes_total"), d.ca.acked_bytes_total);
            ck.eq("acked_bytes_ecn", r.u32("acked_bytes_ecn"), d.ca.acked_bytes_ecn);
            ck.eq("prior_snd_una", r.u32("prior_snd_una"), d.ca.prior_snd_una.0);
        }
    }
}

fn run_alpha(file: &str, version: DctcpVersion) {
    let Some(csv) = load(file) else { return };
    let mut ck = Checker::new(&csv.name);
    for (seq_id, rows) in csv.sequences() {
        let init = rows[0];
        assert_eq!(init.s("event"), "init");
        let mut d = Dctcp::new(params(init, version));
        let mut tp = CaCtx { ecn_ok: true, ..CaCtx::default() };
        set_inputs(&mut tp, init, version);
        d.init(&mut tp);
        assert!(!d.is_reno_fallback());
        ck.at(&seq_id, init.s("step"), init.line);
        check_state(&mut ck, init, &d, version);
        ck.rows_checked += 1;
        for r in &rows[1..] {
            ck.at(&seq_id, r.s("step"), r.line);
            assert_eq!(r.s("event"), "ack");
            // The parameters are per sequence.
            assert_eq!(&params(r, version), d.params());
            set_inputs(&mut tp, r, version);
            let window_end = !tp.snd_una.before(d.ca.next_seq);
            let flags = if r.has("flags") { r.opt_u32("flags").unwrap_or(0) } else { 0 };
            d.in_ack_event(&mut tp, flags);
            ck.eq("window_end", r.u32("window_end"), window_end as u32);
            check_state(&mut ck, r, &d, version);
            ck.rows_checked += 1;
        }
    }
    ck.finish(csv.rows.len(), 0);
}

#[test]
fn test_vectors_dctcp_alpha_v6_13_7() {
    run_alpha("dctcp_alpha_v6.13.7.csv", DctcpVersion::Current);
}

#[test]
fn test_vectors_dctcp_alpha_v4_17_0() {
    run_alpha("dctcp_alpha_v4.17.0.csv", DctcpVersion::V4_17);
}

#[test]
fn test_vectors_dctcp_ssthresh() {
    let Some(csv) = load("dctcp_ssthresh.csv") else {
        return;
    };
    let mut ck = Checker::new(&csv.name);
    for r in &csv.rows {
        let version = match r.s("version") {
            "6.13.7" => DctcpVersion::Current,
            "4.17.0" => DctcpVersion::V4_17,
            v => panic!("unknown version {v}"),
        };
        ck.at(r.s("version"), r.s("cwnd"), r.line);
        let mut d = Dctcp::new(DctcpParams::for_version(version));
        let mut tp = CaCtx { ecn_ok: true, ..CaCtx::default() };
        d.init(&mut tp);
        d.ca.dctcp_alpha = r.u32("dctcp_alpha");
        tp.snd_cwnd = r.u32("cwnd");
        let ret = d.ssthresh(&mut tp);
        ck.eq("ssthresh_ret", r.u32("ssthresh_ret"), ret);
        ck.eq("loss_cwnd_out", r.u32("loss_cwnd_out"), d.ca.loss_cwnd);
        ck.rows_checked += 1;
    }
    ck.finish(csv.rows.len(), 0);
}
