//! The symbolic constants a script may write in system call arguments
//! (`AF_INET`, `O_NONBLOCK`, `MSG_EOR`, ...) with their Linux x86-64
//! values, and the integer value of an argument, for decoding system
//! calls ([`syscall`]) and for the constants the driver compares with.
//!
//! [`syscall`]: crate::syscall

use crate::ast::Expr;

/// `MSG_EOR` (include/linux/socket.h): end of record, as `send` flags.
pub const MSG_EOR: i64 = 0x80;
/// `MSG_MORE` (include/linux/socket.h): more data follows (cork this call).
pub const MSG_MORE: i64 = 0x8000;
/// `SIOCINQ` = `FIONREAD` (include/uapi/asm-generic/ioctls.h): bytes
/// readable.
pub const SIOCINQ: i64 = 0x541B;
/// `SIOCOUTQ` = `TIOCOUTQ`: bytes written and not yet acknowledged.
pub const SIOCOUTQ: i64 = 0x5411;
/// `SIOCOUTQNSD` (include/uapi/linux/sockios.h): bytes written, not sent.
pub const SIOCOUTQNSD: i64 = 0x894B;
/// `POLLIN` (include/uapi/asm-generic/poll.h).
pub const POLLIN: i64 = 0x1;
/// `POLLOUT`.
pub const POLLOUT: i64 = 0x4;
/// `O_NONBLOCK` (include/uapi/asm-generic/fcntl.h, x86-64).
pub const O_NONBLOCK: i64 = 0x800;
/// `O_RDWR` (include/uapi/asm-generic/fcntl.h).
pub const O_RDWR: i64 = 2;
/// `F_GETFL` (include/uapi/asm-generic/fcntl.h).
pub const F_GETFL: i64 = 3;
/// `F_SETFL` (include/uapi/asm-generic/fcntl.h).
pub const F_SETFL: i64 = 4;

/// Symbolic constants a script may use in system call arguments.
pub fn symbol(w: &str) -> Option<i64> {
    Some(match w {
        "AF_INET" => 2,
        "AF_INET6" => 10,
        "SOCK_STREAM" => 1,
        "IPPROTO_IP" | "SOL_IP" => 0,
        "IPPROTO_TCP" | "SOL_TCP" => 6,
        "SOL_SOCKET" => 1,
        "SO_REUSEADDR" => 2,
        "SO_ERROR" => 4,
        "SO_SNDBUF" => 7,
        "SO_RCVBUF" => 8,
        "SO_KEEPALIVE" => 9,
        "TCP_NODELAY" => 1,
        "TCP_MAXSEG" => 2,
        "TCP_CORK" => 3,
        "TCP_INFO" => 11,
        "TCP_CONGESTION" => 13,
        "TCP_USER_TIMEOUT" => 18,
        "IP_TOS" => 1,
        "IP_MTU_DISCOVER" => 10,
        "IP_PMTUDISC_DONT" => 0,
        "IP_PMTUDISC_WANT" => 1,
        "IP_PMTUDISC_DO" => 2,
        "IP_PMTUDISC_PROBE" => 3,
        "F_GETFL" => F_GETFL,
        "F_SETFL" => F_SETFL,
        "O_RDONLY" => 0,
        "O_WRONLY" => 1,
        "O_RDWR" => O_RDWR,
        "O_NONBLOCK" => O_NONBLOCK,
        "MSG_EOR" => MSG_EOR,
        "MSG_MORE" => MSG_MORE,
        "MSG_DONTWAIT" => 0x40,
        "SIOCINQ" | "FIONREAD" => SIOCINQ,
        "SIOCOUTQ" | "TIOCOUTQ" => SIOCOUTQ,
        "SIOCOUTQNSD" => SIOCOUTQNSD,
        "POLLIN" => POLLIN,
        "POLLPRI" => 0x2,
        "POLLOUT" => POLLOUT,
        "POLLERR" => 0x8,
        "POLLHUP" => 0x10,
        "POLLRDNORM" => 0x40,
        "POLLWRNORM" => 0x100,
        "TCP_NOTSENT_LOWAT" => 25,
        "SHUT_RD" => 0,
        "SHUT_WR" => 1,
        "SHUT_RDWR" => 2,
        _ => return None,
    })
}

/// Integer value of a system call argument (numbers, symbols, `a|b`).
pub fn eval_int(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Word(w) => symbol(w),
        Expr::Or(a, b) => Some(eval_int(a)? | eval_int(b)?),
        _ => None,
    }
}
