//! The scenario shared by the host test (`host_netns.rs`, real time) and
//! the guest test (`uml_guest.rs`, virtual time): three flows between
//! namespaces `a` and `b` over one of two topologies.
//!
//! - [`direct`]: a veth pair a–b; a's egress is shaped to 10 Mbit/s (htb,
//!   bfifo leaf); optionally b's egress has the step-marking RED qdisc.
//! - [`routed`]: a–r–b with r forwarding and both shapers on r's egress:
//!   10 Mbit/s bfifo towards b, 5 Mbit/s RED marker towards a. This is
//!   the lab's own shape (bottlenecks on a switch), and the one where a
//!   marker sees a queue: on a sender's own egress TCP Small Queues keep
//!   about a millisecond of a socket's data (two TSO-autosized skbs) in
//!   the qdisc, so a single flow's queue there stays a few packets long.

#![allow(dead_code)] // each test file uses its part

use tcplab_agent::job::{
    Action, App, FlowJob, GuestResult, Job, LinkProbe, RunOut, SockOpts, Step, TraceOut, JOB_VERSION,
};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

pub fn exec(what: &str, argv: &str) -> Step {
    Step { what: what.into(), action: Action::Exec { argv: argv.split_whitespace().map(String::from).collect() } }
}

fn sysctl(ns: &str, key: &str, value: &str) -> Step {
    Step {
        what: format!("{key} in {ns}"),
        action: Action::Sysctl { ns: Some(ns.into()), key: key.into(), value: value.into() },
    }
}

/// Shaper steps on `dev` in `ns`: htb root `1:` with class `1:1` at
/// `rate`, then `leaf` (a tc qdisc spec under `parent 1:1`), if any.
fn shaper(ns: &str, dev: &str, rate: &str, leaf: Option<&str>) -> Vec<Step> {
    let mut v = vec![
        exec(&format!("shaper {ns}:{dev}"), &format!("tc -n {ns} qdisc add dev {dev} root handle 1: htb default 1")),
        exec(
            &format!("rate {ns}:{dev}"),
            &format!("tc -n {ns} class add dev {dev} parent 1: classid 1:1 htb rate {rate}"),
        ),
    ];
    if let Some(leaf) = leaf {
        v.push(exec(&format!("queue {ns}:{dev}"), &format!("tc -n {ns} qdisc add dev {dev} parent 1:1 {leaf}")));
    }
    v
}

/// The step marker `red 20:` under `1:1` of `dev` in `ns`: threshold 30
/// kB, limit 200 kB, made by netlink.
pub fn red_step(ns: &str, dev: &str) -> Step {
    Step {
        what: format!("marker {ns}:{dev}"),
        action: Action::RedStep {
            ns: ns.into(),
            dev: dev.into(),
            parent: 0x0001_0001,
            handle: 0x0020_0000,
            limit_bytes: 200_000,
            threshold_bytes: 30_000,
        },
    }
}

fn probe(id: &str, ns: &str, dev: &str, queue_handle: u32) -> LinkProbe {
    LinkProbe { id: id.into(), ns: ns.into(), dev: dev.into(), queue_handle, root_handle: 0x0001_0000 }
}

/// Where the scenario runs.
pub struct Topology {
    pub a: String,
    pub b: String,
    pub addr_a: &'static str,
    pub addr_b: &'static str,
    pub setup: Vec<Step>,
    /// `l:a->b` (the 10 Mbit/s bfifo), then `l:b->a` (the RED marker) if
    /// there is one.
    pub probes: Vec<LinkProbe>,
    /// Where the marker is and which namespace and device it is on.
    pub red: Option<(String, String)>,
    /// Whether the rev flow builds a queue at the marker (routed only).
    pub marks: bool,
}

fn hosts(names: &[&str]) -> Vec<Step> {
    let mut v: Vec<Step> = names.iter().map(|n| exec(&format!("host {n}"), &format!("ip netns add {n}"))).collect();
    v.extend(names.iter().map(|n| exec(&format!("lo {n}"), &format!("ip -n {n} link set lo up"))));
    // ECN requested by every TCP socket (the marker marks ECT packets).
    v.extend(names.iter().map(|n| sysctl(n, "net.ipv4.tcp_ecn", "1")));
    v
}

