//! pcap capture of a run (`tcplab run --pcap DIR`), through the
//! simulator's packet tap.
//!
//! # What is captured where
//!
//! One classic pcap file per **link end**: `DIR/LINK@NODE.pcap` holds what
//! tcpdump on NODE's interface to LINK would show, both directions:
//!
//! - packets NODE sends on LINK, when their last bit leaves the serializer
//!   (the tap's `Depart`): after the output queue, so a packet the queue
//!   dropped is not there, as tcpdump on a sender never sees a qdisc drop;
//! - packets NODE receives from LINK, when their last bit arrives (`Arrive`).
//!
//! A two-host, one-switch scenario thus gives four files; the sender's view
//! of a flow is `ACCESS-LINK@SENDER.pcap`, the receiver's
//! `BOTTLENECK@RECEIVER.pcap`.
//!
//! # Format
//!
//! - Classic pcap (not pcapng), little-endian, nanosecond timestamps
//!   (magic `0xa1b23c4d`), link type `LINKTYPE_RAW` (101): each record is
//!   an IPv4 packet without a link-layer header. Time 0 of the run is the
//!   Unix epoch (1970-01-01 00:00:00 UTC).
//! - Headers are real: IPv4 (ECN bits, DF, TTL 64, checksum) and TCP with
//!   every option the model uses (MSS, SACK-permitted, SACK blocks,
//!   timestamps, window scale) and a checksum that is correct for a
//!   zero-filled payload (see [`tcplab_wire::packet`]).
//! - Payload: by default a record is cut after the headers (a snap length
//!   of "headers only": the record's length is the header length, its
//!   original length the whole IP packet, as `tcpdump -s` cuts). With a
//!   snap length `S`, a record holds the first `max(S, headers)` bytes of
//!   the packet with the payload zero-filled; `S` ≥ the MTU keeps whole
//!   packets. Wireshark marks cut packets "[Packet size limited during
//!   capture]" and still computes sequence numbers, lengths and SACKs from
//!   the headers.
//! - Addresses: node `i` (its index in the scenario's `[[node]]` list,
//!   from 0) is `10.0.0.0 + i + 1`, i.e. 10.0.0.1, 10.0.0.2, ...; the flow's
//!   client port is 32768 + flow index and the server port 5001.
//!
//! Linux sends at most three SACK blocks with timestamps; should the model
//! ever hand out more than fit in 40 option bytes, the extra blocks are
//! dropped from the capture and counted in [`PcapSummary::sack_trimmed`].

use crate::error::{Error, Result};
use crate::outputs::Outputs;
use crate::schema::Scenario;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tcplab_core::time::Instant;
use tcplab_sim::{PacketEvent, PacketEventKind, PacketTap};
use tcplab_wire::packet::{trim_sack_blocks, PacketRepr, Parsed};

/// pcap magic for nanosecond timestamps.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// pcap magic for microsecond timestamps (read only).
pub const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
/// `LINKTYPE_RAW`: raw IPv4/IPv6, no link-layer header.
pub const LINKTYPE_RAW: u32 = 101;
/// Snap length written in the file header when records are cut after the
/// headers (IPv4 and TCP headers with options never exceed 120 bytes).
pub const HEADERS_SNAPLEN: u32 = 128;
/// Largest snap length (an IPv4 packet's maximum size).
pub const MAX_SNAPLEN: u32 = 65535;

