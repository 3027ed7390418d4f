//! The scenario as an untyped value tree that remembers where every value
//! came from (a byte span of the file or a `--set` argument).
//!
//! Loading is three steps: parse the TOML text into this tree
//! ([`Tree::parse`]), apply `--set` overrides to the tree
//! ([`Tree::apply_set`]), then validate the tree into typed configuration
//! (`schema`). Overrides therefore go through the same checks as the file,
//! and every error can name the line or the argument that caused it.
//!
//! Nothing here panics on any input: the TOML parser reports syntax errors
//! with a span, the tree depth is bounded by the parser's nesting limit,
//! and override paths are checked segment by segment.

use crate::error::{Error, Result};
use std::ops::Range;

/// Where a value came from: the file or an override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A byte range of the scenario file.
    File(Range<usize>),
    /// The n-th `--set` argument.
    Set(usize),
}

/// The scenario text and the overrides, to turn an [`Origin`] into a
/// location a person can find.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file name as the user gave it.
    pub name: String,
    pub text: String,
    /// `--set` arguments as given (`KEY=VALUE`).
    pub sets: Vec<String>,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source { name: name.into(), text: text.into(), sets: Vec::new() }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut off = offset.min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.text[..off];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// `file:line:col` or `--set KEY=VALUE`.
    pub fn locate(&self, origin: &Origin) -> String {
        match origin {
            Origin::File(r) => {
                let (l, c) = self.line_col(r.start);
                format!("{}:{l}:{c}", self.name)
            }
            Origin::Set(i) => match self.sets.get(*i) {
                Some(s) => format!("--set {s}"),
                None => "--set".to_string(),
            },
        }
    }

    /// An error at `origin` about the field at `path`.
    pub fn error(&self, origin: &Origin, path: &str, message: impl Into<String>) -> Error {
        Error { location: Some(self.locate(origin)), path: Some(path.to_string()), message: message.into() }
    }
}

/// A value with its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    /// A TOML date-time, kept as its text (no scenario field takes one).
    Datetime(String),
    Array(Vec<Node>),
    Table(Table),
}

impl Value {
    /// The TOML type name, for "expected X, found Y" messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a date-time",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }

    /// The value as a person would write it in TOML, shortened.
    pub fn describe(&self) -> String {
        let s = match self {
            Value::String(s) => format!("{s:?}"),
            Value::Integer(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::Datetime(d) => d.clone(),
            Value::Array(_) => return "an array".to_string(),
            Value::Table(_) => return "a table".to_string(),
        };
        if s.chars().count() > 40 {
            let short: String = s.chars().take(37).collect();
            format!("{short}...")
        } else {
            s
        }
    }
}

/// One `key = value` of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    /// Where the key was written (for "unknown key" errors).
    pub key_origin: Origin,
    pub node: Node,
}