/// Namespaces a and b; veth v0 (in a, 198.18.0.1) to v1 (in b,
/// 198.18.0.2); a's egress htb 10mbit with a 100 kB bfifo `10:`; with
/// `red`, b's egress htb 5mbit with the marker.
pub fn direct(a: &str, b: &str, red: bool) -> Topology {
    let mut setup = hosts(&[a, b]);
    setup.extend([
        exec("link a-b", &format!("ip -n {a} link add v0 type veth peer name v1 netns {b}")),
        exec("addr a", &format!("ip -n {a} addr add 198.18.0.1/24 dev v0")),
        exec("addr b", &format!("ip -n {b} addr add 198.18.0.2/24 dev v1")),
        exec("up a", &format!("ip -n {a} link set v0 up")),
        exec("up b", &format!("ip -n {b} link set v1 up")),
    ]);
    setup.extend(shaper(a, "v0", "10mbit", Some("handle 10: bfifo limit 100000")));
    let mut probes = vec![probe("l:a->b", a, "v0", 0x0010_0000)];
    if red {
        setup.extend(shaper(b, "v1", "5mbit", None));
        setup.push(red_step(b, "v1"));
        probes.push(probe("l:b->a", b, "v1", 0x0020_0000));
    }
    Topology {
        a: a.into(),
        b: b.into(),
        addr_a: "198.18.0.1",
        addr_b: "198.18.0.2",
        setup,
        probes,
        red: red.then(|| (b.to_string(), "v1".to_string())),
        marks: false,
    }
}

/// Namespaces a, r, b; a (198.18.0.1) – r (198.18.0.254, 198.18.1.254)
/// – b (198.18.1.2), r forwarding; r's egress to b htb 10mbit with a 100
/// kB bfifo `10:`, r's egress to a htb 5mbit with the marker.
pub fn routed(a: &str, r: &str, b: &str) -> Topology {
    let mut setup = hosts(&[a, r, b]);
    setup.extend([
        sysctl(r, "net.ipv4.ip_forward", "1"),
        exec("link a-r", &format!("ip -n {a} link add v0 type veth peer name ra netns {r}")),
        exec("link b-r", &format!("ip -n {b} link add v1 type veth peer name rb netns {r}")),
        exec("addr a", &format!("ip -n {a} addr add 198.18.0.1/24 dev v0")),
        exec("addr r-a", &format!("ip -n {r} addr add 198.18.0.254/24 dev ra")),
        exec("addr b", &format!("ip -n {b} addr add 198.18.1.2/24 dev v1")),
        exec("addr r-b", &format!("ip -n {r} addr add 198.18.1.254/24 dev rb")),
        exec("up a", &format!("ip -n {a} link set v0 up")),
        exec("up r-a", &format!("ip -n {r} link set ra up")),
        exec("up b", &format!("ip -n {b} link set v1 up")),
        exec("up r-b", &format!("ip -n {r} link set rb up")),
        exec("route a", &format!("ip -n {a} route add default via 198.18.0.254")),
        exec("route b", &format!("ip -n {b} route add default via 198.18.1.254")),
    ]);
    setup.extend(shaper(r, "rb", "10mbit", Some("handle 10: bfifo limit 100000")));
    setup.extend(shaper(r, "ra", "5mbit", None));
    setup.push(red_step(r, "ra"));
    Topology {
        a: a.into(),
        b: b.into(),
        addr_a: "198.18.0.1",
        addr_b: "198.18.1.2",
        setup,
        probes: vec![probe("l:a->b", r, "rb", 0x0010_0000), probe("l:b->a", r, "ra", 0x0020_0000)],
        red: Some((r.to_string(), "ra".to_string())),
        marks: true,
    }
}

/// A flow from `(cns, caddr)` to `(sns, saddr):port`.
#[allow(clippy::too_many_arguments)]
pub fn flow(id: &str, cns: &str, caddr: &str, sns: &str, saddr: &str, port: u16, ports: Vec<u16>, app: App) -> FlowJob {
    FlowJob {
        id: id.into(),
        client_ns: cns.into(),
        client_addr: caddr.into(),
        server_ns: sns.into(),
        server_addr: saddr.into(),
        server_port: port,
        client_ports: ports,
        start_ns: 0,
        gap_ns: 0,
        duration_each_ns: None,
        cc: "cubic".into(),
        nodelay: false,
        // A bounded send buffer, so that the data queued at the stop time
        // drains well before the end.
        client_sock: SockOpts { sndbuf: 256 * 1024, rcvbuf: 0 },
        server_sock: SockOpts::default(),
        app,
    }
}

pub const REV_RUNS: usize = 3;
pub const REV_BYTES: u64 = 300_000;
pub const REV_GAP: u64 = 50 * MS;

