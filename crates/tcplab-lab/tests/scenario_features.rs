//! Scenario syntax of the simulator features added after the foundation:
//! host qdiscs (fq), the RPC application, TCP_NODELAY, repeated
//! connections and the order-keeping delay models. Each bad value names
//! file:line:col and the field.

use tcplab_core::time::Duration;
use tcplab_lab::{load_str, runner};
use tcplab_sim::config::{AppConfig, DelayModel, FqConfig, FqPacing, Qdisc, Repeat};

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

const BASE: &str = r#"[run]
duration = "2s"

[[node]]
name = "h1"

[[node]]
name = "sw"
kind = "switch"

[[node]]
name = "h2"

[[link]]
name = "access"
a = "h1"
b = "sw"
rate = "1Gbit"
delay = "10us"

[[link]]
name = "bn"
a = "sw"
b = "h2"
rate = "100Mbit"
delay = "1ms"

[[flow]]
id = "f1"
from = "h1"
to = "h2"
"#;

fn ok(text: &str) -> tcplab_lab::Scenario {
    load_str("s.toml", text, &[], None).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str) -> String {
    load_str("bad.toml", text, &[], None).unwrap_err().to_string()
}

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} not in BASE");
    BASE.replacen(from, to, 1)
}

/// BASE with extra lines in the flow table.
fn flow(extra: &str) -> String {
    format!("{BASE}{extra}\n")
}

// ---- qdisc ----------------------------------------------------------------

#[test]
fn test_qdisc_defaults_and_fq_parameters() {
    let sc = ok(BASE);
    assert_eq!(sc.sim.nodes[0].qdisc, Qdisc::Pfifo);
    let sc = ok(&with("name = \"h1\"", "name = \"h1\"\nqdisc = \"fq\""));
    assert_eq!(sc.sim.nodes[0].qdisc, Qdisc::Fq(FqConfig::default()));
    let sc = ok(&with(
        "name = \"h1\"",
        "name = \"h1\"\nqdisc = { kind = \"fq\", pacing = \"credit\", limit = \"5000p\", flow_limit = 50, quantum = \"4KB\", \
         initial_quantum = 30000, flow_refill_delay = \"10ms\", low_rate_threshold = \"0bit\", ce_threshold = \"1ms\" }",
    ));
    let Qdisc::Fq(q) = &sc.sim.nodes[0].qdisc else { panic!() };
    assert_eq!(q.pacing, FqPacing::Credit);
    assert_eq!((q.limit, q.flow_limit, q.quantum, q.initial_quantum), (5000, 50, 4000, 30000));
    assert_eq!(q.flow_refill_delay, Duration::from_millis(10));
    assert_eq!(q.low_rate_threshold, 0);
    assert_eq!(q.ce_threshold, Some(Duration::from_millis(1)));
    // Default threshold: 550 kbit/s in bytes per second.
    assert_eq!(FqConfig::default().low_rate_threshold, 68_750);
    // --set reaches it too.
    let sc = load_str("s.toml", BASE, &["node.h2.qdisc=fq".into()], None).unwrap();
    assert!(matches!(sc.sim.nodes[2].qdisc, Qdisc::Fq(_)));
}

