//! Scenario → guest set-up: the exact commands for every link, delay,
//! queue and qdisc model, and the knob rules (sysctls per host, module
//! parameters per kernel, switches that need the patches, model-only
//! mechanisms refused).

use tcplab_core::time::Duration;
use tcplab_kernel::knobs::KnobSetting;
use tcplab_kernel::translate::{describe, translate, FlowKnobs, ImageFacts, Plan};
use tcplab_kernel::KernelError;
use tcplab_sim::config::{
    AppConfig, DelayModel, DirectionConfig, FlowConfig, FqConfig, FqPacing, Limit, LinkConfig, NodeConfig, Qdisc,
    QueueConfig, SimConfig,
};

fn dir(delay: DelayModel, limit: Limit, ecn: Option<Limit>) -> DirectionConfig {
    DirectionConfig {
        delay,
        queue: QueueConfig { limit, ecn_threshold: ecn },
        loss: Default::default(),
        blackouts: Vec::new(),
        police: None,
        slot: None,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// sender —access (1 Gbit/s, no delay)— sw —bottleneck (20 Mbit/s)— receiver.
fn dumbbell(ab: DirectionConfig, ba: DirectionConfig) -> SimConfig {
    let none = || dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(1000), None);
    SimConfig {
        duration: Duration::from_secs(2),
        seed: 1,
        nodes: vec![NodeConfig::host("sender"), NodeConfig::switch("sw"), NodeConfig::host("receiver")],
        links: vec![
            LinkConfig { name: "access".into(), a: 0, b: 1, rate_bps: 1_000_000_000, ab: none(), ba: none() },
            LinkConfig { name: "bottleneck".into(), a: 1, b: 2, rate_bps: 20_000_000, ab, ba },
        ],
        flows: vec![FlowConfig::new("bulk", 0, 2, AppConfig::Bulk { bytes: None, stop: None })],
        trace_interval: None,
    }
}

/// Every knob at linux-current, as the lab renders them for CUBIC.
fn defaults() -> Vec<KnobSetting> {
    [
        ("preset", "\"linux-current\""),
        ("cubic.beta", "717"),
        ("cubic.hystart_delay_thresh_shift", "3"),
        ("tcp_reordering", "3"),
        ("tcp_ecn", "2"),
        ("tcp_sack", "true"),
        ("tcp_rmem", "[4096, 131072, 6291456]"),
        ("initcwnd", "10"),
        ("mtu", "1500"),
        ("hz", "250"),
        ("cwnd_growth", "\"v3.12\""),
        ("cwnd_reduction_floor", "1"),
        ("ack_era", "\"current\""),
    ]
    .iter()
    .map(|(n, v)| KnobSetting::new(*n, *v, *v))
    .collect()
}

fn with(name: &str, value: &str) -> Vec<KnobSetting> {
    let mut v = defaults();
    let k = v.iter_mut().find(|k| k.name == name).expect("knob in defaults()");
    k.value = value.to_string();
    v
}

fn knobs(cfg: &SimConfig, sender: Vec<KnobSetting>) -> Vec<FlowKnobs> {
    cfg.flows.iter().map(|_| FlowKnobs { sender: sender.clone(), receiver: defaults() }).collect()
}

const ALL_SWITCHES: &[&str] = tcplab_kernel::switches::ALL;

fn plan_with(cfg: &SimConfig, k: Vec<FlowKnobs>, switches: &[&str]) -> Result<Plan, KernelError> {
    let switches: Vec<String> = switches.iter().map(|s| s.to_string()).collect();
    translate(
        cfg,
        &k,
        ImageFacts { hz: 250, switches: &switches, series: tcplab_kernel::series::Series::mainline() },
        "/out",
    )
}

fn plan(cfg: &SimConfig) -> Vec<String> {
    describe(&plan_with(cfg, knobs(cfg, defaults()), ALL_SWITCHES).expect("translates"))
}

/// The lines of `lines` that contain every one of `words`.
fn grep<'a>(lines: &'a [String], words: &[&str]) -> Vec<&'a str> {
    lines.iter().filter(|l| words.iter().all(|w| l.contains(w))).map(|s| s.as_str()).collect()
}

