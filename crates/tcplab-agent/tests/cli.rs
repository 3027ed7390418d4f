//! The binary's command line: exit statuses and messages for bad input,
//! and a trivial job that needs no privileges.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tcplab_agent::job::{Action, GuestResult, Job, Step, JOB_VERSION};

fn agent(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcplab-agent")).args(args).output().expect("the agent binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcplab-agent-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn empty_job(out: &Path) -> Job {
    Job {
        version: JOB_VERSION,
        setup: vec![],
        duration_ns: 10_000_000,
        trace_interval_ns: None,
        flows: vec![],
        counter_namespaces: vec![],
        link_probes: vec![],
        loss_probes: vec![],
        netem_timelines: vec![],
        // On the host: no tick alignment (the host's HZ is not the image's).
        hz: 0,
        capture: None,
        out_dir: out.to_string_lossy().into_owned(),
    }
}

#[test]
fn bad_usage_exits_2() {
    for args in [&[][..], &["run"], &["frobnicate", "x"], &["run", "a", "b"]] {
        let o = agent(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("usage: tcplab-agent run JOB.json"), "{}", stderr(&o));
    }
}

#[test]
fn invalid_json_names_the_file_and_position() {
    let d = scratch("badjson");
    let p = write(&d, "job.json", "{\n  \"version\": 1,\n  oops\n}");
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains(&p) && e.contains("invalid JSON") && e.contains("line 3 column 3"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_wrong_version_or_shape_is_refused() {
    let d = scratch("version");
    let p = write(&d, "job.json", &format!("{{\"version\": {}, \"whatever\": true}}", JOB_VERSION + 1));
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{p}: job version {}", JOB_VERSION + 1)), "{}", stderr(&o));

    let p = write(&d, "job2.json", &format!("{{\"version\": {JOB_VERSION}, \"setup\": []}}"));
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains(&p) && e.contains("invalid job: missing field"), "{e}");

    let o = agent(&["run", "/no/such/job.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/no/such/job.json: cannot read"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn an_empty_job_writes_a_result() {
    let d = scratch("empty");
    let job = empty_job(&d);
    let p = write(&d, "job.json", &serde_json::to_string(&job).unwrap());
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: GuestResult = serde_json::from_str(&std::fs::read_to_string(d.join("result.json")).unwrap()).unwrap();
    assert_eq!(r.error, None);
    assert!(!r.kernel_release.is_empty());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_failed_set_up_step_is_in_the_result_and_exits_1() {
    let d = scratch("setup");
    let mut job = empty_job(&d);
    job.setup = vec![
        Step { what: "fine".into(), action: Action::Exec { argv: vec!["true".into()] } },
        Step {
            what: "broken".into(),
            action: Action::Exec { argv: vec!["sh".into(), "-c".into(), "echo no such device >&2; exit 1".into()] },
        },
    ];
    let p = write(&d, "job.json", &serde_json::to_string(&job).unwrap());
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(1));
    let r: GuestResult = serde_json::from_str(&std::fs::read_to_string(d.join("result.json")).unwrap()).unwrap();
    assert_eq!(
        r.error.as_deref(),
        Some("set-up step 1 (broken): sh -c 'echo no such device >&2; exit 1': exit status: 1: no such device")
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn guest_mode_off_pid_1_behaves_like_run() {
    let d = scratch("guest");
    let p = write(&d, "job.json", &serde_json::to_string(&empty_job(&d)).unwrap());
    let o = agent(&["guest", &p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("not PID 1"));
    assert!(d.join("result.json").exists());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_missing_output_directory_exits_1() {
    let d = scratch("noout");
    let p = write(&d, "job.json", &serde_json::to_string(&empty_job(&d.join("missing"))).unwrap());
    let o = agent(&["run", &p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("output directory"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(d);
}