#[test]
fn test_qdisc_errors() {
    assert_eq!(
        err(&with("kind = \"switch\"", "kind = \"switch\"\nqdisc = \"fq\"")),
        "bad.toml:10:9: node[1].qdisc: a qdisc applies to hosts; a switch's queues are its links' `queue` settings \
         (remove qdisc, or make the node a host)"
    );
    assert_eq!(
        err(&with("name = \"h1\"", "name = \"h1\"\nqdisc = \"codel\"")),
        "bad.toml:6:9: node[0].qdisc: unknown qdisc \"codel\" (known: pfifo, fq)"
    );
    let e = err(&with("name = \"h1\"", "name = \"h1\"\nqdisc = { kind = \"fq\", quantum = 0 }"));
    assert_eq!(e, "bad.toml:6:34: node[0].qdisc.quantum: must be between 1 and 1048576 bytes, found 0");
    let e = err(&with("name = \"h1\"", "name = \"h1\"\nqdisc = { kind = \"fq\", flow_limit = \"10KB\" }"));
    assert!(e.starts_with("bad.toml:6:37: node[0].qdisc.flow_limit: fq limits count packets"), "{e}");
    let e = err(&with("name = \"h1\"", "name = \"h1\"\nqdisc = { kind = \"fq\", pacing = \"tsq\" }"));
    assert!(e.starts_with("bad.toml:6:33: node[0].qdisc.pacing: unknown pacing \"tsq\""), "{e}");
    let e = err(&with("name = \"h1\"", "name = \"h1\"\nqdisc = { kind = \"fq\", quantom = 1 }"));
    assert_eq!(e, "bad.toml:6:24: node[0].qdisc.quantom: unknown key; did you mean \"quantum\"?");
}

// ---- rpc, nodelay ----------------------------------------------------------

#[test]
fn test_rpc_app_and_nodelay() {
    let sc = ok(&flow("app = \"rpc\""));
    let AppConfig::Rpc(r) = &sc.sim.flows[0].app else { panic!() };
    assert_eq!((r.request, r.response, r.count, r.think, r.samples), (1, 1, None, Duration::ZERO, 0));
    assert!(!sc.sim.flows[0].nodelay);
    let sc = ok(&flow(
        "nodelay = true\napp = { kind = \"rpc\", request = \"10KB\", response = \"1MB\", think = \"2ms\", count = 500, \
         stop = \"1.5s\", samples = 1000 }",
    ));
    let AppConfig::Rpc(r) = &sc.sim.flows[0].app else { panic!() };
    assert_eq!((r.request, r.response, r.count, r.samples), (10_000, 1_000_000, Some(500), 1000));
    assert_eq!((r.think, r.stop), (Duration::from_millis(2), Some(Duration::from_millis(1500))));
    assert!(sc.sim.flows[0].nodelay);
}

#[test]
fn test_rpc_errors() {
    assert_eq!(
        err(&flow("app = { kind = \"rpc\", request = 0 }")),
        "bad.toml:32:33: flow[0].app.request: must be greater than zero"
    );
    assert_eq!(
        err(&flow("app = { kind = \"rpc\", count = 0 }")),
        "bad.toml:32:31: flow[0].app.count: must be between 1 and 9223372036854775807, found 0"
    );
    assert_eq!(
        err(&flow("app = { kind = \"rpc\", bytes = 10 }")),
        "bad.toml:32:23: flow[0].app.bytes: unknown key (expected one of: kind, request, response, think, count, stop, samples)"
    );
    assert_eq!(err(&flow("app = \"rr\"")), "bad.toml:32:7: flow[0].app: unknown application \"rr\" (known: bulk, rpc)");
    assert_eq!(
        err(&flow("nodelay = \"yes\"")),
        "bad.toml:32:11: flow[0].nodelay: expected true/false (or 1/0), found a string \"yes\""
    );
}

// ---- repeat ------------------------------------------------------------------

#[test]
fn test_repeat_gap_duration_each() {
    let sc = ok(&flow("repeat = 10\ngap = \"1s\"\nduration_each = \"10s\""));
    assert_eq!(
        sc.sim.flows[0].repeat,
        Repeat { runs: 10, gap: Duration::from_secs(1), duration_each: Some(Duration::from_secs(10)) }
    );
    assert_eq!(ok(BASE).sim.flows[0].repeat, Repeat::default());
    // A finite application ends each run by itself.
    ok(&flow("repeat = 3\napp = { kind = \"bulk\", bytes = \"1MB\" }"));
    ok(&flow("repeat = 3\napp = { kind = \"rpc\", count = 100 }"));
}

