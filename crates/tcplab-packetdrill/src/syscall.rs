//! The system calls the model implements, decoded once from a script
//! line into a [`Syscall`]: the [`plan`] decodes every call and checks it
//! before the run ([`Syscall::check`]), and the [`driver`] runs the
//! decoded call the plan kept, so the two cannot disagree about what a
//! line means or which calls exist.
//!
//! [`plan`]: crate::plan
//! [`driver`]: crate::driver

use crate::ast::{Expr, SyscallSpec};
use crate::symbols::{eval_int, MSG_EOR, MSG_MORE, SIOCINQ, SIOCOUTQ, SIOCOUTQNSD};
use std::fmt;

/// An integer argument. Decoding evaluates it, but a missing or
/// non-integer argument is only an error where the driver uses it, so
/// that a call fails at the same check as it did in packetdrill.
pub type IntArg = Result<i64, ArgError>;

/// Why an integer argument has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    Missing,
    /// The argument as written.
    NotInt(String),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::Missing => write!(f, "Argument list too short"),
            ArgError::NotInt(e) => write!(f, "bad integer argument {e}"),
        }
    }
}

/// Argument `i` of `s` as an integer (numbers, symbols, `a|b`).
pub fn int_arg(s: &SyscallSpec, i: usize) -> IntArg {
    let e = s.args.get(i).ok_or(ArgError::Missing)?;
    eval_int(e).ok_or_else(|| ArgError::NotInt(e.to_string()))
}

/// A socket option, by its Linux name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SockOpt {
    SoReuseaddr,
    SoError,
    SoSndbuf,
    SoRcvbuf,
    TcpNodelay,
    TcpCork,
    TcpCongestion,
    TcpUserTimeout,
    TcpNotsentLowat,
    TcpMaxseg,
    IpTos,
    IpMtuDiscover,
    /// One the model does not know, as written (`?` when the argument
    /// is not a name).
    Other(String),
}

impl SockOpt {
    fn from_name(name: &str) -> SockOpt {
        match name {
            "SO_REUSEADDR" => SockOpt::SoReuseaddr,
            "SO_ERROR" => SockOpt::SoError,
            "SO_SNDBUF" => SockOpt::SoSndbuf,
            "SO_RCVBUF" => SockOpt::SoRcvbuf,
            "TCP_NODELAY" => SockOpt::TcpNodelay,
            "TCP_CORK" => SockOpt::TcpCork,
            "TCP_CONGESTION" => SockOpt::TcpCongestion,
            "TCP_USER_TIMEOUT" => SockOpt::TcpUserTimeout,
            "TCP_NOTSENT_LOWAT" => SockOpt::TcpNotsentLowat,
            "TCP_MAXSEG" => SockOpt::TcpMaxseg,
            "IP_TOS" => SockOpt::IpTos,
            "IP_MTU_DISCOVER" => SockOpt::IpMtuDiscover,
            other => SockOpt::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            SockOpt::SoReuseaddr => "SO_REUSEADDR",
            SockOpt::SoError => "SO_ERROR",
            SockOpt::SoSndbuf => "SO_SNDBUF",
            SockOpt::SoRcvbuf => "SO_RCVBUF",
            SockOpt::TcpNodelay => "TCP_NODELAY",
            SockOpt::TcpCork => "TCP_CORK",
            SockOpt::TcpCongestion => "TCP_CONGESTION",
            SockOpt::TcpUserTimeout => "TCP_USER_TIMEOUT",
            SockOpt::TcpNotsentLowat => "TCP_NOTSENT_LOWAT",
            SockOpt::TcpMaxseg => "TCP_MAXSEG",
            SockOpt::IpTos => "IP_TOS",
            SockOpt::IpMtuDiscover => "IP_MTU_DISCOVER",
            SockOpt::Other(name) => name,
        }
    }
}

