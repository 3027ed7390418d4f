//! Every line form of the packetdrill language, on a script written for
//! this test (not taken from the corpus).

use tcplab_packetdrill::ast::*;
use tcplab_packetdrill::parser::parse;

const ALL_FORMS: &str = r#"// header options
--tolerance_usecs=10000
--strict_segments
--tcp_ts_tick_usecs=1000
--mss=1000
`sysctl -q net.ipv4.tcp_ecn=1
echo 3 > /sys/module/tcp_cubic/parameters/hystart_detect`

/* block
   comment */
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR)
+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
+0 > SEW 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 8>
+.01 < SE. 0:0(0) ack 1 win 32767 <mss 1000,nop,wscale 6,nop,nop,sackOK>
+0 > . 1:1(0) ack 1
+0 getsockopt(3, SOL_SOCKET, SO_ERROR, [0], [4]) = 0
+.09...0.14 write(3, ..., 15000) = 15000
0.2 < [ect1] . 1:1(0) ack 1 win 320
+0 > [ect0] P. 1:1001(1000) ack 1
+.004~+.008 > P. 12001:12401(400) ack 1
0.3~0.4 > . 1:1(0) ack 1 win 257 <nop,nop,sack 1:2 3:4>
* > F. 1:1(0) ack 1 <...>
+0 < [noecn] E. 1:1(0) ack 1001 win 320
+0 < - 1:1(0) win 0
+0 < R 1:1(0) win 0 <eol,nop,nop,nop>
+0 send(4, ..., 400, MSG_EOR) = 400
+0 read(4, ..., 1000) = 1000
+0 close(4) = 0
+0 `tc qdisc replace dev tun0 root pfifo limit 0`
+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%
+.1 %{
assert 990 <= tcpi_rtt <= 1010, 'rtt=%d' % tcpi_rtt  # comment
}%
+3.250 write(4, ..., 24) = -1 ETIMEDOUT (Connection timed out)
`/tmp/sysctl_restore_${PPID}.sh`
"#;

fn packet(e: &Event) -> &PacketSpec {
    match &e.action {
        Action::Packet(p) => p,
        a => panic!("line {}: expected a packet, got {a:?}", e.line),
    }
}

fn syscall(e: &Event) -> &SyscallSpec {
    match &e.action {
        Action::Syscall(s) => s,
        a => panic!("line {}: expected a system call, got {a:?}", e.line),
    }
}

#[test]
fn test_every_line_form_parses() {
    let s = parse(ALL_FORMS).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.options.len(), 4);
    assert_eq!(s.options[0].name, "tolerance_usecs");
    assert_eq!(s.options[0].value.as_deref(), Some("10000"));
    assert_eq!(s.options[1].value, None);
    assert!(s.init_command.as_ref().unwrap().text.contains("hystart_detect"));
    assert_eq!(s.cleanup_command.as_ref().unwrap().text, "/tmp/sysctl_restore_${PPID}.sh");
    assert_eq!(s.events.len(), 25);
    // Every event carries the line of its timestamp.
    assert_eq!(s.events[0].line, 11);
    assert_eq!(s.events[24].line, 37);
}

#[test]
fn test_times() {
    let s = parse(ALL_FORMS).unwrap();
    assert_eq!(s.events[0].time, EventTime::Absolute(0));
    assert_eq!(s.events[6].time, EventTime::Relative(10_000));
    assert_eq!(s.events[10].time, EventTime::Absolute(200_000));
    assert_eq!(s.events[12].time, EventTime::RelativeRange(4_000, 8_000));
    assert_eq!(s.events[13].time, EventTime::AbsoluteRange(300_000, 400_000));
    assert_eq!(s.events[14].time, EventTime::Any);
    assert_eq!(s.events[24].time, EventTime::Relative(3_250_000));
    // Blocking call: start +.09, end 0.14.
    assert_eq!(s.events[9].time, EventTime::Relative(90_000));
    assert_eq!(syscall(&s.events[9]).end_usecs, Some(140_000));
}