/// A table, in the order of the file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.key == key)
    }

    /// The `id` or `name` of a table that is an element of an array of
    /// tables, used to address it in `--set` paths.
    pub fn label(&self) -> Option<&str> {
        ["id", "name"].iter().find_map(|k| match self.get(k).map(|e| &e.node.value) {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// The parsed scenario before validation.
#[derive(Clone, Debug)]
pub struct Tree {
    pub root: Node,
    pub source: Source,
}

fn span_origin(span: Option<Range<usize>>, fallback: &Origin) -> Origin {
    span.map_or_else(|| fallback.clone(), Origin::File)
}

fn conv_item(item: &toml_edit::Item, fallback: &Origin) -> Node {
    match item {
        toml_edit::Item::None => Node { value: Value::Table(Table::default()), origin: fallback.clone() },
        toml_edit::Item::Value(v) => conv_value(v, fallback),
        toml_edit::Item::Table(t) => {
            let origin = span_origin(t.span(), fallback);
            Node { value: Value::Table(conv_table(t, &origin)), origin }
        }
        toml_edit::Item::ArrayOfTables(a) => {
            let origin = span_origin(a.span(), fallback);
            let elems = a
                .iter()
                .map(|t| {
                    let o = span_origin(t.span(), &origin);
                    Node { value: Value::Table(conv_table(t, &o)), origin: o }
                })
                .collect();
            Node { value: Value::Array(elems), origin }
        }
    }
}

fn conv_table(t: &toml_edit::Table, origin: &Origin) -> Table {
    let entries = t
        .iter()
        .map(|(k, item)| {
            let key_origin = span_origin(t.key(k).and_then(|k| k.span()), origin);
            let node = conv_item(item, &key_origin);
            Entry { key: k.to_string(), key_origin, node }
        })
        .collect();
    Table { entries }
}

fn conv_value(v: &toml_edit::Value, fallback: &Origin) -> Node {
    use toml_edit::Value as V;
    let origin = span_origin(v.span(), fallback);
    let value = match v {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::Integer(*i.value()),
        V::Float(f) => Value::Float(*f.value()),
        V::Boolean(b) => Value::Boolean(*b.value()),
        V::Datetime(d) => Value::Datetime(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(|e| conv_value(e, &origin)).collect()),
        V::InlineTable(t) => {
            let entries = t
                .iter()
                .map(|(k, val)| {
                    let key_origin = span_origin(t.key(k).and_then(|k| k.span()), &origin);
                    Entry { key: k.to_string(), node: conv_value(val, &key_origin), key_origin }
                })
                .collect();
            Value::Table(Table { entries })
        }
    };
    Node { value, origin }
}

/// One step of a `--set` path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A table key, or the `id`/`name` of an array element.
    Key(String),
    /// `[n]`: an array element by position.
    Index(usize),
}

/// Most segments a `--set` path may have (the deepest scenario field is
/// far shallower); bounds the recursion of applying and validating it.
pub const MAX_PATH_SEGMENTS: usize = 32;

/// Parses `link.bottleneck.rate`, `flow[0].tcp.tcp_sack` or
/// `link."my.link".rate` into segments.
pub fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    let mut chars = path.trim().chars().peekable();
    let mut expect_key = true;
    loop {
        match chars.peek().copied() {
            None => {
                if expect_key {
                    return Err(if segs.is_empty() { "empty key".into() } else { "path ends with '.'".into() });
                }
                break;
            }
            Some('.') if !expect_key => {
                chars.next();
                expect_key = true;
            }
            Some('[') if !expect_key => {
                chars.next();
                let mut n = String::new();
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some(c) if c.is_ascii_digit() => n.push(c),
                        Some(c) => return Err(format!("unexpected {c:?} in [index]")),
                        None => return Err("unclosed '['".into()),
                    }
                }
                let i = n.parse::<usize>().map_err(|_| format!("bad index [{n}]"))?;
                segs.push(Seg::Index(i));
            }
            Some('"') if expect_key => {
                chars.next();
                let mut k = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c) => k.push(c),
                        None => return Err("unclosed '\"'".into()),
                    }
                }
                segs.push(Seg::Key(k));
                expect_key = false;
            }
            Some(_) if expect_key => {
                let mut k = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    if !(c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                        return Err(format!("unexpected {c:?} in key (quote keys with other characters)"));
                    }
                    k.push(c);
                    chars.next();
                }
                if k.is_empty() {
                    return Err("empty key".into());
                }
                segs.push(Seg::Key(k));
                expect_key = false;
            }
            Some(c) => return Err(format!("unexpected {c:?} after key")),
        }
        if segs.len() > MAX_PATH_SEGMENTS {
            return Err(format!("more than {MAX_PATH_SEGMENTS} segments"));
        }
    }
    Ok(segs)
}