#[test]
fn test_repeat_errors() {
    assert_eq!(
        err(&flow("repeat = 3")),
        "bad.toml:32:10: flow[0].repeat: with 3 runs each run must end: set duration_each, or app.bytes so that the \
         application finishes"
    );
    assert_eq!(
        err(&flow("repeat = 2\napp = { kind = \"bulk\", stop = \"1s\" }")),
        "bad.toml:33:31: flow[0].app.stop: stop is a time since the start of the simulation and cannot end each of 2 \
         runs; use flow[0].duration_each"
    );
    assert_eq!(err(&flow("repeat = 0")), "bad.toml:32:10: flow[0].repeat: must be between 1 and 32768, found 0");
    assert_eq!(
        err(&flow("duration_each = \"0s\"")),
        "bad.toml:32:17: flow[0].duration_each: must be greater than zero"
    );
    assert_eq!(
        err(&flow("gap = 5")),
        "bad.toml:32:7: flow[0].gap: a time needs a unit: write e.g. \"5ms\" or \"5s\" (units: ns, us, ms, s)"
    );
    let e = err(&flow("repeat = 20000\nduration_each = \"1s\"\n[[flow]]\nid = \"f2\"\nfrom = \"h1\"\nto = \"h2\"\nrepeat = 20000\nduration_each = \"1s\""));
    // Both flows start at h1: its client port range holds 32,768.
    assert_eq!(
        e,
        "bad.toml:38:10: flow[1].repeat: host \"h1\" opens 40000 client connections (each run is one); at most 32768 \
         fit its port range"
    );
}

// ---- delay models ------------------------------------------------------------

#[test]
fn test_random_walk_and_on_off_delays() {
    let sc = ok(&with(
        "delay = \"1ms\"",
        "delay = { model = \"random-walk\", base = \"1ms\", amplitude = \"2ms\", step = \"20us\", interval = \"1ms\" }",
    ));
    assert_eq!(
        sc.sim.links[1].ab.delay,
        DelayModel::RandomWalk {
            base: Duration::from_millis(1),
            amplitude: Duration::from_millis(2),
            step: Duration::from_micros(20),
            interval: Some(Duration::from_millis(1)),
        }
    );
    let sc = ok(&with(
        "delay = \"1ms\"",
        "delay = { model = \"on-off\", base = \"1ms\", delay = \"5ms\", mean_on = \"50ms\", mean_off = \"200ms\" }",
    ));
    assert_eq!(
        sc.sim.links[1].ba.delay,
        DelayModel::OnOff {
            base: Duration::from_millis(1),
            delay: Duration::from_millis(5),
            mean_on: Duration::from_millis(50),
            mean_off: Duration::from_millis(200),
            slot: Duration::from_millis(1),
        }
    );
}

#[test]
fn test_delay_model_errors() {
    assert_eq!(
        err(&with(
            "delay = \"1ms\"",
            "delay = { model = \"on-off\", base = \"1ms\", delay = \"5ms\", mean_on = \"500us\", mean_off = \"2ms\" }"
        )),
        "bad.toml:26:68: link[1].delay.mean_on: must be at least one slot (1ms): the chain switches at most once per slot"
    );
    assert_eq!(
        err(&with(
            "delay = \"1ms\"",
            "delay = { model = \"random-walk\", base = \"1ms\", amplitude = \"2ms\", step = \"20us\", interval = \"0s\" }"
        )),
        "bad.toml:26:93: link[1].delay.interval: must be greater than zero"
    );
    assert_eq!(
        err(&with("delay = \"1ms\"", "delay = { model = \"random-walk\", base = \"1ms\", step = \"20us\" }")),
        "bad.toml:26:9: link[1].delay.amplitude: missing required key"
    );
    let e = err(&with("delay = \"1ms\"", "delay = { model = \"brownian\" }"));
    assert!(e.ends_with("(known: fixed, uniform, ordered-jitter, random-walk, on-off)"), "{e}");
}

// ---- docs and end to end -----------------------------------------------------

