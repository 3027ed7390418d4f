//! The scenario parser: TOML text, then `--set` arguments (each may use a
//! wildcard), loaded as the experiment commands load them
//! ([`ScenarioText::load`]).
//!
//! Input: the scenario text, optionally followed by a NUL byte and one
//! `--set KEY=VALUE` per line (at most 8). Oracles: nothing panics; a
//! rejection names the file or the `--set` argument and is caught by the
//! schema, never by the simulator's backstop; an accepted scenario runs
//! (its first 20 ms).

use tcplab_lab::overrides::{parse_one, Layers, ScenarioText};

const NAME: &str = "fuzz.toml";

pub fn check(data: &[u8]) {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (text, sets) = input.split_once('\0').unwrap_or((input, ""));
    let scenario = ScenarioText { name: NAME.into(), text: text.into() };
    let mut layers = Layers::new();
    for s in sets.lines().take(8) {
        let origin = format!("--set {s}");
        match parse_one(&origin, s) {
            Ok(setting) => layers.push(&origin, &[setting]),
            Err(e) => {
                assert!(e.location.as_deref() == Some(origin.as_str()), "--set error without its origin: {e}");
                return;
            }
        }
    }
    match scenario.load(&layers, None) {
        Ok(mut sc) => {
            assert!(sc.sim.validate().is_ok(), "accepted but invalid for the simulator");
            sc.sim.duration = sc.sim.duration.min(tcplab_core::time::Duration::from_millis(20));
            sc.goodput_window = None;
            if let Err(e) = tcplab_lab::runner::run(&sc, None) {
                panic!("an accepted scenario failed to run: {e}");
            }
        }
        Err(e) => {
            let loc = e.location.clone().unwrap_or_default();
            assert!(loc.starts_with(NAME) || loc.starts_with("--set"), "no location: {e}");
            assert!(!e.message.starts_with("invalid scenario:"), "missed by the schema: {e}");
        }
    }
}
