//! The job's set-up steps: programs, sysctls, file writes and RED qdiscs,
//! in order, stopping at the first failure.

use crate::job::{Action, Step};
use crate::netlink::{self, RedStep, RouteSocket};
use crate::netns;
use std::process::{Command, Stdio};

/// Runs every step in order. The first failure is
/// `"set-up step N (<what>): <action>: <reason>"`, N being the step's index
/// in `job.setup` (from 0).
pub fn run(steps: &[Step]) -> Result<(), String> {
    for (i, step) in steps.iter().enumerate() {
        run_action(&step.action)
            .map_err(|e| format!("set-up step {i} ({}): {}: {e}", step.what, describe(&step.action)))?;
    }
    Ok(())
}

/// The action as a person would type it, for error messages.
pub fn describe(a: &Action) -> String {
    match a {
        Action::Exec { argv } => argv.iter().map(|s| quote(s)).collect::<Vec<_>>().join(" "),
        Action::Sysctl { ns, key, value } => match ns {
            Some(ns) => format!("sysctl in {ns}: {key} = {value}"),
            None => format!("sysctl: {key} = {value}"),
        },
        Action::Write { path, value } => format!("write {value:?} to {path}"),
        Action::RedStep { ns, dev, parent, handle, limit_bytes, threshold_bytes } => format!(
            "red step qdisc in {ns}: dev {dev} parent {} handle {} limit {limit_bytes}b threshold {threshold_bytes}b",
            handle_str(*parent),
            handle_str(*handle)
        ),
    }
}

/// A qdisc/class handle as `tc` writes it (`1:`, `1:10`, `root`).
pub fn handle_str(h: u32) -> String {
    match h {
        0xffff_ffff => "root".into(),
        _ if h & 0xffff == 0 => format!("{:x}:", h >> 16),
        _ => format!("{:x}:{:x}", h >> 16, h & 0xffff),
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `/proc/sys/...` for a sysctl key: dots become slashes, as `sysctl`
/// does; a key that already contains a slash is taken as a path (so that
/// a device name with a dot, `net/ipv4/conf/eth0.5/rp_filter`, can be
/// written).
pub fn sysctl_path(key: &str) -> String {
    if key.contains('/') {
        format!("/proc/sys/{}", key.trim_start_matches('/'))
    } else {
        format!("/proc/sys/{}", key.replace('.', "/"))
    }
}

fn run_action(a: &Action) -> Result<(), String> {
    match a {
        Action::Exec { argv } => exec(argv),
        Action::Sysctl { ns, key, value } => {
            let path = sysctl_path(key);
            // /proc/sys/net resolves against the namespace of the thread
            // that opens the file: open it from a thread inside `ns`.
            netns::run_in(ns.as_deref(), || std::fs::write(&path, value).map_err(|e| format!("{path}: {e}")))
        }
        Action::Write { path, value } => std::fs::write(path, value).map_err(|e| e.to_string()),
        Action::RedStep { ns, dev, parent, handle, limit_bytes, threshold_bytes } => netns::run_in(Some(ns), || {
            let r = RedStep {
                ifindex: netlink::ifindex(dev)?,
                parent: *parent,
                handle: *handle,
                limit_bytes: *limit_bytes,
                threshold_bytes: *threshold_bytes,
            };
            RouteSocket::open()?.add_red_step(&r)
        }),
    }
}

/// Runs a program, requiring exit status 0; the failure carries its
/// standard error (or output, if that is empty).
pub fn exec(argv: &[String]) -> Result<(), String> {
    let Some((prog, args)) = argv.split_first() else {
        return Err("empty argv".into());
    };
    let out =
        Command::new(prog).args(args).stdin(Stdio::null()).output().map_err(|e| format!("cannot run {prog}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = if out.stderr.iter().any(|b| !b.is_ascii_whitespace()) { &out.stderr } else { &out.stdout };
    let text = String::from_utf8_lossy(text);
    Err(format!("{}: {}", out.status, text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(what: &str, action: Action) -> Step {
        Step { what: what.into(), action }
    }

    #[test]
    fn first_failure_stops_and_names_the_step() {
        let dir = std::env::temp_dir().join(format!("tcplab-agent-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x");
        let steps = vec![
            step("ok", Action::Exec { argv: vec!["true".into()] }),
            step("write", Action::Write { path: f.to_string_lossy().into(), value: "1".into() }),
            step("fails", Action::Exec { argv: vec!["sh".into(), "-c".into(), "echo oops >&2; exit 3".into()] }),
            step("never", Action::Write { path: f.to_string_lossy().into(), value: "2".into() }),
        ];
        let e = run(&steps).unwrap_err();
        assert_eq!(e, "set-up step 2 (fails): sh -c 'echo oops >&2; exit 3': exit status: 3: oops");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "1");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn missing_program_and_empty_argv() {
        let e = run(&[step("p", Action::Exec { argv: vec!["/no/such/prog".into()] })]).unwrap_err();
        assert!(e.starts_with("set-up step 0 (p): /no/such/prog: cannot run /no/such/prog: "), "{e}");
        let e = run(&[step("p", Action::Exec { argv: vec![] })]).unwrap_err();
        assert!(e.ends_with(": empty argv"), "{e}");
    }

    #[test]
    fn sysctl_paths_and_handles() {
        assert_eq!(sysctl_path("net.ipv4.tcp_ecn"), "/proc/sys/net/ipv4/tcp_ecn");
        assert_eq!(sysctl_path("net/ipv4/conf/eth0.5/rp_filter"), "/proc/sys/net/ipv4/conf/eth0.5/rp_filter");
        assert_eq!(handle_str(0x0001_0000), "1:");
        assert_eq!(handle_str(0x0001_0010), "1:10");
        assert_eq!(handle_str(0xffff_ffff), "root");
    }

    #[test]
    fn sysctl_in_a_missing_namespace_fails_cleanly() {
        let a =
            Action::Sysctl { ns: Some("tcplab-no-such-ns".into()), key: "net.ipv4.tcp_ecn".into(), value: "1".into() };
        let e = run(&[step("ecn", a)]).unwrap_err();
        assert!(e.starts_with("set-up step 0 (ecn): sysctl in tcplab-no-such-ns: net.ipv4.tcp_ecn = 1: "), "{e}");
    }
}
