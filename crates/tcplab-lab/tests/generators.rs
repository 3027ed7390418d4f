//! `[topology]` and `[traffic]`: the fabrics and patterns they generate,
//! that a generated scenario runs exactly as the same tables written by
//! hand, the ECMP spread on a generated fabric, and their errors.

use std::collections::{HashMap, HashSet};
use tcplab_lab::{load, load_str};
use tcplab_sim::config::{AppConfig, NodeKind, SimConfig};

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn sim(text: &str) -> SimConfig {
    load_str("gen.toml", text, &[], None).unwrap_or_else(|e| panic!("{e}")).sim
}

fn err(text: &str) -> String {
    load_str("gen.toml", text, &[], None).unwrap_err().to_string()
}

const LEAF_SPINE: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 8
spines = 2
hosts_per_leaf = 8
fabric_link = { rate = "4Gbit", delay = "5us" }
host_link = { rate = "1Gbit", delay = "5us" }
[run]
duration = "40ms"
ecmp = "l4"
"#;

fn hosts(cfg: &SimConfig) -> Vec<usize> {
    (0..cfg.nodes.len()).filter(|&i| cfg.nodes[i].kind == NodeKind::Host).collect()
}

#[test]
fn test_generated_leaf_spine_runs_exactly_as_the_hand_written_one() {
    // scenarios/leaf-spine-ecmp.toml writes out the same 74 nodes and 80
    // links in the generator's order; with its flows copied, the two runs
    // must agree to the byte.
    let file = std::fs::read_to_string(repo("scenarios/leaf-spine-ecmp.toml")).unwrap();
    let flows = &file[file.find("flow = [").unwrap()..file.find("[run]").unwrap()];
    let generated = sim(&format!("{flows}\n{LEAF_SPINE}"));
    let written = load(&repo("scenarios/leaf-spine-ecmp.toml"), &[], None).unwrap().sim;
    assert_eq!(generated.nodes.len(), 74);
    assert_eq!(generated.links.len(), 80);
    let names = |c: &SimConfig| c.links.iter().map(|l| (l.name.clone(), l.a, l.b, l.rate_bps)).collect::<Vec<_>>();
    assert_eq!(names(&generated), names(&written));
    let (a, b) = (tcplab_sim::run(&generated).unwrap(), tcplab_sim::run(&written).unwrap());
    assert_eq!(a.events, b.events);
    assert_eq!(format!("{:?}", a.links), format!("{:?}", b.links));
}

