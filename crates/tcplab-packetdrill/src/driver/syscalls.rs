//! System calls against the one socket under test (and its listener).

use super::blocking::{BlockKind, Blocking};
use super::{established, secs, us, Driver, SockKind, Socket, Stop, CLIENT_PORT, LOCAL_ISN, LOCAL_PORT};
use crate::ast::{Event, Expr, SyscallSpec};
use crate::harness::Qdisc;
use crate::symbols::{eval_int, MSG_EOR, O_NONBLOCK, O_RDWR};
use tcplab_core::wire::SeqNum;
use tcplab_core::{Instant, TcpError, TcpState};

/// errno name → (number, strerror text).
fn errno_info(name: &str) -> Option<(i64, &'static str)> {
    Some(match name {
        "EPERM" => (1, "Operation not permitted"),
        "EBADF" => (9, "Bad file descriptor"),
        "EAGAIN" | "EWOULDBLOCK" => (11, "Resource temporarily unavailable"),
        "EINVAL" => (22, "Invalid argument"),
        "EPIPE" => (32, "Broken pipe"),
        "ENOPROTOOPT" => (92, "Protocol not available"),
        "ECONNRESET" => (104, "Connection reset by peer"),
        "EISCONN" => (106, "Transport endpoint is already connected"),
        "ENOTCONN" => (107, "Transport endpoint is not connected"),
        "ETIMEDOUT" => (110, "Connection timed out"),
        "ECONNREFUSED" => (111, "Connection refused"),
        "EALREADY" => (114, "Operation already in progress"),
        "EINPROGRESS" => (115, "Operation now in progress"),
        _ => return None,
    })
}

