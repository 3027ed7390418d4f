//! Linux conformance vectors for the RTT estimator / RTO and for PRR.
//!
//! Reads shared/conformance/linux-vectors/ (see its README.md):
//! - rtt_rto_v6.13.7.csv: `tcp_rtt_estimator` + `tcp_set_rto` sequences,
//!   replayed through [`RttEstimator`];
//! - prr_cwnd_reduction.csv: standalone `tcp_cwnd_reduction` calls of
//!   v6.13.7 and v4.17.0 (the `version` column picks the [`PrrRule`]).
//!
//! Every data row is reproduced; a mismatch names the file, `seq_id`,
//! `step` and field. The directory sits beside the workspace
//! (`<workspace>/../shared`); when it is absent the tests print
//! "SKIPPED: ../shared not found" and pass. `TCPLAB_VECTORS_DIR` overrides
//! the location.

use std::collections::HashMap;
use std::path::PathBuf;

use tcplab_core::flag;
use tcplab_core::prr::{tcp_cwnd_reduction, tcp_packets_in_flight, PrrConfig, PrrRule, PrrState};
use tcplab_core::rtt::{tcp_rto_max, tcp_timeout_init, RttEstimator};
use tcplab_core::wire::SeqNum;

// ---- A tiny CSV reader ------------------------------------------------------

/// One comma-separated file with a header row. The vector files quote
/// nothing, so a field is simply the text between commas.
struct Csv {
    name: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Non-empty lines after the header, counted independently of parsing.
    data_lines: usize,
}

fn vectors_dir() -> PathBuf {
    match std::env::var_os("TCPLAB_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance/linux-vectors")),
    }
}

/// `None` (after printing the skip notice) when the vectors are absent.
fn read_csv(file: &str) -> Option<Csv> {
    let dir = vectors_dir();
    if !dir.is_dir() {
        println!("SKIPPED: ../shared not found ({})", dir.display());
        return None;
    }
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header: Vec<String> = lines.next().unwrap_or_default().split(',').map(str::to_owned).collect();
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<String> = line.split(',').map(str::to_owned).collect();
        assert_eq!(
            fields.len(),
            header.len(),
            "{file}: line {} has {} fields, header {}",
            i + 2,
            fields.len(),
            header.len()
        );
        rows.push(fields);
    }
    let data_lines = text.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
    Some(Csv { name: file.to_owned(), header, rows, data_lines })
}

/// One row with named access and error messages that locate it.
struct Row<'a> {
    csv: &'a Csv,
    cols: &'a HashMap<&'a str, usize>,
    f: &'a [String],
}

impl<'a> Row<'a> {
    fn s(&self, col: &str) -> &'a str {
        let i = *self.cols.get(col).unwrap_or_else(|| panic!("{}: no column {col}", self.csv.name));
        &self.f[i]
    }
    fn at(&self) -> String {
        let seq = self.cols.get("seq_id").map_or("?", |&i| &self.f[i]);
        let step = self.cols.get("step").map_or("?", |&i| &self.f[i]);
        let ver = self.cols.get("version").map(|&i| format!(" version {}", self.f[i])).unwrap_or_default();
        format!("{} seq_id {seq} step {step}{ver}", self.csv.name)
    }
    #[track_caller]
    fn num<T: std::str::FromStr>(&self, col: &str) -> T {
        let v = self.s(col);
        v.parse().unwrap_or_else(|_| panic!("{}: field {col} = {v:?} does not parse", self.at()))
    }
    fn is_blank(&self, col: &str) -> bool {
        self.s(col).is_empty()
    }
}

fn columns(csv: &Csv) -> HashMap<&str, usize> {
    csv.header.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect()
}

/// Collects mismatches so that one run reports all of them.
#[derive(Default)]
struct Mismatches(Vec<String>);

impl Mismatches {
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, at: &str, field: &str, got: T, want: T) -> bool {
        if got != want {
            self.0.push(format!("{at}: field {field}: got {got:?}, want {want:?}"));
            return false;
        }
        true
    }
    #[track_caller]
    fn assert_none(&self) {
        if !self.0.is_empty() {
            let shown: Vec<&str> = self.0.iter().take(30).map(String::as_str).collect();
            panic!("{} mismatches; first {}:\n{}", self.0.len(), shown.len(), shown.join("\n"));
        }
    }
}

// ---- rtt_rto_v6.13.7.csv ------------------------------------------------------