/// Renders segments the way errors print paths: `flow[0].tcp`.
fn render(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Parses the right-hand side of `--set`: a TOML value if it is one
/// (`10`, `true`, `"x"`, `[1, 2]`, `{ min = "1ms", max = "2ms" }`),
/// otherwise the text itself as a string (`50Mbit`, `reno`).
///
/// Text that can only have been meant as a number, an array, an inline
/// table or a quoted string (`99999999999999999999`, `[1, 2`) is not
/// taken as a string: its TOML error is the message, since "expected an
/// integer, found a string" would blame the wrong thing.
pub fn parse_set_value(text: &str, origin: &Origin) -> std::result::Result<Node, String> {
    let doc = format!("v = {text}\n");
    match toml_edit::Document::parse(doc.as_str()) {
        Ok(d) => {
            if let (Some(item), 1) = (d.as_table().get("v"), d.as_table().len()) {
                let mut node = conv_item(item, origin);
                reorigin(&mut node, origin);
                return Ok(node);
            }
        }
        Err(e) => {
            let t = text.trim_start();
            let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
                return Err(format!("integer {text} is out of range (TOML integers are at most {})", i64::MAX));
            }
            let float_like = digits.starts_with(|c: char| c.is_ascii_digit())
                && digits.contains(['.', 'e', 'E'])
                && digits.chars().all(|c| c.is_ascii_digit() || "_.eE+-".contains(c));
            if float_like {
                return Err(format!("{text} is not a valid TOML number (a float beyond 64 bits, or misspelt)"));
            }
            if t.starts_with(['[', '{', '"', '\'']) {
                let what = match t.chars().next() {
                    Some('[') => "array",
                    Some('{') => "inline table",
                    _ => "string",
                };
                let msg = e.message().trim().replace('\n', "; ");
                return Err(format!("{text} is not a valid TOML {what}: {msg}"));
            }
        }
    }
    Ok(Node { value: Value::String(text.to_string()), origin: origin.clone() })
}

/// Sets the origin of a node and everything under it.
fn reorigin(node: &mut Node, origin: &Origin) {
    node.origin = origin.clone();
    match &mut node.value {
        Value::Array(a) => a.iter_mut().for_each(|n| reorigin(n, origin)),
        Value::Table(t) => t.entries.iter_mut().for_each(|e| {
            e.key_origin = origin.clone();
            reorigin(&mut e.node, origin);
        }),
        _ => {}
    }
}

impl Tree {
    /// Parses TOML text. A syntax error names the file, line and column.
    pub fn parse(source: Source) -> Result<Tree> {
        let doc = match toml_edit::Document::parse(source.text.as_str()) {
            Ok(d) => d,
            Err(e) => {
                let loc = match e.span() {
                    Some(r) => source.locate(&Origin::File(r)),
                    None => source.name.clone(),
                };
                let msg = e.message().trim().replace('\n', "; ");
                return Err(Error::at(loc, format!("malformed TOML: {msg}")));
            }
        };
        let origin = Origin::File(0..0);
        let root = Node { value: Value::Table(conv_table(doc.as_table(), &origin)), origin };
        Ok(Tree { root, source })
    }

    /// Applies one `--set KEY=VALUE` override. Array elements are
    /// addressed by their `id`/`name` (`flow.f1.cc`) or position
    /// (`flow[0].cc`); missing tables along the path are created, so that
    /// validation reports unknown keys the same way as for the file.
    pub fn apply_set(&mut self, arg: &str) -> Result<()> {
        let index = self.source.sets.len();
        self.source.sets.push(arg.to_string());
        let origin = Origin::Set(index);
        let loc = self.source.locate(&origin);
        let Some((key, value)) = arg.split_once('=') else {
            return Err(Error::at(loc, "expected KEY=VALUE, e.g. --set link.bottleneck.rate=50Mbit"));
        };
        let segs = parse_path(key).map_err(|m| Error::at(loc.clone(), format!("bad key {key:?}: {m}")))?;
        let node = parse_set_value(value.trim(), &origin).map_err(|m| Error {
            location: Some(loc.clone()),
            path: Some(key.trim().to_string()),
            message: m,
        })?;
        set_at(&mut self.root, &segs, 0, node, &origin).map_err(|(at, m)| Error {
            location: Some(loc),
            path: Some(render(&segs[..at.min(segs.len())])),
            message: m,
        })
    }
}

