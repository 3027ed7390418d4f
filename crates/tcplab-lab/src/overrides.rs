//! Layers of `KEY=VALUE` overrides on one scenario text, as the experiment
//! commands take them: `--set` for every arm, `--a`/`--b` per arm,
//! `--vary KEY=V1,V2` per sweep point.
//!
//! An override is the same dotted path as `tcplab run --set` and goes
//! through the same machinery ([`crate::tree::Tree::apply_set`] and
//! validation); this module adds three things on top:
//!
//! - lists: `--a KEY=VALUE,KEY=VALUE` split at top-level commas, so that
//!   TOML values with commas inside (`[4096, 87380, 6291456]`,
//!   `{ model = "uniform", min = "9ms", max = "11ms" }`) stay whole;
//! - wildcards: `flow.*.cc=reno` (or `flow[*].cc=reno`) sets the field in
//!   every element of the `flow` array (likewise `link.*`, `node.*`);
//! - error locations that name the flag the override came from
//!   (`--a flow.f1.tcp.tcp_reorderin=10: ...: unknown key`), not `--set`.
//!
//! It also hashes a scenario text with its overrides (FNV-1a, 64 bit), the
//! identity that sweep results carry so that shards from different
//! machines can be checked before they are merged.

use crate::error::{Error, Result};
use crate::input;
use crate::schema::{load_str, Scenario};
use crate::tree::{Source, Tree, Value};

/// Reads, parses, overrides and validates a scenario file (`tcplab run`).
/// Each `--set` may use a wildcard (`flow.*.cc=reno`), as in the
/// experiment commands. Here rather than in `schema.rs` because it needs
/// the wildcards and flag-naming errors of this module, which itself
/// builds on `schema::load_str`.
pub fn load(path: &str, sets: &[String], seed: Option<u64>) -> Result<Scenario> {
    let text = ScenarioText::read(path)?;
    let mut layers = Layers::new();
    for s in sets {
        let origin = format!("--set {s}");
        layers.push(&origin, &[parse_one(&origin, s)?]);
    }
    text.load(&layers, seed)
}

/// One `KEY=VALUE` override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    pub value: String,
}

impl Setting {
    /// `KEY=VALUE`.
    pub fn text(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

/// Splits `s` at commas that are not inside brackets, braces, parentheses
/// or quotes. Empty input gives no items.
pub fn split_top_level(s: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s.trim().is_empty() {
        items.push(&s[start..]);
    }
    items
}

/// Parses `KEY=VALUE[,KEY=VALUE...]` given to `flag`.
pub fn parse_list(flag: &str, arg: &str) -> Result<Vec<Setting>> {
    let loc = format!("{flag} {arg}");
    let items = split_top_level(arg);
    if items.is_empty() {
        return Err(Error::at(loc, "expected KEY=VALUE[,KEY=VALUE...], e.g. flow.f1.cc=reno"));
    }
    items.into_iter().map(|item| parse_one(&loc, item)).collect()
}

/// Parses one `KEY=VALUE`.
pub fn parse_one(loc: &str, item: &str) -> Result<Setting> {
    let item = item.trim();
    match item.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok(Setting { key: k.trim().to_string(), value: v.trim().to_string() }),
        _ => Err(Error::at(
            loc,
            format!("{item:?} is not KEY=VALUE (keys are the dotted paths of --set, e.g. flow.f1.cc=reno)"),
        )),
    }
}

/// Overrides with the flag text each came from, in the order applied.
#[derive(Clone, Debug, Default)]
pub struct Layers {
    items: Vec<(Setting, String)>,
}

impl Layers {
    pub fn new() -> Layers {
        Layers::default()
    }

    /// Appends `settings`; errors will name `origin` (e.g. `--a flow.f1.cc=reno`).
    pub fn push(&mut self, origin: &str, settings: &[Setting]) {
        for s in settings {
            self.items.push((s.clone(), origin.to_string()));
        }
    }

    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        self.items.iter().map(|(s, _)| s)
    }
}

/// A scenario file read once, to be loaded with many override layers.
#[derive(Clone, Debug)]
pub struct ScenarioText {
    /// The file name as the user gave it.
    pub name: String,
    pub text: String,
}

impl ScenarioText {
    /// Reads `path`: a regular file of UTF-8 text, at most
    /// [`input::SCENARIO_LIMIT`] bytes.
    pub fn read(path: &str) -> Result<ScenarioText> {
        let text = input::read_text(std::path::Path::new(path), "scenario file", input::SCENARIO_LIMIT)?;
        Ok(ScenarioText { name: path.to_string(), text })
    }

    /// Expands wildcards and returns the `--set` strings of `layers`, each
    /// with the flag text it came from.
    pub fn expand(&self, layers: &Layers) -> Result<Vec<(String, String)>> {
        let tree = Tree::parse(Source::new(self.name.clone(), self.text.clone()))?;
        let mut out = Vec::new();
        for (s, origin) in &layers.items {
            for key in expand_key(&tree, &s.key).map_err(|m| Error::at(origin.clone(), m))? {
                out.push((format!("{key}={}", s.value), origin.clone()));
            }
        }
        Ok(out)
    }

    /// Loads the scenario with `layers` applied in order. An error caused
    /// by an override names the flag argument it came from.
    pub fn load(&self, layers: &Layers, seed: Option<u64>) -> Result<Scenario> {
        let expanded = self.expand(layers)?;
        let sets: Vec<String> = expanded.iter().map(|(s, _)| s.clone()).collect();
        load_str(&self.name, &self.text, &sets, seed).map_err(|mut e| {
            if let Some(loc) = &e.location {
                if let Some((_, origin)) = expanded.iter().find(|(s, _)| *loc == format!("--set {s}")) {
                    e.location = Some(origin.clone());
                }
            }
            e
        })
    }

