use super::*;

/// Every name knob of `table`: each listed name sets a value that reads
/// back as that name, and an unknown name is an error listing the names,
/// with the configuration left as it was.
fn check_choices<C: Clone + PartialEq + std::fmt::Debug>(table: &[KnobSpec<C>], base: &C) -> usize {
    let mut n = 0;
    for k in table {
        let Kind::Choice { names, get, set } = &k.kind else { continue };
        n += 1;
        for name in *names {
            let mut c = base.clone();
            set(&mut c, name).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert_eq!(get(&c), *name, "{}", k.name);
        }
        let mut c = base.clone();
        let e = set(&mut c, "nope").unwrap_err();
        assert_eq!(e.valid, *names, "{}", k.name);
        assert_eq!(c, *base, "{}: a failed set changed the value", k.name);
    }
    n
}

#[test]
fn test_choice_knobs_round_trip_and_reject_unknown_names() {
    assert_eq!(check_choices(TCP, &TcpConfig::default()), 9);
    assert_eq!(check_choices(CUBIC, &CubicParams::default()), 2);
    assert_eq!(check_choices(DCTCP, &DctcpParams::default()), 1);
    assert_eq!(check_choices(RENO, &RenoParams::default()), 1);
}

/// The Linux name an entry cites is the one packetdrill and the kernel
/// use: a sysctl knob is named after its `net.ipv4` leaf, a module
/// parameter after its parameter; names are unique per table; a switch
/// maps names only for a choice knob.
fn check_table<C>(table: &[KnobSpec<C>], module: &str) {
    for (i, k) in table.iter().enumerate() {
        assert!(table[..i].iter().all(|o| o.name != k.name), "{} twice", k.name);
        match k.models {
            Models::Sysctl(s) => assert_eq!(s, format!("net.ipv4.{}", k.name)),
            Models::Param(p) => assert_eq!(p, format!("{module}.{}", k.name)),
            _ => {}
        }
        if let Kernel::Switch { values, .. } = k.kernel {
            assert_eq!(matches!(k.kind, Kind::Choice { .. }), !values.is_empty(), "{}", k.name);
        }
        // A name knob has no kernel value of its own: a switch maps it.
        if let Kind::Choice { .. } = k.kind {
            assert_ne!(k.kernel, Kernel::Native, "{}", k.name);
        }
    }
}

#[test]
fn test_entries_cite_the_linux_names_they_are_reached_by() {
    check_table(TCP, "");
    check_table(CUBIC, "tcp_cubic");
    check_table(DCTCP, "tcp_dctcp");
    check_table(RENO, "tcp_reno");
    assert_eq!(by_sysctl("net.ipv4.tcp_fack").map(|k| k.name), Some("tcp_fack"));
    assert_eq!(by_param(CUBIC, "tcp_cubic.beta").map(|k| k.name), Some("beta"));
    assert!(by_param(CUBIC, "tcp_cubic.version").is_none());
}

/// Every non-name knob of `table` takes back, as Linux text, the value
/// it holds in every preset; out-of-range and malformed text is refused
/// and leaves the value alone.
fn check_text<C: Clone + PartialEq + std::fmt::Debug>(table: &[KnobSpec<C>], cfg: &C) {
    for k in table {
        let linux = match k.kind {
            Kind::Choice { .. } => continue,
            Kind::Triple(_) => k.get(cfg).trim_matches(['[', ']']).replace(',', ""),
            Kind::Bool(_) => if k.get(cfg) == "true" { "1" } else { "0" }.to_string(),
            _ => k.get(cfg),
        };
        let mut c = cfg.clone();
        k.set_text(&mut c, &linux).unwrap_or_else(|e| panic!("{} = {linux}: {e}", k.name));
        assert_eq!(c, *cfg, "{}", k.name);
        assert!(k.set_text(&mut c, "x").is_err(), "{}", k.name);
        assert!(k.set_text(&mut c, "-1").is_err(), "{}", k.name);
        assert_eq!(c, *cfg, "{}", k.name);
    }
}

#[test]
fn test_every_knob_takes_its_preset_values_as_linux_text() {
    for p in crate::config::PRESETS {
        let cfg = TcpConfig::preset(p).unwrap();
        check_text(TCP, &cfg);
        if let CcConfig::Cubic(c) = &cfg.congestion_control {
            check_text(CUBIC, c);
        }
    }
    check_text(DCTCP, &DctcpParams::default());
    check_text(RENO, &RenoParams::default());
}

#[test]
fn test_linux_text_is_checked_against_the_range() {
    let mut cfg = TcpConfig::default();
    let k = |n| find(n).unwrap();
    assert_eq!(k("tcp_ecn").set_text(&mut cfg, "3"), Err("must be between 0 and 2, found 3".into()));
    assert_eq!(k("tcp_min_tso_segs").set_text(&mut cfg, "0"), Err("must be between 1 and 255, found 0".into()));
    assert_eq!(k("tcp_timestamps").set_text(&mut cfg, "2"), Err("must be 0 or 1, found 2".into()));
    assert_eq!(k("hz").set_text(&mut cfg, "200"), Err("must be one of 100, 250, 300, 1000, found 200".into()));
    assert!(k("tcp_rmem").set_text(&mut cfg, "4096 131072").is_err());
    assert!(k("tcp_rmem").set_text(&mut cfg, "8192 4096 6291456").is_err());
    assert_eq!(cfg, TcpConfig::default());
    k("tcp_recovery").set_text(&mut cfg, "0x4").unwrap();
    k("tcp_rmem").set_text(&mut cfg, " 4096  540000 15728640 ").unwrap();
    assert_eq!((cfg.tcp_recovery, cfg.tcp_rmem), (4, [4096, 540_000, 15_728_640]));
}

#[test]
fn test_diff_names_module_parameters_by_their_congestion_control() {
    let base = TcpConfig::default();
    let v318 = TcpConfig::preset("v3.18").unwrap();
    let d = diff(&base, &v318);
    assert!(d.iter().any(|(n, a, b)| n == "cubic.version" && a == "\"current\"" && b == "\"v3.18\""), "{d:?}");
    assert!(d.iter().any(|(n, _, b)| n == "tcp_fack" && b == "true"), "{d:?}");
    let reno = TcpConfig { congestion_control: CcConfig::from_name("reno").unwrap(), ..base.clone() };
    assert_eq!(diff(&base, &reno), [("congestion_control".into(), "\"cubic\"".into(), "\"reno\"".into())]);
}