/// Walks `segs[i..]` from `cur` and stores `value` at the end. Errors are
/// (number of segments that locate the problem, message).
fn set_at(cur: &mut Node, segs: &[Seg], i: usize, value: Node, origin: &Origin) -> Result<(), (usize, String)> {
    let Some(seg) = segs.get(i) else {
        *cur = value;
        return Ok(());
    };
    match (&mut cur.value, seg) {
        (Value::Table(t), Seg::Key(k)) => {
            if i + 1 == segs.len() {
                match t.get_mut(k) {
                    Some(e) => e.node = value,
                    None => t.entries.push(Entry { key: k.clone(), key_origin: origin.clone(), node: value }),
                }
                return Ok(());
            }
            if t.get(k).is_none() {
                // Create a table, or an array when the next step indexes.
                let new = match segs.get(i + 1) {
                    Some(Seg::Index(_)) => {
                        return Err((i + 1, format!("there is no {k:?} array to index")));
                    }
                    _ => Value::Table(Table::default()),
                };
                t.entries.push(Entry {
                    key: k.clone(),
                    key_origin: origin.clone(),
                    node: Node { value: new, origin: origin.clone() },
                });
            }
            let e = t.get_mut(k).ok_or((i + 1, "internal: key vanished".to_string()))?;
            set_at(&mut e.node, segs, i + 1, value, origin)
        }
        (Value::Array(a), Seg::Index(n)) => {
            let len = a.len();
            match a.get_mut(*n) {
                Some(elem) => set_at(elem, segs, i + 1, value, origin),
                None => Err((i + 1, format!("index {n} is out of range (there are {len} elements)"))),
            }
        }
        (Value::Array(a), Seg::Key(name)) => {
            let pos = a.iter().position(|n| matches!(&n.value, Value::Table(t) if t.label() == Some(name.as_str())));
            let pos = pos.or_else(|| name.parse::<usize>().ok().filter(|n| *n < a.len()));
            match pos {
                Some(p) => set_at(&mut a[p], segs, i + 1, value, origin),
                None => {
                    let known: Vec<String> = a
                        .iter()
                        .filter_map(|n| match &n.value {
                            Value::Table(t) => t.label().map(|l| format!("{l:?}")),
                            _ => None,
                        })
                        .collect();
                    let parent = render(&segs[..i]);
                    Err((
                        i + 1,
                        if known.is_empty() {
                            format!("no {parent} element has id or name {name:?}")
                        } else {
                            format!("no {parent} named {name:?} (known: {})", known.join(", "))
                        },
                    ))
                }
            }
        }
        (v, _) => Err((i, format!("is {}, not a table, so it has no field {:?}", v.type_name(), render(&segs[i..=i])))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "[run]\nduration = \"10s\"\n\n[[link]]\nname = \"bn\"\nrate = \"1Mbit\"\n";

    fn tree() -> Tree {
        Tree::parse(Source::new("x.toml", SRC)).unwrap()
    }

    fn get<'a>(n: &'a Node, path: &[&str]) -> &'a Node {
        let mut cur = n;
        for k in path {
            cur = match &cur.value {
                Value::Table(t) => &t.get(k).unwrap().node,
                Value::Array(a) => &a[k.parse::<usize>().unwrap()],
                _ => panic!(),
            };
        }
        cur
    }

    #[test]
    fn test_parse_records_spans() {
        let t = tree();
        let d = get(&t.root, &["run", "duration"]);
        assert_eq!(t.source.locate(&d.origin), "x.toml:2:12");
        let r = get(&t.root, &["link", "0", "rate"]);
        assert_eq!(t.source.locate(&r.origin), "x.toml:6:8");
    }

    #[test]
    fn test_malformed_toml_names_line() {
        let e = Tree::parse(Source::new("x.toml", "[run]\nduration = \n")).unwrap_err();
        assert!(e.to_string().starts_with("x.toml:2:"), "{e}");
    }

    #[test]
    fn test_set_by_name_and_index_and_new_table() {
        let mut t = tree();
        t.apply_set("link.bn.rate=5Mbit").unwrap();
        assert_eq!(get(&t.root, &["link", "0", "rate"]).value, Value::String("5Mbit".into()));
        t.apply_set("link[0].rate = 7Mbit").unwrap();
        assert_eq!(get(&t.root, &["link", "0", "rate"]).value, Value::String("7Mbit".into()));
        t.apply_set("tcp.tcp_reordering=10").unwrap();
        let n = get(&t.root, &["tcp", "tcp_reordering"]);
        assert_eq!(n.value, Value::Integer(10));
        assert_eq!(t.source.locate(&n.origin), "--set tcp.tcp_reordering=10");
        t.apply_set("link.bn.delay={ model = \"uniform\", min = \"1ms\", max = \"2ms\" }").unwrap();
        assert!(matches!(get(&t.root, &["link", "0", "delay"]).value, Value::Table(_)));
    }

    #[test]
    fn test_set_bad_paths() {
        let mut t = tree();
        let e = t.apply_set("link.nope.rate=1Mbit").unwrap_err().to_string();
        assert_eq!(e, "--set link.nope.rate=1Mbit: link.nope: no link named \"nope\" (known: \"bn\")");
        let e = t.apply_set("run.duration.x=1").unwrap_err().to_string();
        assert!(e.contains("run.duration: is a string, not a table"), "{e}");
        assert!(t.apply_set("novalue").is_err());
        assert!(t.apply_set("=1").is_err());
        assert!(t.apply_set("a..b=1").is_err());
        assert!(t.apply_set("link[9].rate=1").is_err());
    }

    #[test]
    fn test_set_values_that_are_not_toml_say_why() {
        let mut t = tree();
        let e = t.apply_set("run.seed=99999999999999999999").unwrap_err().to_string();
        assert_eq!(
            e,
            "--set run.seed=99999999999999999999: run.seed: integer 99999999999999999999 is out of range \
             (TOML integers are at most 9223372036854775807)"
        );
        let e = t.apply_set("tcp.tcp_rmem=[-1,0,99999999999999999999]").unwrap_err().to_string();
        assert!(
            e.starts_with("--set tcp.tcp_rmem=[-1,0,99999999999999999999]: tcp.tcp_rmem: [-1,0,99999999999999999999] is not a valid TOML array: "),
            "{e}"
        );
        assert!(!e.contains("string"), "{e}");
        let e = t.apply_set("run.seed=1e400").unwrap_err().to_string();
        assert_eq!(
            e,
            "--set run.seed=1e400: run.seed: 1e400 is not a valid TOML number (a float beyond 64 bits, or misspelt)"
        );
        // Bare words stay strings, as before.
        t.apply_set("link.bn.rate=1e3Mbit").unwrap();
        t.apply_set("link.bn.rate=50Mbit").unwrap();
        t.apply_set("run.seed=-5").unwrap();
    }

    #[test]
    fn test_parse_path_forms() {
        assert_eq!(
            parse_path("flow[0].tcp.\"a.b\"").unwrap(),
            vec![Seg::Key("flow".into()), Seg::Index(0), Seg::Key("tcp".into()), Seg::Key("a.b".into())]
        );
        assert!(parse_path("").is_err());
        assert!(parse_path("a.").is_err());
        assert!(parse_path("a b").is_err());
        assert!(parse_path(&["a"; 1000].join(".")).is_err());
    }
}
