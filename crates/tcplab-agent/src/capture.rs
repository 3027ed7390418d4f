//! Packet capture in the guest, for aligning the kernel's packet trace
//! with the model's (`tcplab align`, docs/ALIGNMENT.md).
//!
//! One `AF_PACKET` socket per capture point (a device in a namespace,
//! [`CapturePoint`]), bound to that device, each read by its own thread.
//! The sockets are `SOCK_DGRAM` for `ETH_P_IP`: the kernel hands over the
//! IP packet without its Ethernet header (MACs are arbitrary, and static),
//! and `sll_pkttype` says whether the device sent it (`PACKET_OUTGOING`,
//! seen by `dev_queue_xmit_nit` when the qdisc tree released it) or
//! received it (seen by `__netif_receive_skb_core` when it arrived: for a
//! link with a delay, when the direction's netem released it).
//!
//! **Timestamps.** Each record carries `CLOCK_MONOTONIC` read right after
//! `recvfrom` returns, not the socket's own timestamp (`SO_TIMESTAMPNS`
//! would give `CLOCK_REALTIME`, and for outgoing TCP skbs the EDT
//! departure time would have to be told apart). Under UML's
//! `time-travel=inf-cpu` this is exact: the guest's clock advances only
//! while every thread is idle, and a reader woken by a queued packet is
//! runnable, so no virtual time passes between the packet reaching the
//! socket and the reader's clock read.
//!
//! **File.** Created by [`preopen`] before the agent mounts anything (so a
//! host path under `/tmp` is not hidden by the guest's tmpfs), written
//! through one buffered writer shared by the readers (a lock per packet,
//! no allocation per packet), flushed by [`Capture::finish`] at the end of
//! the run. Layout, little-endian:
//!
//! - header: [`MAGIC`] (8 bytes), version `u32` ([`FORMAT_VERSION`]);
//! - packet records: `t_ns: u64` (absolute `CLOCK_MONOTONIC`), `point:
//!   u16` (index in [`CaptureJob::points`]), `kind: u8` ([`KIND_IN`] or
//!   [`KIND_OUT`]), `caplen: u8`, `wire_len: u32` (the IP packet's
//!   length), then `caplen` bytes: the IPv4 and TCP headers with options
//!   (at most [`MAX_HEADERS`]);
//! - trailer records written by [`Capture::finish`]: kind [`KIND_DROPS`]
//!   (per point: `wire_len` = the socket's `tp_drops`, packets the reader
//!   lost to a full receive buffer) and kind [`KIND_T0`] (`t_ns` = the
//!   scenario's `t0`), both with `caplen` 0.
//!
//! [`read`] parses a file back (host side).

use crate::netns;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The first bytes of a capture file.
pub const MAGIC: [u8; 8] = *b"TCPLCAP\0";
/// The format's version, after [`MAGIC`].
pub const FORMAT_VERSION: u32 = 1;
/// The packet arrived on the device.
pub const KIND_IN: u8 = 0;
/// The device sent the packet.
pub const KIND_OUT: u8 = 1;
/// Trailer: `wire_len` = packets the point's socket dropped.
pub const KIND_DROPS: u8 = 2;
/// Trailer: `t_ns` = `t0`.
pub const KIND_T0: u8 = 3;
/// Bytes kept per packet: IPv4 (≤ 60) and TCP (≤ 60) headers.
pub const MAX_HEADERS: usize = 120;
/// A record's fixed part.
const RECORD_HEAD: usize = 16;
/// Each socket's receive buffer (`SO_RCVBUFFORCE`): room for a burst
/// while the reader is not scheduled. Drops are counted in the trailer.
const RCVBUF: libc::c_int = 32 << 20;

/// Where to capture: a device in a namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturePoint {
    /// Network namespace (under `/run/netns/`).
    pub ns: String,
    pub dev: String,
}

/// The job's capture: the points, and the file (a host path, through
/// hostfs) the records go to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureJob {
    pub path: String,
    pub points: Vec<CapturePoint>,
}

/// The file opened by [`preopen`], taken by [`start`].
static PREOPENED: Mutex<Option<File>> = Mutex::new(None);

/// Creates the capture file of `job`, if it asks for one, before the
/// agent's mounts could hide its path.
pub fn preopen(job: &crate::job::Job) -> Result<(), String> {
    let Some(c) = &job.capture else { return Ok(()) };
    let f = File::create(&c.path).map_err(|e| format!("capture file {}: {e}", c.path))?;
    *PREOPENED.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    Ok(())
}

struct Shared {
    w: Mutex<BufWriter<File>>,
    /// Set by [`Capture::finish`]: readers write nothing more.
    done: AtomicBool,
}

/// A running capture (or none, when the job asks for none).
pub struct Capture {
    shared: Option<Arc<Shared>>,
    /// One socket per point (duplicates of the readers', for statistics).
    stats: Vec<OwnedFd>,
}

