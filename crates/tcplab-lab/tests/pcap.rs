//! pcap capture: the files hold exactly the packets the simulator's tap
//! saw at each link end, and they decode (with tcplab's own decoder, and
//! with tshark when it is installed) to the same segments, relative
//! sequence numbers and SACK blocks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use tcplab_lab::outputs::Outputs;
use tcplab_lab::pcap::{self, PcapCapture};
use tcplab_lab::runner::{self, Extras};
use tcplab_sim::{PacketEvent, PacketEventKind};
use tcplab_wire::packet::trim_sack_blocks;
use tcplab_wire::SegmentRepr;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcplab-pcap-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn scenario_path() -> String {
    format!("{}/../../scenarios/bulk-cubic.toml", env!("CARGO_MANIFEST_DIR"))
}

/// A short lossy run: a 30-packet bottleneck queue forces SACK recovery;
/// ECN on, with a marking threshold, gives ECT/CE codepoints and ECE/CWR.
fn sets() -> Vec<String> {
    vec![
        "run.duration=1500ms".into(),
        "tcp.tcp_ecn=1".into(),
        "link.bottleneck.queue={ limit = \"30p\", ecn_threshold = \"20p\" }".into(),
    ]
}

type Seen = Arc<Mutex<Vec<(u64, usize, SegmentRepr, u32)>>>;

/// Runs with a capture into `dir`; returns what the tap saw per file
/// index: (time ns, file, segment, wire length).
fn capture(dir: &Path, snaplen: Option<u32>) -> (Vec<(u64, usize, SegmentRepr, u32)>, tcplab_lab::Scenario) {
    let sc = tcplab_lab::load(&scenario_path(), &sets(), None).unwrap();
    let mut out = Outputs::new();
    let dir = out.dir("--pcap", dir).unwrap();
    let cap = PcapCapture::create(&mut out, &dir, &sc, snaplen).unwrap();
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let mut inner = cap.tap();
    let tap = Box::new(move |now: tcplab_core::time::Instant, ev: &PacketEvent| {
        let file = match (ev.kind, ev.dir) {
            (PacketEventKind::Depart, Some(d)) => Some(d),
            (PacketEventKind::Arrive, Some(d)) => Some(d ^ 1),
            _ => None,
        };
        if let Some(f) = file {
            log.lock().unwrap().push((now.as_nanos(), f, ev.seg, ev.wire_len));
        }
        inner(now, ev);
    });
    runner::run_with(&sc, Extras { tap: Some(tap), ..Default::default() }).unwrap();
    let summary = cap.finish().unwrap();
    assert_eq!(summary.files.len(), 2 * sc.sim.links.len());
    out.commit();
    let v = seen.lock().unwrap().clone();
    (v, sc)
}

fn file_paths(dir: &Path, sc: &tcplab_lab::Scenario) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for l in &sc.sim.links {
        for n in [l.a, l.b] {
            v.push(dir.join(format!("{}@{}.pcap", l.name, sc.sim.nodes[n].name)));
        }
    }
    v
}