#[test]
fn test_uniform_delay_reorders_with_netem_jitter_shifted_by_one_mtu() {
    // 20-30 ms uniform: netem mean 25 ms + 0.6 ms (1500 B at 20 Mbit/s), jitter 5 ms, no rate.
    let cfg = dumbbell(
        dir(DelayModel::Uniform { min: ms(20), max: ms(30) }, Limit::Bytes(125_000), None),
        dir(DelayModel::Fixed(ms(25)), Limit::Packets(1000), None),
    );
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["w-bottleneck", "dev to-b root"]),
        ["tc -n w-bottleneck qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 25600.000us 5000.000us"]
    );
    // The ACK direction: fixed 25 ms, serialization at the link rate.
    assert_eq!(
        grep(&lines, &["w-bottleneck", "dev to-a root"]),
        ["tc -n w-bottleneck qdisc add dev to-a root handle 1: stab overhead -14 netem limit 1000000 delay 25000.000us rate 20000000bit"]
    );
    // The queue: htb at the link rate over a 125,000-byte bfifo, on the switch.
    assert_eq!(
        grep(&lines, &["t-sw", "dev l1", "tc "]),
        [
            "tc -n t-sw qdisc add dev l1 root handle 1: stab overhead -14 htb default 1",
            "tc -n t-sw class add dev l1 parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit burst 1 cburst 1 quantum 60000",
            "tc -n t-sw qdisc add dev l1 parent 1:1 handle 10: bfifo limit 125000",
        ]
    );
    // The middle redirects each side to the other.
    assert_eq!(
        grep(&lines, &["filter"]),
        [
            "tc -n w-bottleneck filter add dev to-a ingress matchall action mirred egress redirect dev to-b",
            "tc -n w-bottleneck filter add dev to-b ingress matchall action mirred egress redirect dev to-a",
        ]
    );
}

#[test]
fn test_ordered_jitter_keeps_order_with_netem_rate() {
    let cfg = dumbbell(
        dir(DelayModel::OrderedJitter { base: ms(10), jitter: ms(2) }, Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(10)), Limit::Packets(100), None),
    );
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["dev to-b root"]),
        ["tc -n w-bottleneck qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 11000.000us 1000.000us rate 20000000bit"]
    );
    assert_eq!(
        grep(&lines, &["t-sw", "l1", "pfifo"]),
        ["tc -n t-sw qdisc add dev l1 parent 1:1 handle 10: pfifo limit 100"]
    );
}

#[test]
fn test_link_without_delay_is_one_veth_pair() {
    let lines = plan(&dumbbell(
        dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None),
    ));
    assert_eq!(
        grep(&lines, &["ip link add l0"]),
        ["ip link add l0 netns t-sender address 02:00:00:00:00:00 mtu 1500 type veth peer name l0 netns t-sw address 02:00:00:00:01:00 mtu 1500"]
    );
    assert!(grep(&lines, &["w-access"]).is_empty(), "no middle namespace for a delay-free link");
    // Offloads off on every device, the middle's too.
    assert_eq!(grep(&lines, &["ethtool", "tso off gso off gro off"]).len(), 2 + 4);
    // Static neighbours, no ARP.
    assert_eq!(
        grep(&lines, &["t-sender", "neigh"]),
        ["ip -n t-sender neigh add 198.19.0.2 lladdr 02:00:00:00:01:00 dev l0 nud permanent"]
    );
}