#[test]
fn test_fat_tree_has_al_fares_shape_and_every_host_reaches_every_other() {
    let cfg = sim(r#"
[topology]
kind = "fat-tree"
k = 4
host_link = { rate = "1Gbit" }
fabric_link = { rate = "1Gbit" }
[traffic]
pattern = "all-to-all"
flow = { app = { kind = "bulk", bytes = "1KB" } }
[run]
duration = "50ms"
ecmp = "l4"
"#);
    // k³/4 hosts, 5k²/4 switches; k³/4 host links + k³/4 edge-agg + k³/4 agg-core.
    assert_eq!(hosts(&cfg).len(), 16);
    assert_eq!(cfg.nodes.len() - 16, 20);
    assert_eq!(cfg.links.len(), 48);
    assert_eq!(cfg.flows.len(), 16 * 15);
    let r = tcplab_sim::run(&cfg).unwrap();
    assert!(r.flows.iter().all(|f| f.completed_at.is_some() && f.bytes_delivered == 1000));
}

#[test]
fn test_permutation_sends_once_and_receives_once_per_host() {
    let cfg = sim(&format!("{LEAF_SPINE}\n[traffic]\npattern = \"permutation\"\nparallel = 3\nseed = 9\n"));
    assert_eq!(cfg.flows.len(), 64 * 3);
    let mut out: HashMap<usize, HashSet<usize>> = HashMap::new();
    let mut into: HashMap<usize, usize> = HashMap::new();
    for f in &cfg.flows {
        assert_ne!(f.from, f.to);
        out.entry(f.from).or_default().insert(f.to);
        *into.entry(f.to).or_default() += 1;
    }
    assert!(out.values().all(|d| d.len() == 1));
    assert_eq!(out.len(), 64);
    assert!(into.values().all(|&n| n == 3));
    assert!(cfg.flows[0].id.ends_with(".0"), "{}", cfg.flows[0].id);
    // The pattern follows traffic.seed, not the run's seed.
    let again = load_str(
        "gen.toml",
        &format!("{LEAF_SPINE}\n[traffic]\npattern = \"permutation\"\nparallel = 3\nseed = 9\n"),
        &[],
        Some(77),
    )
    .unwrap()
    .sim;
    assert_eq!(
        cfg.flows.iter().map(|f| f.to).collect::<Vec<_>>(),
        again.flows.iter().map(|f| f.to).collect::<Vec<_>>()
    );
    let other = sim(&format!("{LEAF_SPINE}\n[traffic]\npattern = \"permutation\"\nparallel = 3\nseed = 10\n"));
    assert_ne!(
        cfg.flows.iter().map(|f| f.to).collect::<Vec<_>>(),
        other.flows.iter().map(|f| f.to).collect::<Vec<_>>()
    );
}

#[test]
fn test_ecmp_spreads_a_generated_permutation_within_10_percent_across_spines() {
    // 4 spines, 128 hosts, 32 connections per pair (4,096 in all, each
    // hashed on its own 5-tuple): each spine's share of the bytes is
    // within 10 % of a quarter on every pattern seed tried. (With 2
    // connections per pair, 256 in all, the hash's binomial spread alone
    // is ±11 % per spine: seed 1 gave 13.6, 14.7, 9.3, 10.8 MB.)
    let text = |seed: u64| {
        format!(
            r#"
[topology]
kind = "leaf-spine"
leaves = 8
spines = 4
hosts_per_leaf = 16
fabric_link = {{ rate = "40Gbit", delay = "2us" }}
host_link = {{ rate = "10Gbit", delay = "2us" }}
[traffic]
pattern = "permutation"
seed = {seed}
parallel = 32
flow = {{ app = {{ kind = "bulk", bytes = "20KB" }} }}
[run]
# Long enough for a lost last segment's probe or RTO (about 200 ms).
duration = "500ms"
ecmp = "l4"
"#
        )
    };
    for seed in 1..=3 {
        let r = tcplab_sim::run(&sim(&text(seed))).unwrap();
        let done = r.flows.iter().filter(|f| f.completed_at.is_some()).count();
        assert_eq!(done, r.flows.len(), "seed {seed}: {:?}", r.flows.iter().find(|f| f.completed_at.is_none()));
        let mut per_spine = [0u64; 4];
        for l in &r.links {
            for (s, b) in per_spine.iter_mut().enumerate() {
                if l.id.contains(&format!(":s{s}->")) {
                    *b += l.tx_bytes;
                }
            }
        }
        let mean = per_spine.iter().sum::<u64>() as f64 / 4.0;
        for b in per_spine {
            assert!((b as f64 / mean - 1.0).abs() <= 0.10, "seed {seed}: {per_spine:?}");
        }
    }
}

#[test]
fn test_incast_sends_from_the_chosen_senders_to_one_receiver() {
    let cfg = sim(&format!(
        "{LEAF_SPINE}\n[traffic]\npattern = \"incast\"\nreceiver = \"h5\"\nsenders = 20\nflow = {{ cc = \"dctcp\" }}\n"
    ));
    assert_eq!(cfg.flows.len(), 20);
    let to = cfg.flows[0].to;
    assert_eq!(cfg.nodes[to].name, "h5");
    assert!(cfg.flows.iter().all(|f| f.to == to && f.from != to));
    assert_eq!(cfg.flows.iter().map(|f| f.from).collect::<HashSet<_>>().len(), 20);
    assert!(cfg.flows.iter().all(|f| f.tcp.congestion_control.name() == "dctcp"));
    // Without `senders`, every other host.
    let all = sim(&format!("{LEAF_SPINE}\n[traffic]\npattern = \"incast\"\n"));
    assert_eq!(all.flows.len(), 63);
    assert_eq!(all.nodes[all.flows[0].to].name, "h0");
}

#[test]
fn test_poisson_arrivals_give_the_load_and_sizes_of_the_cdf() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generators-poisson");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sizes.cdf"), "# uniform 0..20 KB\n0 0\n20000 100\n").unwrap();
    let text = format!("{LEAF_SPINE}\n[traffic]\npattern = \"poisson\"\nsizes = \"sizes.cdf\"\nload = 0.4\nseed = 3\n");
    let path = dir.join("s.toml");
    std::fs::write(&path, &text).unwrap();
    let cfg = load(path.to_str().unwrap(), &[], None).unwrap().sim;
    // λ per host = 0.4 · 1 Gbit/s / (8 · 10 kB) = 5,000/s; 64 hosts for 40 ms: 12,800 expected.
    let n = cfg.flows.len() as f64;
    assert!((n / 12_800.0 - 1.0).abs() < 0.05, "{n} flows");
    let mut bytes = 0u64;
    for f in &cfg.flows {
        let AppConfig::Bulk { bytes: Some(b), .. } = f.app else { panic!("{:?}", f.app) };
        assert!((1..=20_000).contains(&b));
        bytes += b;
        assert_ne!(f.from, f.to);
    }
    let offered = bytes as f64 * 8.0 / 0.040 / 64.0 / 1e9;
    assert!((offered - 0.4).abs() < 0.03, "offered load {offered}");
    // Arrival times are sorted and inside the run.
    assert!(cfg.flows.windows(2).all(|w| w[0].start <= w[1].start));
    assert!(cfg.flows.last().unwrap().start < cfg.duration);
    // The same seed draws the same flows.
    assert_eq!(format!("{:?}", cfg.flows), format!("{:?}", load(path.to_str().unwrap(), &[], None).unwrap().sim.flows));
}