    /// The identity of this text with `layers` applied: FNV-1a 64 over the
    /// text, then for each expanded override a newline and `KEY=VALUE`.
    /// Written `fnv1a64:` and 16 hex digits.
    pub fn hash(&self, layers: &Layers) -> Result<String> {
        let mut h = Fnv1a64::new();
        h.write(self.text.as_bytes());
        for (s, _) in self.expand(layers)? {
            h.write(b"\n");
            h.write(s.as_bytes());
        }
        Ok(format!("fnv1a64:{:016x}", h.finish()))
    }
}

/// `flow.*.rest` / `flow[*].rest` → `flow[0].rest`, `flow[1].rest`, ...;
/// any other key → itself.
fn expand_key(tree: &Tree, key: &str) -> std::result::Result<Vec<String>, String> {
    let Some((array, rest)) = key.split_once(".*.").or_else(|| key.split_once("[*].")) else {
        if key.contains('*') && !key.contains('"') {
            return Err(format!("{key}: a wildcard goes right after a top-level array, as in flow.*.cc"));
        }
        return Ok(vec![key.to_string()]);
    };
    if array.is_empty() || !array.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!("{key}: a wildcard goes right after a top-level array, as in flow.*.cc"));
    }
    let Value::Table(root) = &tree.root.value else { return Err("the scenario is not a table".into()) };
    match root.get(array).map(|e| &e.node.value) {
        Some(Value::Array(elems)) if !elems.is_empty() => {
            Ok((0..elems.len()).map(|i| format!("{array}[{i}].{rest}")).collect())
        }
        _ => Err(format!("{key}: the scenario has no [[{array}]] entries for the wildcard to expand to")),
    }
}

pub use tcplab_sim::fnv::Fnv1a64;

#[cfg(test)]
mod tests {
    use super::*;

    const SC: &str = "[run]\nduration = \"1s\"\n[[node]]\nname = \"h1\"\n[[node]]\nname = \"h2\"\n\
        [[link]]\nname = \"l\"\na = \"h1\"\nb = \"h2\"\nrate = \"10Mbit\"\n\
        [[flow]]\nid = \"f1\"\nfrom = \"h1\"\nto = \"h2\"\n[[flow]]\nid = \"f2\"\nfrom = \"h1\"\nto = \"h2\"\n";

    fn text() -> ScenarioText {
        ScenarioText { name: "x.toml".into(), text: SC.into() }
    }

    #[test]
    fn test_split_keeps_toml_values_whole() {
        assert_eq!(split_top_level("a=1,b=2"), ["a=1", "b=2"]);
        assert_eq!(
            split_top_level("tcp.tcp_rmem=[4096, 87380, 6291456],x={ a = \"1,2\", b = 3 }"),
            ["tcp.tcp_rmem=[4096, 87380, 6291456]", "x={ a = \"1,2\", b = 3 }"]
        );
        assert_eq!(split_top_level("a=\"x\\\",y\""), ["a=\"x\\\",y\""]);
        assert!(split_top_level("  ").is_empty());
    }

    #[test]
    fn test_parse_list_errors_name_the_flag() {
        assert_eq!(
            parse_list("--a", "flow.f1.cc=reno").unwrap(),
            [Setting { key: "flow.f1.cc".into(), value: "reno".into() }]
        );
        let e = parse_list("--a", "flow.f1.cc").unwrap_err().to_string();
        assert!(e.starts_with("--a flow.f1.cc: \"flow.f1.cc\" is not KEY=VALUE"), "{e}");
        assert!(parse_list("--b", "").is_err());
        assert!(parse_list("--b", "a=1,,b=2").is_err());
    }

    #[test]
    fn test_wildcards_expand_to_every_element() {
        let mut l = Layers::new();
        l.push("--a flow.*.cc=reno", &parse_list("--a", "flow.*.cc=reno").unwrap());
        let sc = text().load(&l, None).unwrap();
        assert!(sc.sim.flows.iter().all(|f| f.tcp.congestion_control.name() == "reno"));
        let mut l = Layers::new();
        l.push("--a x", &parse_list("--a", "nosuch.*.cc=reno").unwrap());
        let e = text().load(&l, None).unwrap_err().to_string();
        assert!(e.contains("no [[nosuch]] entries"), "{e}");
    }

    #[test]
    fn test_errors_name_the_origin_flag() {
        let mut l = Layers::new();
        l.push("--set run.duration=2s", &parse_list("--set", "run.duration=2s").unwrap());
        l.push("--b flow.f1.tcp.tcp_reorderin=10", &parse_list("--b", "flow.f1.tcp.tcp_reorderin=10").unwrap());
        let e = text().load(&l, None).unwrap_err().to_string();
        assert!(e.starts_with("--b flow.f1.tcp.tcp_reorderin=10: "), "{e}");
        assert!(e.contains("tcp_reordering"), "did you mean: {e}");
    }

    #[test]
    fn test_hash_is_stable_and_sees_overrides() {
        // FNV-1a 64 test vectors (draft-eastlake-fnv).
        let mut h = Fnv1a64::new();
        assert_eq!(h.finish(), 0xcbf29ce484222325);
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63dc4c8601ec8c);
        let mut h = Fnv1a64::new();
        h.write(b"foobar");
        assert_eq!(h.finish(), 0x85944171f73967e8);
        let t = text();
        let none = t.hash(&Layers::new()).unwrap();
        let mut l = Layers::new();
        l.push("--set", &parse_list("--set", "run.duration=2s").unwrap());
        assert_ne!(none, t.hash(&l).unwrap());
        assert_eq!(t.hash(&l).unwrap(), t.hash(&l).unwrap());
        assert!(none.starts_with("fnv1a64:") && none.len() == 8 + 16);
    }
}