#[test]
fn test_ecn_threshold_in_packets_is_red_with_a_pfifo_child() {
    let cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(400), Some(Limit::Packets(65))),
        dir(DelayModel::Fixed(ms(1)), Limit::Bytes(300_000), Some(Limit::Bytes(90_000))),
    );
    let lines = plan(&cfg);
    // 65 packets of 1500 IP bytes: marks once the backlog exceeds 97,500 bytes.
    assert_eq!(
        grep(&lines, &["t-sw", "dev l1", "parent"]),
        [
            "tc -n t-sw class add dev l1 parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit burst 1 cburst 1 quantum 60000",
            "tc -n t-sw qdisc add dev l1 parent 1:1 handle 10: red limit 0 min 97501 max 97501 avpkt 1500 ecn nodrop # by netlink, Wlog 0: marks when the backlog reaches 97501 bytes",
            "tc -n t-sw qdisc add dev l1 parent 10:1 handle 20: pfifo limit 400",
        ]
    );
    // A byte threshold on a byte-limited queue: RED's own bfifo child.
    assert_eq!(
        grep(&lines, &["t-receiver", "red"]),
        ["tc -n t-receiver qdisc add dev l1 parent 1:1 handle 10: red limit 300000 min 90001 max 90001 avpkt 1500 ecn nodrop # by netlink, Wlog 0: marks when the backlog reaches 90001 bytes"]
    );
}

#[test]
fn test_fq_host_gets_fq_under_the_shaper_and_credit_pacing_turns_edt_stamps_off() {
    let mut cfg = dumbbell(
        dir(DelayModel::Fixed(ms(40)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(40)), Limit::Packets(100), None),
    );
    cfg.nodes[0].qdisc = Qdisc::Fq(FqConfig::default());
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["t-sender", " fq "]),
        ["tc -n t-sender qdisc add dev l0 parent 1:1 handle 10: fq limit 10000 flow_limit 100 quantum 3028 initial_quantum 15140 refill_delay 40000us low_rate_threshold 550000bit"]
    );
    // No size table under fq (it counts frames, and a GSO skb's every
    // segment, as on a NIC); the shaper's rate counts frames instead.
    assert_eq!(grep(&lines, &["t-sender", "root"]), ["tc -n t-sender qdisc add dev l0 root handle 1: htb default 1"]);
    assert!(grep(&lines, &["t-sender", "classid 1:1"])[0].contains(" rate 1009333333bit "), "{lines:?}");
    assert!(grep(&lines, &["t-receiver", "root"])[0].contains("stab overhead -14"));
    // A policer there counts frames too.
    cfg.links[0].ab.police = Some(tcplab_sim::config::Police { rate_bps: 15_000_000, burst_bytes: 15_000 });
    let lines = plan(&cfg);
    assert!(grep(&lines, &["t-sender", "police"])[0].contains("police rate 15140000bit burst 15140 "), "{lines:?}");
    cfg.links[0].ab.police = None;
    assert!(plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap().cmdline.is_empty());
    // fq's own (pre-4.20) pacing: the same qdisc, TCP's stamps off.
    cfg.nodes[0].qdisc = Qdisc::Fq(FqConfig { pacing: FqPacing::Credit, ..FqConfig::default() });
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    assert_eq!(p.cmdline, ["tcp_output.edt=0"]);
    // An image without the switch cannot.
    let e = plan_with(&cfg, knobs(&cfg, defaults()), &[]).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("node[0].qdisc.pacing"), "{e}");
    assert!(e.message.contains("tcp_output.edt"), "{e}");
    // The switch is guest-wide: two fq hosts must pace alike.
    cfg.nodes[2].qdisc = Qdisc::Fq(FqConfig::default());
    let e = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("node[2].qdisc.pacing"), "{e}");
    assert!(e.message.contains(r#"fq pacing = "edt""#), "{e}");
}

#[test]
fn test_random_walk_and_on_off_delays_are_refused_naming_the_field() {
    let walk =
        DelayModel::RandomWalk { base: ms(10), amplitude: ms(5), step: Duration::from_micros(50), interval: None };
    let cfg = dumbbell(dir(walk, Limit::Packets(100), None), dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None));
    let e = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("link[1].ab.delay"));
    assert!(e.message.contains("random-walk"), "{e}");
}