#[test]
fn test_the_shipped_distributions_parse_with_their_published_means() {
    use tcplab_lab::flow_sizes::FlowSizes;
    // Mean of the linear-interpolated CDFs (computed by hand from the
    // points: web search 1.71 MB, Hadoop 120 kB).
    let ws = FlowSizes::read(std::path::Path::new(&repo("scenarios/dist/websearch.cdf"))).unwrap();
    assert!((ws.mean() - 1_711_250.0).abs() < 1.0, "{}", ws.mean());
    let hd = FlowSizes::read(std::path::Path::new(&repo("scenarios/dist/hadoop.cdf"))).unwrap();
    assert!((hd.mean() - 120_420.75).abs() < 1.0, "{}", hd.mean());
}

#[test]
fn test_more_than_32768_flows_fit_when_they_come_from_several_hosts() {
    // 64 hosts × 600 connections = 38,400: over one host's port range
    // in total, but each host opens 600.
    let cfg = sim(&format!("{LEAF_SPINE}\n[traffic]\npattern = \"permutation\"\nparallel = 600\n"));
    assert_eq!(cfg.flows.len(), 38_400);
    let ports = tcplab_sim::client_ports(&cfg.flows);
    let mut seen = HashSet::new();
    for (f, p) in cfg.flows.iter().zip(&ports) {
        assert!(seen.insert((f.from, p[0])), "port {} reused at node {}", p[0], f.from);
    }
    // One host opening more than its port range is refused, at the flow.
    let e = err(&format!("{LEAF_SPINE}\n[traffic]\npattern = \"incast\"\nsenders = 1\nparallel = 32769\n"));
    assert!(e.contains("32768") && e.contains("port range"), "{e}");
}

