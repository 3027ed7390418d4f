//! Driver tests against a scripted stand-in endpoint, so that timing,
//! joining and error reporting are tested independently of the TCP core.

use crate::endpoint::{Endpoint, EndpointFactory};
use crate::{run_source_with, Outcome, RunOptions, ScriptResult};
use std::path::Path;
use tcplab_core::wire::{SegmentRepr, SeqNum, TcpFlags, TcpOptions};
use tcplab_core::{Instant, TcpConfig, TcpInfo, TcpState};

/// What the stand-in does.
#[derive(Clone, Debug)]
struct FakeSpec {
    /// Payload per data segment.
    mss: u32,
    /// Delay of the i-th data segment after a write, µs (last value repeats).
    write_delays_us: Vec<u64>,
    /// Extra segments at absolute times: (µs, seq relative to ISN, payload, flags).
    extra: Vec<(u64, u32, u32, TcpFlags)>,
    cwnd: u32,
}

impl Default for FakeSpec {
    fn default() -> Self {
        FakeSpec { mss: 1000, write_delays_us: vec![0], extra: Vec::new(), cwnd: 10 }
    }
}

struct Fake {
    spec: FakeSpec,
    state: TcpState,
    iss: SeqNum,
    rcv_nxt: SeqNum,
    snd_nxt: u32,
    sched: Vec<(u64, SegmentRepr)>,
    now: u64,
    ports: (u16, u16),
}

impl Fake {
    fn seg(&self, seq_rel: u32, len: u32, flags: TcpFlags) -> SegmentRepr {
        SegmentRepr {
            src_port: self.ports.0,
            dst_port: self.ports.1,
            seq: self.iss + seq_rel,
            ack: self.rcv_nxt,
            flags,
            window: 502,
            options: TcpOptions::default(),
            payload_len: len,
            ..Default::default()
        }
    }
}

