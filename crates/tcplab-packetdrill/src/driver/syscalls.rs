//! System calls against the one socket under test (and its listener):
//! one handler per [`Syscall`], run on the call the plan decoded.

use super::blocking::{BlockKind, Blocking};
use super::{established, secs, us, Driver, SockKind, Socket, Stop, CLIENT_PORT, LOCAL_ISN, LOCAL_PORT};
use crate::ast::{Event, SyscallSpec};
use crate::harness::Qdisc;
use crate::symbols::{eval_int, F_GETFL, F_SETFL, MSG_EOR, MSG_MORE, O_NONBLOCK, O_RDWR, SIOCINQ, SIOCOUTQ};
use crate::syscall::{int_arg, IntArg, SockOpt, Syscall};
use tcplab_core::connection::{MsgFlags, Shutdown};
use tcplab_core::wire::SeqNum;
use tcplab_core::{Instant, TcpError, TcpState};

/// An errno a script may expect, with Linux's number and `strerror` text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Errno {
    Eperm,
    Ebadf,
    Eagain,
    Einval,
    Epipe,
    Enoprotoopt,
    Econnreset,
    Eisconn,
    Enotconn,
    Etimedout,
    Econnrefused,
    Ealready,
    Einprogress,
}

impl Errno {
    fn from_name(name: &str) -> Option<Errno> {
        Some(match name {
            "EPERM" => Errno::Eperm,
            "EBADF" => Errno::Ebadf,
            "EAGAIN" | "EWOULDBLOCK" => Errno::Eagain,
            "EINVAL" => Errno::Einval,
            "EPIPE" => Errno::Epipe,
            "ENOPROTOOPT" => Errno::Enoprotoopt,
            "ECONNRESET" => Errno::Econnreset,
            "EISCONN" => Errno::Eisconn,
            "ENOTCONN" => Errno::Enotconn,
            "ETIMEDOUT" => Errno::Etimedout,
            "ECONNREFUSED" => Errno::Econnrefused,
            "EALREADY" => Errno::Ealready,
            "EINPROGRESS" => Errno::Einprogress,
            _ => return None,
        })
    }

    /// (number, strerror text), as packetdrill prints them.
    fn info(self) -> (i64, &'static str) {
        match self {
            Errno::Eperm => (1, "Operation not permitted"),
            Errno::Ebadf => (9, "Bad file descriptor"),
            Errno::Eagain => (11, "Resource temporarily unavailable"),
            Errno::Einval => (22, "Invalid argument"),
            Errno::Epipe => (32, "Broken pipe"),
            Errno::Enoprotoopt => (92, "Protocol not available"),
            Errno::Econnreset => (104, "Connection reset by peer"),
            Errno::Eisconn => (106, "Transport endpoint is already connected"),
            Errno::Enotconn => (107, "Transport endpoint is not connected"),
            Errno::Etimedout => (110, "Connection timed out"),
            Errno::Econnrefused => (111, "Connection refused"),
            Errno::Ealready => (114, "Operation already in progress"),
            Errno::Einprogress => (115, "Operation now in progress"),
        }
    }
}

/// How a handler's call went: it returned (value, errno), or it blocks
/// and [`Driver::finish_blocking`] checks its return later.
enum Returned {
    Now(i64, Option<Errno>),
    Blocked,
}

/// What every handler reads of the call being run.
pub(super) struct Call {
    pub(super) line: u32,
    pub(super) name: &'static str,
    /// Script fd of argument 0 (-1 for `socket`).
    fd: i64,
    /// The script's expected return value.
    pub(super) expected: i64,
    /// Return time of a call marked blocking (`...`), µs.
    end_us: Option<i64>,
    /// The socket `fd` names (none for `socket`).
    sock: Option<Socket>,
    /// Time of the call, for "would block" errors.
    now_s: String,
}