#[test]
fn test_packets() {
    let s = parse(ALL_FORMS).unwrap();
    let syn = packet(&s.events[5]);
    assert_eq!(syn.direction, Direction::Outbound);
    assert_eq!(syn.flags, PacketFlags(vec![PacketFlag::Syn, PacketFlag::Ece, PacketFlag::Cwr]));
    assert_eq!(syn.flags.to_string(), "SEW");
    assert_eq!(
        syn.options.as_deref().unwrap(),
        &[TcpOpt::Mss(1460), TcpOpt::SackOk, TcpOpt::Timestamp { val: 100, ecr: 0 }, TcpOpt::Nop, TcpOpt::Wscale(8)]
    );
    let synack = packet(&s.events[6]);
    assert_eq!(
        (synack.direction, synack.flags.to_string().as_str(), synack.ack, synack.win),
        (Direction::Inbound, "SE.", Some(1), Some(32767))
    );
    let ect1 = packet(&s.events[10]);
    assert_eq!(ect1.ip, Some(IpCheck::Ecn(1)));
    let data = packet(&s.events[11]);
    assert_eq!(
        (data.ip, data.flags.to_string().as_str(), data.seq, data.end_seq, data.payload),
        (Some(IpCheck::Ecn(2)), "P.", 1, 1001, 1000)
    );
    assert_eq!(data.win, None);
    assert_eq!(data.options, Some(vec![]));
    let sack = packet(&s.events[13]);
    assert_eq!(sack.options.as_deref().unwrap()[2], TcpOpt::Sack(vec![(1, 2), (3, 4)]));
    assert_eq!(packet(&s.events[14]).options, None);
    assert_eq!(packet(&s.events[15]).ip, Some(IpCheck::Ecn(0)));
    assert!(packet(&s.events[16]).flags.is_empty());
    assert_eq!(packet(&s.events[16]).flags.to_string(), "-");
    assert_eq!(packet(&s.events[17]).options.as_deref().unwrap()[0], TcpOpt::Eol);
}

#[test]
fn test_syscalls_commands_code() {
    let s = parse(ALL_FORMS).unwrap();
    let fcntl = syscall(&s.events[2]);
    assert_eq!(fcntl.result, Expr::Int(2));
    assert_eq!(fcntl.note.as_deref(), Some("flags O_RDWR"));
    let setfl = syscall(&s.events[3]);
    assert_eq!(
        setfl.args[2],
        Expr::Or(Box::new(Expr::Word("O_RDWR".into())), Box::new(Expr::Word("O_NONBLOCK".into())))
    );
    let connect = syscall(&s.events[4]);
    assert_eq!(connect.result, Expr::Int(-1));
    assert_eq!(connect.errno.as_deref(), Some("EINPROGRESS"));
    assert_eq!(connect.note.as_deref(), Some("Operation now in progress"));
    let getsockopt = syscall(&s.events[8]);
    assert_eq!(getsockopt.args[3], Expr::List(vec![Expr::Int(0)]));
    assert_eq!(syscall(&s.events[18]).args[3], Expr::Word("MSG_EOR".into()));
    match &s.events[21].action {
        Action::Command(c) => assert!(c.text.starts_with("tc qdisc")),
        a => panic!("{a:?}"),
    }
    match &s.events[23].action {
        Action::Code(c) => assert!(c.text.contains("'rtt=%d' % tcpi_rtt")),
        a => panic!("{a:?}"),
    }
}

#[test]
fn test_semantic_errors_name_line_and_column() {
    let cases: &[(&str, u32, &str)] = &[
        ("0 < . 1:1(0) ack 1\n", 1, "window must be specified for inbound packets"),
        ("0 > . 1:1(0) ack 1 <nop>\n", 1, "not padded correctly"),
        ("0 > X 1:1(0) ack 1\n", 1, "Invalid TCP flag: 'X'"),
        ("0 < . 1:1(0) ack 1 win 5 <...>\n", 1, "<...> for TCP options can only be used with outbound packets"),
        (
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n* write(3, ..., 1) = 1\n",
            2,
            "<star> can only be used with outbound",
        ),
        ("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{ x = 1\n", 2, "unterminated %{ code block"),
        ("--tolerance_usecs=1\n0 socket() = 3\n--strict_segments\n", 3, "options must come before the first event"),
    ];
    for (src, line, needle) in cases {
        let e = parse(src).expect_err(src);
        assert_eq!(e.line, *line, "{src}: {e}");
        assert!(e.col >= 1);
        assert!(e.message.contains(needle), "{src}: {}", e.message);
    }
}