impl fmt::Display for SockOpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A system call line, decoded. Every argument the model reads is here;
/// the file descriptor (argument 0) and the expected result are read the
/// same way for every call, by the driver.
#[derive(Clone, Debug, PartialEq)]
pub enum Syscall {
    /// `socket(domain, type, protocol)`: whether it asks for a TCP stream.
    Socket {
        tcp_stream: bool,
    },
    Bind,
    Listen,
    Accept,
    Connect,
    /// `write(fd, buf, len)`, `send(fd, buf, len, flags)` and
    /// `sendmsg(fd, msghdr, flags)` (`len`: the iovec lengths' sum);
    /// `flags` is 0 for write. `name` as the script writes it.
    Write {
        name: &'static str,
        len: IntArg,
        flags: i64,
    },
    /// `read(fd, buf, len)` and `recv(fd, buf, len, flags)`.
    Read {
        recv: bool,
        len: IntArg,
    },
    Close,
    /// `shutdown(fd, how)`.
    Shutdown {
        how: Option<i64>,
    },
    /// `fcntl(fd, cmd[, arg])`.
    Fcntl {
        cmd: IntArg,
        arg: IntArg,
    },
    /// `setsockopt(fd, level, opt, [val], len)`; `cc_name` is the
    /// algorithm of `TCP_CONGESTION` (a string, not an integer).
    Setsockopt {
        opt: SockOpt,
        val: Option<i64>,
        cc_name: Option<String>,
    },
    /// `getsockopt(fd, level, opt, [expected], [len])`.
    Getsockopt {
        opt: SockOpt,
        val: Option<i64>,
    },
    /// `poll([{fd=N, events=E, revents=R}], 1, timeout_ms)`: one pollfd.
    Poll {
        fd: IntArg,
        events: IntArg,
        revents: IntArg,
        timeout_ms: IntArg,
    },
    /// `ioctl(fd, request, [expected])`.
    Ioctl {
        request: IntArg,
        val: Option<i64>,
    },
}

/// `poll(fds, nfds, timeout)` with one `struct pollfd` in `fds`.
fn decode_poll(s: &SyscallSpec) -> Syscall {
    let pollfds = match s.args.first() {
        Some(Expr::List(v)) if v.len() == 1 => match &v[0] {
            Expr::Braced(fields) => fields.as_slice(),
            _ => &[],
        },
        _ => &[],
    };
    let field = |name: &str| -> IntArg {
        let e = pollfds
            .iter()
            .find_map(|f| match f {
                Expr::Assign(n, v) if n == name => Some(v.as_ref()),
                _ => None,
            })
            .ok_or(ArgError::Missing)?;
        eval_int(e).ok_or_else(|| ArgError::NotInt(e.to_string()))
    };
    Syscall::Poll { fd: field("fd"), events: field("events"), revents: field("revents"), timeout_ms: int_arg(s, 2) }
}

/// The byte count of a `struct msghdr` argument: the sum of the lengths
/// in `msg_iov(N)=[{..., len}, ...]` (the last member of each iovec).
fn iov_len(msg: Option<&Expr>) -> IntArg {
    let Some(Expr::Braced(fields)) = msg else {
        return Err(ArgError::NotInt(msg.map(|e| e.to_string()).unwrap_or_default()));
    };
    let iov = fields.iter().find_map(|f| match f {
        Expr::AssignLen { name, value, .. } if name == "msg_iov" => Some(value.as_ref()),
        _ => None,
    });
    let Some(Expr::List(vecs)) = iov else {
        return Err(ArgError::NotInt(format!(
            "msghdr without msg_iov: {}",
            msg.map(|e| e.to_string()).unwrap_or_default()
        )));
    };
    let mut total = 0i64;
    for v in vecs {
        let len = match v {
            Expr::Braced(m) => m.last().and_then(eval_int),
            _ => None,
        };
        total = total.saturating_add(len.ok_or_else(|| ArgError::NotInt(format!("iovec {v}")))?);
    }
    Ok(total)
}

/// The socket as the plan follows it through the script, call by call.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlannedSocket {
    /// A `write` or `send` came before.
    pub written: bool,
    /// A `connect` or an inbound packet came before.
    pub connection_started: bool,
    /// `SO_SNDBUF` set before any data was written: folded into the
    /// connection's configuration.
    pub so_sndbuf: Option<u32>,
    /// `SO_RCVBUF` set before the connection existed.
    pub so_rcvbuf: Option<u32>,
}