#[test]
fn test_every_docs_example_scenario_validates() {
    for doc in ["docs/scenarios.md", "docs/sim-fq.md"] {
        let text = std::fs::read_to_string(repo(doc)).unwrap();
        let mut n = 0;
        for block in text.split("```toml\n").skip(1) {
            let body = &block[..block.find("```").unwrap()];
            if body.contains("[run]") {
                load_str(doc, body, &[], None).unwrap_or_else(|e| panic!("{doc}: {e}\n{body}"));
                n += 1;
            }
        }
        assert!(n >= 1, "{doc}: no complete example");
    }
}

#[test]
fn test_rpc_over_fq_with_repeat_runs_end_to_end() {
    let text = with("name = \"h1\"", "name = \"h1\"\nqdisc = \"fq\"")
        + "app = { kind = \"rpc\", request = \"1KB\", response = \"10KB\", samples = 10 }\nrepeat = 2\nduration_each = \"300ms\"\n";
    let sc = ok(&text);
    let out = runner::run(&sc, None).unwrap();
    let f = &out.result.flows[0];
    assert_eq!(f.runs.len(), 2);
    let s = f.rpc.as_ref().unwrap();
    assert!(s.count > 50, "{}", s.count);
    assert_eq!(s.samples.len(), 10);
    assert!(f.runs[1].cached_metrics.is_some());
}

#[test]
fn test_json_and_table_report_rpc_latencies_and_runs() {
    let text = flow("app = { kind = \"rpc\", request = 100, response = 200, count = 20 }\nrepeat = 2");
    let sc = ok(&text);
    let out = runner::run(&sc, None).unwrap();
    let report = tcplab_lab::report::RunReport::new(&sc, &out);
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    let f = &json["flows"][0];
    assert_eq!(f["rpc"]["count"], 40);
    for key in ["min_us", "mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"] {
        assert!(f["rpc"][key].as_f64().unwrap() > 0.0, "{key}");
    }
    assert_eq!(f["runs"].as_array().unwrap().len(), 2);
    assert_eq!(f["runs"][1]["rpcs"], 20);
    assert_eq!(f["bytes_delivered"], 40 * 300);
    let table = report.to_table();
    assert!(table.contains("p99.9 ms") && table.contains("goodput Mbit/s"), "{table}");
}

/// Running in progress slices processes the same events: the result equals
/// an unsliced run's, and the reported fractions climb to exactly 1.
#[test]
fn test_progress_slices_do_not_change_the_result() {
    use tcplab_lab::runner::Extras;
    let sc = tcplab_lab::load(
        &repo("scenarios/two-flows.toml"),
        &["run.duration=3s".into(), "run.goodput_window=1s".into()],
        None,
    )
    .unwrap();
    let plain = runner::run_with(&sc, Extras::default()).unwrap();
    let mut seen = Vec::new();
    let mut report = |f: f64| seen.push(f);
    let sliced = runner::run_with(&sc, Extras { progress: Some(&mut report), ..Default::default() }).unwrap();
    assert_eq!(plain.result, sliced.result);
    assert!(seen.len() >= 100, "{} reports", seen.len());
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&1.0));
}

// ------------------------------------------------------------ random loss

#[test]
fn test_loss_syntax_random_and_gemodel_with_netems_defaults() {
    use tcplab_sim::config::LossModel;
    let sc = ok(&with("delay = \"1ms\"", "delay = \"1ms\"\nloss = \"1%\"\n[link.ba]\nloss = \"0%\""));
    let bn = &sc.sim.links[1];
    assert_eq!(bn.ab.loss, LossModel::Random { p: 42_949_673 }, "1 % is netem's rint(0.01 × UINT32_MAX)");
    assert_eq!(bn.ba.loss, LossModel::None, "0 % is no loss model at all");
    let sc = ok(&with("delay = \"1ms\"", "delay = \"1ms\"\n[link.ab]\nloss = { model = \"gemodel\", p = \"1%\" }"));
    assert_eq!(
        sc.sim.links[1].ab.loss,
        LossModel::GilbertElliott { p: 42_949_673, r: u32::MAX, bad_loss: u32::MAX, good_loss: 0 },
        "r = 100 %, 1-h = 100 %, 1-k = 0 % when not given, as `tc ... loss gemodel p`"
    );
    assert_eq!(sc.sim.links[1].ba.loss, LossModel::None);
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nloss = \"1\""));
    assert!(e.contains("link[1].loss") && e.contains("not a percentage"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nloss = \"101%\""));
    assert!(e.contains("bad.toml:") && e.contains("link[1].loss"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nloss = { model = \"bernoulli\", p = \"1%\" }"));
    assert!(e.contains("link[1].loss.model") && e.contains("known: random, gemodel"), "{e}");
}