#[test]
fn test_rtt_rto_v6_13_7_every_row() {
    let Some(csv) = read_csv("rtt_rto_v6.13.7.csv") else { return };
    let cols = columns(&csv);
    let mut bad = Mismatches::default();
    let mut checked = 0usize;
    // seq_id -> (last step, estimator after it)
    let mut seqs: HashMap<String, (u64, RttEstimator)> = HashMap::new();

    for f in &csv.rows {
        let row = Row { csv: &csv, cols: &cols, f };
        let at = row.at();
        let seq_id = row.s("seq_id").to_owned();
        let step: u64 = row.num("step");
        let hz: u32 = row.num("hz");
        let rto_min_sysctl: u32 = row.num("rto_min_us_sysctl");

        let mut est = match row.s("event") {
            "init" => {
                assert!(!seqs.contains_key(&seq_id), "{at}: second init");
                let mut e = RttEstimator::new(hz, rto_min_sysctl);
                bad.check(&at, "init icsk_rto (TCP_TIMEOUT_INIT)", e.icsk_rto, tcp_timeout_init(hz));
                // tcp_init_sock puts TCP_TIMEOUT_INIT in mdev_us; the harness
                // zeroes every estimator field instead. The first sample
                // overwrites mdev_us either way.
                e.mdev_us = 0;
                e
            }
            "sample" => {
                let (prev_step, prev) =
                    seqs.get(&seq_id).copied().unwrap_or_else(|| panic!("{at}: sample before init"));
                assert_eq!(step, prev_step + 1, "{at}: steps out of order");
                let mut e = prev;
                let mrtt: i64 = row.num("mrtt_us");
                let una = SeqNum(row.num("snd_una"));
                let nxt = SeqNum(row.num("snd_nxt"));
                assert!(e.update(mrtt, una, nxt), "{at}: sample rejected");
                e
            }
            other => panic!("{at}: unknown event {other:?}"),
        };
        assert_eq!(est.hz(), hz);

        let want_rto: u32 = row.num("rto_jiffies");
        let mut ok = true;
        ok &= bad.check(&at, "icsk_rto_min", est.icsk_rto_min, row.num("icsk_rto_min"));
        ok &= bad.check(&at, "srtt_us", est.srtt_us, row.num("srtt_us"));
        ok &= bad.check(&at, "mdev_us", est.mdev_us, row.num("mdev_us"));
        ok &= bad.check(&at, "mdev_max_us", est.mdev_max_us, row.num("mdev_max_us"));
        ok &= bad.check(&at, "rttvar_us", est.rttvar_us, row.num("rttvar_us"));
        ok &= bad.check(&at, "rtt_seq", est.rtt_seq, SeqNum(row.num("rtt_seq")));
        ok &= bad.check(&at, "rto_jiffies", est.icsk_rto, want_rto);
        assert!(est.icsk_rto <= tcp_rto_max(hz), "{at}: RTO above TCP_RTO_MAX");
        if !ok {
            // Resynchronise so that later rows are checked against the
            // kernel's state before them, not against our error.
            est.srtt_us = row.num("srtt_us");
            est.mdev_us = row.num("mdev_us");
            est.mdev_max_us = row.num("mdev_max_us");
            est.rttvar_us = row.num("rttvar_us");
            est.rtt_seq = SeqNum(row.num("rtt_seq"));
            est.icsk_rto = want_rto;
        }
        seqs.insert(seq_id, (step, est));
        checked += 1;
    }

    bad.assert_none();
    println!("rtt_rto_v6.13.7.csv: {checked} rows checked in {} sequences", seqs.len());
    assert_eq!(checked, csv.data_lines, "rows checked vs data rows in the file");
}

// ---- prr_cwnd_reduction.csv ---------------------------------------------------

#[test]
fn test_prr_cwnd_reduction_every_row() {
    let Some(csv) = read_csv("prr_cwnd_reduction.csv") else { return };
    let cols = columns(&csv);
    let mut bad = Mismatches::default();
    let mut checked = 0usize;
    let mut per_version: HashMap<String, usize> = HashMap::new();

    for f in &csv.rows {
        let row = Row { csv: &csv, cols: &cols, f };
        let at = row.at();
        let version = row.s("version");
        let rule = match version {
            "6.13.7" => PrrRule::Current,
            "4.17.0" => PrrRule::V4_17,
            other => panic!("{at}: unknown version {other:?}"),
        };

        let st = PrrState {
            ssthresh: row.num("ssthresh"),
            prior_cwnd: row.num("prior_cwnd"),
            prr_delivered: row.num("prr_delivered_in"),
            prr_out: row.num("prr_out"),
            in_flight: row.num("in_flight"),
            cwnd: row.num("cwnd_in"),
        };
        let in_flight = tcp_packets_in_flight(
            row.num("packets_out"),
            row.num("sacked_out"),
            row.num("lost_out"),
            row.num("retrans_out"),
        );
        bad.check(&at, "in_flight (tcp_packets_in_flight)", in_flight, st.in_flight);

        let fl: u32 = row.num("flag");
        let named = row
            .s("flag_names")
            .split('|')
            .filter(|n| !n.is_empty())
            .try_fold(0u32, |acc, n| flag::from_name(n).map(|b| acc | b));
        bad.check(&at, "flag_names", named, Some(fl));

        let newly_acked_sacked: i32 = row.num("newly_acked_sacked");
        let newly_lost: i32 = row.num("newly_lost");
        let out =
            tcp_cwnd_reduction(&st, newly_acked_sacked, newly_lost, fl, false, &PrrConfig { rule, cwnd_floor: 1 });

        let early: u8 = row.num("returned_early");
        bad.check(&at, "returned_early", out.returned_early(), early == 1);
        bad.check(&at, "warn", out.warn, row.num("warn"));
        bad.check(&at, "prr_delivered_out", out.prr_delivered, row.num("prr_delivered_out"));
        bad.check(&at, "cwnd_out", out.cwnd, row.num("cwnd_out"));
        let want_sndcnt: Option<i64> = if row.is_blank("sndcnt") { None } else { Some(row.num("sndcnt")) };
        bad.check(&at, "sndcnt", out.sndcnt.map(i64::from), want_sndcnt);

        *per_version.entry(version.to_owned()).or_default() += 1;
        checked += 1;
    }

    bad.assert_none();
    let mut v: Vec<_> = per_version.into_iter().collect();
    v.sort();
    println!("prr_cwnd_reduction.csv: {checked} rows checked ({v:?})");
    assert_eq!(checked, csv.data_lines, "rows checked vs data rows in the file");
}