impl Syscall {
    /// The call on script line `s`; `None` for a call the model does not
    /// implement.
    pub fn decode(s: &SyscallSpec) -> Option<Syscall> {
        let word = |i: usize| s.args.get(i).and_then(Expr::as_word);
        let bracketed_int = |i: usize| s.args.get(i).and_then(Expr::bracketed).and_then(eval_int);
        let opt = || SockOpt::from_name(word(2).unwrap_or("?"));
        Some(match s.name.as_str() {
            "socket" => Syscall::Socket {
                tcp_stream: word(1) == Some("SOCK_STREAM") && matches!(word(2), Some("IPPROTO_TCP") | None),
            },
            "bind" => Syscall::Bind,
            "listen" => Syscall::Listen,
            "accept" => Syscall::Accept,
            "connect" => Syscall::Connect,
            "write" => Syscall::Write { name: "write", len: int_arg(s, 2), flags: 0 },
            "send" => Syscall::Write {
                name: "send",
                len: int_arg(s, 2),
                flags: s.args.get(3).and_then(eval_int).unwrap_or(0),
            },
            "sendmsg" => Syscall::Write {
                name: "sendmsg",
                len: iov_len(s.args.get(1)),
                flags: s.args.get(2).and_then(eval_int).unwrap_or(0),
            },
            "read" => Syscall::Read { recv: false, len: int_arg(s, 2) },
            "recv" => Syscall::Read { recv: true, len: int_arg(s, 2) },
            "close" => Syscall::Close,
            "shutdown" => Syscall::Shutdown { how: s.args.get(1).and_then(eval_int) },
            "fcntl" => Syscall::Fcntl { cmd: int_arg(s, 1), arg: int_arg(s, 2) },
            "setsockopt" => {
                let opt = opt();
                let cc_name = (opt == SockOpt::TcpCongestion).then(|| s.args.get(3)).flatten().map(|e| {
                    match e.bracketed().unwrap_or(e) {
                        Expr::Str(s) | Expr::Word(s) => s.clone(),
                        other => other.to_string(),
                    }
                });
                Syscall::Setsockopt { opt, val: bracketed_int(3), cc_name }
            }
            "getsockopt" => Syscall::Getsockopt { opt: opt(), val: bracketed_int(3) },
            "poll" => decode_poll(s),
            "ioctl" => Syscall::Ioctl { request: int_arg(s, 1), val: bracketed_int(2) },
            _ => return None,
        })
    }