#[test]
fn test_random_loss_drops_about_p_of_the_packets_apart_from_queue_drops() {
    let sc = ok(&with("delay = \"1ms\"", "delay = \"1ms\"\nqueue = \"10000p\"\n[link.ab]\nloss = \"1%\""));
    let a = runner::run(&sc, None).unwrap();
    let b = runner::run(&sc, None).unwrap();
    assert_eq!(a.result, b.result, "same seed, same losses");
    let l = a.result.links.iter().find(|l| l.id == "bn:sw->h2").unwrap();
    let rate = l.loss_drops as f64 / l.tx_packets as f64;
    assert!((0.007..0.013).contains(&rate), "{} lost of {} sent", l.loss_drops, l.tx_packets);
    assert_eq!(l.drops, 0, "a 10,000-packet queue never overflows here: every loss is the model's");
    // Every lost segment is sent again.
    assert!(a.result.flows[0].retransmits >= l.loss_drops, "{} retransmits", a.result.flows[0].retransmits);
    let back = a.result.links.iter().find(|l| l.id == "bn:h2->sw").unwrap();
    assert_eq!(back.loss_drops, 0);
    // Adding loss leaves the direction's other draws alone: another seed
    // loses other packets.
    let mut other = sc.clone();
    other.sim.seed = 2;
    let c = runner::run(&other, None).unwrap();
    assert_ne!(c.result.links[2].loss_drops, 0);
    assert_ne!(c.result, a.result);
}

