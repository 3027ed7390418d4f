//! `tcplab-agent packetdrill JOB.json` runs Linux's packetdrill only as a
//! User-Mode Linux guest's init: anywhere else (on the host, by mistake)
//! it refuses with the usage message and exit status 2, and runs nothing.

use std::process::Command;
use tcplab_agent::packetdrill::{PdJob, PdScript, PD_JOB_VERSION};

#[test]
fn packetdrill_mode_off_pid_1_refuses_and_runs_nothing() {
    let dir = std::env::temp_dir().join(format!("tcplab-agent-pd-mode-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A job that would leave files behind if it ran.
    let job = PdJob {
        version: PD_JOB_VERSION,
        packetdrill: "/bin/true".into(),
        scripts: vec![PdScript { index: 0, path: dir.join("x.pkt").display().to_string(), args: vec![] }],
        timeout_secs: 1,
        out_dir: dir.display().to_string(),
    };
    let path = dir.join("job.json");
    std::fs::write(&path, serde_json::to_string(&job).unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tcplab-agent"))
        .args(["packetdrill", path.to_str().unwrap()])
        .output()
        .expect("the agent binary runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tcplab-agent packetdrill JOB.json"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("job.json")], "the agent wrote something");
    let _ = std::fs::remove_dir_all(&dir);
}
