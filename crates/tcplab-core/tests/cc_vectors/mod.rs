//! Shared helpers of the Linux conformance-vector tests: locating
//! `shared/conformance/linux-vectors`, a tiny CSV reader (header → column
//! index, no quoting: the vector files never quote), and a mismatch
//! collector that names file, seq_id, step and field.

#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// `<workspace>/../shared/conformance/linux-vectors`, from this crate's
/// manifest dir (`<workspace>/crates/tcplab-core`).
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/linux-vectors")
}

/// Loads `name` from the vectors directory, or prints a SKIPPED line and
/// returns `None` when the shared directory is absent. A missing file in a
/// present directory is a failure, not a skip.
pub fn load(name: &str) -> Option<Csv> {
    let dir = vectors_dir();
    if !dir.is_dir() {
        let msg = format!("SKIPPED: ../shared not found (looked for {}); {name} not checked", dir.display());
        println!("{msg}");
        // Straight to fd 2, past libtest's output capture, so that a plain
        // `cargo test` shows it too.
        let _ = writeln!(std::io::stderr(), "{msg}");
        return None;
    }
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(Csv::parse(name, &text))
}

/// A parsed CSV file: header and rows of string cells.
pub struct Csv {
    pub name: String,
    cols: HashMap<String, usize>,
    pub rows: Vec<Row>,
}

/// One data row with its 1-based line number.
pub struct Row {
    pub line: usize,
    cells: Vec<String>,
    cols: std::rc::Rc<HashMap<String, usize>>,
}

impl Csv {
    pub fn parse(name: &str, text: &str) -> Csv {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().unwrap_or_else(|| panic!("{name}: empty file"));
        let cols: HashMap<String, usize> =
            header.trim_end_matches('\r').split(',').enumerate().map(|(i, c)| (c.trim().to_string(), i)).collect();
        let shared = std::rc::Rc::new(cols.clone());
        let ncols = cols.len();
        let rows = lines
            .map(|(i, l)| {
                let cells: Vec<String> = l.trim_end_matches('\r').split(',').map(|c| c.trim().to_string()).collect();
                assert_eq!(cells.len(), ncols, "{name}:{}: {} cells, header has {ncols}", i + 1, cells.len());
                Row { line: i + 1, cells, cols: shared.clone() }
            })
            .collect();
        Csv { name: name.to_string(), cols, rows }
    }

    pub fn has(&self, col: &str) -> bool {
        self.cols.contains_key(col)
    }

    /// Rows grouped by `seq_id`, each in file order (the files list steps in
    /// order; this is asserted).
    pub fn sequences(&self) -> Vec<(String, Vec<&Row>)> {
        let mut out: Vec<(String, Vec<&Row>)> = Vec::new();
        for r in &self.rows {
            let id = r.s("seq_id");
            match out.last_mut() {
                Some((last, v)) if *last == id => v.push(r),
                _ => out.push((id.to_string(), vec![r])),
            }
        }
        for (id, rows) in &out {
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(r.u64("step"), i as u64, "{}: {id} steps not in order at line {}", self.name, r.line);
            }
        }
        out
    }
}

impl Row {
    /// The file has this column.
    pub fn has(&self, col: &str) -> bool {
        self.cols.contains_key(col)
    }
    pub fn s(&self, col: &str) -> &str {
        let i = *self.cols.get(col).unwrap_or_else(|| panic!("no column {col}"));
        &self.cells[i]
    }
    pub fn is_blank(&self, col: &str) -> bool {
        self.s(col).is_empty()
    }
    pub fn u64(&self, col: &str) -> u64 {
        let s = self.s(col);
        s.parse().unwrap_or_else(|_| panic!("line {}: column {col} = {s:?} is not a u64", self.line))
    }
    pub fn u32(&self, col: &str) -> u32 {
        let v = self.u64(col);
        u32::try_from(v).unwrap_or_else(|_| panic!("line {}: column {col} = {v} exceeds u32", self.line))
    }
    pub fn i64(&self, col: &str) -> i64 {
        let s = self.s(col);
        s.parse().unwrap_or_else(|_| panic!("line {}: column {col} = {s:?} is not an i64", self.line))
    }
    pub fn opt_u32(&self, col: &str) -> Option<u32> {
        if self.is_blank(col) {
            None
        } else {
            Some(self.u32(col))
        }
    }
    pub fn opt_u64(&self, col: &str) -> Option<u64> {
        if self.is_blank(col) {
            None
        } else {
            Some(self.u64(col))
        }
    }
}

/// Collects field mismatches; `finish` fails the test with the first few.
pub struct Checker {
    file: String,
    pub rows_checked: usize,
    mismatches: Vec<String>,
    total_mismatches: usize,
    ctx: String,
}

impl Checker {
    pub fn new(file: &str) -> Checker {
        Checker {
            file: file.to_string(),
            rows_checked: 0,
            mismatches: Vec::new(),
            total_mismatches: 0,
            ctx: String::new(),
        }
    }

    /// Sets the row context used in mismatch messages.
    pub fn at(&mut self, seq_id: &str, step: &str, line: usize) {
        self.ctx = format!("seq_id={seq_id} step={step} (line {line})");
    }

    /// Compares one field.
    pub fn eq<T: PartialEq + Display>(&mut self, field: &str, expected: T, got: T) {
        if expected != got {
            self.total_mismatches += 1;
            if self.mismatches.len() < 30 {
                self.mismatches
                    .push(format!("{}: {}: field {field}: expected {expected}, got {got}", self.file, self.ctx));
            }
        }
    }

    /// Compares a field given as an optional CSV cell (blank = not checked).
    pub fn eq_opt<T: PartialEq + Display>(&mut self, field: &str, expected: Option<T>, got: T) {
        if let Some(e) = expected {
            self.eq(field, e, got);
        }
    }

    /// Asserts no mismatch and that every row of the file was checked
    /// (minus `skipped`, the rows explicitly documented as not modelled).
    pub fn finish(self, total_rows: usize, skipped: usize) {
        println!(
            "{}: {} rows checked, {} skipped, {} field mismatches",
            self.file, self.rows_checked, skipped, self.total_mismatches
        );
        if !self.mismatches.is_empty() {
            panic!(
                "{} mismatching fields in {} (first {} shown):\n{}",
                self.total_mismatches,
                self.file,
                self.mismatches.len(),
                self.mismatches.join("\n")
            );
        }
        assert!(self.rows_checked > 0, "{}: no rows checked", self.file);
        assert_eq!(self.rows_checked + skipped, total_rows, "{}: rows checked + skipped != rows in file", self.file);
    }
}
