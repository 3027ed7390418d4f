//! The applications, one client and one server thread per flow, on real
//! sockets: netperf-like bulk transfer and request/response.
//!
//! They follow the simulator's applications (tcplab-sim's `app.rs`): the
//! bulk client keeps the send buffer full until its byte count or stop
//! time, then closes (the FIN follows the queued data); the server reads
//! everything and closes on EOF. The RPC client has one transaction
//! outstanding, measures each from the request's `write()` to the `read()`
//! that completes the response, and closes after its last one.
//!
//! A run's client closes with `shutdown(SHUT_WR)` and reads to EOF: the
//! server's FIN is what ends the run (`closed_ns`, the simulator's client
//! reaching TIME-WAIT), and the next run connects `gap_ns` later.

use crate::clock;
use crate::flows::{Flow, Scenario};
use crate::job::App;
use crate::sock;
use crate::tcp_info;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;

/// Bulk writes and the largest request/response write.
const CHUNK: usize = 256 * 1024;
/// The bulk server's reads: large, so that one wake-up drains what has
/// arrived and the receive window never closes because of the reader, but
/// not so large that many flows strain a small guest's memory (a read
/// touches as much of the buffer as it returns).
const SINK_READ: usize = 256 * 1024;
/// The listen backlog: one connection per run, one run at a time.
pub const BACKLOG: libc::c_int = 4;

fn parse_ip(what: &str, s: &str) -> Result<IpAddr, String> {
    s.parse().map_err(|e| format!("{what} {s:?}: {e}"))
}

/// A flow's listening socket, created on the calling thread (which must
/// be inside the server's namespace: the socket, and every connection it
/// accepts, belong to the namespace it is created in): `SO_REUSEADDR`, the server's socket
/// options, bound to `server_addr:server_port`. Accepted sockets inherit
/// the options.
pub fn listen(flow: &crate::job::FlowJob) -> Result<TcpListener, String> {
    let ip = parse_ip("server_addr", &flow.server_addr)?;
    let addr = SocketAddr::new(ip, flow.server_port);
    let fd = sock::tcp_socket(ip).map_err(|e| format!("socket: {e}"))?;
    sock::set_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1).map_err(|e| format!("SO_REUSEADDR: {e}"))?;
    sock::apply_opts(fd.as_raw_fd(), &flow.server_sock, &flow.cc, flow.nodelay)?;
    sock::bind(fd.as_raw_fd(), addr).map_err(|e| format!("bind {addr}: {e}"))?;
    sock::listen(fd.as_raw_fd(), BACKLOG).map_err(|e| format!("listen on {addr}: {e}"))?;
    Ok(TcpListener::from(fd))
}

/// The server thread of flow `f`, with the listener it made: accepts one
/// connection per run, in order, and serves it to EOF.
pub fn server(sc: &Scenario, f: usize, listener: TcpListener) {
    let flow = &sc.flows[f];
    for k in 0..flow.runs() {
        let stream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    sc.errors.push(format!("flow {} run {k}: server: accept: {e}", flow.job.id));
                    return;
                }
            }
        };
        let r = match flow.job.app {
            App::Bulk { .. } => sink(sc, flow, k, &stream),
            App::Rpc { request, response, .. } => rpc_server(flow, k, &stream, request.max(1), response.max(1)),
        };
        if let Err(e) = r {
            sc.errors.push(format!("flow {} run {k}: server: {e}", flow.job.id));
        }
        // Dropping the stream closes it: the FIN that ends the client's run.
    }
}

/// Bulk server: reads to EOF; the run completed when the last byte was
/// read (at EOF if none came).
fn sink(sc: &Scenario, flow: &Flow, k: usize, mut stream: &TcpStream) -> Result<(), String> {
    let mut buf = vec![0u8; SINK_READ];
    let mut last = None;
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                flow.add_bytes(k, n as u64);
                last = Some(sc.epoch.elapsed());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    flow.set_completed(k, last.unwrap_or_else(|| sc.epoch.elapsed()));
    Ok(())
}

