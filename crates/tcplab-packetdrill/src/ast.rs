//! The parsed form of a packetdrill script. Every node that can fail at
//! run time carries the script line it came from (packetdrill reports an
//! event at the line of its timestamp).

/// A whole script: header options, the init command (a back-quoted
/// command before the first event), events, and the cleanup command (one
/// after the last event).
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub options: Vec<HeaderOption>,
    pub init_command: Option<Command>,
    pub events: Vec<Event>,
    pub cleanup_command: Option<Command>,
}

/// `--name[=value]` before the first event.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderOption {
    pub line: u32,
    pub name: String,
    pub value: Option<String>,
}

/// A back-quoted shell command.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub line: u32,
    pub text: String,
}

/// When an event happens, in microseconds (packetdrill's `event_time`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventTime {
    /// `0.100`
    Absolute(i64),
    /// `+.1`
    Relative(i64),
    /// `0.1~0.2` (outbound packets only)
    AbsoluteRange(i64, i64),
    /// `+.1~+.2` (outbound packets only)
    RelativeRange(i64, i64),
    /// `*` (outbound packets only)
    Any,
}

impl EventTime {
    pub fn is_absolute(self) -> bool {
        matches!(self, EventTime::Absolute(_) | EventTime::AbsoluteRange(..))
    }
}

/// One timed line of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Line of the timestamp.
    pub line: u32,
    pub time: EventTime,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Packet(PacketSpec),
    Icmp(IcmpSpec),
    Syscall(SyscallSpec),
    Command(Command),
    Code(CodeBlock),
}

/// `<` (inbound, injected) or `>` (outbound, expected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Inbound,
    Outbound,
}

/// The ECN/TOS expectation in `[...]` before the flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpCheck {
    /// `[noecn]`, `[ect0]`, `[ect1]`, `[ce]`: the two ECN bits.
    Ecn(u8),
    /// `[ect01]`: ECT(0) or ECT(1) (outbound only).
    Ect01,
    /// `[tos 0x..]`: the whole TOS byte.
    Tos(u8),
}

/// One TCP option as written in `<...>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcpOpt {
    Nop,
    Eol,
    Mss(u16),
    Wscale(u8),
    SackOk,
    /// `sack a:b c:d`
    Sack(Vec<(u32, u32)>),
    /// `TS val X ecr Y`
    Timestamp {
        val: u32,
        ecr: u32,
    },
    /// Anything else (`md5`, `FO`, ...): parsed but not supported.
    Other(String),
}

impl TcpOpt {
    /// TCP option kind number.
    pub fn kind(&self) -> u8 {
        match self {
            TcpOpt::Eol => 0,
            TcpOpt::Nop => 1,
            TcpOpt::Mss(_) => 2,
            TcpOpt::Wscale(_) => 3,
            TcpOpt::SackOk => 4,
            TcpOpt::Sack(_) => 5,
            TcpOpt::Timestamp { .. } => 8,
            TcpOpt::Other(_) => 255,
        }
    }
    /// Bytes on the wire.
    pub fn wire_len(&self) -> usize {
        match self {
            TcpOpt::Eol | TcpOpt::Nop => 1,
            TcpOpt::Mss(_) => 4,
            TcpOpt::Wscale(_) => 3,
            TcpOpt::SackOk => 2,
            TcpOpt::Sack(b) => 2 + 8 * b.len(),
            TcpOpt::Timestamp { .. } => 10,
            TcpOpt::Other(_) => 0,
        }
    }
}

/// A TCP packet line.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketSpec {
    pub direction: Direction,
    pub ip: Option<IpCheck>,
    pub flags: PacketFlags,
    pub seq: u32,
    pub end_seq: u32,
    pub payload: u32,
    /// `ack N`, if written.
    pub ack: Option<u32>,
    /// `win N`, if written (outbound: checked only when written).
    pub win: Option<u16>,
    /// `urg N`, if written.
    pub urg: Option<u16>,
    /// `None` for `<...>` (any options); `Some(vec![])` when no `<>`.
    pub options: Option<Vec<TcpOpt>>,
}

/// An ICMP packet line (`parser.y`'s `icmp_packet_spec`):
/// `< icmp unreachable frag_needed mtu 1400 [0:1000(1000)]`. The echoed
/// part names the TCP segment the message quotes (packetdrill fills in its
/// ports and addresses).
#[derive(Clone, Debug, PartialEq)]
pub struct IcmpSpec {
    pub direction: Direction,
    pub ip: Option<IpCheck>,
    /// `unreachable`, `time_exceeded`, `packet_too_big`, ...
    pub icmp_type: String,
    /// `frag_needed`, `host_unreachable`, ...
    pub code: Option<String>,
    /// `mtu N`.
    pub mtu: Option<u32>,
    /// `id N` (echo messages).
    pub echo_id: Option<u32>,
    pub echoed: IcmpEchoed,
}

