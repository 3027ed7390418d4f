//! `tcplab align` through the binary: model against model (always), bad
//! input (exit 2, naming the flag or file), and model against the kernel
//! with the guest's packet capture (when an image and the agent are there,
//! or required by `TCPLAB_KERNEL_TESTS=1`).

mod common;
use common::*;
use std::path::Path;

const DUMBBELL: &str = r#"
[run]
duration = "500ms"
[[node]]
name = "sender"
[[node]]
name = "sw"
kind = "switch"
[[node]]
name = "receiver"
[[link]]
name = "access"
a = "sender"
b = "sw"
rate = "1Gbit"
delay = "10us"
[[link]]
name = "bottleneck"
a = "sw"
b = "receiver"
rate = "20Mbit"
delay = "10ms"
queue = "50KB"
[[flow]]
id = "bulk"
from = "sender"
to = "receiver"
cc = "cubic"
"#;

fn scenario(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tcplab-align-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.toml");
    std::fs::write(&f, DUMBBELL).unwrap();
    f
}

#[test]
fn model_against_model_finds_the_changed_knob_and_nothing_else() {
    let f = scenario("mm");
    let f = f.to_str().unwrap();
    let same = tcplab(&["align", f, "--b", "run.duration=500ms"]);
    assert!(same.status.success(), "{}", stderr(&same));
    assert!(stdout(&same).contains("no divergence"), "{}", stdout(&same));
    let o = tcplab(&["align", f, "--b", "flow.bulk.tcp.initcwnd=20", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["link_dir"], "access:sender->sw");
    assert_eq!(v["alignment"]["divergence"]["b"]["seq"], 1 + 10 * 1448);
}

#[test]
fn bad_input_exits_2_naming_it() {
    let f = scenario("bad");
    let f = f.to_str().unwrap();
    for (args, want) in [
        (vec!["align", "/no/such.toml"], "/no/such.toml"),
        (vec!["align", f, "--tolerance", "fast"], "--tolerance"),
        (vec!["align", f, "--ignore", "colour"], "--ignore"),
        (vec!["align", f, "--b", "flow.bulk.tcp.initcwnd=zero"], "initcwnd"),
        (vec!["align", "--suite", "/no/suite.toml"], "/no/suite.toml"),
    ] {
        let o = tcplab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn the_kernel_side_is_captured_and_aligned() {
    let required = std::env::var("TCPLAB_KERNEL_TESTS").is_ok_and(|v| v == "1");
    // A 6.12 image at HZ 250 (other series may be built beside it).
    let list = tcplab(&["kernel", "list", "--json"]);
    let images: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap_or_default();
    let key = images.as_array().into_iter().flatten().find_map(|i| {
        let ok = i["kernel_release"].as_str().is_some_and(|r| r.starts_with("6.12")) && i["hz"] == 250;
        ok.then(|| i["key"].as_str().unwrap_or_default().to_string())
    });
    let agent = Path::new(env!("CARGO_BIN_EXE_tcplab")).with_file_name("tcplab-agent").is_file();
    let Some(key) = key.filter(|_| agent) else {
        assert!(!required, "TCPLAB_KERNEL_TESTS=1 but no 6.12 image at HZ 250 or no agent");
        println!("SKIPPED: no 6.12 kernel image at HZ 250, or no agent");
        return;
    };
    let f = scenario("k");
    let o = tcplab(&["align", f.to_str().unwrap(), "--json", "--kernel", &key]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Both sides saw the handshake and the data: thousands of packets.
    let (a, b) = (v["alignment"]["a_packets"].as_u64().unwrap(), v["alignment"]["b_packets"].as_u64().unwrap());
    assert!(a > 1000 && b > 1000, "{a} {b}");
    assert!(b * 10 > a * 9 && a * 10 > b * 9, "{a} {b}");
    // The handshake matches: the first divergence is after it.
    assert!(v["alignment"]["matched"].as_u64().unwrap() >= 3, "{}", stdout(&o));
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{}", v["warnings"]);
}
