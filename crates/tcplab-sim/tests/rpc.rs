//! The request/response application (netperf TCP_RR): exact latency
//! recording on hand-timed exchanges, think time, stop and count limits,
//! multi-segment messages.

mod common;
use common::*;
use std::sync::{Arc, Mutex};
use tcplab_core::time::{Duration, Instant};
use tcplab_sim::config::*;
use tcplab_sim::{PacketEvent, PacketEventKind, Sim};

/// Two hosts on one link: `rate_bps` both ways, fixed one-way `delay`.
fn pair(rate_bps: u64, delay: Duration, app: AppConfig) -> SimConfig {
    let mut cfg = config(
        vec![host("client"), host("server")],
        vec![link("l", 0, 1, rate_bps, fixed(delay), queue(Limit::Packets(1000)))],
        vec![FlowConfig::new("rr", 0, 1, app)],
    );
    cfg.duration = Duration::from_secs(2);
    cfg
}

/// Serialization time of `bytes` at `rate_bps`, rounded up (link.rs).
fn ser(bytes: u64, rate_bps: u64) -> u64 {
    (bytes * 8 * 1_000_000_000).div_ceil(rate_bps)
}

/// IPv4 + TCP header with the timestamp option (20 + 20 + 12).
const HDR: u64 = 52;

#[test]
fn test_rpc_latency_is_exact_on_a_hand_timed_exchange() {
    // 100 Mbit/s (80 ns per byte), 1 ms each way; 100-byte requests,
    // 200-byte responses. Once both ends left quick-ACK mode (pingpong),
    // each transaction is one segment each way; the response carries the
    // ACK of the request and the next request the ACK of the response, so
    // nothing else shares the link:
    //   latency = ser(52 + 100) + 1 ms + ser(52 + 200) + 1 ms
    //           = 12 160 + 1 000 000 + 20 160 + 1 000 000 = 2 032 320 ns.
    // Each end enters pingpong mode with its first reply sent within `ato`
    // of the data it answers (tcp_event_data_sent, ≥ v6.0 as ≤ v5.0).
    // Before that its softirq sends a pure ACK ahead of the application's
    // answer: the first transaction takes two more ACK serializations (the
    // server's, and the client's handshake ACK), 2 · ser(52) = 8 320 ns;
    // the second one more, the client's ACK of the first response (its
    // first request left before any data had arrived, so it set no
    // pingpong).
    let rate = 100_000_000;
    let mut rpc = RpcConfig::new(100, 200);
    rpc.count = Some(50);
    rpc.samples = 1000;
    let cfg = pair(rate, Duration::from_millis(1), AppConfig::Rpc(rpc));
    let r = tcplab_sim::run(&cfg).unwrap();
    let expect = ser(HDR + 100, rate) + 1_000_000 + ser(HDR + 200, rate) + 1_000_000;
    assert_eq!(expect, 2_032_320);
    let f = &r.flows[0];
    let s = f.rpc.as_ref().expect("an RPC flow reports latencies");
    assert_eq!(s.count, 50);
    let quick = expect + 2 * ser(HDR, rate);
    assert_eq!(quick, 2_040_640);
    let second = expect + ser(HDR, rate);
    let mut want = vec![expect; 50];
    want[0] = quick;
    want[1] = second;
    assert_eq!(s.samples, want);
    assert_eq!(
        (s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.max_ns),
        (expect, expect, expect, quick, quick, quick)
    );
    assert_eq!(s.mean_ns, (48 * expect + quick + second) / 50);
    // Byte accounting: requests read by the server plus responses read by
    // the client; the run completed when the last response was read.
    assert_eq!(f.bytes_delivered, 50 * 300);
    assert_eq!(f.runs.len(), 1);
    assert_eq!(f.runs[0].rpcs, 50);
    let done = f.completed_at.expect("50 transactions finish");
    // The handshake (one RTT and two SYN serializations) then 50
    // back-to-back transactions.
    let handshake = 2_000_000 + 2 * ser(60, rate);
    assert_eq!(done.as_nanos(), handshake + 48 * expect + quick + second);
}