/// What an ICMP message quotes (`opt_icmp_echoed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpEchoed {
    /// Nothing written: the start of the flow's TCP header.
    Default,
    /// `[start:end(len)]`: a TCP segment of the flow.
    Tcp { seq: u32, payload: u32 },
    /// `[udp (len)]`.
    Udp { payload: u32 },
    /// `[raw (len)]`.
    Raw { payload: u32 },
}

/// One letter of a packet's flags (tcp_packet.c's `valid_tcp_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketFlag {
    /// `F`
    Fin,
    /// `S`
    Syn,
    /// `R`
    Rst,
    /// `P`
    Psh,
    /// `.`
    Ack,
    /// `U`
    Urg,
    /// `E`
    Ece,
    /// `W`
    Cwr,
    /// `A`: AccECN's AE bit.
    Ae,
    /// `0` to `7`: AccECN's ACE field.
    Ace(u8),
}

impl PacketFlag {
    pub fn from_letter(c: char) -> Option<PacketFlag> {
        Some(match c {
            'F' => PacketFlag::Fin,
            'S' => PacketFlag::Syn,
            'R' => PacketFlag::Rst,
            'P' => PacketFlag::Psh,
            '.' => PacketFlag::Ack,
            'U' => PacketFlag::Urg,
            'E' => PacketFlag::Ece,
            'W' => PacketFlag::Cwr,
            'A' => PacketFlag::Ae,
            '0'..='7' => PacketFlag::Ace(c as u8 - b'0'),
            _ => return None,
        })
    }

    pub fn letter(self) -> char {
        match self {
            PacketFlag::Fin => 'F',
            PacketFlag::Syn => 'S',
            PacketFlag::Rst => 'R',
            PacketFlag::Psh => 'P',
            PacketFlag::Ack => '.',
            PacketFlag::Urg => 'U',
            PacketFlag::Ece => 'E',
            PacketFlag::Cwr => 'W',
            PacketFlag::Ae => 'A',
            PacketFlag::Ace(v) => char::from(b'0' + v),
        }
    }
}

/// A packet's flags in the order written (`SEW`, `P.`), so that error
/// dumps show the script line as the author wrote it; empty for `-`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketFlags(pub Vec<PacketFlag>);

impl PacketFlags {
    pub fn has(&self, f: PacketFlag) -> bool {
        self.0.contains(&f)
    }
    /// Whether any AccECN flag (AE, or the ACE field) is written.
    pub fn has_accecn(&self) -> bool {
        self.0.iter().any(|f| matches!(f, PacketFlag::Ae | PacketFlag::Ace(_)))
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// As written; `-` for none.
impl std::fmt::Display for PacketFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("-");
        }
        self.0.iter().try_for_each(|flag| write!(f, "{}", flag.letter()))
    }
}

/// A system call line: `[...end] name(args) = result [ERRNO (note)] [(note)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SyscallSpec {
    /// End time of a blocking call (`... 0.004`), µs.
    pub end_usecs: Option<i64>,
    pub name: String,
    pub args: Vec<Expr>,
    pub result: Expr,
    pub errno: Option<String>,
    pub note: Option<String>,
}

/// An argument expression of a system call.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// `...`
    Ellipsis,
    Int(i64),
    Word(String),
    Str(String),
    /// `[a, b]`
    List(Vec<Expr>),
    /// `{a, b}` or `{name=value, ...}`
    Braced(Vec<Expr>),
    /// `a | b`
    Or(Box<Expr>, Box<Expr>),
    /// `name = value` inside braces
    Assign(String, Box<Expr>),
    /// `name(len) = value` inside braces: `struct msghdr`'s
    /// `msg_name(...)=...` (the address and its length) and
    /// `msg_iov(N)=[{..., len}, ...]` (the vector and its count).
    AssignLen {
        name: String,
        len: Box<Expr>,
        value: Box<Expr>,
    },
}

impl Expr {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_word(&self) -> Option<&str> {
        match self {
            Expr::Word(w) => Some(w),
            _ => None,
        }
    }
    /// The single element of `[x]`.
    pub fn bracketed(&self) -> Option<&Expr> {
        match self {
            Expr::List(v) if v.len() == 1 => Some(&v[0]),
            _ => None,
        }
    }
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Ellipsis => write!(f, "..."),
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Word(w) => write!(f, "{w}"),
            Expr::Str(s) => write!(f, "\"{s}\""),
            Expr::List(v) | Expr::Braced(v) => {
                let (o, c) = if matches!(self, Expr::List(_)) { ('[', ']') } else { ('{', '}') };
                write!(f, "{o}")?;
                for (i, e) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{e}")?;
                }
                write!(f, "{c}")
            }
            Expr::Or(a, b) => write!(f, "{a}|{b}"),
            Expr::Assign(n, v) => write!(f, "{n}={v}"),
            Expr::AssignLen { name, len, value } => write!(f, "{name}({len})={value}"),
        }
    }
}

/// A `%{ ... }%` block.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeBlock {
    /// The text between `%{` and `}%`.
    pub text: String,
    /// Line of the `%{`.
    pub text_line: u32,
}