/// The job: `bulk` a->b for 2 s; `rpc` a->b (100 B requests, 10 kB
/// responses, 20 ms think time) from 100 ms to 1.5 s; `rev` b->a, three
/// runs of 300 kB, 50 ms apart, from 200 ms. Traces every 100 ms; 3.5 s.
pub fn scenario(t: &Topology, out_dir: &str) -> Job {
    let (a, b, ia, ib) = (t.a.as_str(), t.b.as_str(), t.addr_a, t.addr_b);
    let bulk = flow("bulk", a, ia, b, ib, 5001, vec![40001], App::Bulk { bytes: None, stop_ns: Some(2 * S) });
    let mut rpc = flow(
        "rpc",
        a,
        ia,
        b,
        ib,
        5002,
        vec![40002],
        App::Rpc { request: 100, response: 10_000, think_ns: 20 * MS, count: None, stop_ns: Some(1500 * MS) },
    );
    rpc.start_ns = 100 * MS;
    let ports = (0..REV_RUNS as u16).map(|k| 41000 + k).collect();
    let mut rev = flow("rev", b, ib, a, ia, 5003, ports, App::Bulk { bytes: Some(REV_BYTES), stop_ns: None });
    rev.start_ns = 200 * MS;
    rev.gap_ns = REV_GAP;
    if t.marks {
        // The marker is made for DCTCP, which also leaves slow start only
        // on a mark (cubic's HyStart leaves it once the queue delay is a
        // few ms, long before the threshold). The path's RTT is mostly the
        // bulk flow's queue (80 ms, which rev's ACKs cross), so the
        // receiver's initial 64 kB window is about the BDP: a large fixed
        // buffer lets the window, and the marker's queue, grow.
        rev.cc = "dctcp".into();
        rev.server_sock.rcvbuf = 1 << 20;
    }
    Job {
        version: JOB_VERSION,
        setup: t.setup.clone(),
        duration_ns: 3500 * MS,
        trace_interval_ns: Some(100 * MS),
        flows: vec![bulk, rpc, rev],
        counter_namespaces: vec![a.into(), b.into()],
        link_probes: t.probes.clone(),
        loss_probes: vec![],
        netem_timelines: vec![],
        // On the host: no tick alignment (the host's HZ is not the image's).
        hz: 0,
        capture: None,
        out_dir: out_dir.into(),
    }
}

pub fn counter(r: &GuestResult, ns: &str, name: &str) -> Option<u64> {
    let (_, c) = r.counters.iter().find(|(n, _)| n == ns)?;
    c.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
}

/// Prints what the result holds, for the test's log.
pub fn summary(r: &GuestResult) {
    for f in &r.flows {
        eprintln!("flow {}: {} runs", f.id, f.runs.len());
        for run in &f.runs {
            eprintln!(
                "  start {} completed {:?} closed {:?} bytes {} rpcs {} cwnd {} delivered_ce {}",
                run.start_ns,
                run.completed_ns,
                run.closed_ns,
                run.bytes_delivered,
                run.rpcs,
                run.info.snd_cwnd,
                run.info.delivered_ce
            );
        }
        eprintln!("  {} trace rows, first {:?}", f.trace.len(), f.trace.first());
        let lat = &f.rpc_latencies_ns;
        eprintln!("  {} latencies, min {:?} max {:?}", lat.len(), lat.iter().min(), lat.iter().max());
    }
    for l in &r.links {
        eprintln!("{l:?}");
    }
}

/// How closely times must match: real time on a busy host, or virtual
/// time in the guest (where sleeping to t wakes at t).
#[derive(Clone, Copy)]
pub struct Slack {
    /// A trace row's distance from its grid point.
    pub grid: u64,
    /// A run's start after its due time.
    pub start: u64,
}

fn goodput_mbps(run: &RunOut) -> f64 {
    let completed = run.completed_ns.expect("completed");
    run.bytes_delivered as f64 * 8.0 / ((completed - run.start_ns) as f64 / S as f64) / 1e6
}

fn check_trace(t: &[TraceOut], slack: Slack) {
    assert!(t.len() >= 15, "{} trace rows", t.len());
    for (i, row) in t.iter().enumerate() {
        let k = (row.time_ns + 50 * MS) / (100 * MS);
        assert!(k >= 1 && row.time_ns.abs_diff(k * 100 * MS) <= slack.grid, "row {i} off the grid: {}", row.time_ns);
        if i > 0 {
            assert!(row.time_ns > t[i - 1].time_ns);
        }
    }
    assert!(t.iter().any(|row| row.cwnd > 10 && row.srtt_us > 0 && row.delivered > 100));
}

