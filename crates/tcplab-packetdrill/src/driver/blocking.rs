//! A system call marked blocking (`+.1...0.2 write(...)`): it starts at
//! its time, progresses as the endpoint frees it, and its return time and
//! value are checked when the next system call starts or at the end.

use super::syscalls::Call;
use super::{established, fail, ns, secs, us, Driver, Stop, MISSING_PACKET_US};
use crate::symbols::{POLLIN, POLLOUT};
use tcplab_core::connection::MsgFlags;
use tcplab_core::{Instant, TcpState};

#[derive(Clone, Copy, Debug)]
pub(super) enum BlockKind {
    /// `flags`: `MSG_EOR`, `MSG_MORE` of `send`/`sendmsg`.
    Write {
        remaining: u64,
        flags: MsgFlags,
    },
    Connect,
    Accept {
        fd: i64,
    },
    Read {
        max: u64,
    },
    /// `poll()` for `events`, done when the ready events are `want`
    /// (any, if the script gives none) or at `deadline_ns` (returns 0).
    Poll {
        events: i64,
        want: Option<i64>,
        deadline_ns: Option<u64>,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Blocking {
    pub(super) line: u32,
    pub(super) name: &'static str,
    pub(super) kind: BlockKind,
    /// Expected return time, µs.
    pub(super) end_us: i64,
    pub(super) expected: i64,
    /// Return value once done.
    pub(super) ret: i64,
    pub(super) done_ns: Option<u64>,
}

impl Driver<'_> {
    /// `tcp_poll`'s mask for `events` (`POLLIN`, `POLLOUT` and their
    /// `RDNORM`/`WRNORM` twins).
    pub(super) fn poll_revents(&self, events: i64) -> i64 {
        let Some(conn) = self.conn.as_ref() else { return 0 };
        let mut mask = 0;
        if conn.readable() > 0 || conn.read_closed() || conn.read_shutdown() {
            mask |= POLLIN | 0x40;
        }
        if conn.poll_writable() {
            mask |= POLLOUT | 0x100;
        }
        mask & events
    }

    /// Advances a pending blocking call; `true` if the endpoint was called.
    pub(super) fn progress_blocking(&mut self) -> bool {
        if let Some(Blocking { kind: BlockKind::Poll { events, want, deadline_ns }, done_ns: None, .. }) = self.blocking
        {
            let got = self.poll_revents(events);
            let ready = got != 0 && want.map_or(true, |w| w == got);
            let timed_out = deadline_ns.is_some_and(|d| self.now >= d);
            if ready || timed_out {
                if let Some(b) = self.blocking.as_mut() {
                    b.ret = if ready { 1 } else { 0 };
                    b.done_ns = Some(self.now);
                }
            }
            return false;
        }
        let Some(b) = self.blocking.as_mut() else { return false };
        if b.done_ns.is_some() {
            return false;
        }
        let Some(conn) = self.conn.as_mut() else { return false };
        match &mut b.kind {
            BlockKind::Write { remaining, flags } => {
                // The writer sleeps until sk_stream_write_space finds the
                // socket writeable (__sk_stream_is_writeable(sk, 1)).
                if *remaining > 0 && conn.poll_writable() {
                    let n = conn.send_msg_at(Instant::from_nanos(self.now), *remaining, *flags);
                    *remaining -= n;
                    if *remaining == 0 {
                        b.done_ns = Some(self.now);
                    }
                    return n > 0;
                }
                false
            }
            BlockKind::Connect => {
                if conn.state() != TcpState::SynSent && conn.state() != TcpState::SynReceived {
                    b.done_ns = Some(self.now);
                    b.ret = if conn.state() == TcpState::Closed { -1 } else { 0 };
                }
                false
            }
            BlockKind::Accept { fd } => {
                if established(conn.state()) {
                    b.done_ns = Some(self.now);
                    b.ret = *fd;
                    self.conn_fd = Some(*fd);
                }
                false
            }
            BlockKind::Read { max } => {
                let n = conn.read(*max);
                if n > 0 || conn.state() == TcpState::Closed {
                    b.done_ns = Some(self.now);
                    b.ret = n as i64;
                }
                n > 0
            }
            // Handled above, without the endpoint.
            BlockKind::Poll { .. } => false,
        }
    }

    /// Lets a pending blocking call return (only timers can free it by
    /// now) and checks its return time and value, as packetdrill does
    /// before the next system call starts and at the end.
    pub(super) fn finish_blocking(&mut self) -> Result<(), Stop> {
        let Some(b) = self.blocking.clone() else { return Ok(()) };
        if b.done_ns.is_none() {
            // The call is still blocked: nothing but timers can free it now.
            let limit = ns(b.end_us.max(us(self.now)) + MISSING_PACKET_US);
            while self.blocking.as_ref().is_some_and(|x| x.done_ns.is_none()) {
                let next = self
                    .conn
                    .as_ref()
                    .and_then(|c| super::time::next_deadline(c.poll_timeout(), self.pace_wake))
                    .map(|d| d.as_nanos().max(self.now));
                match next {
                    Some(d) if d <= limit => self.advance_to(d)?,
                    _ => break,
                }
                self.progress_blocking();
            }
        }
        let b = self.blocking.take().unwrap_or(b);
        let Some(done) = b.done_ns else {
            return fail(
                b.line,
                format!(
                    "timing error: expected system call return at {} sec but the {}() call was still blocked at {} sec",
                    secs(b.end_us),
                    b.name,
                    secs(us(self.now))
                ),
            );
        };
        let t = us(done);
        let tol = self.plan.tolerance_usecs;
        if t < b.end_us - tol || t > b.end_us + tol {
            return fail(
                b.line,
                format!(
                    "timing error: expected system call return at {} sec but happened at {} sec; tolerance {} sec",
                    secs(b.end_us),
                    secs(t),
                    secs(tol)
                ),
            );
        }
        if b.ret != b.expected {
            return fail(
                b.line,
                format!("runtime error in {} call: Expected result {} but got {}", b.name, b.expected, b.ret),
            );
        }
        Ok(())
    }

    /// Starts blocking call `c`, which is to return `ret` at `end_us`.
    pub(super) fn start_blocking(&mut self, c: &Call, kind: BlockKind, end_us: i64, ret: i64) {
        let name = c.name;
        self.trace(format!("{} blocking {name}() started, expected to return at {}", secs(us(self.now)), secs(end_us)));
        self.blocking = Some(Blocking { line: c.line, name, kind, end_us, expected: c.expected, ret, done_ns: None });
        self.progress_blocking();
    }
}
