//! Just enough rtnetlink for qdiscs: create a step-marking RED qdisc
//! (`RTM_NEWQDISC`) and dump every qdisc's statistics (`RTM_GETQDISC`).
//!
//! Why not `tc`: `tc` refuses RED's `Wlog = 0` (it derives Wlog from
//! `burst` and never goes below 1), and spawning `tc -s qdisc show` per
//! sample and parsing its text would be slow and fragile. The messages are
//! small, so they are encoded and decoded here by hand, in host byte order
//! as netlink wants, following include/uapi/linux/{netlink,rtnetlink,
//! pkt_sched,gen_stats}.h of Linux 6.12.
//!
//! A netlink socket belongs to the namespace of the thread that created
//! it, for its whole life; [`RouteSocket::open`] must therefore be called
//! from a thread inside the namespace to be managed.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// include/uapi/linux/netlink.h
const NLMSG_HDRLEN: usize = 16;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x01;
const NLM_F_ACK: u16 = 0x04;
const NLM_F_DUMP: u16 = 0x300;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
/// In an ACK: the echoed request is only its header (`NETLINK_CAP_ACK`).
const NLM_F_CAPPED: u16 = 0x100;
/// In an ACK: extended-ACK attributes follow (`NETLINK_EXT_ACK`).
const NLM_F_ACK_TLVS: u16 = 0x200;
const NLMSGERR_ATTR_MSG: u16 = 1;
/// `nla_type` bits that are flags, not the type.
const NLA_TYPE_MASK: u16 = !(0x8000 | 0x4000);
const SOL_NETLINK: libc::c_int = 270;
const NETLINK_CAP_ACK: libc::c_int = 10;
const NETLINK_EXT_ACK: libc::c_int = 11;

// include/uapi/linux/rtnetlink.h
pub const RTM_NEWQDISC: u16 = 36;
pub const RTM_GETQDISC: u16 = 38;
/// `sizeof(struct tcmsg)`.
const TCMSG_LEN: usize = 20;
const TCA_KIND: u16 = 1;
const TCA_OPTIONS: u16 = 2;
const TCA_STATS: u16 = 3;
const TCA_XSTATS: u16 = 4;
const TCA_STATS2: u16 = 7;

// include/uapi/linux/gen_stats.h
const TCA_STATS_BASIC: u16 = 1;
const TCA_STATS_QUEUE: u16 = 3;
const TCA_STATS_PKT64: u16 = 8;

// include/uapi/linux/pkt_sched.h
const TCA_RED_PARMS: u16 = 1;
const TCA_RED_STAB: u16 = 2;
const TCA_RED_MAX_P: u16 = 3;
const TCA_RED_FLAGS: u16 = 4;
const TC_RED_ECN: u32 = 1;
const TC_RED_HARDDROP: u32 = 2;
const TC_RED_ADAPTATIVE: u32 = 4;
const TC_RED_NODROP: u32 = 8;
/// include/net/red.h: `RED_STAB_SIZE`.
const RED_STAB_SIZE: usize = 256;

/// A netlink message under construction: header, fixed part, attributes,
/// each padded to 4 bytes (`NLMSG_ALIGN`, `NLA_ALIGN`).
struct MsgBuilder {
    buf: Vec<u8>,
}

impl MsgBuilder {
    fn new(ty: u16, flags: u16, seq: u32) -> MsgBuilder {
        let mut buf = Vec::with_capacity(512);
        buf.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_len, set by finish()
        buf.extend_from_slice(&ty.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid: the kernel
        MsgBuilder { buf }
    }

    fn pad(&mut self) {
        while self.buf.len() % 4 != 0 {
            self.buf.push(0);
        }
    }

    /// Appends a fixed-size part (such as `struct tcmsg`).
    fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.pad();
    }

