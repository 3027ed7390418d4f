//! TCP sockets set up the way the scenario asks, before `listen()` or
//! `connect()`, which `std::net` cannot do (it has no way to set options
//! or bind a client before connecting). Once connected or listening a
//! socket becomes a `std::net::TcpStream` / `TcpListener` for reads,
//! writes, `accept()` and `shutdown()`.
//!
//! Each function is a thin wrapper around one libc call that turns the
//! C error convention into `io::Error`.

use crate::job::SockOpts;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Turns a libc return value into `io::Result` (negative: `errno`).
fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A new blocking TCP socket of `addr`'s family.
pub fn tcp_socket(addr: IpAddr) -> io::Result<OwnedFd> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain socket creation; the result is checked.
    let fd = cvt(unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt` with an `int` value.
pub fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, val: libc::c_int) -> io::Result<()> {
    // SAFETY: `val` is a readable c_int of the size given.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&val as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `TCP_CONGESTION`: the algorithm's name, without a NUL.
pub fn set_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: `name` is readable for its length.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// The options every socket of a flow gets before `listen()` or
/// `connect()`: buffer sizes (if set), the congestion control, Nagle.
pub fn apply_opts(fd: RawFd, opts: &SockOpts, cc: &str, nodelay: bool) -> Result<(), String> {
    if opts.sndbuf > 0 {
        set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, clamp(opts.sndbuf))
            .map_err(|e| format!("SO_SNDBUF {}: {e}", opts.sndbuf))?;
    }
    if opts.rcvbuf > 0 {
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, clamp(opts.rcvbuf))
            .map_err(|e| format!("SO_RCVBUF {}: {e}", opts.rcvbuf))?;
    }
    if !cc.is_empty() {
        set_congestion(fd, cc).map_err(|e| format!("TCP_CONGESTION {cc}: {e}"))?;
    }
    if nodelay {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1).map_err(|e| format!("TCP_NODELAY: {e}"))?;
    }
    Ok(())
}

fn clamp(v: u32) -> libc::c_int {
    v.min(i32::MAX as u32) as libc::c_int
}

/// `addr` as a C socket address and its length.
fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

pub fn bind(fd: RawFd, addr: SocketAddr) -> io::Result<()> {
    let (ss, len) = sockaddr(addr);
    // SAFETY: `ss` holds a valid address of `len` bytes.
    cvt(unsafe { libc::bind(fd, (&ss as *const libc::sockaddr_storage).cast(), len) }).map(drop)
}

pub fn listen(fd: RawFd, backlog: libc::c_int) -> io::Result<()> {
    // SAFETY: plain call on a descriptor.
    cvt(unsafe { libc::listen(fd, backlog) }).map(drop)
}

/// A blocking `connect()`. An interrupted connect goes on in the
/// background: wait for it and read its outcome from `SO_ERROR`.
pub fn connect(fd: RawFd, addr: SocketAddr) -> io::Result<()> {
    let (ss, len) = sockaddr(addr);
    // SAFETY: `ss` holds a valid address of `len` bytes.
    match cvt(unsafe { libc::connect(fd, (&ss as *const libc::sockaddr_storage).cast(), len) }) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {
            wait_writable(fd, None)?;
            match so_error(fd)? {
                0 => Ok(()),
                errno => Err(io::Error::from_raw_os_error(errno)),
            }
        }
        Err(e) => Err(e),
    }
}

/// The pending error of a socket (`SO_ERROR`), cleared by the read.
fn so_error(fd: RawFd) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` is a writable c_int of `len` bytes.
    cvt(unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, (&mut v as *mut libc::c_int).cast(), &mut len)
    })?;
    Ok(v)
}

/// Waits until `fd` is writable (or has an error pending) or until the
/// monotonic clock reaches `deadline_ns`. Returns whether it became
/// writable. `ppoll` rather than `poll`: its timeout has nanosecond
/// resolution, so a stop time is honoured to the nanosecond, not rounded
/// to a millisecond.
pub fn wait_writable(fd: RawFd, deadline_ns: Option<u64>) -> io::Result<bool> {
    loop {
        let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
        let ts = match deadline_ns {
            Some(d) => {
                let now = crate::clock::now_ns();
                if now >= d {
                    return Ok(false);
                }
                Some(crate::clock::timespec(d - now))
            }
            None => None,
        };
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `pfd` is one valid pollfd; `tsp` is null or a valid
        // timespec; the signal mask pointer may be null.
        let rc = unsafe { libc::ppoll(&mut pfd, 1, tsp, std::ptr::null()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc > 0 {
            return Ok(true);
        }
    }
}

/// The local port of a bound socket (tests and messages).
pub fn local_port(fd: &impl AsRawFd) -> io::Result<u16> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `ss` is writable for `len` bytes.
    cvt(unsafe { libc::getsockname(fd.as_raw_fd(), (&mut ss as *mut libc::sockaddr_storage).cast(), &mut len) })?;
    // The port is at the same offset in sockaddr_in and sockaddr_in6.
    // SAFETY: `ss` was filled by the kernel with an AF_INET/AF_INET6 address.
    let sin: libc::sockaddr_in = unsafe { std::ptr::read((&ss as *const libc::sockaddr_storage).cast()) };
    Ok(u16::from_be(sin.sin_port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, TcpListener, TcpStream};

    #[test]
    fn listen_connect_and_options_on_loopback() {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let l = tcp_socket(lo).unwrap();
        set_int(l.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1).unwrap();
        apply_opts(l.as_raw_fd(), &SockOpts { sndbuf: 65536, rcvbuf: 65536 }, "reno", true).unwrap();
        bind(l.as_raw_fd(), SocketAddr::new(lo, 0)).unwrap();
        listen(l.as_raw_fd(), 4).unwrap();
        let port = local_port(&l).unwrap();
        let l = TcpListener::from(l);

        let c = tcp_socket(lo).unwrap();
        apply_opts(c.as_raw_fd(), &SockOpts::default(), "", false).unwrap();
        connect(c.as_raw_fd(), SocketAddr::new(lo, port)).unwrap();
        assert!(wait_writable(c.as_raw_fd(), Some(crate::clock::now_ns() + 1_000_000_000)).unwrap());
        let mut c = TcpStream::from(c);
        let (mut s, _) = l.accept().unwrap();
        c.write_all(b"hi").unwrap();
        let mut b = [0u8; 2];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"hi");
        let info = crate::tcp_info::read(c.as_raw_fd()).unwrap();
        assert_eq!(info.tcpi_state, crate::tcp_info::TCP_ESTABLISHED);
    }

    #[test]
    fn unknown_congestion_control_is_named() {
        let s = tcp_socket(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let e = apply_opts(s.as_raw_fd(), &SockOpts::default(), "no-such-cc", false).unwrap_err();
        assert!(e.starts_with("TCP_CONGESTION no-such-cc: "), "{e}");
    }

    #[test]
    fn wait_writable_times_out_at_the_deadline() {
        // A listening socket never becomes writable.
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let l = tcp_socket(lo).unwrap();
        bind(l.as_raw_fd(), SocketAddr::new(lo, 0)).unwrap();
        listen(l.as_raw_fd(), 1).unwrap();
        let t = crate::clock::now_ns();
        assert!(!wait_writable(l.as_raw_fd(), Some(t + 3_000_000)).unwrap());
        assert!(crate::clock::now_ns() >= t + 3_000_000);
    }
}