impl Endpoint for Fake {
    fn handle_segment(&mut self, now: Instant, seg: &SegmentRepr) {
        self.now = now.as_nanos();
        if seg.flags.syn() && self.state == TcpState::Listen {
            self.rcv_nxt = seg.seq + 1;
            let mut s = self.seg(0, 0, TcpFlags::SYN | TcpFlags::ACK);
            s.options = TcpOptions { mss: Some(1460), sack_permitted: true, wscale: Some(8), ..Default::default() };
            self.sched.push((self.now, s));
            self.state = TcpState::SynReceived;
            return;
        }
        if seg.flags.ack() && self.state == TcpState::SynReceived {
            self.state = TcpState::Established;
        }
        if seg.payload_len > 0 {
            self.rcv_nxt = seg.seq + seg.payload_len;
            let a = self.seg(self.snd_nxt, 0, TcpFlags::ACK);
            self.sched.push((self.now, a));
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.now = now.as_nanos();
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        self.now = now.as_nanos();
        let due = self.sched.iter().enumerate().filter(|(_, (t, _))| *t <= self.now).min_by_key(|(_, (t, _))| *t)?.0;
        let mut seg = self.sched.remove(due).1;
        if seg.flags.ack() {
            seg.ack = self.rcv_nxt;
        }
        Some(seg)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.sched.iter().map(|(t, _)| *t).filter(|t| *t > self.now).min().map(Instant::from_nanos)
    }
    fn write(&mut self, bytes: u64) -> u64 {
        let mut left = bytes as u32;
        let mut i = 0;
        while left > 0 {
            let len = left.min(self.spec.mss);
            let d = self.spec.write_delays_us.get(i).or(self.spec.write_delays_us.last()).copied().unwrap_or(0);
            let mut flags = TcpFlags::ACK;
            if len == left {
                flags.insert(TcpFlags::PSH);
            }
            let s = self.seg(self.snd_nxt, len, flags);
            self.sched.push((self.now + d * 1000, s));
            self.snd_nxt += len;
            left -= len;
            i += 1;
        }
        bytes
    }
    fn read(&mut self, _max: u64) -> u64 {
        0
    }
    fn readable(&self) -> u64 {
        0
    }
    fn close(&mut self) {}
    fn set_nodelay(&mut self, _on: bool) {}
    fn info(&self) -> TcpInfo {
        TcpInfo { snd_cwnd: self.spec.cwnd, ..TcpInfo::default() }
    }
    fn state(&self) -> TcpState {
        self.state
    }
}

struct FakeFactory(FakeSpec);

impl EndpointFactory for FakeFactory {
    fn server(&mut self, _cfg: &TcpConfig, lport: u16, rport: u16, iss: SeqNum) -> Box<dyn Endpoint> {
        let mut f = Fake {
            spec: self.0.clone(),
            state: TcpState::Listen,
            iss,
            rcv_nxt: SeqNum(0),
            snd_nxt: 1,
            sched: Vec::new(),
            now: 0,
            ports: (lport, rport),
        };
        for &(t, seq, len, flags) in &self.0.extra {
            let s = f.seg(seq, len, flags);
            f.sched.push((t * 1000, s));
        }
        Box::new(f)
    }
    fn client(&mut self, _cfg: &TcpConfig, lport: u16, rport: u16, iss: SeqNum, now: Instant) -> Box<dyn Endpoint> {
        let mut f = Fake {
            spec: self.0.clone(),
            state: TcpState::SynSent,
            iss,
            rcv_nxt: SeqNum(0),
            snd_nxt: 1,
            sched: Vec::new(),
            now: now.as_nanos(),
            ports: (lport, rport),
        };
        let mut syn = f.seg(0, 0, TcpFlags::SYN);
        syn.ack = SeqNum(0);
        syn.options = TcpOptions { mss: Some(1460), ..Default::default() };
        f.sched.push((f.now, syn));
        Box::new(f)
    }
}

fn run(spec: FakeSpec, src: &str) -> ScriptResult {
    run_source_with(
        src,
        Path::new("inline.pkt"),
        &RunOptions { verbose: true, ..Default::default() },
        &mut FakeFactory(spec),
    )
}

fn assert_pass(r: &ScriptResult) {
    assert_eq!(r.outcome, Outcome::Pass, "output: {:#?}", r.output);
}

fn assert_fail(r: &ScriptResult, line: u32, needle: &str) {
    match &r.outcome {
        Outcome::Fail { line: l, message } => {
            assert_eq!(*l, line, "message: {message}");
            assert!(message.contains(needle), "expected `{needle}` in: {message}");
        }
        other => panic!("expected a failure at line {line}, got {other:?}; output {:#?}", r.output),
    }
}

/// A passive open at t=0.1 / 0.2 followed by a write at 0.2 (my own
/// minimal handshake text; `{body}` is appended).
fn handshake(body: &str) -> String {
    format!(
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
         +0 bind(3, ..., ...) = 0\n\
         +0 listen(3, 1) = 0\n\
         +.1 < S 0:0(0) win 1000 <mss 1000,nop,wscale 2>\n\
         +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n\
         +.1 < . 1:1(0) ack 1 win 200\n\
         +0 accept(3, ..., ...) = 4\n{body}"
    )
}

// ---- state: handshake and relative timing ----

#[test]
fn test_listen_handshake_relative_times_pass() {
    let r = run(FakeSpec::default(), &handshake("+0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n"));
    assert_pass(&r);
    assert_eq!(r.duration_virtual.as_micros(), 200_000);
}

#[test]
fn test_inbound_anchors_to_previous_inbound_script_time() {
    // The data segment leaves at 0.2 + 50 ms; the next inbound at +.01 is
    // relative to "now" (after the outbound event), so at 0.26.
    let spec = FakeSpec { write_delays_us: vec![50_000], ..FakeSpec::default() };
    let r = run(
        spec,
        &handshake("+0 write(4, ..., 1000) = 1000\n+.05 > P. 1:1001(1000) ack 1\n+.01 < . 1:1(0) ack 1001 win 200\n"),
    );
    assert_pass(&r);
    assert_eq!(r.duration_virtual.as_micros(), 260_000);
}

// ---- outbound: joining ----

#[test]
fn test_outbound_joins_back_to_back_segments() {
    let r = run(FakeSpec::default(), &handshake("+0 write(4, ..., 3500) = 3500\n+0 > P. 1:3501(3500) ack 1\n"));
    assert_pass(&r);
}

#[test]
fn test_outbound_strict_segments_does_not_join() {
    let src =
        format!("--strict_segments\n{}", handshake("+0 write(4, ..., 3000) = 3000\n+0 > P. 1:3001(3000) ack 1\n"));
    let r = run(FakeSpec::default(), &src);
    assert_fail(&r, 10, "live packet payload: expected 3000 bytes vs actual 1000 bytes");
}

#[test]
fn test_outbound_join_overshoot_reports_payload() {
    let r = run(FakeSpec::default(), &handshake("+0 write(4, ..., 2000) = 2000\n+0 > . 1:1501(1500) ack 1\n"));
    assert_fail(&r, 9, "live packet payload: expected 1500 bytes vs actual 2000 bytes");
}

// ---- outbound: tolerance edges ----

#[test]
fn test_tolerance_edge_inside_and_outside() {
    // Expected at +0 after the write (0.2 s); the gap to the previous
    // event is 0, so the tolerance is the 4 ms floor.
    let body = "+0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n";
    let inside = FakeSpec { write_delays_us: vec![4_000], ..FakeSpec::default() };
    assert_pass(&run(inside, &handshake(body)));
    let outside = FakeSpec { write_delays_us: vec![4_001], ..FakeSpec::default() };
    let r = run(outside, &handshake(body));
    assert_fail(
        &r,
        9,
        "timing error: expected outbound packet at 0.200000 sec but happened at 0.204001 sec; tolerance 0.004000 sec",
    );
}

#[test]
fn test_tolerance_grows_with_gap_since_previous_event() {
    // +0.1 after the write: tolerance 12.5 % of 100 ms = 12.5 ms.
    let body = "+0 write(4, ..., 1000) = 1000\n+.1 > P. 1:1001(1000) ack 1\n";
    let inside = FakeSpec { write_delays_us: vec![112_500], ..FakeSpec::default() };
    assert_pass(&run(inside, &handshake(body)));
    let outside = FakeSpec { write_delays_us: vec![112_501], ..FakeSpec::default() };
    assert_fail(&run(outside, &handshake(body)), 9, "tolerance 0.012500 sec");
    let early = FakeSpec { write_delays_us: vec![87_499], ..FakeSpec::default() };
    assert_fail(&run(early, &handshake(body)), 9, "but happened at 0.287499 sec");
}

#[test]
fn test_tolerance_usecs_option() {
    let body = "+0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n";
    let spec = FakeSpec { write_delays_us: vec![9_000], ..FakeSpec::default() };
    assert_pass(&run(spec.clone(), &format!("--tolerance_usecs=10000\n{}", handshake(body))));
    assert_fail(&run(spec, &handshake(body)), 9, "tolerance 0.004000 sec");
}

#[test]
fn test_relative_range() {
    let body = "+0 write(4, ..., 1000) = 1000\n+.3~+.31 > P. 1:1001(1000) ack 1\n";
    let spec = FakeSpec { write_delays_us: vec![305_000], ..FakeSpec::default() };
    assert_pass(&run(spec, &handshake(body)));
    let late = FakeSpec { write_delays_us: vec![400_000], ..FakeSpec::default() };
    assert_fail(
        &run(late, &handshake(body)),
        9,
        "timing error: expected outbound packet in relative time range +0.300000~+0.310000 sec but happened at +0.400000 sec",
    );
}

// ---- failures name the script line ----

#[test]
fn test_wrong_field_reports_line_and_packetdrill_wording() {
    let r = run(FakeSpec::default(), &handshake("+0 write(4, ..., 1000) = 1000\n+0 > P. 2:1002(1000) ack 1\n"));
    assert_fail(&r, 9, "error handling packet: live packet field tcp_seq: expected: 2 (0x2) vs actual: 1 (0x1)");
}

#[test]
fn test_wrong_option_value_reports_option() {
    let src = handshake("").replace("wscale 8>", "wscale 7>");
    let r = run(FakeSpec::default(), &src);
    assert_fail(&r, 5, "bad value in outbound TCP option (kind=3): expected: wscale 7 actual: wscale 8");
}

#[test]
fn test_options_wildcard_and_window_check() {
    let src = handshake("").replace("ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>", "ack 1 win 502 <...>");
    assert_pass(&run(FakeSpec::default(), &src));
    let src = handshake("").replace("ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>", "ack 1 win 500 <...>");
    assert_fail(
        &run(FakeSpec::default(), &src),
        5,
        "live packet field tcp_window: expected: 500 (0x1f4) vs actual: 502 (0x1f6)",
    );
}

#[test]
fn test_ignore_field_diagnostic() {
    let src = handshake("").replace("ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>", "ack 1 win 500 <...>");
    let opts = RunOptions { ignore_fields: vec!["tcp_window".into()], ..Default::default() };
    let r = run_source_with(&src, Path::new("inline.pkt"), &opts, &mut FakeFactory(FakeSpec::default()));
    assert_pass(&r);
    assert!(r.notes.iter().any(|n| n.contains("not a packetdrill-conformant result")));
}

#[test]
fn test_missing_packet_times_out() {
    let r = run(FakeSpec::default(), &handshake("+0 > P. 1:1001(1000) ack 1\n"));
    assert_fail(&r, 8, "Timed out waiting for packet");
}

#[test]
fn test_unexpected_early_packet_fails_at_next_expectation() {
    // A spurious retransmission at 0.25 s is seen when the script next
    // expects a packet (at 0.4 s).
    let spec = FakeSpec { extra: vec![(250_000, 1, 1000, TcpFlags::ACK)], ..FakeSpec::default() };
    let r = run(spec, &handshake("+.2 > . 1:1001(1000) ack 1\n"));
    assert_fail(&r, 8, "expected outbound packet at 0.400000 sec but happened at 0.250000 sec");
}

#[test]
fn test_inbound_late_event_is_timing_error() {
    let spec = FakeSpec { write_delays_us: vec![500_000], ..FakeSpec::default() };
    // The outbound packet comes at 0.7 (within the 2 s wait but outside
    // tolerance: reported on the outbound line).
    let r = run(spec, &handshake("+0 write(4, ..., 1000) = 1000\n0.3 > P. 1:1001(1000) ack 1\n"));
    assert_fail(&r, 9, "expected outbound packet at 0.300000 sec but happened at 0.700000 sec");
}

// ---- system calls ----

#[test]
fn test_syscall_result_mismatch() {
    let r = run(FakeSpec::default(), &handshake("+0 accept(3, ..., ...) = 5\n"));
    assert_fail(&r, 8, "runtime error in accept call: accept() would block");
    let src = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 0x802\n";
    assert_fail(&run(FakeSpec::default(), src), 2, "runtime error in fcntl call: Expected result 2050 but got 2");
}

#[test]
fn test_nonblocking_connect_einprogress() {
    let src = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
               +0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n\
               +0 fcntl(3, F_GETFL) = 0x802 (flags O_RDWR|O_NONBLOCK)\n\
               +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
               +0 > S 0:0(0) <mss 1460>\n";
    assert_pass(&run(FakeSpec::default(), src));
    let wrong = src.replace("EINPROGRESS (Operation now in progress)", "EAGAIN (Resource temporarily unavailable)");
    assert_fail(
        &run(FakeSpec::default(), &wrong),
        4,
        "Expected errno 11 (Resource temporarily unavailable) but got 115",
    );
}

#[test]
fn test_blocking_call_end_time_is_relative_to_the_same_offset() {
    // `+0...0` ends at the call's own start; the write completes at once.
    let ok = handshake("+0...0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n");
    assert_pass(&run(FakeSpec::default(), &ok));
    // `+0...0.1` expects the return 0.1 s after the start (0.3 s).
    let late = handshake("+0...0.1 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n");
    assert_fail(
        &run(FakeSpec::default(), &late),
        8,
        "timing error: expected system call return at 0.300000 sec but happened at 0.200000 sec; tolerance 0.004000 sec",
    );
}

// ---- Python blocks ----

#[test]
fn test_code_block_assert_reports_line_and_message() {
    let body = "+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%\n+.1 %{\nx = 3\nassert 1 <= tcpi_snd_cwnd < x, 'cwnd=%d' % tcpi_snd_cwnd\n}%\n";
    let r = run(FakeSpec::default(), &handshake(body));
    assert_fail(&r, 9, "error in Python code\nAssertionError: cwnd=10");
}

#[test]
fn test_code_block_print_is_captured() {
    let r = run(FakeSpec::default(), &handshake("+0 %{ print('cwnd', tcpi_snd_cwnd) }%\n"));
    assert_pass(&r);
    assert!(r.output.contains(&"cwnd 10".to_string()), "{:?}", r.output);
}

// ---- skips name the construct ----

#[test]
fn test_skip_names_unsupported_construct() {
    let reason = |r: ScriptResult| match r.outcome {
        Outcome::Skipped { reason } => reason,
        o => panic!("expected a skip, got {o:?}"),
    };
    let r = run(FakeSpec::default(), &format!("`frobnicate --all`\n{}", handshake("")));
    assert_eq!(reason(r), "unsupported command `frobnicate --all`");
    let r = run(FakeSpec::default(), &handshake("+0 setsockopt(4, SOL_TCP, TCP_KEEPIDLE, [30], 4) = 0\n"));
    assert!(reason(r).contains("TCP_KEEPIDLE"));
    let r = run(FakeSpec::default(), &handshake("+0 %{ assert tcpi_ato > 0 }%\n"));
    assert_eq!(reason(r), "tcp_info field tcpi_ato is not in the model's TcpInfo");
    let r = run(FakeSpec::default(), &format!("--frobnicate=1\n{}", handshake("")));
    assert_eq!(reason(r), "unsupported option --frobnicate");
    let r = run(FakeSpec::default(), &handshake("+0 sendfile(4, 5, ..., 10) = 10\n"));
    assert!(reason(r).contains("unsupported system call sendfile()"));
}

#[test]
fn test_parse_error_is_failure_with_line_and_column() {
    let r = run(FakeSpec::default(), "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0 ack 1\n");
    assert_fail(&r, 2, "12: parse error at 'ack': expected '('");
}