#[test]
fn test_routes_follow_the_models_paths_with_host_addresses() {
    let lines = plan(&dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    ));
    assert_eq!(
        grep(&lines, &["route add"]),
        [
            "ip -n t-sw route add 198.18.0.1/32 via 198.19.0.1 dev l0",
            "ip -n t-receiver route add 198.18.0.1/32 via 198.19.0.5 dev l1",
            "ip -n t-sender route add 198.18.0.3/32 via 198.19.0.2 dev l0",
            "ip -n t-sw route add 198.18.0.3/32 via 198.19.0.6 dev l1",
        ]
    );
    assert_eq!(grep(&lines, &["t-sw", "ip_forward"]), ["ip netns exec t-sw sysctl -qw net.ipv4.ip_forward=\"1\""]);
}

#[test]
fn test_sysctls_per_host_and_params_on_the_command_line() {
    let cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    let mut sender = with("tcp_reordering", "10");
    sender.iter_mut().find(|k| k.name == "cubic.beta").unwrap().value = "800".into();
    let p = plan_with(&cfg, knobs(&cfg, sender), ALL_SWITCHES).unwrap();
    let lines = describe(&p);
    assert_eq!(p.cmdline, ["tcp_cubic.beta=800"]);
    assert_eq!(
        grep(&lines, &["tcp_reordering"]),
        [
            "ip netns exec t-sender sysctl -qw net.ipv4.tcp_reordering=\"10\"",
            "ip netns exec t-receiver sysctl -qw net.ipv4.tcp_reordering=\"3\"",
        ]
    );
    assert_eq!(
        grep(&lines, &["t-sender", "tcp_rmem"]),
        ["ip netns exec t-sender sysctl -qw net.ipv4.tcp_rmem=\"4096 131072 6291456\""]
    );
    // initcwnd is a route attribute towards the peer.
    let p = plan_with(&cfg, knobs(&cfg, with("initcwnd", "4")), ALL_SWITCHES).unwrap();
    assert_eq!(
        grep(&describe(&p), &["t-sender", "route add"]),
        ["ip -n t-sender route add 198.18.0.3/32 via 198.19.0.2 dev l0 initcwnd 4"]
    );
}

#[test]
fn test_seed_switches_need_the_patched_image() {
    let cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    let p = plan_with(&cfg, knobs(&cfg, with("cwnd_reduction_floor", "2")), ALL_SWITCHES).unwrap();
    assert_eq!(p.cmdline, ["tcp_input.cwnd_reduction_floor=2"]);
    let p = plan_with(&cfg, knobs(&cfg, with("cwnd_growth", "\"data-acked\"")), ALL_SWITCHES).unwrap();
    assert_eq!(p.cmdline, ["tcp_input.forward_progress_growth=0"]);
    let p = plan_with(&cfg, knobs(&cfg, with("cubic.hystart_delay_thresh_shift", "4")), ALL_SWITCHES).unwrap();
    assert_eq!(p.cmdline, ["tcp_cubic.hystart_delay_thresh_shift=4"]);
    // An unpatched image: the knob is named, the fix is said.
    let e = plan_with(&cfg, knobs(&cfg, with("cwnd_reduction_floor", "2")), &[]).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("flow[0].tcp.cwnd_reduction_floor"));
    assert!(e.message.contains("kernel/patches"), "{e}");
    // A value the switch does not offer.
    let e = plan_with(&cfg, knobs(&cfg, with("cwnd_growth", "\"v3.11\"")), ALL_SWITCHES).unwrap_err();
    assert!(e.message.contains("v3.12, data-acked"), "{e}");
}