/// What must hold of the scenario's result in either setting.
pub fn check(r: &GuestResult, t: &Topology, slack: Slack) {
    let (a, b) = (t.a.as_str(), t.b.as_str());
    assert_eq!(r.error, None);
    assert!(!r.kernel_release.is_empty());
    assert_eq!(r.flows.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["bulk", "rpc", "rev"]);

    // Bulk: one run, closed after the stop; goodput at the shaper's rate
    // less the headers (1448 of 1514 bytes: 9.56 Mbit/s).
    let bulk = &r.flows[0];
    assert_eq!(bulk.runs.len(), 1);
    let run = &bulk.runs[0];
    let (completed, closed) = (run.completed_ns.expect("bulk completed"), run.closed_ns.expect("bulk closed"));
    assert!(run.start_ns <= slack.start && completed > 2 * S && closed >= completed && closed < 3500 * MS, "{run:?}");
    let mbps = goodput_mbps(run);
    eprintln!("bulk goodput {mbps:.3} Mbit/s");
    assert!((8.0..=10.5).contains(&mbps), "goodput {mbps} Mbit/s");
    assert!(run.info.bytes_acked >= run.bytes_delivered && run.info.snd_mss > 0, "{:?}", run.info);
    // TCP_CLOSE: on the server's FIN the connection moved to a TIME-WAIT
    // mini-socket and left the full socket closed.
    assert_eq!(run.info.state, 7);
    check_trace(&bulk.trace, slack);

    // RPC: latencies, counts, bytes of both directions.
    let rpc = &r.flows[1];
    let rr = &rpc.runs[0];
    assert!(!rpc.rpc_latencies_ns.is_empty());
    assert_eq!(rr.rpcs, rpc.rpc_latencies_ns.len() as u64);
    assert_eq!(rr.bytes_delivered, rr.rpcs * 10_100);
    assert!(rr.start_ns >= 100 * MS && rr.start_ns <= 100 * MS + slack.start, "{rr:?}");
    let done = rr.completed_ns.expect("rpc completed");
    assert!(done <= 1500 * MS + S && rr.closed_ns.is_some_and(|c| c >= done), "{rr:?}");
    assert!(rpc.rpc_latencies_ns.iter().all(|&l| l > 0 && l < S));

    // Repeated runs: each starts the gap after the previous one closed.
    let rev = &r.flows[2];
    assert_eq!(rev.runs.len(), REV_RUNS);
    for (k, run) in rev.runs.iter().enumerate() {
        assert_eq!(run.bytes_delivered, REV_BYTES, "run {k}");
        let due = if k == 0 { 200 * MS } else { rev.runs[k - 1].closed_ns.expect("closed") + REV_GAP };
        assert!(run.start_ns >= due && run.start_ns <= due + slack.start, "run {k}: start {} due {due}", run.start_ns);
        assert!(run.completed_ns.is_some() && run.closed_ns.is_some(), "run {k}: {run:?}");
        assert!(run.info.bytes_acked > REV_BYTES, "run {k}: {:?}", run.info);
    }

    // Counters of both namespaces.
    assert!(counter(r, a, "TcpActiveOpens").is_some_and(|v| v >= 2), "{:?}", r.counters);
    assert!(counter(r, b, "TcpActiveOpens").is_some_and(|v| v >= REV_RUNS as u64));
    assert!(counter(r, b, "TcpPassiveOpens").is_some_and(|v| v >= 2));
    assert!(counter(r, a, "TcpExtTCPOrigDataSent").is_some_and(|v| v > 1000));
    assert!(counter(r, a, "IpExtOutOctets").is_some_and(|v| v > run.bytes_delivered));

    // Link a->b: everything the bulk flow delivered went through it.
    let l = &r.links[0];
    assert_eq!(l.id, "l:a->b");
    assert!(l.tx_bytes > run.bytes_delivered && l.tx_packets > 0, "{l:?}");
    assert!(l.peak_queue_packets > 0, "{l:?}");
    assert_eq!(l.ce_marks, 0);
    if t.red.is_some() {
        let l = &r.links[1];
        assert_eq!(l.id, "l:b->a");
        assert!(l.tx_bytes > REV_BYTES * REV_RUNS as u64, "{l:?}");
    }
    if t.marks {
        // The marker marked, the rev flow's sender heard of it, and no
        // packet was dropped (nodrop; the queue stayed under its limit).
        let l = &r.links[1];
        assert!(l.ce_marks > 0 && l.drops == 0 && l.peak_queue_packets > 0, "{l:?}");
        assert!(rev.runs.iter().any(|run| run.info.delivered_ce > 0));
        assert!(counter(r, b, "TcpExtTCPDeliveredCE").is_some_and(|v| v > 0));
        assert!(counter(r, a, "IpExtInCEPkts").is_some_and(|v| v > 0));
    }
}

/// Checks a `tc -s -d qdisc show` listing for the marker as the netlink
/// step made it (`ewma 0` is the Wlog that `tc` itself cannot set).
pub fn check_red_listing(show: &str) {
    let line = show.lines().find(|l| l.contains("red 20:")).expect("red 20: exists");
    for want in ["parent 1:1", "limit 200000b", "min 30000b", "max 30000b", "ecn", "nodrop", "ewma 0"] {
        assert!(line.contains(want), "{want:?} not in {line:?}");
    }
}