/// RPC server: counts request bytes on the stream and answers every whole
/// request with `response` bytes; returns at EOF.
fn rpc_server(flow: &Flow, k: usize, mut stream: &TcpStream, request: u64, response: u64) -> Result<(), String> {
    let mut buf = vec![0u8; 64 * 1024];
    let zeros = vec![0u8; (response as usize).min(CHUNK)];
    let mut partial = 0u64;
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read: {e}")),
        };
        flow.add_bytes(k, n);
        partial += n;
        let whole = partial / request;
        partial %= request;
        write_zeros(stream, &zeros, whole.saturating_mul(response)).map_err(|e| format!("write response: {e}"))?;
    }
}

/// Writes `total` zero bytes, blocking.
fn write_zeros(mut stream: &TcpStream, zeros: &[u8], mut total: u64) -> io::Result<()> {
    while total > 0 {
        let n = (zeros.len() as u64).min(total) as usize;
        stream.write_all(&zeros[..n])?;
        total -= n as u64;
    }
    Ok(())
}

/// When a run's application stops (scenario time): the application's
/// absolute stop time or `duration_each_ns` after the run's start,
/// whichever comes first.
pub fn stop_time(app_stop: Option<u64>, run_start: u64, each: Option<u64>) -> Option<u64> {
    [app_stop, each.map(|d| run_start.saturating_add(d))].into_iter().flatten().min()
}

/// The client thread of flow `f`, already inside the client namespace
/// (its sockets are created there): runs each run in turn. A failed run
/// ends the flow (the next one would have no close time to start from).
pub fn client(sc: &Scenario, f: usize) {
    let flow = &sc.flows[f];
    let job = &flow.job;
    let mut prev_closed = 0u64;
    for k in 0..flow.runs() {
        let start = if k == 0 { job.start_ns } else { prev_closed.saturating_add(job.gap_ns) };
        sc.epoch.sleep_until(start);
        match client_run(sc, flow, k) {
            Ok(closed) => prev_closed = closed,
            Err(e) => {
                sc.errors.push(format!("flow {} run {k}: client: {e}", job.id));
                return;
            }
        }
    }
}

/// One run of the client: socket, options, bind, connect, application,
/// close. Returns when the run's connection closed (scenario time).
fn client_run(sc: &Scenario, flow: &Flow, k: usize) -> Result<u64, String> {
    let job = &flow.job;
    let local = SocketAddr::new(parse_ip("client_addr", &job.client_addr)?, job.client_ports[k]);
    let remote = SocketAddr::new(parse_ip("server_addr", &job.server_addr)?, job.server_port);
    let fd = sock::tcp_socket(local.ip()).map_err(|e| format!("socket: {e}"))?;
    sock::set_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1).map_err(|e| format!("SO_REUSEADDR: {e}"))?;
    sock::apply_opts(fd.as_raw_fd(), &job.client_sock, &job.cc, job.nodelay)?;
    sock::bind(fd.as_raw_fd(), local).map_err(|e| format!("bind {local}: {e}"))?;

    let start = sc.epoch.elapsed();
    flow.begin_run(k, start, fd.as_raw_fd());
    let stream = TcpStream::from(fd);
    let r = sock::connect(stream.as_raw_fd(), remote)
        .map_err(|e| format!("connect {local} -> {remote}: {e}"))
        .and_then(|()| match job.app {
            App::Bulk { bytes, stop_ns } => {
                bulk_client(sc, &stream, bytes, stop_time(stop_ns, start, job.duration_each_ns))
            }
            App::Rpc { request, response, think_ns, count, stop_ns } => {
                let stop = stop_time(stop_ns, start, job.duration_each_ns);
                let rpc = Rpc { request: request.max(1), response: response.max(1), think_ns, count, stop };
                rpc_client(sc, flow, k, &stream, &rpc)
            }
        });
    // The run's final TCP_INFO, before the close.
    let info = tcp_info::read(stream.as_raw_fd()).ok().map(|i| i.to_out());
    match r {
        Ok(closed) => {
            flow.end_run(k, stream, Some(closed), info);
            Ok(closed)
        }
        Err(e) => {
            flow.end_run(k, stream, None, info);
            Err(e)
        }
    }
}