#[test]
fn test_model_only_knobs_are_refused_and_their_preset_named() {
    let cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    let mut sender = with("ack_era", "\"v3.12\"");
    sender[0].value = "\"v3.12\"".into(); // preset
    let e = plan_with(&cfg, knobs(&cfg, sender), ALL_SWITCHES).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("flow[0].tcp.ack_era"));
    assert!(e.message.contains("preset \"v3.12\""), "{e}");
    // An unknown knob at its default is fine; changed, it is an error.
    let mut sender = defaults();
    sender.push(KnobSetting::new("tcp_future_knob", "1", "1"));
    assert!(plan_with(&cfg, knobs(&cfg, sender.clone()), ALL_SWITCHES).is_ok());
    sender.last_mut().unwrap().value = "2".into();
    assert!(plan_with(&cfg, knobs(&cfg, sender), ALL_SWITCHES).unwrap_err().message.contains("not translated"));
}

#[test]
fn test_conflicting_sysctls_on_one_host_and_hz_are_errors() {
    let mut cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    cfg.flows.push(FlowConfig::new("second", 0, 2, AppConfig::Bulk { bytes: None, stop: None }));
    let k = vec![
        FlowKnobs { sender: with("tcp_reordering", "10"), receiver: defaults() },
        FlowKnobs { sender: defaults(), receiver: defaults() },
    ];
    let e = plan_with(&cfg, k, ALL_SWITCHES).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("flow[1].tcp.tcp_reordering"));
    assert!(e.message.contains("per host"), "{e}");
    let e = plan_with(&cfg, knobs(&cfg, with("hz", "1000")), ALL_SWITCHES).unwrap_err();
    assert!(e.message.contains("HZ=250"), "{e}");
}

#[test]
fn test_flows_bind_their_ports_and_listen_one_port_each() {
    let mut cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    let mut rpc = FlowConfig::new("rpc", 0, 2, AppConfig::Rpc(tcplab_sim::config::RpcConfig::new(100, 10_000)));
    rpc.repeat.runs = 3;
    rpc.repeat.duration_each = Some(ms(500));
    cfg.flows.push(rpc);
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    let f = &p.job.flows;
    assert_eq!((f[0].server_port, f[1].server_port), (5001, 5002));
    assert_eq!(f[0].client_ports, [32768]);
    assert_eq!(f[1].client_ports, [32769, 32770, 32771]);
    assert_eq!((f[1].client_addr.as_str(), f[1].server_addr.as_str()), ("198.18.0.1", "198.18.0.3"));
    assert_eq!(p.job.counter_namespaces, ["t-sender", "t-receiver"]);
    let probes: Vec<&str> = p.job.link_probes.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(
        probes,
        ["access:sender->sw", "access:sw->sender", "bottleneck:sw->receiver", "bottleneck:receiver->sw"]
    );
}

