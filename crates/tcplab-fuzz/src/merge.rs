//! `tcplab merge` input: shard files of `tcplab sweep --shard K/N --json`.
//!
//! Input: the files' texts separated by NUL bytes (at most 8 files).
//! Oracles: nothing panics; an error names a file; a merged sweep has
//! every metric in every run, summaries over exactly those runs, prints as
//! a table and CSV, and merges again (its own JSON, as one file) to the
//! same JSON.

use tcplab_lab::sweep::merge;

pub fn check(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let files: Vec<(String, String)> =
        input.split('\0').take(8).enumerate().map(|(i, t)| (format!("shard-{i}.json"), t.to_string())).collect();
    match merge(&files) {
        Err(e) => {
            let loc = e.location.clone().unwrap_or_default();
            assert!(loc.starts_with("shard-"), "error without its file: {e}");
        }
        Ok((result, _warnings)) => {
            for p in &result.points {
                for r in &p.runs {
                    assert_eq!(r.metrics.len(), result.metrics.len(), "a run without every metric was merged");
                    for m in &result.metrics {
                        assert!(r.metrics.contains_key(&m.name), "run lacks {}", m.name);
                    }
                }
                for s in p.summary.values().flatten() {
                    assert_eq!(s.n, p.runs.len(), "summary over other runs than the point's");
                }
            }
            let _ = result.to_table();
            let _ = result.to_csv();
            let json = result.to_json();
            match merge(&[("merged.json".into(), json.clone())]) {
                Ok((again, _)) => assert_eq!(again.to_json(), json, "merging a merge changed it"),
                Err(e) => panic!("a merged sweep does not merge again: {e}"),
            }
        }
    }
}