    fn attr(&mut self, ty: u16, data: &[u8]) {
        let len = (4 + data.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.raw(data);
    }

    /// Opens a nested attribute; returns where its length goes. No
    /// `NLA_F_NESTED` flag, as `tc` sends it (`addattr_nest`).
    fn nest_start(&mut self, ty: u16) -> usize {
        let at = self.buf.len();
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        at
    }

    fn nest_end(&mut self, at: usize) {
        let len = (self.buf.len() - at) as u16;
        self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
    }

    fn finish(mut self) -> Vec<u8> {
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf
    }
}

/// `struct tcmsg` with family `AF_UNSPEC`.
fn tcmsg(ifindex: i32, handle: u32, parent: u32) -> [u8; TCMSG_LEN] {
    let mut t = [0u8; TCMSG_LEN];
    // t[0] tcm_family = AF_UNSPEC, t[1..4] padding
    t[4..8].copy_from_slice(&ifindex.to_ne_bytes());
    t[8..12].copy_from_slice(&handle.to_ne_bytes());
    t[12..16].copy_from_slice(&parent.to_ne_bytes());
    // t[16..20] tcm_info = 0
    t
}

/// The parameters of a step-marking RED qdisc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedStep {
    pub ifindex: i32,
    pub parent: u32,
    pub handle: u32,
    pub limit_bytes: u32,
    pub threshold_bytes: u32,
}

/// `RTM_NEWQDISC` creating RED (`tc qdisc add ... red`, which is
/// `NLM_F_CREATE | NLM_F_EXCL`) with:
///
/// - `TCA_RED_PARMS`: `limit` = the child bfifo's byte limit, `qth_min =
///   qth_max = threshold`, `Wlog = 0` (the "average" is the instantaneous
///   backlog: `qavg + backlog - (qavg >> 0)`), `Plog = Scell_log = 0`,
///   `flags = 0` (flags go in `TCA_RED_FLAGS`; the kernel refuses both).
///   With `qth_min == qth_max` every arrival with backlog ≥ threshold is a
///   "hard mark": CE for ECT packets.
/// - `TCA_RED_STAB`: 256 × 31, so that after any idle period the average
///   shifts to 0 (it is recomputed from the backlog on the next arrival).
/// - `TCA_RED_MAX_P` 0 (unused when the thresholds are equal).
/// - `TCA_RED_FLAGS` = `ECN | NODROP` under a selector of every supported
///   flag: mark ECT packets instead of dropping them, and queue not-ECT
///   ones unmarked (HARDDROP and ADAPTATIVE explicitly off).
pub fn red_step_request(seq: u32, r: &RedStep) -> Vec<u8> {
    let mut m = MsgBuilder::new(RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, seq);
    m.raw(&tcmsg(r.ifindex, r.handle, r.parent));
    m.attr(TCA_KIND, b"red\0");
    let opts = m.nest_start(TCA_OPTIONS);
    let mut qopt = Vec::with_capacity(16);
    qopt.extend_from_slice(&r.limit_bytes.to_ne_bytes());
    qopt.extend_from_slice(&r.threshold_bytes.to_ne_bytes()); // qth_min
    qopt.extend_from_slice(&r.threshold_bytes.to_ne_bytes()); // qth_max
    qopt.extend_from_slice(&[0, 0, 0, 0]); // Wlog, Plog, Scell_log, flags
    m.attr(TCA_RED_PARMS, &qopt);
    m.attr(TCA_RED_STAB, &[31u8; RED_STAB_SIZE]);
    m.attr(TCA_RED_MAX_P, &0u32.to_ne_bytes());
    let mut bf = Vec::with_capacity(8);
    bf.extend_from_slice(&(TC_RED_ECN | TC_RED_NODROP).to_ne_bytes()); // value
    bf.extend_from_slice(&(TC_RED_ECN | TC_RED_HARDDROP | TC_RED_ADAPTATIVE | TC_RED_NODROP).to_ne_bytes()); // selector
    m.attr(TCA_RED_FLAGS, &bf);
    m.nest_end(opts);
    m.finish()
}