#[test]
fn test_on_off_delay_starts_off_and_the_agent_switches_netem() {
    let on_off = DelayModel::OnOff {
        base: ms(40),
        delay: ms(8),
        mean_on: ms(200),
        mean_off: Duration::from_secs(1),
        slot: ms(1),
    };
    let mut cfg =
        dumbbell(dir(on_off, Limit::Packets(100), None), dir(DelayModel::Fixed(ms(40)), Limit::Packets(100), None));
    cfg.duration = Duration::from_secs(10);
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    assert_eq!(
        grep(&describe(&p), &["dev to-b root"]),
        ["tc -n w-bottleneck qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 40000.000us rate 20000000bit"]
    );
    let [t] = p.job.netem_timelines.as_slice() else { panic!("one timeline: {:?}", p.job.netem_timelines) };
    assert_eq!(
        t.change_argv.join(" "),
        "tc -n w-bottleneck qdisc change dev to-b root handle 1: stab overhead -14 netem limit 1000000"
    );
    // Every change is the base or the base plus the on-off delay, at
    // whole slots, alternating.
    let off = "delay 40000.000us rate 20000000bit";
    let on = "delay 48000.000us rate 20000000bit";
    assert!(!t.changes.is_empty(), "10 s of a 200 ms / 1 s chain changes");
    for (i, c) in t.changes.iter().enumerate() {
        let a = c.args.join(" ");
        assert!(a == on || a == off, "{a}");
        assert_eq!(c.at_ns % 1_000_000, 0);
        if i > 0 {
            assert_ne!(c.args, t.changes[i - 1].args);
            assert!(c.at_ns > t.changes[i - 1].at_ns);
        }
    }
    let mut other_seed = cfg.clone();
    other_seed.seed = 2;
    let q = plan_with(&other_seed, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    assert_ne!(q.job.netem_timelines[0].changes, t.changes, "the run's seed picks the schedule");
}

#[test]
fn test_blackout_switches_in_full_loss_and_is_probed() {
    use tcplab_sim::config::Blackout;
    let mut ab = dir(DelayModel::Fixed(ms(10)), Limit::Packets(100), None);
    ab.blackouts = vec![Blackout { start: Duration::from_secs(1), end: Duration::from_secs(4) }];
    let mut cfg = dumbbell(ab, dir(DelayModel::Fixed(ms(10)), Limit::Packets(100), None));
    cfg.duration = Duration::from_secs(10);
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    let [t] = p.job.netem_timelines.as_slice() else { panic!("{:?}", p.job.netem_timelines) };
    let got: Vec<(u64, String)> = t.changes.iter().map(|c| (c.at_ns, c.args.join(" "))).collect();
    assert_eq!(
        got,
        [
            (1_000_000_000, "delay 10000.000us rate 20000000bit loss random 100%".to_string()),
            (4_000_000_000, "delay 10000.000us rate 20000000bit".to_string()),
        ]
    );
    assert_eq!(p.job.loss_probes.len(), 1, "its drops are loss_drops");
}

#[test]
fn test_offloads_are_on_only_for_the_nodes_that_ask() {
    let mut cfg = dumbbell(
        dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None),
    );
    cfg.nodes[2].offloads = true;
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["ethtool", "tso on gso on gro on"]),
        ["ip netns exec t-receiver ethtool -K l1 tso on gso on gro on"]
    );
    assert_eq!(grep(&lines, &["ethtool", "off"]).len(), 3 + 2, "sender, switch (twice) and the middle's two");
}

#[test]
fn test_slot_is_netems_slot_and_gro_turns_on_gro_alone() {
    // A slot on the delay-free access link's sender → sw direction gives
    // it a middle namespace; the bottleneck's goes onto its netem.
    let mut cfg = dumbbell(
        DirectionConfig {
            slot: Some(Duration::from_micros(500)),
            ..dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None)
        },
        dir(DelayModel::Fixed(ms(5)), Limit::Packets(100), None),
    );
    cfg.links[0].ab.slot = Some(Duration::from_nanos(1500));
    cfg.nodes[2].gro = true;
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["w-bottleneck", "dev to-b root"]),
        ["tc -n w-bottleneck qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 5000.000us rate 20000000bit slot 500.000us 500.000us"]
    );
    assert_eq!(
        grep(&lines, &["w-access", "dev to-b root"]),
        ["tc -n w-access qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 0.000us rate 1000000000bit slot 1.500us 1.500us"]
    );
    assert_eq!(grep(&lines, &["ethtool", "gro on"]), ["ip netns exec t-receiver ethtool -K l1 tso off gso off gro on"]);
}

#[test]
fn test_loss_is_netem_loss_in_the_middle_with_its_drops_probed() {
    use tcplab_sim::config::LossModel;
    let mut ab = dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(100), None);
    ab.loss = LossModel::Random { p: 42_949_673 };
    let mut cfg = dumbbell(ab, dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(100), None));
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    // Loss alone needs the middle namespace: netem with no delay.
    assert_eq!(
        grep(&describe(&p), &["dev to-b root"]),
        ["tc -n w-bottleneck qdisc add dev to-b root handle 1: stab overhead -14 netem limit 1000000 delay 0.000us rate 20000000bit loss random 1.0000000012%"]
    );
    let probes: Vec<(&str, &str, &str)> =
        p.job.loss_probes.iter().map(|l| (l.id.as_str(), l.ns.as_str(), l.dev.as_str())).collect();
    assert_eq!(probes, [("bottleneck:sw->receiver", "w-bottleneck", "to-b")]);
    cfg.links[1].ab.loss =
        LossModel::GilbertElliott { p: 42_949_673, r: 429_496_730, bad_loss: u32::MAX, good_loss: 0 };
    let p = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap();
    assert!(
        grep(&describe(&p), &["dev to-b root"])[0]
            .ends_with("loss gemodel 1.0000000012% 10.0000000116% 100.0000000000% 0.0000000000%"),
        "{:?}",
        describe(&p)
    );
}