/// The IPv4 address of node `index`: `10.0.0.0 + index + 1`.
pub fn node_addr(index: usize) -> [u8; 4] {
    let n = (index as u32).wrapping_add(1) & 0x00ff_ffff;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The capture file of one link end.
struct CaptureFile {
    path: PathBuf,
    w: BufWriter<File>,
    packets: u64,
}

struct State {
    /// Indexed like link directions: file `2·l` is link l's `a` end,
    /// `2·l + 1` its `b` end.
    files: Vec<CaptureFile>,
    snaplen: Option<u32>,
    buf: Vec<u8>,
    error: Option<String>,
    sack_trimmed: u64,
}

/// An open capture: files created, waiting for packets.
pub struct PcapCapture {
    state: Arc<Mutex<State>>,
    dir: PathBuf,
}

/// What a capture wrote.
#[derive(Clone, Debug)]
pub struct PcapSummary {
    /// (file, packets), in link order, `a` end first.
    pub files: Vec<(PathBuf, u64)>,
    /// Packets whose SACK blocks did not all fit (see the module docs).
    pub sack_trimmed: u64,
}

impl PcapCapture {
    /// Creates `DIR/LINK@NODE.pcap` for both ends of every link of `sc`
    /// (`dir` must exist; see [`Outputs::dir`]). `snaplen`: None = headers only.
    pub fn create(out: &mut Outputs, dir: &Path, sc: &Scenario, snaplen: Option<u32>) -> Result<PcapCapture> {
        let mut files = Vec::new();
        let snap_field = snaplen.map_or(HEADERS_SNAPLEN, |s| s.clamp(1, MAX_SNAPLEN));
        for l in &sc.sim.links {
            for node in [l.a, l.b] {
                let name = sc.sim.nodes.get(node).map_or("?", |n| n.name.as_str());
                let path = dir.join(format!("{}@{}.pcap", l.name, name));
                out.track(&path);
                let f = File::create(&path).map_err(|e| {
                    Error::at(format!("--pcap {}", dir.display()), format!("cannot create {}: {e}", path.display()))
                })?;
                let mut w = BufWriter::with_capacity(1 << 16, f);
                let mut hdr = Vec::with_capacity(24);
                hdr.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
                hdr.extend_from_slice(&2u16.to_le_bytes());
                hdr.extend_from_slice(&4u16.to_le_bytes());
                hdr.extend_from_slice(&0i32.to_le_bytes()); // thiszone
                hdr.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
                hdr.extend_from_slice(&snap_field.to_le_bytes());
                hdr.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
                w.write_all(&hdr).map_err(|e| Error::at(path.display().to_string(), format!("cannot write: {e}")))?;
                files.push(CaptureFile { path, w, packets: 0 });
            }
        }
        let state = State { files, snaplen, buf: vec![0; MAX_SNAPLEN as usize], error: None, sack_trimmed: 0 };
        Ok(PcapCapture { state: Arc::new(Mutex::new(state)), dir: dir.to_path_buf() })
    }

    /// The packet tap to install on the simulator.
    pub fn tap(&self) -> PacketTap {
        let state = Arc::clone(&self.state);
        Box::new(move |now: Instant, ev: &PacketEvent| {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.on_event(now, ev);
        })
    }

    /// Flushes and closes the files. An error while writing is reported
    /// here (the caller's [`Outputs`] then removes the files).
    pub fn finish(self) -> Result<PcapSummary> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = s.error.take() {
            return Err(Error::at(format!("--pcap {}", self.dir.display()), e));
        }
        let mut files = Vec::new();
        for f in &mut s.files {
            f.w.flush().map_err(|e| Error::at(f.path.display().to_string(), format!("cannot write: {e}")))?;
            files.push((f.path.clone(), f.packets));
        }
        Ok(PcapSummary { files, sack_trimmed: s.sack_trimmed })
    }
}

impl State {
    fn on_event(&mut self, now: Instant, ev: &PacketEvent) {
        if self.error.is_some() {
            return;
        }
        let file = match (ev.kind, ev.dir) {
            (PacketEventKind::Depart, Some(d)) => d,
            (PacketEventKind::Arrive, Some(d)) => d ^ 1,
            _ => return,
        };
        let mut seg = ev.seg;
        if trim_sack_blocks(&mut seg.options) > 0 {
            self.sack_trimmed += 1;
        }
        let p = PacketRepr::new(node_addr(ev.src), node_addr(ev.dst), seg);
        let (hlen, total) = match (p.header_len(), p.total_len()) {
            (Ok(h), Ok(t)) => (h, t),
            (Err(e), _) | (_, Err(e)) => {
                self.error = Some(format!("cannot encode a packet at {now:?}: {e}"));
                return;
            }
        };
        let incl = match self.snaplen {
            None => hlen,
            Some(s) => (s as usize).max(hlen).min(total),
        };
        let buf = &mut self.buf[..incl];
        buf.fill(0);
        if let Err(e) = p.emit_headers(buf) {
            self.error = Some(format!("cannot encode a packet at {now:?}: {e}"));
            return;
        }
        let Some(f) = self.files.get_mut(file) else { return };
        let ns = now.as_nanos();
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(incl as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(total as u32).to_le_bytes());
        if let Err(e) = f.w.write_all(&rec).and_then(|()| f.w.write_all(buf)) {
            self.error = Some(format!("cannot write {}: {e}", f.path.display()));
            return;
        }
        f.packets += 1;
    }
}