/// Opens every point's socket, each in its namespace on a thread of its
/// own that then reads until the process ends. Returns once every socket
/// is open (or the first error, naming the point).
pub fn start(job: &crate::job::Job) -> Result<Capture, String> {
    let Some(c) = &job.capture else { return Ok(Capture { shared: None, stats: Vec::new() }) };
    let file = PREOPENED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(|| format!("capture file {}: not opened before the set-up", c.path))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    w.write_all(&MAGIC)
        .and_then(|()| w.write_all(&FORMAT_VERSION.to_le_bytes()))
        .map_err(|e| format!("capture file {}: {e}", c.path))?;
    let shared = Arc::new(Shared { w: Mutex::new(w), done: AtomicBool::new(false) });
    let mut stats = Vec::new();
    for (i, p) in c.points.iter().enumerate() {
        let (tx, rx) = mpsc::channel();
        let (p, sh) = (p.clone(), Arc::clone(&shared));
        let what = format!("capture point {} in {}", p.dev, p.ns);
        std::thread::Builder::new()
            .name(format!("capture {i}"))
            .spawn(move || {
                let opened = netns::enter(&p.ns).and_then(|()| open_socket(&p.dev).map_err(|e| e.to_string()));
                match opened {
                    Ok(fd) => {
                        let dup = fd.try_clone().map_err(|e| e.to_string());
                        let _ = tx.send(dup);
                        read_loop(&fd, i as u16, &sh);
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| format!("{what}: cannot start a thread: {e}"))?;
        let fd = rx.recv().map_err(|_| format!("{what}: the thread ended"))?.map_err(|e| format!("{what}: {e}"))?;
        stats.push(fd);
    }
    Ok(Capture { shared: Some(shared), stats })
}

fn open_socket(dev: &str) -> io::Result<OwnedFd> {
    let proto = (libc::ETH_P_IP as u16).to_be();
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, proto as libc::c_int) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let name = CString::new(dev).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in device name"))?;
    // SAFETY: `name` is a valid C string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no device {dev}")));
    }
    let size = RCVBUF;
    // SAFETY: the option value is a c_int of the given size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll of the given size.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// Reads packets until the socket fails (never, in a run: the thread is
/// left behind when the process ends). One stack buffer, no allocation.
fn read_loop(fd: &OwnedFd, point: u16, sh: &Shared) {
    let mut rec = [0u8; RECORD_HEAD + MAX_HEADERS];
    loop {
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut slen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        let buf = &mut rec[RECORD_HEAD..];
        // SAFETY: `buf` is writable for its length; `sll` and `slen`
        // describe a valid address buffer. MSG_TRUNC returns the
        // packet's full length even though only the headers are copied.
        let n = unsafe {
            libc::recvfrom(
                fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_TRUNC,
                (&mut sll as *mut libc::sockaddr_ll).cast(),
                &mut slen,
            )
        };
        let t = crate::clock::now_ns();
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if sh.done.load(Ordering::Relaxed) {
            return;
        }
        let wire = n as usize;
        let caplen = headers_len(&buf[..wire.min(MAX_HEADERS)]);
        let kind = if sll.sll_pkttype == libc::PACKET_OUTGOING { KIND_OUT } else { KIND_IN };
        rec[0..8].copy_from_slice(&t.to_le_bytes());
        rec[8..10].copy_from_slice(&point.to_le_bytes());
        rec[10] = kind;
        rec[11] = caplen as u8;
        rec[12..16].copy_from_slice(&(wire as u32).to_le_bytes());
        let mut w = sh.w.lock().unwrap_or_else(|p| p.into_inner());
        if w.write_all(&rec[..RECORD_HEAD + caplen]).is_err() {
            return;
        }
    }
}

/// The IPv4 and TCP headers' length within `p` (what of them is there):
/// a packet that is not TCP over IPv4 keeps its IP header only.
pub fn headers_len(p: &[u8]) -> usize {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return p.len().min(20);
    }
    let ihl = ((p[0] & 0x0f) as usize * 4).max(20);
    if p[9] != 6 || p.len() < ihl + 20 {
        return ihl.min(p.len());
    }
    let doff = ((p[ihl + 12] >> 4) as usize * 4).max(20);
    (ihl + doff).min(p.len())
}

impl Capture {
    /// Stops recording, appends the trailer (every point's drop count and
    /// `t0`) and flushes the file.
    pub fn finish(self, t0_ns: u64) -> Result<(), String> {
        let Some(sh) = self.shared else { return Ok(()) };
        let mut w = sh.w.lock().unwrap_or_else(|p| p.into_inner());
        sh.done.store(true, Ordering::Relaxed);
        let mut trailer = Vec::with_capacity(RECORD_HEAD * (self.stats.len() + 1));
        for (i, fd) in self.stats.iter().enumerate() {
            let drops = packet_drops(fd).map_err(|e| format!("capture point {i}: PACKET_STATISTICS: {e}"))?;
            push_record(&mut trailer, 0, i as u16, KIND_DROPS, drops);
        }
        push_record(&mut trailer, t0_ns, 0, KIND_T0, 0);
        w.write_all(&trailer).and_then(|()| w.flush()).map_err(|e| format!("capture file: {e}"))
    }
}

fn push_record(out: &mut Vec<u8>, t: u64, point: u16, kind: u8, wire: u32) {
    out.extend_from_slice(&t.to_le_bytes());
    out.extend_from_slice(&point.to_le_bytes());
    out.extend_from_slice(&[kind, 0]);
    out.extend_from_slice(&wire.to_le_bytes());
}

fn packet_drops(fd: &OwnedFd) -> io::Result<u32> {
    let mut st = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` is a writable tpacket_stats of length `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.tp_drops)
}