/// `RTM_GETQDISC` dump of every qdisc of every device in the namespace
/// (`tc qdisc show`): the kernel ignores the tcmsg's ifindex for dumps.
pub fn qdisc_dump_request(seq: u32) -> Vec<u8> {
    let mut m = MsgBuilder::new(RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, seq);
    m.raw(&tcmsg(0, 0, 0));
    m.finish()
}

/// One netlink message of a received datagram.
#[derive(Clone, Copy, Debug)]
pub struct Msg<'a> {
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    pub payload: &'a [u8],
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Splits a datagram into its messages.
pub fn messages(buf: &[u8]) -> Result<Vec<Msg<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + NLMSG_HDRLEN <= buf.len() {
        let bad = || format!("malformed netlink message at byte {at}");
        let len = u32_at(buf, at).ok_or_else(bad)? as usize;
        if len < NLMSG_HDRLEN || at + len > buf.len() {
            return Err(bad());
        }
        out.push(Msg {
            ty: u16_at(buf, at + 4).ok_or_else(bad)?,
            flags: u16_at(buf, at + 6).ok_or_else(bad)?,
            seq: u32_at(buf, at + 8).ok_or_else(bad)?,
            payload: &buf[at + NLMSG_HDRLEN..at + len],
        });
        at += align4(len);
    }
    Ok(out)
}

/// The attributes in `buf`: `(type without flag bits, data)`. Stops at the
/// first malformed one.
pub fn attrs(buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let len = u16_at(buf, at)? as usize;
        let ty = u16_at(buf, at + 2)? & NLA_TYPE_MASK;
        if len < 4 || at + len > buf.len() {
            return None;
        }
        let data = &buf[at + 4..at + len];
        at += align4(len);
        Some((ty, data))
    })
}

/// The outcome carried by an `NLMSG_ERROR` message (an ACK when the code
/// is 0): `Err("<strerror> (os error N): <extended ACK message>")`.
pub fn ack_result(msg: &Msg<'_>) -> Result<(), String> {
    let p = msg.payload;
    let code = u32_at(p, 0).ok_or("truncated netlink error message")? as i32;
    if code == 0 {
        return Ok(());
    }
    // "File exists (os error 17)"
    let mut text = io::Error::from_raw_os_error(-code).to_string();
    if msg.flags & NLM_F_ACK_TLVS != 0 {
        // struct nlmsgerr: the error, then the request's header (capped)
        // or the whole request, then the extended-ACK attributes.
        let echoed = if msg.flags & NLM_F_CAPPED != 0 {
            NLMSG_HDRLEN
        } else {
            u32_at(p, 4).map_or(NLMSG_HDRLEN, |l| l as usize)
        };
        if let Some(tlvs) = p.get(4 + align4(echoed)..) {
            for (ty, data) in attrs(tlvs) {
                if ty == NLMSGERR_ATTR_MSG {
                    let s = String::from_utf8_lossy(data);
                    text.push_str(": ");
                    text.push_str(s.trim_end_matches('\0'));
                }
            }
        }
    }
    Err(text)
}

/// RED's `struct tc_red_xstats`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RedXstats {
    /// Early drops (`prob_drop + forced_drop`).
    pub early: u32,
    /// Drops because the child queue was full.
    pub pdrop: u32,
    pub other: u32,
    /// CE marks (`prob_mark + forced_mark`).
    pub marked: u32,
}

/// One qdisc of a `RTM_GETQDISC` dump.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Qdisc {
    pub ifindex: i32,
    pub handle: u32,
    pub parent: u32,
    pub kind: String,
    /// `TCA_STATS_BASIC` (packets from `TCA_STATS_PKT64` when present,
    /// which the kernel adds once the count no longer fits 32 bits).
    pub bytes: u64,
    pub packets: u64,
    /// `TCA_STATS_QUEUE`.
    pub qlen: u32,
    pub backlog: u32,
    pub drops: u32,
    pub requeues: u32,
    pub overlimits: u32,
    /// `TCA_XSTATS` of a `red` qdisc.
    pub red: Option<RedXstats>,
}