#[test]
fn test_rpc_think_time_spaces_requests() {
    // Same exchange with 5 ms of think time: latencies unchanged, request
    // starts spaced by latency + think.
    let rate = 100_000_000;
    let mut rpc = RpcConfig::new(100, 200);
    rpc.think = Duration::from_millis(5);
    rpc.count = Some(20);
    rpc.samples = 100;
    let cfg = pair(rate, Duration::from_millis(1), AppConfig::Rpc(rpc));
    let mut sim = Sim::new(&cfg).unwrap();
    let sends: Arc<Mutex<Vec<u64>>> = Arc::default();
    let s2 = sends.clone();
    sim.set_packet_tap(Box::new(move |now: Instant, ev: &PacketEvent| {
        if ev.kind == PacketEventKind::Send && ev.from_client && ev.seg.payload_len == 100 {
            s2.lock().unwrap().push(now.as_nanos());
        }
    }));
    sim.run_to_end();
    let r = sim.result();
    let s = r.flows[0].rpc.as_ref().unwrap();
    assert_eq!(s.count, 20);
    // As in the hand-timed exchange; the quick-ACK phase costs a pure ACK
    // at each end in the first transaction (the client's is the
    // handshake's third segment) and nothing in the second: the server is
    // in pingpong mode from its first response, and the client's pure ACK
    // of that response leaves during the think time.
    let lat = 2_032_320;
    let ack = ser(HDR, rate);
    assert_eq!(s.samples[0], lat + 2 * ack, "{:?}", s.samples);
    assert!(s.samples[1..].iter().all(|x| *x == lat), "{:?}", s.samples);
    let sends = sends.lock().unwrap();
    assert_eq!(sends.len(), 20);
    for (i, w) in sends.windows(2).enumerate() {
        assert_eq!(w[1] - w[0], s.samples[i] + 5_000_000);
    }
}

#[test]
fn test_rpc_large_messages_and_stop_time() {
    // 64 KB requests, 1 MB responses over 1 Gbit/s, 50 µs: many segments
    // per message; stop issuing after 500 ms; the flow completes.
    let mut rpc = RpcConfig::new(65_536, 1_000_000);
    rpc.stop = Some(Duration::from_millis(500));
    let cfg = pair(1_000_000_000, Duration::from_micros(50), AppConfig::Rpc(rpc));
    let r = tcplab_sim::run(&cfg).unwrap();
    let f = &r.flows[0];
    let s = f.rpc.as_ref().unwrap();
    assert!(s.count > 20, "{}", s.count);
    // At least the wire time of a megabyte at 1 Gbit/s.
    assert!(s.min_ns > 8_000_000, "{}", s.min_ns);
    assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p90_ns && s.p90_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
    assert!(s.samples.is_empty(), "samples are off by default");
    assert_eq!(f.bytes_delivered, s.count * (65_536 + 1_000_000));
    let done = f.completed_at.expect("stops after 500 ms and completes");
    assert!(done >= Duration::from_millis(500) && done < Duration::from_millis(600), "{done:?}");
    // The histogram's CDF ends at 1 and at the exact maximum.
    let cdf: Vec<(u64, f64)> = s.histogram.cdf().collect();
    assert_eq!(cdf.last().unwrap(), &(s.max_ns, 1.0));
}

#[test]
fn test_rpc_nodelay_and_minshall_nagle_send_a_lone_tail_at_once() {
    // A 2000-byte response is a full segment (1448 payload + 52) plus a
    // 552-byte tail. Linux's Nagle is Minshall's variant (tcp_nagle_check
    // with tcp_minshall_check): a sub-MSS segment waits only while an
    // earlier sub-MSS segment is unacknowledged, so this lone tail goes at
    // once with or without TCP_NODELAY, and both give
    //   ser(152) + 1 ms + ser(1500) + ser(604) + 1 ms at 1 Gbit/s
    //   = 1 216 + 1 000 000 + 12 000 + 4 832 + 1 000 000 ns,
    // plus ser(52) = 416 ns: two segments are more than one full frame, so
    // the client's softirq ACKs the response at once, before the
    // application writes the next request (the first transactions also
    // find the server in quick-ACK mode: a second pure ACK).
    let run = |nodelay: bool| {
        let mut rpc = RpcConfig::new(100, 2000);
        rpc.count = Some(30);
        let mut cfg = pair(1_000_000_000, Duration::from_millis(1), AppConfig::Rpc(rpc));
        cfg.flows[0].nodelay = nodelay;
        tcplab_sim::run(&cfg).unwrap().flows[0].rpc.clone().unwrap()
    };
    let expect = ser(HDR + 100, 1_000_000_000) + ser(1500, 1_000_000_000) + ser(HDR + 552, 1_000_000_000) + 2_000_000;
    assert_eq!(expect, 2_018_048);
    let ack = ser(HDR, 1_000_000_000);
    for nodelay in [false, true] {
        let s = run(nodelay);
        assert_eq!((s.count, s.min_ns, s.max_ns), (30, expect + ack, expect + 2 * ack), "nodelay {nodelay}");
    }
}