impl Driver<'_> {
    fn socket_mut(&mut self, fd: i64) -> Option<&mut Socket> {
        self.sockets.iter_mut().find(|s| s.fd == fd)
    }

    fn arg_int(&self, s: &SyscallSpec, i: usize, line: u32) -> Result<i64, Stop> {
        let e = s.args.get(i).ok_or(Stop::Fail {
            line,
            message: format!("runtime error in {} call: Argument list too short", s.name),
        })?;
        eval_int(e).ok_or_else(|| Stop::Fail {
            line,
            message: format!("runtime error in {} call: bad integer argument {e}", s.name),
        })
    }

    pub(super) fn syscall(&mut self, ev: &Event, s: &SyscallSpec, end_us: Option<i64>) -> Result<(), Stop> {
        let line = ev.line;
        let name = s.name.as_str();
        let rt = |m: String| Stop::Fail { line, message: format!("runtime error in {name} call: {m}") };
        let expected = eval_int(&s.result).ok_or_else(|| rt(format!("bad expected result {}", s.result)))?;
        let fd = if name == "socket" { -1 } else { self.arg_int(s, 0, line)? };
        let sock = self.sockets.iter().find(|x| x.fd == fd).cloned();
        if name != "socket" && sock.is_none() {
            return Err(rt(format!("unable to find socket with script fd {fd}")));
        }
        let nonblocking = sock.as_ref().is_some_and(|x| x.nonblocking);
        let is_conn = sock.as_ref().is_some_and(|x| x.kind == SockKind::Conn);
        let now_s = secs(us(self.now));
        let would_block = |what: &str| {
            rt(format!("{what} would block at {now_s} sec (the script does not mark the call as blocking with `...`)"))
        };
        let trace = format!(
            "{} syscall: {name}({}) expecting {}",
            secs(us(self.now)),
            s.args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "),
            s.result
        );
        self.trace(trace);
        // (return value, errno name)
        let (ret, errno): (i64, Option<&str>) = match name {
            "socket" => {
                if self.sockets.iter().any(|x| x.fd == expected) {
                    return Err(rt(format!("duplicate socket fd {expected} in script")));
                }
                if expected < 0 {
                    return Err(rt(format!("invalid socket fd {expected} in script")));
                }
                self.sockets.push(Socket { fd: expected, kind: SockKind::New, nonblocking: false });
                (expected, None)
            }
            "bind" => (0, None),
            "listen" => {
                let so = self.socket_mut(fd).ok_or_else(|| rt("no socket".into()))?;
                if so.kind != SockKind::New {
                    return Err(rt(format!("bad listen(); script fd {fd} in state {:?}", so.kind)));
                }
                so.kind = SockKind::Listener;
                (0, None)
            }
            "accept" => {
                if sock.as_ref().map(|x| x.kind) != Some(SockKind::Listener) {
                    return Err(rt(format!("accept() on script fd {fd}, which is not listening")));
                }
                let ready = self.conn.as_ref().is_some_and(|c| established(c.state())) && self.conn_fd.is_none();
                if ready {
                    self.sockets.push(Socket { fd: expected, kind: SockKind::Conn, nonblocking: false });
                    self.conn_fd = Some(expected);
                    (expected, None)
                } else if let Some(end) = end_us {
                    self.sockets.push(Socket { fd: expected, kind: SockKind::Conn, nonblocking: false });
                    self.start_blocking(line, name, BlockKind::Accept { fd: expected }, end, expected, expected);
                    return Ok(());
                } else if nonblocking {
                    (-1, Some("EAGAIN"))
                } else {
                    return Err(would_block("accept()"));
                }
            }
            "connect" => {
                if self.conn.is_some() {
                    return Err(rt("only one connection per script is modelled".into()));
                }
                let cfg = self.conn_config();
                let mut c = self.factory.client(
                    &cfg,
                    CLIENT_PORT,
                    LOCAL_PORT,
                    SeqNum(LOCAL_ISN),
                    Instant::from_nanos(self.now),
                );
                c.set_nodelay(self.nodelay);
                c.set_user_timeout(self.user_timeout);
                c.set_xmit_blocked(self.harness.qdisc == Qdisc::Blackhole);
                self.conn = Some(c);
                self.passive = false;
                self.conn_fd = Some(fd);
                if let Some(so) = self.socket_mut(fd) {
                    so.kind = SockKind::Conn;
                }
                self.after_input()?;
                if let Some(end) = end_us {
                    self.start_blocking(line, name, BlockKind::Connect, end, expected, 0);
                    return Ok(());
                }
                if nonblocking {
                    (-1, Some("EINPROGRESS"))
                } else {
                    return Err(would_block("connect()"));
                }
            }
            "write" | "send" => {
                let n = self.arg_int(s, 2, line)?.max(0) as u64;
                if !is_conn || self.conn.is_none() {
                    return Err(rt(format!("{name}() on script fd {fd}, which has no connection")));
                }
                let state = self.conn.as_ref().map(|c| c.state()).unwrap_or(TcpState::Closed);
                // sk_err first (sock_error in sk_stream_error), then EPIPE.
                let err = self.conn.as_mut().and_then(|c| c.take_error());
                if let Some(TcpError::TimedOut) = err {
                    (-1, Some("ETIMEDOUT"))
                } else if matches!(state, TcpState::Closed | TcpState::TimeWait | TcpState::Listen) {
                    (-1, Some("EPIPE"))
                } else {
                    let conn = self.conn.as_mut().ok_or_else(|| rt("no connection".into()))?;
                    let eor = name == "send" && s.args.get(3).and_then(eval_int).unwrap_or(0) & MSG_EOR != 0;
                    let done = if matches!(state, TcpState::SynSent | TcpState::SynReceived) {
                        0
                    } else if eor {
                        conn.write_eor(n)
                    } else {
                        conn.write(n)
                    };
                    self.after_input()?;
                    if done == n {
                        (n as i64, None)
                    } else if let Some(end) = end_us {
                        self.start_blocking(
                            line,
                            name,
                            BlockKind::Write { remaining: n - done, eor },
                            end,
                            expected,
                            n as i64,
                        );
                        self.after_input()?;
                        return Ok(());
                    } else if nonblocking {
                        if done > 0 {
                            (done as i64, None)
                        } else {
                            (-1, Some("EAGAIN"))
                        }
                    } else {
                        return Err(would_block(&format!("{name}() of {n} bytes ({done} accepted)")));
                    }
                }
            }
            "read" | "recv" => {
                let max = self.arg_int(s, 2, line)?.max(0) as u64;
                let conn = self
                    .conn
                    .as_mut()
                    .filter(|_| is_conn)
                    .ok_or_else(|| rt(format!("{name}() on script fd {fd}, which has no connection")))?;
                let n = conn.read(max);
                self.after_input()?;
                let closed = self.conn.as_ref().is_some_and(|c| {
                    matches!(
                        c.state(),
                        TcpState::CloseWait
                            | TcpState::Closed
                            | TcpState::LastAck
                            | TcpState::TimeWait
                            | TcpState::Closing
                    )
                });
                if n > 0 || closed {
                    (n as i64, None)
                } else if let Some(end) = end_us {
                    self.start_blocking(line, name, BlockKind::Read { max }, end, expected, 0);
                    return Ok(());
                } else if nonblocking {
                    (-1, Some("EAGAIN"))
                } else {
                    return Err(would_block(&format!("{name}()")));
                }
            }
            "close" | "shutdown" => {
                if is_conn {
                    if let Some(c) = self.conn.as_mut() {
                        if name == "close" {
                            // tcp_close: sk_shutdown = SHUTDOWN_MASK.
                            c.shutdown_read();
                        }
                        c.close();
                    }
                    self.after_input()?;
                }
                if name == "close" {
                    self.sockets.retain(|x| x.fd != fd);
                }
                (0, None)
            }
            "fcntl" => {
                let cmd = self.arg_int(s, 1, line)?;
                match cmd {
                    3 => (O_RDWR | if nonblocking { O_NONBLOCK } else { 0 }, None),
                    4 => {
                        let flags = self.arg_int(s, 2, line)?;
                        if let Some(so) = self.socket_mut(fd) {
                            so.nonblocking = flags & O_NONBLOCK != 0;
                        }
                        (0, None)
                    }
                    other => return Err(Stop::Skip(format!("line {line}: fcntl command {other} is not modelled"))),
                }
            }
            "setsockopt" => {
                let opt = s.args.get(2).and_then(|e| e.as_word()).unwrap_or("");
                let val = s.args.get(3).and_then(|e| e.bracketed()).and_then(eval_int);
                match opt {
                    "TCP_NODELAY" => {
                        let on = val.unwrap_or(0) != 0;
                        self.nodelay = on;
                        if let Some(c) = self.conn.as_mut() {
                            c.set_nodelay(on);
                        }
                    }
                    "TCP_USER_TIMEOUT" => {
                        self.user_timeout = val.unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
                        if let Some(c) = self.conn.as_mut() {
                            c.set_user_timeout(self.user_timeout);
                        }
                    }
                    "TCP_CONGESTION" => {
                        let name = s.args.get(3).map(|e| match e.bracketed().unwrap_or(e) {
                            Expr::Str(s) | Expr::Word(s) => s.clone(),
                            other => other.to_string(),
                        });
                        let cc = name.as_deref().and_then(|n| {
                            if n == "cubic" {
                                Some(tcplab_core::cc::CcConfig::Cubic(self.harness.cubic.clone()))
                            } else {
                                tcplab_core::cc::CcConfig::from_name(n)
                            }
                        });
                        match cc {
                            Some(cc) => self.harness.cfg.congestion_control = cc,
                            None => {
                                return Err(Stop::Skip(format!(
                                    "line {line}: congestion control {name:?} is not in the model"
                                )))
                            }
                        }
                    }
                    // Folded into the configuration by the plan; the plan
                    // skipped the script where that is not equivalent.
                    "SO_SNDBUF" | "SO_RCVBUF" | "SO_REUSEADDR" | "IP_MTU_DISCOVER" | "IP_TOS" => {}
                    other => return Err(Stop::Skip(format!("line {line}: unsupported socket option {other}"))),
                }
                (0, None)
            }
            "getsockopt" => {
                let opt = s.args.get(2).and_then(|e| e.as_word()).unwrap_or("");
                let want = s.args.get(3).and_then(|e| e.bracketed()).and_then(eval_int);
                let got = match opt {
                    "SO_ERROR" => {
                        let refused = self.conn.as_ref().is_some_and(|c| c.state() == TcpState::Closed);
                        if refused {
                            111
                        } else {
                            0
                        }
                    }
                    "SO_SNDBUF" => match self.plan.so_sndbuf {
                        Some(v) => (v as i64) * 2,
                        None => {
                            return Err(Stop::Skip(format!(
                                "line {line}: getsockopt(SO_SNDBUF) without a prior setsockopt needs Connection::sndbuf() (sk_sndbuf)"
                            )))
                        }
                    },
                    other => return Err(Stop::Skip(format!("line {line}: unsupported socket option getsockopt({other})"))),
                };
                if let Some(w) = want {
                    if w != got {
                        return Err(rt(format!("Bad getsockopt optval: expected: {w} actual: {got}")));
                    }
                }
                (0, None)
            }
            other => return Err(Stop::Skip(format!("line {line}: unsupported system call {other}()"))),
        };
        if let Some(end) = end_us {
            // A call marked blocking that returned at once.
            self.blocking = Some(Blocking {
                line,
                name: name.to_string(),
                kind: BlockKind::Connect,
                end_us: end,
                expected,
                ret,
                done_ns: Some(self.now),
            });
            return Ok(());
        }
        check_result(name, expected, ret, errno, s.errno.as_deref()).map_err(rt)
    }
}

/// `end_syscall`'s checks of the return value and errno.
fn check_result(
    name: &str,
    expected: i64,
    ret: i64,
    errno: Option<&str>,
    want_errno: Option<&str>,
) -> Result<(), String> {
    let _ = name;
    if ret != expected {
        return Err(match errno.and_then(errno_info) {
            Some((n, text)) if ret < 0 => format!("Expected result {expected} but got {ret} with errno {n} ({text})"),
            _ => format!("Expected result {expected} but got {ret}"),
        });
    }
    if let Some(w) = want_errno {
        let (wn, wt) = errno_info(w).ok_or_else(|| format!("unknown errno name {w}"))?;
        let (an, at) = errno.and_then(errno_info).unwrap_or((0, "Success"));
        if wn != an {
            return Err(format!("Expected errno {wn} ({wt}) but got {an} ({at})"));
        }
    }
    Ok(())
}