/// Decodes a `RTM_NEWQDISC` message's payload (a dump reply).
pub fn parse_qdisc(payload: &[u8]) -> Result<Qdisc, String> {
    if payload.len() < TCMSG_LEN {
        return Err(format!("qdisc message of {} bytes, shorter than struct tcmsg", payload.len()));
    }
    let mut q = Qdisc {
        ifindex: u32_at(payload, 4).unwrap_or(0) as i32,
        handle: u32_at(payload, 8).unwrap_or(0),
        parent: u32_at(payload, 12).unwrap_or(0),
        ..Qdisc::default()
    };
    let mut xstats: Option<&[u8]> = None;
    // The compatibility `struct tc_stats` (TCA_STATS), used when
    // TCA_STATS2 carries no basic statistics: up to 4.17
    // gnet_stats_start_copy_compat() (net/core/gen_stats.c) could leave
    // TCA_STATS2 empty, its length set on the padding attribute before it
    // (later kernels step past the padding), so on the 4.17 guest every
    // link read 0 packets; `tc -s` there counted them (from TCA_STATS).
    let mut compat: Option<&[u8]> = None;
    let mut basic = false;
    for (ty, data) in attrs(&payload[TCMSG_LEN..]) {
        match ty {
            TCA_KIND => q.kind = String::from_utf8_lossy(data).trim_end_matches('\0').to_string(),
            TCA_XSTATS => xstats = Some(data),
            TCA_STATS => compat = Some(data),
            TCA_STATS2 => {
                let mut pkt64 = None;
                for (ty, d) in attrs(data) {
                    match ty {
                        TCA_STATS_BASIC => {
                            // struct gnet_stats_basic { u64 bytes; u32 packets; } (padded to 16)
                            basic = true;
                            q.bytes = u64_at(d, 0).unwrap_or(0);
                            q.packets = u64::from(u32_at(d, 8).unwrap_or(0));
                        }
                        TCA_STATS_PKT64 => pkt64 = u64_at(d, 0),
                        TCA_STATS_QUEUE => {
                            q.qlen = u32_at(d, 0).unwrap_or(0);
                            q.backlog = u32_at(d, 4).unwrap_or(0);
                            q.drops = u32_at(d, 8).unwrap_or(0);
                            q.requeues = u32_at(d, 12).unwrap_or(0);
                            q.overlimits = u32_at(d, 16).unwrap_or(0);
                        }
                        _ => {}
                    }
                }
                if let Some(p) = pkt64 {
                    q.packets = p;
                }
            }
            _ => {}
        }
    }
    if let (false, Some(s)) = (basic, compat) {
        // struct tc_stats { u64 bytes; u32 packets, drops, overlimits,
        // bps, pps, qlen, backlog; } (include/uapi/linux/pkt_sched.h)
        q.bytes = u64_at(s, 0).unwrap_or(0);
        q.packets = u64::from(u32_at(s, 8).unwrap_or(0));
        q.drops = u32_at(s, 12).unwrap_or(0);
        q.overlimits = u32_at(s, 16).unwrap_or(0);
        q.qlen = u32_at(s, 28).unwrap_or(0);
        q.backlog = u32_at(s, 32).unwrap_or(0);
    }
    if q.kind == "red" {
        if let Some(x) = xstats {
            q.red = Some(RedXstats {
                early: u32_at(x, 0).unwrap_or(0),
                pdrop: u32_at(x, 4).unwrap_or(0),
                other: u32_at(x, 8).unwrap_or(0),
                marked: u32_at(x, 12).unwrap_or(0),
            });
        }
    }
    Ok(q)
}