/// Bulk client: writes zeros as fast as the socket takes them until
/// `bytes` are written or the stop time (scenario ns). Non-blocking writes
/// with a wait bounded by the stop time, so that a full send buffer cannot
/// hold the stop back.
fn bulk_client(sc: &Scenario, stream: &TcpStream, bytes: Option<u64>, stop: Option<u64>) -> Result<u64, String> {
    let deadline = stop.map(|s| sc.epoch.at(s));
    let zeros = vec![0u8; CHUNK];
    let mut left = bytes;
    let mut w = stream;
    stream.set_nonblocking(true).map_err(|e| format!("O_NONBLOCK: {e}"))?;
    loop {
        if left == Some(0) || deadline.is_some_and(|d| clock::now_ns() >= d) {
            break;
        }
        let n = left.map_or(CHUNK, |l| l.min(CHUNK as u64) as usize);
        match w.write(&zeros[..n]) {
            Ok(0) => return Err("write accepted nothing".into()),
            Ok(m) => {
                if let Some(l) = &mut left {
                    *l -= m as u64;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !sock::wait_writable(stream.as_raw_fd(), deadline).map_err(|e| format!("ppoll: {e}"))? {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    stream.set_nonblocking(false).map_err(|e| format!("O_NONBLOCK: {e}"))?;
    close_and_wait(sc, stream)
}

/// An RPC client's parameters for one run (sizes at least 1, as in the
/// simulator).
struct Rpc {
    request: u64,
    response: u64,
    think_ns: u64,
    count: Option<u64>,
    /// Scenario time after which no new transaction starts.
    stop: Option<u64>,
}

/// RPC client: transactions until `count` or the stop time (the one in
/// progress completes), `think_ns` apart. The run completed at the last
/// response read (at the stop if there was none).
fn rpc_client(sc: &Scenario, flow: &Flow, k: usize, mut stream: &TcpStream, p: &Rpc) -> Result<u64, String> {
    let stop_abs = p.stop.map(|s| sc.epoch.at(s));
    let zeros = vec![0u8; (p.request as usize).min(CHUNK)];
    let mut buf = vec![0u8; 64 * 1024];
    let mut done = 0u64;
    let mut last = None;
    loop {
        if p.count.is_some_and(|c| done >= c) || stop_abs.is_some_and(|s| clock::now_ns() >= s) {
            break;
        }
        let t = clock::now_ns();
        write_zeros(stream, &zeros, p.request).map_err(|e| format!("write request: {e}"))?;
        let mut got = 0u64;
        while got < p.response {
            let want = (p.response - got).min(buf.len() as u64) as usize;
            match stream.read(&mut buf[..want]) {
                Ok(0) => return Err(format!("EOF after {got} of {} response bytes", p.response)),
                Ok(n) => {
                    got += n as u64;
                    flow.add_bytes(k, n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("read response: {e}")),
            }
        }
        let now = clock::now_ns();
        flow.add_rpc(k, now.saturating_sub(t));
        done += 1;
        last = Some(now);
        if p.think_ns > 0 {
            let wake = now.saturating_add(p.think_ns);
            clock::sleep_until(stop_abs.map_or(wake, |s| wake.min(s)));
        }
    }
    flow.set_completed(k, last.map_or_else(|| sc.epoch.elapsed(), |t| t.saturating_sub(sc.epoch.t0)));
    close_and_wait(sc, stream)
}

/// Sends the FIN and waits for the server's: returns when EOF was read.
fn close_and_wait(sc: &Scenario, mut stream: &TcpStream) -> Result<u64, String> {
    stream.shutdown(Shutdown::Write).map_err(|e| format!("shutdown: {e}"))?;
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(sc.epoch.elapsed()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("read to EOF: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_is_the_earlier_of_the_two_limits() {
        assert_eq!(stop_time(None, 5, None), None);
        assert_eq!(stop_time(Some(100), 5, None), Some(100));
        assert_eq!(stop_time(None, 5, Some(10)), Some(15));
        assert_eq!(stop_time(Some(12), 5, Some(10)), Some(12));
        assert_eq!(stop_time(Some(100), u64::MAX, Some(10)), Some(100));
    }
}