/// One record of a pcap file, decoded.
#[derive(Clone, Debug)]
pub struct Record {
    /// Timestamp, ns since the epoch.
    pub time_ns: u64,
    /// Original length of the packet.
    pub orig_len: u32,
    pub packet: Parsed,
}

/// Reads a classic pcap file of raw IPv4 (either byte order, µs or ns
/// timestamps) with tcplab's own decoder. Checked throughout: a malformed
/// file is an error, never a panic.
pub fn read(bytes: &[u8]) -> std::result::Result<Vec<Record>, String> {
    let hdr = bytes.get(..24).ok_or("shorter than a pcap file header")?;
    let magic_le = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
    let magic_be = u32::from_be_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
    let (le, ns) = match (magic_le, magic_be) {
        (PCAP_MAGIC_NS, _) => (true, true),
        (PCAP_MAGIC_US, _) => (true, false),
        (_, PCAP_MAGIC_NS) => (false, true),
        (_, PCAP_MAGIC_US) => (false, false),
        _ => return Err(format!("not a pcap file (magic {magic_le:#010x})")),
    };
    let u32_at = |b: &[u8], i: usize| -> std::result::Result<u32, String> {
        let w: [u8; 4] = b.get(i..i + 4).and_then(|s| s.try_into().ok()).ok_or("truncated")?;
        Ok(if le { u32::from_le_bytes(w) } else { u32::from_be_bytes(w) })
    };
    let linktype = u32_at(hdr, 20)?;
    if linktype != LINKTYPE_RAW {
        return Err(format!("link type {linktype}, not LINKTYPE_RAW (101)"));
    }
    let mut out = Vec::new();
    let mut at = 24;
    while at < bytes.len() {
        let rec = bytes.get(at..at + 16).ok_or_else(|| format!("truncated record header at byte {at}"))?;
        let (sec, frac, incl, orig) = (u32_at(rec, 0)?, u32_at(rec, 4)?, u32_at(rec, 8)? as usize, u32_at(rec, 12)?);
        let data = bytes.get(at + 16..at + 16 + incl).ok_or_else(|| format!("truncated record at byte {at}"))?;
        let packet = PacketRepr::parse(data).map_err(|e| format!("record at byte {at}: {e}"))?;
        let time_ns = u64::from(sec) * 1_000_000_000 + u64::from(frac) * if ns { 1 } else { 1000 };
        out.push(Record { time_ns, orig_len: orig, packet });
        at += 16 + incl;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_node_addresses() {
        assert_eq!(node_addr(0), [10, 0, 0, 1]);
        assert_eq!(node_addr(2), [10, 0, 0, 3]);
        assert_eq!(node_addr(255), [10, 0, 1, 0]);
    }

    #[test]
    fn test_read_rejects_garbage() {
        assert!(read(&[]).is_err());
        assert!(read(&[0u8; 24]).is_err());
        let mut h = Vec::new();
        h.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
        h.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        assert_eq!(read(&h).unwrap().len(), 0);
        let mut t = h.clone();
        t.extend_from_slice(&[1, 2, 3]);
        assert!(read(&t).is_err());
        let mut t = h.clone();
        t.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 100, 0, 0, 0, 0x45]);
        assert!(read(&t).is_err());
    }
}