#[test]
fn test_blackout_loses_everything_in_its_window_and_the_rto_backs_off() {
    // 3 s with no data getting through: RTOs at about 0.2, 0.6, 1.4 s after
    // the outage starts (the timer doubles), the connection survives.
    let text =
        with("delay = \"1ms\"", "delay = \"1ms\"\n[link.ab]\nblackout = [{ start = \"0.5s\", duration = \"3s\" }]")
            .replace("duration = \"2s\"", "duration = \"6s\"");
    let sc = ok(&text);
    let r = runner::run(&sc, None).unwrap().result;
    let l = r.links.iter().find(|l| l.id == "bn:sw->h2").unwrap();
    assert!(l.loss_drops > 0 && l.drops == 0, "{l:?}");
    let timeouts = r.counters.get(tcplab_core::Mib::TcpExtTCPTimeouts);
    assert!((3..=6).contains(&timeouts), "{timeouts} RTOs in a 3 s outage");
    assert!(r.flows[0].sender_info.backoff == 0, "recovered after the outage: {:?}", r.flows[0].sender_info);
    assert!(r.flows[0].bytes_delivered > 10_000_000, "goodput resumed: {}", r.flows[0].bytes_delivered);
    let e = err(&with(
        "delay = \"1ms\"",
        "delay = \"1ms\"\nblackout = [{ start = \"2s\", duration = \"1s\" }, { start = \"2.5s\", duration = \"1s\" }]",
    ));
    assert!(e.contains("link[1].blackout[1].start") && e.contains("time order"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nblackout = [{ start = \"2s\" }]"));
    assert!(e.contains("link[1].blackout[0]") && e.contains("duration"), "{e}");
}

// ---- receive path memory ----------------------------------------------------

#[test]
fn test_per_segment_truesize_shrinks_a_fixed_buffers_window_as_on_the_kernel_backend() {
    // The faithfulness suite's rwnd-limited flow: SO_RCVBUF 64 KB (doubled
    // to 128 KB) over a 40 ms path. The window is the buffer times
    // scaling_ratio, so goodput follows the payload share of truesize:
    // 231/256 with GRO (about 22.7 Mbit/s), 158/256 one skb per segment
    // (about 15.5: Linux 6.12 on the kernel backend gave 15.46).
    let goodput = |truesize: &str| {
        let sets = [
            "flow.bulk.tcp_receiver.so_rcvbuf=65536".to_string(),
            format!("flow.bulk.tcp_receiver.rcv_truesize={truesize}"),
        ];
        let sc = tcplab_lab::load(&repo("scenarios/diff/dumbbell-50mbit.toml"), &sets, None).unwrap();
        runner::run(&sc, None).unwrap().result.flows[0].goodput_bps / 1e6
    };
    let (gro, per_segment) = (goodput("gro"), goodput("per-segment"));
    assert!((22.0..23.5).contains(&gro), "{gro}");
    assert!((15.0..16.0).contains(&per_segment), "{per_segment}");
    assert!((per_segment / gro - 158.0 / 231.0).abs() < 0.02, "{per_segment} / {gro}");
}

#[test]
fn test_fq_edt_paces_skbs_and_the_pre_5_7_ack_train_exits_where_linux_6_12_does() {
    // scenarios/hystart-80ms.toml under fq's EDT pacing, with HyStart's
    // ACK-train threshold of v3.x-v5.6 (the kernel switch
    // tcp_cubic.hystart_train_half_rtt): Linux 6.12 on the kernel backend
    // left slow start on the train at cwnd 134-136 in 9 of 10 runs
    // (docs/reproductions/hystart.md). fq releases each skb at its stamp
    // with its segments together; when the model spaced every segment by
    // mss/rate instead, its ACKs formed a train one round earlier, at 68.
    let train_cwnd = |seed: u64| {
        let sets = [
            "tcp.preset=linux-current".to_string(),
            "node.sender.qdisc=fq".to_string(),
            "tcp.cubic.hystart_train_half_rtt=true".to_string(),
            "run.duration=1s".to_string(),
            format!("run.seed={seed}"),
        ];
        let sc = tcplab_lab::load(&repo("scenarios/hystart-80ms.toml"), &sets, None).unwrap();
        let r = runner::run(&sc, None).unwrap().result;
        r.counters.get(tcplab_core::Mib::TcpExtTCPHystartTrainCwnd)
    };
    for seed in [2, 6] {
        let c = train_cwnd(seed);
        assert!((120..=150).contains(&c), "seed {seed}: train exit at cwnd {c}");
    }
}

#[test]
fn test_fq_credit_pacing_stamps_an_skb_when_tsq_lets_it_down_not_when_cwnd_allows_it() {
    // The seed-003 sender (fq with pre-4.20 credit pacing) on a fixed
    // 80 ms path. tcp_write_xmit checks TCP Small Queues before it sends
    // each skb, so what cwnd allows but TSQ holds back stays in the write
    // queue, unstamped; the RTT samples then hold at most the wait of the
    // one or two skbs TSQ lets into fq. The model used to commit (and
    // stamp) everything cwnd allowed at once and hand it out as fq made
    // room, so its samples counted up to 40 ms in the core: srtt rose to
    // 99 ms in slow start. Linux 6.12 with tcp_output.edt=0 (the kernel
    // backend's credit pacing) kept srtt at 80-87 ms.
    let sets = [
        "tcp.preset=linux-current".to_string(),
        "link.wan.ab.delay=40ms".to_string(),
        "run.trace_interval=1ms".to_string(),
        "run.duration=0.6s".to_string(),
    ];
    let sc = tcplab_lab::load(&repo("scenarios/hystart-80ms.toml"), &sets, None).unwrap();
    assert!(
        matches!(&sc.sim.nodes[0].qdisc, tcplab_sim::config::Qdisc::Fq(fq) if fq.pacing == tcplab_sim::config::FqPacing::Credit)
    );
    let r = runner::run(&sc, None).unwrap().result;
    let rows = &r.flows[0].trace;
    let peak = rows.iter().filter(|t| t.cwnd > 20).map(|t| t.srtt_us).max().unwrap();
    assert!((80_000..88_000).contains(&peak), "srtt peaked at {peak} us");
    assert!(rows.iter().any(|t| t.cwnd >= 200), "slow start ran on");
}

#[test]
fn test_police_drops_the_excess_before_the_queue_and_passes_at_most_rate_plus_burst() {
    let text = with(
        "delay = \"1ms\"",
        "delay = \"1ms\"\nqueue = \"10000p\"\nab = { police = { rate = \"20Mbit\", burst = \"60KB\" } }",
    );
    let sc = ok(&text);
    let p = sc.sim.links[1].ab.police.expect("ab has the policer");
    assert_eq!((p.rate_bps, p.burst_bytes), (20_000_000, 60_000));
    assert_eq!(sc.sim.links[1].ba.police, None);
    let a = runner::run(&sc, None).unwrap().result;
    assert_eq!(a, runner::run(&sc, None).unwrap().result, "deterministic");
    let l = a.links.iter().find(|l| l.id == "bn:sw->h2").unwrap();
    assert!(l.police_drops > 0 && l.drops == 0 && l.loss_drops == 0, "{l:?}");
    // What passed the bucket in 2 s: at most 2 s of 20 Mbit/s plus the
    // burst; and the flow gets most of that.
    assert!(l.tx_bytes <= 2 * 20_000_000 / 8 + 60_000, "{l:?}");
    let g = a.flows[0].goodput_bps;
    assert!((12e6..20e6).contains(&g), "goodput {g}");
    assert!(a.links.iter().filter(|l| l.id != "bn:sw->h2").all(|l| l.police_drops == 0));
    // Per direction only, and both fields required.
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\npolice = { rate = \"20Mbit\", burst = \"60KB\" }"));
    assert!(e.contains("link[1].police") && e.contains("per direction"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nba = { police = { rate = \"20Mbit\" } }"));
    assert!(e.contains("burst"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nba = { police = { rate = \"20Mbit\", burst = 0 } }"));
    assert!(e.contains("link[1].ba.police.burst") && e.contains("positive"), "{e}");
}

// ---- GRO and netem's slot -------------------------------------------------

#[test]
fn test_slot_per_link_or_direction_and_gro_per_host() {
    let sc = ok(&with("delay = \"1ms\"", "delay = \"1ms\"\nslot = \"200us\"\nba = { slot = \"1ms\" }"));
    assert_eq!(sc.sim.links[1].ab.slot, Some(Duration::from_micros(200)));
    assert_eq!(sc.sim.links[1].ba.slot, Some(Duration::from_millis(1)));
    assert_eq!(sc.sim.links[0].ab.slot, None);
    let sc = load_str("s.toml", BASE, &["node.h2.gro=true".into(), "link.bn.slot=300us".into()], None).unwrap();
    assert!(sc.sim.nodes[2].gro && !sc.sim.nodes[0].gro);
    assert_eq!(sc.sim.links[1].ab.slot, Some(Duration::from_micros(300)));
}

#[test]
fn test_slot_and_gro_errors() {
    assert_eq!(
        err(&with("kind = \"switch\"", "kind = \"switch\"\ngro = true")),
        "bad.toml:10:7: node[1].gro: gro applies to hosts: it merges what a host receives before its TCP sees it"
    );
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nslot = \"2s\""));
    assert!(e.starts_with("bad.toml:27:8: link[1].slot: a slot longer than 1s"), "{e}");
    let e = err(&with("delay = \"1ms\"", "delay = \"1ms\"\nslot = \"0s\""));
    assert!(e.starts_with("bad.toml:27:8: link[1].slot:"), "{e}");
    let e = err(&with(
        "delay = \"1ms\"",
        "delay = { model = \"uniform\", min = \"1ms\", max = \"2ms\" }\nslot = \"100us\"",
    ));
    assert!(e.starts_with("bad.toml:27:8: link[1].slot: netem's slot is modelled over a delay that keeps"), "{e}");
}
