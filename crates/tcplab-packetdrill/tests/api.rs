//! The public API on small scripts written for these tests, against the
//! real TCP core.

use std::path::{Path, PathBuf};
use tcplab_packetdrill::{check_hz, format_json_lines, run_paths, run_source, Outcome, RunOptions};

/// A passive open and one data segment; option layouts left open with
/// `<...>` so that only the core's handshake and first write matter.
const SMOKE: &str = "\
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+.05 < S 0:0(0) win 20000 <mss 1000,nop,wscale 4>
+0 > S. 0:0(0) ack 1 <...>
+.05 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 write(4, ..., 1000) = 1000
+0 > P. 1:1001(1000) ack 1 <...>
+.05 < . 1:1(0) ack 1001 win 1000
+0 %{ assert tcpi_unacked == 0, tcpi_unacked }%
";

fn temp_script(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcplab-packetdrill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn test_run_source_against_core() {
    let r = run_source(SMOKE, Path::new("smoke.pkt"), &RunOptions { verbose: true, ..Default::default() });
    println!("{r}\n{:#?}", r.output);
    // The core is still being finished: report, but only insist that the
    // interpreter understood and ran the whole script.
    assert!(!r.skipped(), "{r}");
    if let Outcome::Fail { message, .. } = &r.outcome {
        assert!(!message.contains("parse error"), "{message}");
    }
}

#[test]
fn test_record_is_serializable() {
    let src = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 5\n";
    let r = run_source(src, Path::new("bad.pkt"), &RunOptions::default());
    let rec = r.record();
    assert_eq!(rec.outcome, "fail");
    assert_eq!(rec.line, Some(2));
    assert_eq!(rec.message.as_deref(), Some("runtime error in fcntl call: Expected result 5 but got 2"));
    assert_eq!(r.to_string(), "FAIL  bad.pkt:2: runtime error in fcntl call: Expected result 5 but got 2");
    let json = format_json_lines(&[r]);
    let mut lines = json.lines();
    let first: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(first["type"], "script");
    assert_eq!(first["data"]["outcome"], "fail");
    let summary: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["data"]["failed"], 1);
}

#[test]
fn test_hz_is_one_linux_offers_and_run_paths_sorts() {
    // HZ: the values Linux offers, as for scenarios (tcp.hz) and kernel builds.
    assert_eq!(check_hz(7), Err("Linux offers HZ 100, 250, 300 or 1000".to_string()));
    assert_eq!(check_hz(300), Ok(()));
    let ok = temp_script(
        "ok.pkt",
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 0x2\n+0 close(3) = 0\n",
    );
    temp_script("bad.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 7\n");
    // run_paths searches directories and sorts.
    let results = run_paths(&[ok.parent().unwrap().to_path_buf()]);
    let names: Vec<_> = results.iter().map(|r| r.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "{names:?}");
    let _ = std::fs::remove_dir_all(ok.parent().unwrap());
}

/// An event more than a day of virtual time in (a mistyped `+100000`)
/// fails at its line instead of running timers for that long.
#[test]
fn test_event_time_past_a_day_fails_at_its_line() {
    let src = format!("{SMOKE}+100000 %{{ assert tcpi_unacked == 0 }}%\n");
    let r = run_source(&src, Path::new("late.pkt"), &RunOptions::default());
    let rec = r.record();
    assert_eq!(rec.outcome, "fail", "{r}");
    assert_eq!(rec.line, Some(13), "{r}");
    assert!(rec.message.as_deref().unwrap_or("").contains("past tcplab's limit of 86400.000000 s"), "{r}");
}