impl Call {
    /// `runtime error in NAME call: ...`, packetdrill's wording.
    fn error(&self, m: impl Into<String>) -> Stop {
        Stop::Fail { line: self.line, message: format!("runtime error in {} call: {}", self.name, m.into()) }
    }
    fn would_block(&self, what: &str) -> Stop {
        self.error(format!(
            "{what} would block at {} sec (the script does not mark the call as blocking with `...`)",
            self.now_s
        ))
    }
    fn int(&self, arg: &IntArg) -> Result<i64, Stop> {
        arg.clone().map_err(|e| self.error(e.to_string()))
    }
    fn nonblocking(&self) -> bool {
        self.sock.as_ref().is_some_and(|x| x.nonblocking)
    }
    /// Whether `fd` is the connection under test.
    fn is_conn(&self) -> bool {
        self.sock.as_ref().is_some_and(|x| x.kind == SockKind::Conn)
    }
}

impl Driver<'_> {
    /// `tcp_notsent_lowat(tp)`: the socket option, else the sysctl.
    pub(super) fn effective_notsent_lowat(&self) -> u32 {
        if self.notsent_lowat != 0 {
            self.notsent_lowat
        } else {
            self.harness.notsent_lowat
        }
    }

    fn socket_mut(&mut self, fd: i64) -> Option<&mut Socket> {
        self.sockets.iter_mut().find(|s| s.fd == fd)
    }

    /// Runs the system call of event `idx` (line `s`), as packetdrill's
    /// `syscall_*` handlers and `end_syscall` do.
    pub(super) fn syscall(&mut self, ev: &Event, idx: usize, s: &SyscallSpec, end_us: Option<i64>) -> Result<(), Stop> {
        let line = ev.line;
        let plan = self.plan;
        let Some(syscall) = plan.syscalls.get(idx).and_then(Option::as_ref) else {
            return Err(Stop::Skip(format!("line {line}: unsupported system call {}()", s.name)));
        };
        let name = syscall.name();
        let mut c = Call { line, name, fd: -1, expected: 0, end_us, sock: None, now_s: String::new() };
        c.expected = eval_int(&s.result).ok_or_else(|| c.error(format!("bad expected result {}", s.result)))?;
        let is_socket = matches!(syscall, Syscall::Socket { .. });
        if !is_socket {
            c.fd = match syscall {
                Syscall::Poll { fd, .. } => c.int(fd)?,
                _ => c.int(&int_arg(s, 0))?,
            };
        }
        c.sock = self.sockets.iter().find(|x| x.fd == c.fd).cloned();
        if !is_socket && c.sock.is_none() {
            return Err(c.error(format!("unable to find socket with script fd {}", c.fd)));
        }
        c.now_s = secs(us(self.now));
        let trace = format!(
            "{} syscall: {name}({}) expecting {}",
            c.now_s,
            s.args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "),
            s.result
        );
        self.trace(trace);
        let returned = match syscall {
            Syscall::Socket { .. } => self.sys_socket(&c)?,
            Syscall::Bind => Returned::Now(0, None),
            Syscall::Listen => self.sys_listen(&c)?,
            Syscall::Accept => self.sys_accept(&c)?,
            Syscall::Connect => self.sys_connect(&c)?,
            Syscall::Write { len, flags, .. } => self.sys_write(&c, len, *flags)?,
            Syscall::Read { len, .. } => self.sys_read(&c, len)?,
            Syscall::Close => self.sys_close(&c, None)?,
            Syscall::Shutdown { how } => self.sys_close(&c, Some(shutdown_how(*how)))?,
            Syscall::Fcntl { cmd, arg } => self.sys_fcntl(&c, cmd, arg)?,
            Syscall::Setsockopt { opt, val, cc_name } => self.sys_setsockopt(&c, opt, *val, cc_name)?,
            Syscall::Getsockopt { opt, val } => self.sys_getsockopt(&c, opt, *val)?,
            Syscall::Ioctl { request, val } => self.sys_ioctl(&c, request, *val)?,
            Syscall::Poll { events, revents, timeout_ms, .. } => self.sys_poll(&c, events, revents, timeout_ms)?,
        };
        let (ret, errno) = match returned {
            Returned::Now(ret, errno) => (ret, errno),
            Returned::Blocked => return Ok(()),
        };
        if let Some(end) = end_us {
            // A call marked blocking that returned at once: its return
            // time is checked like a blocked call's.
            self.blocking = Some(Blocking {
                line,
                name,
                kind: BlockKind::Connect,
                end_us: end,
                expected: c.expected,
                ret,
                done_ns: Some(self.now),
            });
            return Ok(());
        }
        check_result(c.expected, ret, errno, s.errno.as_deref()).map_err(|m| c.error(m))
    }

    fn sys_socket(&mut self, c: &Call) -> Result<Returned, Stop> {
        let fd = c.expected;
        if self.sockets.iter().any(|x| x.fd == fd) {
            return Err(c.error(format!("duplicate socket fd {fd} in script")));
        }
        if fd < 0 {
            return Err(c.error(format!("invalid socket fd {fd} in script")));
        }
        self.sockets.push(Socket { fd, kind: SockKind::New, nonblocking: false });
        Ok(Returned::Now(fd, None))
    }

    fn sys_listen(&mut self, c: &Call) -> Result<Returned, Stop> {
        let so = self.socket_mut(c.fd).ok_or_else(|| c.error("no socket"))?;
        if so.kind != SockKind::New {
            return Err(c.error(format!("bad listen(); script fd {} in state {:?}", c.fd, so.kind)));
        }
        so.kind = SockKind::Listener;
        Ok(Returned::Now(0, None))
    }

    fn sys_accept(&mut self, c: &Call) -> Result<Returned, Stop> {
        if c.sock.as_ref().map(|x| x.kind) != Some(SockKind::Listener) {
            return Err(c.error(format!("accept() on script fd {}, which is not listening", c.fd)));
        }
        let fd = c.expected;
        let ready = self.conn.as_ref().is_some_and(|conn| established(conn.state())) && self.conn_fd.is_none();
        if ready {
            self.sockets.push(Socket { fd, kind: SockKind::Conn, nonblocking: false });
            self.conn_fd = Some(fd);
            Ok(Returned::Now(fd, None))
        } else if let Some(end) = c.end_us {
            self.sockets.push(Socket { fd, kind: SockKind::Conn, nonblocking: false });
            self.start_blocking(c, BlockKind::Accept { fd }, end, fd);
            Ok(Returned::Blocked)
        } else if c.nonblocking() {
            Ok(Returned::Now(-1, Some(Errno::Eagain)))
        } else {
            Err(c.would_block("accept()"))
        }
    }

    fn sys_connect(&mut self, c: &Call) -> Result<Returned, Stop> {
        if self.conn.is_some() {
            return Err(c.error("only one connection per script is modelled"));
        }
        let cfg = self.conn_config();
        let mut conn =
            self.factory.client(&cfg, CLIENT_PORT, LOCAL_PORT, SeqNum(LOCAL_ISN), Instant::from_nanos(self.now));
        conn.set_nodelay(self.nodelay);
        if self.cork {
            conn.set_cork(true);
        }
        conn.set_notsent_lowat(self.effective_notsent_lowat());
        if self.harness.qdisc == Qdisc::Fq {
            conn.set_pacing_fq();
        }
        conn.set_user_timeout(self.user_timeout);
        conn.set_xmit_blocked(self.harness.qdisc == Qdisc::Blackhole);
        self.conn = Some(conn);
        self.passive = false;
        self.conn_fd = Some(c.fd);
        if let Some(so) = self.socket_mut(c.fd) {
            so.kind = SockKind::Conn;
        }
        self.after_input()?;
        if let Some(end) = c.end_us {
            self.start_blocking(c, BlockKind::Connect, end, 0);
            return Ok(Returned::Blocked);
        }
        if c.nonblocking() {
            Ok(Returned::Now(-1, Some(Errno::Einprogress)))
        } else {
            Err(c.would_block("connect()"))
        }
    }

    /// `write` and `send` (`flags` 0 for write).
    fn sys_write(&mut self, c: &Call, len: &IntArg, flags: i64) -> Result<Returned, Stop> {
        let n = c.int(len)?.max(0) as u64;
        if !c.is_conn() || self.conn.is_none() {
            return Err(c.error(format!("{}() on script fd {}, which has no connection", c.name, c.fd)));
        }
        let state = self.conn.as_ref().map(|conn| conn.state()).unwrap_or(TcpState::Closed);
        // sk_err first (sock_error in sk_stream_error), then EPIPE.
        let err = self.conn.as_mut().and_then(|conn| conn.take_error());
        if let Some(TcpError::TimedOut) = err {
            return Ok(Returned::Now(-1, Some(Errno::Etimedout)));
        }
        // sk_stream_wait_connect (any state but ESTABLISHED, CLOSE-WAIT and
        // the handshake's) or SEND_SHUTDOWN: EPIPE.
        let send_shutdown = self.conn.as_ref().is_some_and(|conn| conn.send_shutdown());
        if send_shutdown || state == TcpState::Listen {
            return Ok(Returned::Now(-1, Some(Errno::Epipe)));
        }
        let conn = self.conn.as_mut().ok_or_else(|| c.error("no connection"))?;
        let flags = MsgFlags { eor: flags & MSG_EOR != 0, more: flags & MSG_MORE != 0 };
        let now = Instant::from_nanos(self.now);
        let done = if matches!(state, TcpState::SynSent | TcpState::SynReceived) {
            0
        } else {
            conn.send_msg_at(now, n, flags)
        };
        self.after_input()?;
        if done == n {
            Ok(Returned::Now(n as i64, None))
        } else if let Some(end) = c.end_us {
            self.start_blocking(c, BlockKind::Write { remaining: n - done, flags }, end, n as i64);
            self.after_input()?;
            Ok(Returned::Blocked)
        } else if c.nonblocking() {
            if done > 0 {
                Ok(Returned::Now(done as i64, None))
            } else {
                Ok(Returned::Now(-1, Some(Errno::Eagain)))
            }
        } else {
            Err(c.would_block(&format!("{}() of {n} bytes ({done} accepted)", c.name)))
        }
    }

    /// `read` and `recv`.
    fn sys_read(&mut self, c: &Call, len: &IntArg) -> Result<Returned, Stop> {
        let max = c.int(len)?.max(0) as u64;
        let conn = self
            .conn
            .as_mut()
            .filter(|_| c.is_conn())
            .ok_or_else(|| c.error(format!("{}() on script fd {}, which has no connection", c.name, c.fd)))?;
        let n = conn.read(max);
        self.after_input()?;
        // tcp_recvmsg_locked with nothing copied: a FIN (SOCK_DONE) or
        // RCV_SHUTDOWN ends the read with 0.
        let closed = self.conn.as_ref().is_some_and(|conn| {
            conn.read_shutdown()
                || matches!(
                    conn.state(),
                    TcpState::CloseWait | TcpState::Closed | TcpState::LastAck | TcpState::TimeWait | TcpState::Closing
                )
        });
        if n > 0 || closed {
            Ok(Returned::Now(n as i64, None))
        } else if let Some(end) = c.end_us {
            self.start_blocking(c, BlockKind::Read { max }, end, 0);
            Ok(Returned::Blocked)
        } else if c.nonblocking() {
            Ok(Returned::Now(-1, Some(Errno::Eagain)))
        } else {
            Err(c.would_block(&format!("{}()", c.name)))
        }
    }

    /// `close` (`how` none: `tcp_close`, a RST if data was left unread)
    /// and `shutdown(how)` (`tcp_shutdown`).
    fn sys_close(&mut self, c: &Call, how: Option<Shutdown>) -> Result<Returned, Stop> {
        if c.is_conn() {
            if let Some(conn) = self.conn.as_mut() {
                match how {
                    None => conn.close_socket(),
                    Some(how) => conn.shutdown(how),
                }
            }
            self.after_input()?;
        }
        if how.is_none() {
            self.sockets.retain(|x| x.fd != c.fd);
        }
        Ok(Returned::Now(0, None))
    }

    fn sys_fcntl(&mut self, c: &Call, cmd: &IntArg, arg: &IntArg) -> Result<Returned, Stop> {
        match c.int(cmd)? {
            F_GETFL => Ok(Returned::Now(O_RDWR | if c.nonblocking() { O_NONBLOCK } else { 0 }, None)),
            F_SETFL => {
                let flags = c.int(arg)?;
                if let Some(so) = self.socket_mut(c.fd) {
                    so.nonblocking = flags & O_NONBLOCK != 0;
                }
                Ok(Returned::Now(0, None))
            }
            other => Err(Stop::Skip(format!("line {}: fcntl command {other} is not modelled", c.line))),
        }
    }

    fn sys_setsockopt(
        &mut self,
        c: &Call,
        opt: &SockOpt,
        val: Option<i64>,
        cc_name: &Option<String>,
    ) -> Result<Returned, Stop> {
        match opt {
            SockOpt::TcpMaxseg => {
                // tp->rx_opt.user_mss (the plan let it through before the
                // connection only).
                self.user_mss = val.unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
            }
            SockOpt::TcpNotsentLowat => {
                // tp->notsent_lowat; 0 falls back to the sysctl
                // (tcp_notsent_lowat()).
                self.notsent_lowat = val.unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
                let lowat = self.effective_notsent_lowat();
                if let Some(conn) = self.conn.as_mut() {
                    conn.set_notsent_lowat(lowat);
                }
            }
            SockOpt::TcpCork => {
                let on = val.unwrap_or(0) != 0;
                self.cork = on;
                if let Some(conn) = self.conn.as_mut() {
                    conn.set_cork(on);
                }
            }
            SockOpt::TcpNodelay => {
                let on = val.unwrap_or(0) != 0;
                self.nodelay = on;
                if let Some(conn) = self.conn.as_mut() {
                    conn.set_nodelay(on);
                }
            }
            SockOpt::TcpUserTimeout => {
                self.user_timeout = val.unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
                if let Some(conn) = self.conn.as_mut() {
                    conn.set_user_timeout(self.user_timeout);
                }
            }
            SockOpt::TcpCongestion => {
                let cc = cc_name.as_deref().and_then(|n| crate::sysctl::congestion_control(n, &self.harness.cubic));
                match cc {
                    Some(cc) => self.harness.cfg.congestion_control = cc,
                    None => {
                        return Err(Stop::Skip(format!(
                            "line {}: congestion control {cc_name:?} is not in the model",
                            c.line
                        )))
                    }
                }
            }
            // Folded into the configuration by the plan; the plan
            // skipped the script where that is not equivalent.
            SockOpt::SoSndbuf | SockOpt::SoRcvbuf | SockOpt::SoReuseaddr | SockOpt::IpMtuDiscover | SockOpt::IpTos => {}
            SockOpt::SoError | SockOpt::Other(_) => {
                return Err(Stop::Skip(format!("line {}: unsupported socket option {opt}", c.line)))
            }
        }
        // TCP_NODELAY and TCP_CORK push what is queued at once
        // (tcp_push_pending_frames inside the setsockopt).
        self.after_input()?;
        Ok(Returned::Now(0, None))
    }

    /// `poll()` of the connection (net/ipv4/tcp.c `tcp_poll`, for the
    /// events the model knows: `POLLIN`, `POLLOUT`): the number of ready
    /// pollfds, `revents` checked as packetdrill does. Not ready: a call
    /// marked blocking (`...`) waits until it is (or its timeout passes);
    /// a 0 timeout returns 0.
    fn sys_poll(&mut self, c: &Call, events: &IntArg, revents: &IntArg, timeout: &IntArg) -> Result<Returned, Stop> {
        let events = c.int(events)?;
        let want = revents.clone().ok();
        let timeout_ms = c.int(timeout)?;
        let got = self.poll_revents(events);
        if got != 0 {
            if let Some(w) = want {
                if w != got {
                    return Err(c.error(format!("Bad poll revents: expected: {w:#x} actual: {got:#x}")));
                }
            }
            return Ok(Returned::Now(1, None));
        }
        if let Some(end) = c.end_us {
            let deadline_ns = (timeout_ms >= 0).then(|| self.now + timeout_ms as u64 * 1_000_000);
            self.start_blocking(c, BlockKind::Poll { events, want, deadline_ns }, end, 1);
            return Ok(Returned::Blocked);
        }
        if timeout_ms == 0 {
            return Ok(Returned::Now(0, None));
        }
        Err(c.would_block("poll()"))
    }

    /// `ioctl` on the connection (net/ipv4/tcp.c `tcp_ioctl`): `SIOCINQ`
    /// the readable bytes (`tcp_inq`, a FIN not counted), `SIOCOUTQ`
    /// `write_seq - snd_una`, `SIOCOUTQNSD` `write_seq - snd_nxt`; `EINVAL`
    /// on a listener.
    fn sys_ioctl(&mut self, c: &Call, request: &IntArg, want: Option<i64>) -> Result<Returned, Stop> {
        let request = c.int(request)?;
        let conn = match self.conn.as_ref() {
            Some(conn) if c.is_conn() => conn,
            _ => return Ok(Returned::Now(-1, Some(Errno::Einval))),
        };
        let got = match request {
            SIOCINQ => {
                if matches!(conn.state(), TcpState::SynSent | TcpState::SynReceived) {
                    0
                } else {
                    conn.readable() as i64
                }
            }
            SIOCOUTQ => conn.outq() as i64,
            _ => conn.outq_not_sent() as i64,
        };
        if let Some(w) = want {
            if w != got {
                return Err(c.error(format!("Bad ioctl optval: expected: {w} actual: {got}")));
            }
        }
        Ok(Returned::Now(0, None))
    }

    fn sys_getsockopt(&mut self, c: &Call, opt: &SockOpt, want: Option<i64>) -> Result<Returned, Stop> {
        let got = match opt {
            SockOpt::SoError => {
                let refused = self.conn.as_ref().is_some_and(|conn| conn.state() == TcpState::Closed);
                if refused {
                    Errno::Econnrefused.info().0
                } else {
                    0
                }
            }
            SockOpt::TcpNotsentLowat => self.notsent_lowat as i64,
            SockOpt::TcpMaxseg => match self.conn.as_ref() {
                Some(conn) if c.is_conn() => conn.maxseg() as i64,
                _ => tcplab_core::connection::maxseg_unconnected(self.user_mss) as i64,
            },
            SockOpt::SoSndbuf => match self.plan.so_sndbuf {
                Some(v) => (v as i64) * 2,
                None => {
                    let why = "without a prior setsockopt needs Connection::sndbuf() (sk_sndbuf)";
                    return Err(Stop::Skip(format!("line {}: getsockopt(SO_SNDBUF) {why}", c.line)));
                }
            },
            other => return Err(Stop::Skip(format!("line {}: unsupported socket option getsockopt({other})", c.line))),
        };
        if let Some(w) = want {
            if w != got {
                return Err(c.error(format!("Bad getsockopt optval: expected: {w} actual: {got}")));
            }
        }
        Ok(Returned::Now(0, None))
    }
}

/// `how` of `shutdown(2)`, as the plan checked it (0, 1 or 2).
fn shutdown_how(how: Option<i64>) -> Shutdown {
    match how {
        Some(0) => Shutdown::Read,
        Some(2) => Shutdown::Both,
        _ => Shutdown::Write,
    }
}

/// `end_syscall`'s checks of the return value and errno.
fn check_result(expected: i64, ret: i64, errno: Option<Errno>, want_errno: Option<&str>) -> Result<(), String> {
    if ret != expected {
        return Err(match errno.map(Errno::info) {
            Some((n, text)) if ret < 0 => format!("Expected result {expected} but got {ret} with errno {n} ({text})"),
            _ => format!("Expected result {expected} but got {ret}"),
        });
    }
    if let Some(w) = want_errno {
        let (wn, wt) = Errno::from_name(w).map(Errno::info).ok_or_else(|| format!("unknown errno name {w}"))?;
        let (an, at) = errno.map(Errno::info).unwrap_or((0, "Success"));
        if wn != an {
            return Err(format!("Expected errno {wn} ({wt}) but got {an} ({at})"));
        }
    }
    Ok(())
}