/// `if_nametoindex` in the calling thread's namespace.
pub fn ifindex(dev: &str) -> Result<i32, String> {
    let c = CString::new(dev).map_err(|_| format!("device name {dev:?} contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(format!("device {dev}: {}", io::Error::last_os_error()));
    }
    Ok(i as i32)
}

/// A `NETLINK_ROUTE` socket, in the namespace of the thread that opened
/// it.
pub struct RouteSocket {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

impl RouteSocket {
    /// Opens a socket with extended ACKs (the kernel's reason for a
    /// refusal, such as "Specified qdisc kind is unknown") and capped ACKs
    /// (no echo of the request).
    pub fn open() -> Result<RouteSocket, String> {
        // SAFETY: plain socket creation; the result is checked.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
        if fd < 0 {
            return Err(format!("netlink socket: {}", io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        for opt in [NETLINK_EXT_ACK, NETLINK_CAP_ACK] {
            let one: libc::c_int = 1;
            // SAFETY: `one` is a readable c_int of the given size. Failure
            // (an old kernel) only loses the error text: ignored.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    SOL_NETLINK,
                    opt,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
        }
        Ok(RouteSocket { fd, seq: 0, buf: vec![0; 64 * 1024] })
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    fn send(&self, msg: &[u8]) -> Result<(), String> {
        // SAFETY: a zeroed sockaddr_nl with the family set addresses the
        // kernel (nl_pid 0).
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `msg` is readable for its length; `sa` is a valid address
        // of the size given.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&sa as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(format!("netlink send: {}", io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Receives one datagram into `self.buf`; returns its length.
    fn recv(&mut self) -> Result<usize, String> {
        loop {
            // SAFETY: `buf` is writable for its length. MSG_TRUNC makes the
            // call return the datagram's real length, to detect truncation.
            let n = unsafe {
                libc::recv(self.fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len(), libc::MSG_TRUNC)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("netlink receive: {e}"));
            }
            let n = n as usize;
            if n > self.buf.len() {
                return Err(format!("netlink reply of {n} bytes truncated to {}", self.buf.len()));
            }
            return Ok(n);
        }
    }

    /// Sends a request built for sequence number `seq` and waits for its
    /// ACK.
    fn request_ack(&mut self, msg: &[u8], seq: u32) -> Result<(), String> {
        self.send(msg)?;
        loop {
            let n = self.recv()?;
            for m in messages(&self.buf[..n])? {
                if m.seq == seq && m.ty == NLMSG_ERROR {
                    return ack_result(&m);
                }
            }
        }
    }

    /// Creates a step-marking RED qdisc (see [`red_step_request`]).
    pub fn add_red_step(&mut self, r: &RedStep) -> Result<(), String> {
        let seq = self.next_seq();
        self.request_ack(&red_step_request(seq, r), seq)
    }

    /// Every qdisc of the namespace with its statistics.
    pub fn dump_qdiscs(&mut self) -> Result<Vec<Qdisc>, String> {
        let seq = self.next_seq();
        self.send(&qdisc_dump_request(seq))?;
        let mut out = Vec::new();
        loop {
            let n = self.recv()?;
            for m in messages(&self.buf[..n])? {
                if m.seq != seq {
                    continue;
                }
                match m.ty {
                    NLMSG_DONE => {
                        // The payload is the dump's final error code.
                        let code = u32_at(m.payload, 0).unwrap_or(0) as i32;
                        if code < 0 {
                            return Err(format!("qdisc dump: {}", io::Error::from_raw_os_error(-code)));
                        }
                        return Ok(out);
                    }
                    NLMSG_ERROR => {
                        ack_result(&m).map_err(|e| format!("qdisc dump: {e}"))?;
                        return Ok(out);
                    }
                    RTM_NEWQDISC => out.push(parse_qdisc(m.payload)?),
                    _ => {}
                }
            }
        }
    }
}

#[cfg(all(test, target_endian = "little"))]
mod tests {
    use super::*;

    /// The RED request written out by hand from the structs in
    /// rtnetlink.h and pkt_sched.h (little-endian): ifindex 7, parent
    /// 1:1 (0x00010001), handle 20: (0x00200000), limit 200000
    /// (0x00030d40), threshold 30000 (0x00007530), seq 5.
    #[test]
    fn red_step_bytes() {
        let r = RedStep {
            ifindex: 7,
            parent: 0x0001_0001,
            handle: 0x0020_0000,
            limit_bytes: 200_000,
            threshold_bytes: 30_000,
        };
        let got = red_step_request(5, &r);
        let mut want: Vec<u8> = vec![
            // nlmsghdr: len 348, type 36, flags 0x605, seq 5, pid 0
            0x5c, 0x01, 0x00, 0x00, 0x24, 0x00, 0x05, 0x06, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            // tcmsg: family 0, pads, ifindex 7, handle 0x00200000, parent 0x00010001, info 0
            0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
            0x00, 0x00, // TCA_KIND: len 8, type 1, "red\0"
            0x08, 0x00, 0x01, 0x00, b'r', b'e', b'd', 0x00,
            // TCA_OPTIONS: len 304 (4 + 20 + 260 + 8 + 12), type 2
            0x30, 0x01, 0x02, 0x00,
            // TCA_RED_PARMS: len 20, type 1; limit, qth_min, qth_max, Wlog Plog Scell_log flags
            0x14, 0x00, 0x01, 0x00, 0x40, 0x0d, 0x03, 0x00, 0x30, 0x75, 0x00, 0x00, 0x30, 0x75, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, // TCA_RED_STAB: len 260, type 2, then 256 × 31
            0x04, 0x01, 0x02, 0x00,
        ];
        want.extend(std::iter::repeat(31u8).take(256));
        want.extend_from_slice(&[
            // TCA_RED_MAX_P: len 8, type 3, 0
            0x08, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
            // TCA_RED_FLAGS: len 12, type 4, value ECN|NODROP = 9, selector 15
            0x0c, 0x00, 0x04, 0x00, 0x09, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00,
        ]);
        assert_eq!(want.len(), 348);
        assert_eq!(got, want);
    }

    #[test]
    fn dump_request_bytes() {
        let got = qdisc_dump_request(9);
        let want: Vec<u8> = vec![
            // nlmsghdr: len 36, type 38, flags REQUEST|DUMP = 0x301, seq 9, pid 0
            0x24, 0x00, 0x00, 0x00, 0x26, 0x00, 0x01, 0x03, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            // tcmsg, all zero
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(got, want);
    }

    fn attr(ty: u16, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(data);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn msg(ty: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((16 + payload.len()) as u32).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(&flags.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&4242u32.to_ne_bytes());
        v.extend_from_slice(payload);
        v
    }

    fn le32(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A dump datagram as the kernel builds it for `red 20:` on ifindex 7
    /// under `1:1`, then `NLMSG_DONE`.
    fn red_dump() -> Vec<u8> {
        let mut p = tcmsg(7, 0x0020_0000, 0x0001_0001).to_vec();
        p.extend(attr(TCA_KIND, b"red\0"));
        p.extend(attr(TCA_OPTIONS, &attr(TCA_RED_MAX_P, &[0; 4])));
        let mut basic = 123_456_789_012u64.to_le_bytes().to_vec();
        basic.extend(le32(&[4321, 0])); // packets, padding to 16
        let mut stats2 = attr(TCA_STATS_BASIC, &basic);
        stats2.extend(attr(5, &[0; 16])); // TCA_STATS_RATE_EST64: skipped
        stats2.extend(attr(TCA_STATS_QUEUE, &le32(&[12, 18000, 3, 1, 40])));
        p.extend(attr(TCA_STATS2, &stats2));
        p.extend(attr(TCA_XSTATS, &le32(&[0, 3, 0, 37])));
        let mut dgram = msg(RTM_NEWQDISC, 2, 3, &p);
        dgram.extend(msg(NLMSG_DONE, 2, 3, &0i32.to_ne_bytes()));
        dgram
    }

    #[test]
    fn parses_a_red_qdisc_dump_reply() {
        let d = red_dump();
        let ms = messages(&d).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!((ms[0].ty, ms[0].seq), (RTM_NEWQDISC, 3));
        assert_eq!(ms[1].ty, NLMSG_DONE);
        let q = parse_qdisc(ms[0].payload).unwrap();
        assert_eq!(
            q,
            Qdisc {
                ifindex: 7,
                handle: 0x0020_0000,
                parent: 0x0001_0001,
                kind: "red".into(),
                bytes: 123_456_789_012,
                packets: 4321,
                qlen: 12,
                backlog: 18000,
                drops: 3,
                requeues: 1,
                overlimits: 40,
                red: Some(RedXstats { early: 0, pdrop: 3, other: 0, marked: 37 }),
            }
        );
    }

    #[test]
    fn the_compat_stats_count_when_stats2_came_empty() {
        // 4.17: a padding attribute holds the statistics, TCA_STATS2 is
        // empty, the compat struct tc_stats follows.
        let mut p = tcmsg(2, 0x0001_0000, 0xffff_ffff).to_vec();
        p.extend(attr(TCA_KIND, b"htb\0"));
        p.extend(attr(TCA_PAD_4_17, &[0; 24]));
        p.extend(attr(TCA_STATS2, &[]));
        let mut compat = 3_000u64.to_le_bytes().to_vec();
        compat.extend(le32(&[2, 1, 7, 0, 0, 4, 1500])); // packets, drops, overlimits, bps, pps, qlen, backlog
        p.extend(attr(TCA_STATS, &compat));
        let q = parse_qdisc(&p).unwrap();
        assert_eq!((q.bytes, q.packets, q.drops, q.overlimits, q.qlen, q.backlog), (3_000, 2, 1, 7, 4, 1500));
        // With TCA_STATS2's basic statistics present, they win.
        let mut p = tcmsg(2, 0x0001_0000, 0xffff_ffff).to_vec();
        let mut basic = 10u64.to_le_bytes().to_vec();
        basic.extend(le32(&[5, 0]));
        p.extend(attr(TCA_STATS2, &attr(TCA_STATS_BASIC, &basic)));
        p.extend(attr(TCA_STATS, &compat));
        assert_eq!(parse_qdisc(&p).unwrap().packets, 5);
    }

    /// `TCA_PAD` (include/uapi/linux/rtnetlink.h).
    const TCA_PAD_4_17: u16 = 9;

    #[test]
    fn pkt64_overrides_the_32_bit_count_and_xstats_are_red_only() {
        let mut p = tcmsg(2, 0x0001_0000, 0xffff_ffff).to_vec();
        p.extend(attr(TCA_KIND, b"htb\0"));
        let mut basic = 10u64.to_le_bytes().to_vec();
        basic.extend(le32(&[5, 0]));
        let mut stats2 = attr(TCA_STATS_BASIC, &basic);
        stats2.extend(attr(TCA_STATS_PKT64, &(1u64 << 33).to_le_bytes()));
        p.extend(attr(TCA_STATS2, &stats2));
        p.extend(attr(TCA_XSTATS, &le32(&[1, 2, 3, 4])));
        let q = parse_qdisc(&p).unwrap();
        assert_eq!((q.bytes, q.packets, q.red), (10, 1 << 33, None));
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let d = red_dump();
        for cut in 0..d.len() {
            if let Ok(ms) = messages(&d[..cut]) {
                for m in ms {
                    let _ = parse_qdisc(m.payload);
                }
            }
        }
        assert!(parse_qdisc(&[0; 8]).is_err());
    }

    #[test]
    fn ack_with_extended_message() {
        // error -2, capped echo of the request header, NLMSGERR_ATTR_MSG.
        let mut p = (-2i32).to_ne_bytes().to_vec();
        p.extend_from_slice(&[0; 16]);
        p.extend(attr(NLMSGERR_ATTR_MSG, b"Specified qdisc kind is unknown\0"));
        let d = msg(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 1, &p);
        let ms = messages(&d).unwrap();
        let e = ack_result(&ms[0]).unwrap_err();
        assert_eq!(e, "No such file or directory (os error 2): Specified qdisc kind is unknown");
        let ok = msg(NLMSG_ERROR, NLM_F_CAPPED, 1, &[0; 20]);
        assert_eq!(ack_result(&messages(&ok).unwrap()[0]), Ok(()));
    }
}