/// One captured packet, as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Nanoseconds since `t0` (negative: before it).
    pub t_ns: i64,
    pub point: u16,
    /// [`KIND_IN`] or [`KIND_OUT`].
    pub kind: u8,
    pub wire_len: u32,
    /// The IPv4 and TCP headers.
    pub headers: Vec<u8>,
}

/// A capture file, read back.
#[derive(Clone, Debug, Default)]
pub struct CaptureFile {
    pub records: Vec<Record>,
    /// Packets lost per point (the socket's receive buffer was full).
    pub drops: Vec<(u16, u32)>,
    /// Whether the trailer was there (the run reached its end).
    pub complete: bool,
}

/// Parses a capture file; `what` names it in errors.
pub fn read(bytes: &[u8], what: &str) -> Result<CaptureFile, String> {
    if bytes.len() < 12 || bytes[..8] != MAGIC {
        return Err(format!("{what}: not a tcplab capture file"));
    }
    let v = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
    if v != FORMAT_VERSION {
        return Err(format!("{what}: capture format version {v}, expected {FORMAT_VERSION}"));
    }
    let mut out = CaptureFile::default();
    let mut t0 = 0u64;
    let mut raw = Vec::new();
    let mut at = 12;
    while at < bytes.len() {
        let Some(head) = bytes.get(at..at + RECORD_HEAD) else {
            return Err(format!("{what}: truncated record at byte {at}"));
        };
        let t = u64::from_le_bytes(head[0..8].try_into().unwrap_or_default());
        let point = u16::from_le_bytes([head[8], head[9]]);
        let (kind, caplen) = (head[10], head[11] as usize);
        let wire = u32::from_le_bytes(head[12..16].try_into().unwrap_or_default());
        let Some(h) = bytes.get(at + RECORD_HEAD..at + RECORD_HEAD + caplen) else {
            return Err(format!("{what}: truncated record at byte {at}"));
        };
        at += RECORD_HEAD + caplen;
        match kind {
            KIND_IN | KIND_OUT => raw.push((t, point, kind, wire, h.to_vec())),
            KIND_DROPS => out.drops.push((point, wire)),
            KIND_T0 => {
                t0 = t;
                out.complete = true;
            }
            k => return Err(format!("{what}: unknown record kind {k} at byte {at}")),
        }
    }
    out.records = raw
        .into_iter()
        .map(|(t, point, kind, wire_len, headers)| Record {
            t_ns: t as i64 - t0 as i64,
            point,
            kind,
            wire_len,
            headers,
        })
        .collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_len_covers_ip_and_tcp_options() {
        let mut p = [0u8; 100];
        p[0] = 0x45;
        p[9] = 6;
        p[20 + 12] = 8 << 4; // 32-byte TCP header
        assert_eq!(headers_len(&p), 52);
        p[9] = 17; // UDP: the IP header only
        assert_eq!(headers_len(&p), 20);
        assert_eq!(headers_len(&p[..10]), 10);
    }

    #[test]
    fn a_file_reads_back_relative_to_t0() {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let mut rec = Vec::new();
        push_record(&mut rec, 1_500, 1, KIND_OUT, 1500);
        rec[11] = 2;
        rec.extend_from_slice(&[0x45, 0]);
        b.extend_from_slice(&rec);
        push_record(&mut b, 0, 1, KIND_DROPS, 3);
        push_record(&mut b, 1_000, 0, KIND_T0, 0);
        let f = read(&b, "x").unwrap();
        assert!(f.complete);
        assert_eq!(f.drops, vec![(1, 3)]);
        assert_eq!(
            f.records,
            vec![Record { t_ns: 500, point: 1, kind: KIND_OUT, wire_len: 1500, headers: vec![0x45, 0] }]
        );
        assert!(read(&b[..b.len() - 3], "x").unwrap_err().contains("truncated"));
        assert!(read(b"nope", "f").unwrap_err().starts_with("f: not a tcplab"));
    }
}