#[test]
fn test_generator_errors_name_the_line_and_field() {
    let cases = [
        ("[topology]\nkind = \"torus\"\n[run]\nduration = \"1s\"\n", "gen.toml:2:8: topology.kind: unknown topology \"torus\""),
        (
            "[topology]\nkind = \"fat-tree\"\nk = 5\nhost_link = { rate = \"1Gbit\" }\nfabric_link = { rate = \"1Gbit\" }\n[run]\nduration = \"1s\"\n",
            "gen.toml:3:5: topology.k: a fat-tree's k must be even",
        ),
        (
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { rate = \"1Gbit\", name = \"x\" }\nfabric_link = { rate = \"1Gbit\" }\n[run]\nduration = \"1s\"\n",
            "topology.host_link.name: is set by the generator",
        ),
        (
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { rate = \"fast\" }\nfabric_link = { rate = \"1Gbit\" }\n[run]\nduration = \"1s\"\n",
            "gen.toml:6:22: link[2].rate",
        ),
        (
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { rate = \"1Gbit\" }\n[run]\nduration = \"1s\"\n",
            "topology.fabric_link: missing required key",
        ),
        (
            "node = [{ name = \"a\" }, { name = \"b\" }]\nlink = [{ name = \"l\", a = \"a\", b = \"b\", rate = \"1Gbit\" }]\n[traffic]\npattern = \"gossip\"\n[run]\nduration = \"1s\"\n",
            "gen.toml:4:11: traffic.pattern: unknown pattern \"gossip\"",
        ),
        (
            "node = [{ name = \"a\" }]\n[traffic]\npattern = \"incast\"\n[run]\nduration = \"1s\"\n",
            "traffic.pattern: needs at least two hosts",
        ),
        (
            "node = [{ name = \"a\" }, { name = \"b\" }]\nlink = [{ name = \"l\", a = \"a\", b = \"b\", rate = \"1Gbit\" }]\n[traffic]\npattern = \"poisson\"\nsizes = \"/dev/null\"\nload = 0.5\n[run]\nduration = \"1s\"\n",
            "gen.toml:5:9: traffic.sizes: /dev/null: cannot read the flow-size distribution",
        ),
        (
            "node = [{ name = \"a\" }, { name = \"b\" }]\nlink = [{ name = \"l\", a = \"a\", b = \"b\", rate = \"1Gbit\" }]\n[traffic]\npattern = \"incast\"\nreceiver = \"c\"\n[run]\nduration = \"1s\"\n",
            "traffic.receiver: no host named \"c\"",
        ),
    ];
    for (text, want) in cases {
        let e = err(text);
        assert!(e.contains(want), "{text}\n  got: {e}\n  want: {want}");
    }
}

#[test]
fn test_fct_is_the_handshake_and_transfer_time_and_refuses_a_tail_past_the_run() {
    use tcplab_lab::metrics::Metric;
    use tcplab_lab::report::RunReport;
    // One segment over a 10 ms link each way: connect at 0, SYN-ACK back
    // at 20 ms, the data (sent with the handshake's ACK) read at 30 ms,
    // plus three serialisations of under 12 µs at 1 Gbit/s.
    let text = |bytes: &str, extra: &str| {
        format!(
            r#"
node = [{{ name = "a" }}, {{ name = "b" }}]
link = [{{ name = "l", a = "a", b = "b", rate = "1Gbit", delay = "10ms" }}]
flow = [{{ id = "f", from = "a", to = "b", app = {{ kind = "bulk", bytes = "{bytes}" }} }}{extra}]
[run]
duration = "1s"
"#
        )
    };
    let sc = load_str("fct.toml", &text("1000B", ""), &[], None).unwrap();
    let out = tcplab_lab::runner::run(&sc, None).unwrap();
    let rep = RunReport::new(&sc, &out);
    let m = Metric::parse("--metric", "fct.p50", &sc).unwrap();
    let fct = m.eval(&rep, &out.result).unwrap();
    assert!((30_000.0..30_040.0).contains(&fct), "{fct} µs");
    // A second flow that cannot finish in 1 s (10 GB at 1 Gbit/s): the
    // p50 is the first flow's, the p99 falls past the end of the run.
    let extra = r#", { id = "g", from = "a", to = "b", app = { kind = "bulk", bytes = "10GB" } }"#;
    let sc = load_str("fct.toml", &text("1000B", extra), &[], None).unwrap();
    let out = tcplab_lab::runner::run(&sc, None).unwrap();
    let rep = RunReport::new(&sc, &out);
    let p50 = Metric::parse("--metric", "fct.p50", &sc).unwrap().eval(&rep, &out.result).unwrap();
    assert!((30_000.0..30_040.0).contains(&p50), "{p50} µs");
    let e = Metric::parse("--metric", "fct.p99", &sc).unwrap().eval(&rep, &out.result).unwrap_err().to_string();
    assert!(e.contains("1 of 2 transfers completed"), "{e}");
    // Unlimited bulk flows have no completion time.
    let sc = load_str("fct.toml", &text("1000B", "").replace(", bytes = \"1000B\"", ""), &[], None).unwrap();
    let e = Metric::parse("--metric", "fct.p99", &sc).unwrap_err().to_string();
    assert!(e.contains("no finite bulk transfer"), "{e}");
}

#[test]
fn test_wall_estimate_of_finite_transfers_follows_their_bytes() {
    // The incast moves 127 x 10 x 64 KB over 12 switches: about 2 million
    // packets, 2 s at the estimate's rate, however long the run (its
    // links could carry 260 Gbit/s for 3 s: 65 million packets).
    let sc = load(&repo("scenarios/leaf-spine-incast.toml"), &[], None).unwrap();
    let est = tcplab_lab::runner::wall_estimate(&sc).as_secs_f64();
    assert!((1.0..3.0).contains(&est), "{est} s");
    let long = load(&repo("scenarios/leaf-spine-incast.toml"), &["run.duration=1000s".into()], None).unwrap();
    assert_eq!(tcplab_lab::runner::wall_estimate(&long).as_secs_f64(), est);
    // An unlimited transfer keeps the links' bound.
    let bulk = |d: &str| {
        let sc = load(&repo("scenarios/bulk-cubic.toml"), &[format!("run.duration={d}")], None).unwrap();
        tcplab_lab::runner::wall_estimate(&sc).as_secs_f64()
    };
    assert!((bulk("1000s") / bulk("1s") - 1000.0).abs() < 1e-6);
}

#[test]
fn test_wall_estimate_counts_the_end_hosts_links_not_every_link() {
    // Two flows into one host behind 100 Mbit/s for 120 s: 1 million
    // data packets at most, each on two hops, an ACK for every two: 3 s.
    // Every link busy (two 10 Gbit/s access links) would be 200 s, and a
    // 40-run compare was warned about as 4.5 hours.
    let sc = load(&repo("scenarios/two-flows.toml"), &[], None).unwrap();
    let est = tcplab_lab::runner::wall_estimate(&sc).as_secs_f64();
    assert!((2.9..3.1).contains(&est), "{est} s");
    assert!(tcplab_lab::runner::packet_estimate(&sc) > 30.0 * tcplab_lab::runner::end_host_packet_estimate(&sc));
}

#[test]
fn test_kernel_wall_limit_grows_with_the_packets_a_run_can_carry() {
    // Nine flows on 10 Gbit/s ports for 0.5 s: 1.67 million packets,
    // 100 s of guest time on an idle machine; the limit leaves room for
    // guests run side by side. A 50 Mbit/s dumbbell keeps 240 s per
    // simulated second.
    let rpc = load(&repo("scenarios/dctcp-rpc.toml"), &["run.duration=0.5s".into()], None).unwrap();
    let packets = tcplab_lab::runner::packet_estimate(&rpc);
    assert!((1.6e6..1.8e6).contains(&packets), "{packets}");
    let limit = tcplab_lab::backend::default_wall_limit(&rpc).as_secs_f64();
    assert!((600.0..660.0).contains(&limit), "{limit} s");
    let slow = load(&repo("scenarios/diff/dumbbell-50mbit.toml"), &["run.duration=10s".into()], None).unwrap();
    assert_eq!(tcplab_lab::backend::default_wall_limit(&slow).as_secs_f64(), 120.0 + 2400.0);
}
