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

/// `struct msghdr` as `sendmsg`/`recvmsg` take it (`parser.y`'s `msghdr`,
/// `iovec` and `cmsg_expr`).
#[test]
fn test_msghdr() {
    let src = "0 sendmsg(4, {msg_name(...)=...,\n  msg_iov(2)=[{..., 500}, {..., 400}],\n  \
               msg_flags=0}, MSG_NOSIGNAL|MSG_FASTOPEN) = 900\n\
               +0 recvmsg(4, {msg_name(...)=..., msg_iov(1)=[{...,0}], msg_flags=MSG_ERRQUEUE,\n  \
               msg_control=[{cmsg_level=SOL_TCP, cmsg_type=TCP_CM_INQ, cmsg_data=0}]}, 0) = 0\n";
    let s = parse(src).expect("parses");
    let send = syscall(&s.events[0]);
    assert_eq!(send.name, "sendmsg");
    let Expr::Braced(fields) = &send.args[1] else { panic!("msghdr is braced: {:?}", send.args[1]) };
    assert_eq!(
        fields[0],
        Expr::AssignLen { name: "msg_name".into(), len: Box::new(Expr::Ellipsis), value: Box::new(Expr::Ellipsis) }
    );
    let Expr::AssignLen { name, len, value } = &fields[1] else { panic!("{:?}", fields[1]) };
    assert_eq!((name.as_str(), len.as_int()), ("msg_iov", Some(2)));
    assert_eq!(value.to_string(), "[{..., 500}, {..., 400}]");
    assert_eq!(fields[2], Expr::Assign("msg_flags".into(), Box::new(Expr::Int(0))));
    assert_eq!(send.result, Expr::Int(900));
    let recv = syscall(&s.events[1]);
    assert!(recv.args[1].to_string().contains("msg_control=[{cmsg_level=SOL_TCP, cmsg_type=TCP_CM_INQ"));
    let e = parse("0 sendmsg(4, {msg_iov(1, 2)=[]}, 0) = 0\n").expect_err("two lengths");
    assert!(e.message.contains("expected one length"), "{}", e.message);
}

/// ICMP lines (`parser.y`'s `icmp_packet_spec`).
#[test]
fn test_icmp() {
    let src = "0 < icmp unreachable frag_needed mtu 840 [0:1000(1000)]\n\
               +0 < icmp unreachable CODE\n\
               +0 < [ect0] icmp packet_too_big mtu 1400\n\
               +0 < icmp unreachable [udp (12)]\n\
               +0~+1 > icmp echo_reply id 7\n";
    let s = parse(src).expect("parses");
    let icmp = |i: usize| match &s.events[i].action {
        Action::Icmp(m) => m.clone(),
        a => panic!("line {}: expected ICMP, got {a:?}", s.events[i].line),
    };
    let m = icmp(0);
    assert_eq!((m.icmp_type.as_str(), m.code.as_deref(), m.mtu), ("unreachable", Some("frag_needed"), Some(840)));
    assert_eq!(m.echoed, IcmpEchoed::Tcp { seq: 0, payload: 1000 });
    assert_eq!((icmp(1).code.as_deref(), icmp(1).echoed), (Some("CODE"), IcmpEchoed::Default));
    assert_eq!((icmp(2).ip, icmp(2).code, icmp(2).mtu), (Some(IpCheck::Ecn(2)), None, Some(1400)));
    assert_eq!(icmp(3).echoed, IcmpEchoed::Udp { payload: 12 });
    assert_eq!((icmp(4).direction, icmp(4).echo_id), (Direction::Outbound, Some(7)));
    let e = parse("0 < icmp unreachable [0:10(5)]\n").expect_err("bad echoed range");
    assert!(e.message.contains("inconsistent TCP sequence numbers"), "{}", e.message);
    let e = parse("0 < icmp 5\n").expect_err("no type");
    assert!(e.message.contains("expected an ICMP type"), "{}", e.message);
    let e = parse("0~1 < icmp unreachable\n").expect_err("range on inbound");
    assert!(e.message.contains("time range can only be used with outbound"), "{}", e.message);
}