#[test]
fn test_ecmp_with_a_choice_of_next_hops_is_refused_naming_the_node() {
    use tcplab_sim::config::Multipath;
    // sender - sw - receiver: a switch with ECMP on but one next hop per
    // destination routes as without it and is translated.
    let mut cfg = dumbbell(
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
        dir(DelayModel::Fixed(ms(1)), Limit::Packets(100), None),
    );
    cfg.nodes[1].multipath = Multipath::L4;
    assert!(plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).is_ok());
    // sender - sw3 = {sw, sw2} = receiver: from sw3, sw and sw2 are both
    // one hop from the receiver, and sw3 has ECMP on.
    let none = || dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(100), None);
    let link =
        |name: &str, a, b| LinkConfig { name: name.into(), a, b, rate_bps: 1_000_000_000, ab: none(), ba: none() };
    // Nodes: 0 sender, 1 sw, 2 receiver, 3 sw2, 4 sw3.
    cfg.nodes.push(NodeConfig::switch("sw2"));
    cfg.nodes.push(NodeConfig { multipath: Multipath::L3, ..NodeConfig::switch("sw3") });
    cfg.links =
        vec![link("s-sw3", 0, 4), link("sw3-sw", 4, 1), link("sw3-sw2", 4, 3), link("sw-r", 1, 2), link("sw2-r", 3, 2)];
    let e = plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("node[4].ecmp"), "{e}");
    assert!(e.message.contains("\"sw3\" has ECMP on (l3) and 2 equal-cost next hops to \"receiver\""), "{e}");
    assert!(e.message.contains("ecmp = \"off\""), "{e}");
    cfg.nodes[4].multipath = Multipath::Off;
    assert!(plan_with(&cfg, knobs(&cfg, defaults()), ALL_SWITCHES).is_ok());
}

#[test]
fn test_police_is_a_matchall_police_filter_on_the_senders_root_htb() {
    use tcplab_sim::config::Police;
    let mut ab = dir(DelayModel::Fixed(ms(10)), Limit::Packets(100), None);
    ab.police = Some(Police { rate_bps: 10_000_000, burst_bytes: 30_000 });
    let cfg = dumbbell(ab, dir(DelayModel::Fixed(ms(10)), Limit::Packets(100), None));
    let lines = plan(&cfg);
    // On sw's end of the bottleneck (sw -> receiver), before the queue:
    // the filter of the root htb 1:, passing to its one class 1:1.
    assert_eq!(
        grep(&lines, &["police"]),
        ["tc -n t-sw filter add dev l1 parent 1: protocol all prio 1 matchall classid 1:1 action police rate 10000000bit burst 30000 mtu 65535 drop"]
    );
    // The policer does not need the middle namespace by itself; the
    // reverse direction has none.
    let mut ba = dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(100), None);
    ba.police = Some(Police { rate_bps: 1_000_000, burst_bytes: 3000 });
    let cfg = dumbbell(dir(DelayModel::Fixed(Duration::ZERO), Limit::Packets(100), None), ba);
    let lines = plan(&cfg);
    assert_eq!(
        grep(&lines, &["police"]),
        ["tc -n t-receiver filter add dev l1 parent 1: protocol all prio 1 matchall classid 1:1 action police rate 1000000bit burst 3000 mtu 65535 drop"]
    );
    assert!(grep(&lines, &["netns add w-"]).is_empty(), "{lines:?}");
}
