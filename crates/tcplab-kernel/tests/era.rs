//! The translation on the era kernels (3.12, 3.18, 4.17): what the series
//! table (`series.rs`) makes it do, and the errors that name the field and
//! the era.

use tcplab_core::knobs as reg;
use tcplab_core::TcpConfig;
use tcplab_kernel::knobs::KnobSetting;
use tcplab_kernel::series::{Series, SERIES};
use tcplab_kernel::translate::{describe, era_reference, translate, FlowKnobs, ImageFacts, Plan};
use tcplab_kernel::KernelError;
use tcplab_sim::config::{
    AppConfig, DelayModel, DirectionConfig, FlowConfig, Limit, LinkConfig, NodeConfig, QueueConfig, SimConfig,
};

fn series(name: &str) -> &'static Series {
    SERIES.iter().find(|s| s.name == name).unwrap()
}

/// sender —20 Mbit/s, 25 ms each way— receiver.
fn path() -> SimConfig {
    let d = || DirectionConfig {
        delay: DelayModel::Fixed(tcplab_core::time::Duration::from_millis(25)),
        queue: QueueConfig { limit: Limit::Packets(100), ecn_threshold: None },
        loss: Default::default(),
        blackouts: Vec::new(),
        police: None,
        slot: None,
    };
    SimConfig {
        duration: tcplab_core::time::Duration::from_secs(2),
        seed: 1,
        nodes: vec![NodeConfig::host("sender"), NodeConfig::host("receiver")],
        links: vec![LinkConfig { name: "wan".into(), a: 0, b: 1, rate_bps: 20_000_000, ab: d(), ba: d() }],
        flows: vec![FlowConfig::new("bulk", 0, 1, AppConfig::Bulk { bytes: None, stop: None })],
        trace_interval: None,
    }
}

/// The knobs of preset `preset` for CUBIC as the lab renders them (value,
/// and the `linux-current` value as default).
fn rendered(preset: &str) -> Vec<KnobSetting> {
    let mut c = TcpConfig::preset(preset).unwrap();
    c.congestion_control = c.congestion_control_named("cubic").unwrap();
    let d = TcpConfig::linux_current();
    let mut out = vec![KnobSetting::new("preset", format!("{preset:?}"), "\"linux-current\"")];
    let (tcplab_core::cc::CcConfig::Cubic(p), tcplab_core::cc::CcConfig::Cubic(dp)) =
        (&c.congestion_control, &d.congestion_control)
    else {
        panic!("cubic")
    };
    for k in reg::CUBIC {
        out.push(KnobSetting::new(format!("cubic.{}", k.name), k.get(p), k.get(dp)));
    }
    for k in reg::TCP {
        out.push(KnobSetting::new(k.name, k.get(&c), k.get(&d)));
    }
    out
}

fn set(mut v: Vec<KnobSetting>, name: &str, value: &str) -> Vec<KnobSetting> {
    v.iter_mut().find(|k| k.name == name).unwrap_or_else(|| panic!("{name}")).value = value.into();
    v
}

fn plan(s: &str, switches: &[&str], sender: Vec<KnobSetting>, receiver: Vec<KnobSetting>) -> Result<Plan, KernelError> {
    let cfg = path();
    let switches: Vec<String> = switches.iter().map(|s| s.to_string()).collect();
    let k = vec![FlowKnobs { sender, receiver }];
    translate(&cfg, &k, ImageFacts { hz: 250, switches: &switches, series: series(s) }, "/out")
}

#[test]
fn the_eras_own_preset_translates_and_sets_its_switch_explicitly() {
    let p = plan("3.18", &["tcp_cubic.hystart_delay_thresh_shift"], rendered("v3.18"), rendered("v3.18")).unwrap();
    // v3.18's shift is 4, the image's default too: set anyway.
    // The wall clock starts at a fixed time plus the seed (1) in seconds.
    assert_eq!(p.cmdline, vec!["tcp_cubic.hystart_delay_thresh_shift=4", "time-travel-start=1700000001000000000"]);
    let v319 = set(rendered("v3.18"), "cubic.hystart_delay_thresh_shift", "3");
    let p = plan("3.18", &["tcp_cubic.hystart_delay_thresh_shift"], v319.clone(), v319).unwrap();
    assert_eq!(p.cmdline[0], "tcp_cubic.hystart_delay_thresh_shift=3");
    // 3.x's TCP sysctls are global: written once, outside the namespaces.
    let lines = describe(&p);
    assert!(
        lines.iter().any(|l| l.contains("sysctl -qw net.ipv4.tcp_reordering=\"3\"") && !l.contains("netns")),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l.contains("t-sender") && l.contains("net.ipv4.tcp_ecn")), "{lines:#?}");
    // No matchall before 4.8: u32 with a zero mask.
    assert!(lines.iter().any(|l| l.contains("u32 match u32 0 0 action mirred")), "{lines:#?}");
    assert!(!lines.iter().any(|l| l.contains("matchall")));
}

#[test]
fn a_mechanism_the_era_lacks_is_refused_naming_the_field_and_the_era() {
    // linux-current's knobs on a 3.18 kernel: the first that differs from v3.18.
    let e = plan("3.18", &[], rendered("linux-current"), rendered("linux-current")).unwrap_err();
    let path = e.path.clone().unwrap_or_default();
    assert!(path.starts_with("flow[0].tcp."), "{path}");
    assert!(e.message.contains("Linux 3.18") && e.message.contains("tcp.preset=v3.18"), "{e}");
    // A switch the image lacks: cwnd_reduction_floor on 3.18.
    let e = plan("3.18", &[], set(rendered("v3.18"), "cwnd_reduction_floor", "2"), rendered("v3.18")).unwrap_err();
    assert!(e.message.contains("Linux 3.18"), "{e}");
    // A sysctl 3.12 does not have, at another value than the era's.
    let e = plan(
        "3.12",
        &["tcp_input.forward_progress_growth"],
        set(rendered("v3.12"), "tcp_max_reordering", "300"),
        rendered("v3.12"),
    )
    .unwrap_err();
    assert!(e.message.contains("has no sysctl net.ipv4.tcp_max_reordering"), "{e}");
}

#[test]
fn seed_000s_switch_reaches_3_12() {
    let v311 = rendered("v3.11");
    let p = plan("3.12", &["tcp_input.forward_progress_growth"], v311.clone(), v311);
    // v3.11's preset differs from v3.12's only where 3.12 has a switch.
    let p = p.unwrap();
    assert_eq!(p.cmdline[0], "tcp_input.forward_progress_growth=0");
}

#[test]
fn the_eras_congestion_controls_and_fq_pacing() {
    let mut cfg = path();
    std::sync::Arc::make_mut(&mut cfg.flows[0].tcp).congestion_control =
        tcplab_core::cc::CcConfig::from_name("dctcp").unwrap();
    std::sync::Arc::make_mut(&mut cfg.flows[0].tcp_receiver).congestion_control =
        tcplab_core::cc::CcConfig::from_name("dctcp").unwrap();
    let k = vec![FlowKnobs { sender: vec![], receiver: vec![] }];
    let e = translate(&cfg, &k, ImageFacts { hz: 250, switches: &[], series: series("3.12") }, "/out").unwrap_err();
    assert_eq!(e.path.as_deref(), Some("flow[0].tcp.congestion_control"));
    assert!(e.message.contains("Linux 3.12 has no such congestion control"), "{e}");
    assert!(era_reference(Series::mainline(), "cubic").is_none());
    assert_eq!(era_reference(series("3.18"), "cubic").unwrap()["cubic.hystart_delay_thresh_shift"], "4");
}