#[test]
fn test_pcap_round_trip_every_link_end() {
    let dir = scratch("roundtrip");
    let (seen, sc) = capture(&dir, Some(65535));
    let paths = file_paths(&dir, &sc);
    let mut sacks = 0;
    let mut ce = 0;
    for (i, p) in paths.iter().enumerate() {
        let recs = pcap::read(&std::fs::read(p).unwrap()).unwrap();
        let expect: Vec<_> = seen.iter().filter(|s| s.1 == i).collect();
        assert_eq!(recs.len(), expect.len(), "{}", p.display());
        assert!(!recs.is_empty(), "{}", p.display());
        for (r, (t, _, seg, wire_len)) in recs.iter().zip(expect) {
            let mut seg = *seg;
            trim_sack_blocks(&mut seg.options);
            assert_eq!(r.time_ns, *t);
            assert_eq!(r.packet.packet.seg, seg);
            assert_eq!(r.orig_len, *wire_len, "IP total length = the simulator's wire length");
            assert!(r.packet.ip_checksum_ok);
            assert_eq!(r.packet.tcp_checksum_ok, Some(true), "whole packets with --pcap-snaplen 65535");
            sacks += usize::from(seg.options.sack_len > 0);
            ce += usize::from(seg.ecn == tcplab_wire::Ecn::Ce);
        }
        // Addresses: node i is 10.0.0.(i+1).
        let first = &recs[0].packet.packet;
        assert_eq!(first.src[..3], [10, 0, 0]);
    }
    assert!(sacks > 0, "the lossy run should carry SACK blocks");
    assert!(ce > 0, "the ECN threshold should mark CE");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn test_pcap_default_keeps_headers_only() {
    let dir = scratch("headers");
    let (_, sc) = capture(&dir, None);
    let p = &file_paths(&dir, &sc)[0];
    let bytes = std::fs::read(p).unwrap();
    let recs = pcap::read(&bytes).unwrap();
    let data = recs.iter().find(|r| r.packet.packet.seg.payload_len > 0).unwrap();
    assert!(data.orig_len > 1000);
    assert_eq!(data.packet.tcp_checksum_ok, None, "payload cut: not verifiable");
    // The file is small: about 70 bytes per packet.
    assert!(bytes.len() < recs.len() * 100, "{} bytes for {} packets", bytes.len(), recs.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Relative numbers as Wireshark computes them: seq relative to the
/// sender's ISN (its SYN), ack and SACK edges relative to the peer's.
#[test]
fn test_tshark_reads_relative_seq_and_sack_blocks() {
    let has_tshark = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_tshark {
        println!("skipped: tshark is not installed (apt-get install tshark to run this check)");
        return;
    }
    let dir = scratch("tshark");
    let (_, sc) = capture(&dir, None);
    for p in file_paths(&dir, &sc) {
        let recs = pcap::read(&std::fs::read(&p).unwrap()).unwrap();
        // Our own relative numbers.
        let mut isn: HashMap<([u8; 4], u16), u32> = HashMap::new();
        for r in &recs {
            let pk = &r.packet.packet;
            if pk.seg.flags.syn() {
                isn.insert((pk.src, pk.seg.src_port), pk.seg.seq.0);
            }
        }
        let ours: Vec<String> = recs
            .iter()
            .map(|r| {
                let pk = &r.packet.packet;
                let me = isn[&(pk.src, pk.seg.src_port)];
                let peer = isn.get(&(pk.dst, pk.seg.dst_port)).copied().unwrap_or(0);
                let ack = if pk.seg.flags.ack() { pk.seg.ack.0.wrapping_sub(peer).to_string() } else { "-".into() };
                let b = pk.seg.options.sack_blocks();
                let le: Vec<String> = b.iter().map(|x| x.start.0.wrapping_sub(peer).to_string()).collect();
                let re: Vec<String> = b.iter().map(|x| x.end.0.wrapping_sub(peer).to_string()).collect();
                format!(
                    "{}\t{ack}\t{}\t{}\t{}",
                    pk.seg.seq.0.wrapping_sub(me),
                    pk.seg.payload_len,
                    le.join(","),
                    re.join(",")
                )
            })
            .collect();
        let out = Command::new("tshark")
            .args([
                "-r",
                p.to_str().unwrap(),
                "-T",
                "fields",
                "-E",
                "occurrence=a",
                "-e",
                "tcp.seq",
                "-e",
                "tcp.flags.ack",
            ])
            .args(["-e", "tcp.ack", "-e", "tcp.len", "-e", "tcp.options.sack_le", "-e", "tcp.options.sack_re"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let ack = if f[1] == "1" || f[1] == "True" { f[2].to_string() } else { "-".into() };
                format!("{}\t{ack}\t{}\t{}\t{}", f[0], f[3], f[4], f[5])
            })
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{}", p.display());
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a, b, "{} frame {}", p.display(), i + 1);
        }
        assert!(theirs.iter().any(|l| !l.ends_with("\t\t")), "some SACK blocks in {}", p.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