    /// The name as scripts write it.
    pub fn name(&self) -> &'static str {
        match self {
            Syscall::Socket { .. } => "socket",
            Syscall::Bind => "bind",
            Syscall::Listen => "listen",
            Syscall::Accept => "accept",
            Syscall::Connect => "connect",
            Syscall::Write { name, .. } => name,
            Syscall::Read { recv: false, .. } => "read",
            Syscall::Read { recv: true, .. } => "recv",
            Syscall::Close => "close",
            Syscall::Shutdown { .. } => "shutdown",
            Syscall::Fcntl { .. } => "fcntl",
            Syscall::Setsockopt { .. } => "setsockopt",
            Syscall::Getsockopt { .. } => "getsockopt",
            Syscall::Ioctl { .. } => "ioctl",
            Syscall::Poll { .. } => "poll",
        }
    }

    /// Checks the call at `line` before the run and follows its effect
    /// on `sock`; `Err` is a skip reason (something the model cannot
    /// honour).
    pub fn check(&self, line: u32, sock: &mut PlannedSocket) -> Result<(), String> {
        let to_u32 = |v: Option<i64>| v.map(|v| v.clamp(0, u32::MAX as i64) as u32);
        match self {
            Syscall::Write { name, flags, .. } => {
                sock.written = true;
                if flags & !(MSG_EOR | MSG_MORE) != 0 {
                    return Err(format!("line {line}: {name}() flags {flags:#x} are not modelled"));
                }
            }
            Syscall::Connect => sock.connection_started = true,
            Syscall::Setsockopt { opt, val, .. } => match opt {
                SockOpt::SoReuseaddr | SockOpt::IpMtuDiscover => {}
                SockOpt::IpTos => {
                    if val.is_some_and(|v| v & 3 != 0) {
                        return Err(format!("line {line}: IP_TOS with ECN bits set is not modelled"));
                    }
                }
                SockOpt::TcpNodelay | SockOpt::TcpCork | SockOpt::TcpUserTimeout | SockOpt::TcpNotsentLowat => {}
                SockOpt::SoSndbuf => {
                    if sock.written {
                        return Err(format!(
                            "line {line}: setsockopt(SO_SNDBUF) after data was written needs \
                             Connection::set_sndbuf (sock_setsockopt SO_SNDBUF)"
                        ));
                    }
                    sock.so_sndbuf = to_u32(*val);
                }
                SockOpt::SoRcvbuf => {
                    if sock.connection_started {
                        return Err(format!(
                            "line {line}: setsockopt(SO_RCVBUF) on an open connection needs \
                             Connection::set_rcvbuf (sock_setsockopt SO_RCVBUF)"
                        ));
                    }
                    sock.so_rcvbuf = to_u32(*val);
                }
                SockOpt::TcpMaxseg => {
                    if sock.connection_started {
                        return Err(format!(
                            "line {line}: setsockopt(TCP_MAXSEG) on an open connection needs a core setter \
                             (do_tcp_setsockopt TCP_MAXSEG: user_mss only)"
                        ));
                    }
                    // do_tcp_setsockopt: 0 or TCP_MIN_MSS (88) ..= MAX_TCP_WINDOW.
                    if !matches!(val, Some(0) | Some(88..=32767)) {
                        return Err(format!(
                            "line {line}: setsockopt(TCP_MAXSEG) value {val:?} (EINVAL) is not modelled"
                        ));
                    }
                }
                SockOpt::TcpCongestion => {
                    if sock.connection_started {
                        return Err(format!(
                            "line {line}: setsockopt(TCP_CONGESTION) on an open connection needs \
                             Connection::set_congestion_control (tcp_set_congestion_control)"
                        ));
                    }
                }
                SockOpt::SoError | SockOpt::Other(_) => {
                    return Err(format!("line {line}: unsupported socket option setsockopt({opt})"))
                }
            },
            Syscall::Getsockopt { opt, .. } => match opt {
                SockOpt::SoReuseaddr
                | SockOpt::IpMtuDiscover
                | SockOpt::SoError
                | SockOpt::SoSndbuf
                | SockOpt::TcpNotsentLowat
                | SockOpt::TcpMaxseg => {}
                _ => return Err(format!("line {line}: unsupported socket option getsockopt({opt})")),
            },
            Syscall::Shutdown { how } => {
                if !matches!(how, Some(0..=2)) {
                    return Err(format!("line {line}: shutdown() how must be SHUT_RD, SHUT_WR or SHUT_RDWR"));
                }
            }
            Syscall::Poll { fd, events, .. } => {
                if fd.is_err() || events.is_err() {
                    return Err(format!(
                        "line {line}: only poll() of one pollfd {{fd=N, events=E, revents=R}} is modelled"
                    ));
                }
            }
            Syscall::Ioctl { request, .. } => {
                if !matches!(request, Ok(SIOCINQ | SIOCOUTQ | SIOCOUTQNSD)) {
                    return Err(format!("line {line}: only the SIOCINQ, SIOCOUTQ and SIOCOUTQNSD ioctls are modelled"));
                }
            }
            Syscall::Socket { tcp_stream } => {
                if !tcp_stream {
                    return Err(format!("line {line}: only TCP stream sockets are modelled"));
                }
            }
            Syscall::Bind
            | Syscall::Listen
            | Syscall::Accept
            | Syscall::Read { .. }
            | Syscall::Close
            | Syscall::Fcntl { .. } => {}
        }
        Ok(())
    }
}
