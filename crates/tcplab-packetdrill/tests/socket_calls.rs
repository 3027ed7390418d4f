//! The socket calls added for Linux's nagle, notsent_lowat, shutdown,
//! ioctl and validate scripts, on small scripts written for these tests
//! (not copies of the GPL corpus), against the real TCP core.

use std::path::Path;
use tcplab_packetdrill::{run_source, Outcome, RunOptions};

/// A passive open with MSS 1000, wscale 7, window 257 << 7.
const OPEN: &str = "\
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <...>
+.01 < . 1:1(0) ack 1 win 257
+0 accept(3, ..., ...) = 4
";

fn run(body: &str) -> Outcome {
    let src = format!("{OPEN}{body}");
    run_source(&src, Path::new("t.pkt"), &RunOptions::default()).outcome
}

fn assert_pass(body: &str) {
    let o = run(body);
    assert!(matches!(o, Outcome::Pass), "{o:?}");
}

fn assert_fail(body: &str, line: u32, needle: &str) {
    match run(body) {
        Outcome::Fail { line: l, message } => {
            assert_eq!(l, line, "{message}");
            assert!(message.contains(needle), "{message}");
        }
        o => panic!("expected a failure at line {line}, got {o:?}"),
    }
}

#[test]
fn test_sendmsg_counts_every_iovec_and_msg_more_corks() {
    assert_pass(
        "+0 setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0
+0 sendmsg(4, {msg_name(...)=..., msg_iov(2)=[{..., 30}, {..., 20}], msg_flags=0}, MSG_MORE) = 50
+.01 sendmsg(4, {msg_name(...)=..., msg_iov(1)=[{..., 10}], msg_flags=0}, 0) = 10
+0 > P. 1:61(60) ack 1
",
    );
}

#[test]
fn test_uncorking_sends_what_the_cork_held() {
    assert_pass(
        "+0 setsockopt(4, SOL_TCP, TCP_CORK, [1], 4) = 0
+0 write(4, ..., 10) = 10
+.02 write(4, ..., 10) = 10
+.01 setsockopt(4, SOL_TCP, TCP_CORK, [0], 4) = 0
+0 > P. 1:21(20) ack 1
",
    );
}

#[test]
fn test_ioctl_siocinq_counts_unread_bytes() {
    assert_pass(
        "+0 < P. 1:501(500) ack 1 win 257
+0 > . 1:1(0) ack 501
+0 ioctl(4, SIOCINQ, [500]) = 0
+0 read(4, ..., 200) = 200
+0 ioctl(4, SIOCINQ, [300]) = 0
",
    );
    assert_fail("+0 ioctl(4, SIOCINQ, [1]) = 0\n", 9, "Bad ioctl optval: expected: 1 actual: 0");
}

#[test]
fn test_notsent_lowat_option_is_read_back_and_poll_reports_pollout() {
    assert_pass(
        "+0 getsockopt(4, SOL_TCP, TCP_NOTSENT_LOWAT, [0], [4]) = 0
+0 setsockopt(4, SOL_TCP, TCP_NOTSENT_LOWAT, [3000], 4) = 0
+0 getsockopt(4, SOL_TCP, TCP_NOTSENT_LOWAT, [3000], [4]) = 0
+0 poll([{fd=4, events=POLLOUT, revents=POLLOUT}], 1, 0) = 1
",
    );
}

#[test]
fn test_shutdown_read_then_read_returns_zero_and_write_after_shut_wr_is_epipe() {
    assert_pass(
        "+0 shutdown(4, SHUT_RD) = 0
+0 read(4, ..., 100) = 0
+0 shutdown(4, SHUT_WR) = 0
+0 > F. 1:1(0) ack 1
+0 write(4, ..., 100) = -1 EPIPE (Broken pipe)
",
    );
}

#[test]
fn test_close_with_unread_data_resets() {
    assert_pass(
        "+0 < P. 1:101(100) ack 1 win 257
+0 > . 1:1(0) ack 101
+.1 close(4) = 0
+0 > R. 1:1(0) ack 101
",
    );
}
