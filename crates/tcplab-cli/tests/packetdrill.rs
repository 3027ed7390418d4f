//! `tcplab packetdrill`'s exit codes and flags (clap's since the
//! subcommand stopped parsing its own arguments).

mod common;
use common::*;

const OK: &str = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 0x2\n+0 close(3) = 0\n";
const BAD: &str = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 7\n";

#[test]
fn test_exit_codes() {
    let d = Scratch::new("packetdrill-exit");
    let (ok, bad) = (d.path("ok.pkt"), d.path("bad.pkt"));
    std::fs::write(&ok, OK).unwrap();
    std::fs::write(&bad, BAD).unwrap();
    assert_ok(&tcplab(&["packetdrill", &ok]));
    let o = tcplab(&["packetdrill", &ok, &bad, "--json"]);
    assert_eq!(o.status.code(), Some(1), "a failed script; stderr: {}", stderr(&o));
    assert!(stdout(&o).contains(r#""failed":1"#), "{}", stdout(&o));
    assert_eq!(tcplab(&["packetdrill"]).status.code(), Some(2));
    assert_error(&tcplab(&["packetdrill", "/nonexistent/x.pkt"]), &["/nonexistent/x.pkt does not exist"]);
    assert_eq!(tcplab(&["packetdrill", "--bogus", &ok]).status.code(), Some(2));
    assert_ok(&tcplab(&["packetdrill", "--hz", "300", &ok]));
    let empty = d.path("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_error(&tcplab(&["packetdrill", &empty]), &["no .pkt scripts under"]);
}

#[test]
fn test_help_lists_every_option() {
    let o = tcplab(&["packetdrill", "--help"]);
    assert_ok(&o);
    for flag in ["--json", "--verbose", "--hz <N>", "--ignore-field <NAME>"] {
        assert!(stdout(&o).contains(flag), "{flag} not in {}", stdout(&o));
    }
}

#[test]
fn test_ignore_field_notes_a_diagnostic_run() {
    let d = Scratch::new("packetdrill-ignore");
    let ok = d.path("ok.pkt");
    std::fs::write(&ok, OK).unwrap();
    let o = tcplab(&["packetdrill", &ok, "--verbose", "--ignore-field", "tcp_psh", "--ignore-field", "tcp_window"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("outbound field(s) tcp_psh, tcp_window not compared"), "{}", stdout(&o));
}
