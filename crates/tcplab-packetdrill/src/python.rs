//! The subset of Python that packetdrill `%{ ... }%` blocks use, evaluated
//! without a Python interpreter.
//!
//! packetdrill writes every block, preceded by assignments of the
//! `tcpi_*` values captured when the block's timestamp was reached, into
//! one Python file and runs it after the last event; a raised exception
//! ends the run with `<script>:<line>: error in Python code` and the
//! traceback's last line (`AssertionError: 36`). [`Interpreter`] keeps the
//! same model: one global namespace for all blocks, blocks run in order.
//!
//! Supported: simple statements separated by newlines or `;` (assignment,
//! `+= -= *= /= //= %=` and friends, `assert test[, msg]`, expression
//! statements such as `print(...)`, `pass`); expressions with `or and not`,
//! chained comparisons, `| ^ & << >>`, `+ - * / // % **`, unary `- + ~`,
//! conditional expressions, calls of a few builtins (`print int float str
//! abs min max len bool hex round`), `%` string formatting, int (arbitrary
//! sign, i128), float, str, bool, None and tuple values, `#` comments and
//! backslash line continuation. Anything else (compound statements,
//! attribute access, imports, ...) is [`PyError::Unsupported`], which the
//! driver turns into a skip rather than a failure.

use std::collections::HashMap;
use std::fmt;

/// A Python value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
}

/// Why evaluation stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum PyError {
    /// A Python exception: kind (`AssertionError`, `NameError`, ...) and
    /// message (empty for a bare `assert`).
    Exception { kind: String, message: String },
    /// A construct outside the supported subset.
    Unsupported(String),
}

impl PyError {
    fn exc(kind: &str, message: impl Into<String>) -> PyError {
        PyError::Exception { kind: kind.to_string(), message: message.into() }
    }
    fn type_err(message: impl Into<String>) -> PyError {
        PyError::exc("TypeError", message)
    }
}

impl fmt::Display for PyError {
    /// As the last line of a Python traceback.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyError::Exception { kind, message } if message.is_empty() => write!(f, "{kind}"),
            PyError::Exception { kind, message } => write!(f, "{kind}: {message}"),
            PyError::Unsupported(m) => write!(f, "unsupported Python construct: {m}"),
        }
    }
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bool(_) => "bool",
            Value::None => "NoneType",
            Value::Tuple(_) => "tuple",
        }
    }
    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Int(v) => *v != 0,
            Value::Float(v) => *v != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
            Value::None => false,
            Value::Tuple(t) => !t.is_empty(),
        }
    }
    /// `str(value)`.
    pub fn to_str(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => other.repr(),
        }
    }
    /// `repr(value)`.
    pub fn repr(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Float(v) => float_repr(*v),
            Value::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::None => "None".into(),
            Value::Tuple(t) => {
                let items: Vec<String> = t.iter().map(Value::repr).collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
        }
    }
    /// Integer view of int and bool.
    fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(v) => Some(*v),
            other => other.as_int().map(|v| v as f64),
        }
    }
}

/// Python's `repr(float)`: shortest round-trip digits, `.0` for integral
/// values, exponent form outside [1e-4, 1e16).
fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum PTok {
    Name(String),
    Int(i128),
    Float(f64),
    Str(String),
    Op(&'static str),
    Newline,
    End,
}

const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "+", "-", "*", "/", "%", "<", ">", "=", "(", ")", "[", "]", ",", ":", ";", "|", "&", "^", "~", ".",
    "{", "}",
];

/// Tokenizes a block: `#` comments, `\` continuation, newlines are
/// statement separators outside brackets, indentation is ignored.
fn lex(src: &str) -> Result<Vec<PTok>, PyError> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let mut depth = 0i32;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && chars.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if c == '\\' && chars.get(i + 1) == Some(&'\r') && chars.get(i + 2) == Some(&'\n') {
            i += 3;
            continue;
        }
        if c == '\\' && chars[i + 1..].iter().all(|c| c.is_whitespace()) {
            // A continuation just before `}%`: packetdrill writes the
            // block to a file with the newline that follows.
            break;
        }
        if c == '\n' {
            if depth == 0 {
                out.push(PTok::Newline);
            }
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let start = i;
            if c == '0' && matches!(chars.get(i + 1), Some('x' | 'X' | 'o' | 'O' | 'b' | 'B')) {
                let radix = match chars[i + 1] {
                    'x' | 'X' => 16,
                    'o' | 'O' => 8,
                    _ => 2,
                };
                i += 2;
                let ds = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let digits: String = chars[ds..i].iter().filter(|c| **c != '_').collect();
                let v = i128::from_str_radix(&digits, radix).map_err(|_| {
                    PyError::exc(
                        "SyntaxError",
                        format!("invalid number literal {}", chars[start..i].iter().collect::<String>()),
                    )
                })?;
                out.push(PTok::Int(v));
                continue;
            }
            let mut is_float = false;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_') {
                i += 1;
            }
            if i < chars.len() && chars[i] == '.' {
                is_float = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let save = i;
                i += 1;
                if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
                    i += 1;
                }
                if i < chars.len() && chars[i].is_ascii_digit() {
                    is_float = true;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                } else {
                    i = save;
                }
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            if is_float {
                let v: f64 = text.parse().map_err(|_| PyError::exc("SyntaxError", format!("invalid number {text}")))?;
                out.push(PTok::Float(v));
            } else {
                let v: i128 = text
                    .parse()
                    .map_err(|_| PyError::Unsupported(format!("integer literal {text} beyond 128 bits")))?;
                out.push(PTok::Int(v));
            }
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            // String prefixes (r'', b'', f'') are not supported.
            if i < chars.len() && (chars[i] == '\'' || chars[i] == '"') {
                return Err(PyError::Unsupported(format!("string prefix {name}")));
            }
            out.push(PTok::Name(name));
            continue;
        }
        if c == '\'' || c == '"' {
            let q = c;
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&ch) = chars.get(i) else {
                    return Err(PyError::exc("SyntaxError", "unterminated string literal"));
                };
                i += 1;
                if ch == q {
                    break;
                }
                if ch == '\n' {
                    return Err(PyError::exc("SyntaxError", "unterminated string literal"));
                }
                if ch == '\\' {
                    let Some(&e) = chars.get(i) else {
                        return Err(PyError::exc("SyntaxError", "unterminated string literal"));
                    };
                    i += 1;
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        '\\' => s.push('\\'),
                        '\'' => s.push('\''),
                        '"' => s.push('"'),
                        '\n' => {}
                        other => {
                            s.push('\\');
                            s.push(other);
                        }
                    }
                } else {
                    s.push(ch);
                }
            }
            out.push(PTok::Str(s));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
            return Err(PyError::exc("SyntaxError", format!("invalid character '{c}'")));
        };
        match *op {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
        out.push(PTok::Op(op));
        i += op.chars().count();
    }
    out.push(PTok::Newline);
    out.push(PTok::End);
    Ok(out)
}

// ---------------------------------------------------------------------------
// Syntax tree
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum PExpr {
    Const(Value),
    Name(String),
    Unary(&'static str, Box<PExpr>),
    Binary(&'static str, Box<PExpr>, Box<PExpr>),
    /// `a < b <= c`: operands and operators.
    Compare(Vec<PExpr>, Vec<&'static str>),
    And(Box<PExpr>, Box<PExpr>),
    Or(Box<PExpr>, Box<PExpr>),
    Not(Box<PExpr>),
    IfElse(Box<PExpr>, Box<PExpr>, Box<PExpr>),
    Call(String, Vec<PExpr>),
    Tuple(Vec<PExpr>),
}

#[derive(Clone, Debug, PartialEq)]
enum Stmt {
    Assign(String, PExpr),
    AugAssign(String, &'static str, PExpr),
    Assert(PExpr, Option<PExpr>),
    Expr(PExpr),
    Pass,
}

/// A parsed block, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    stmts: Vec<Stmt>,
    /// Every name the block reads.
    reads: Vec<String>,
}

impl Program {
    /// Names read by the block (for checking that every `tcpi_*` field
    /// it uses is one the model provides).
    pub fn names_read(&self) -> &[String] {
        &self.reads
    }
}

struct PParser {
    toks: Vec<PTok>,
    pos: usize,
    reads: Vec<String>,
    /// Expression nesting at the current position ([`MAX_NESTING`]). Not
    /// restored on errors: the first error ends the parse.
    depth: u32,
}

/// How deep an expression may nest: parentheses, calls, unary operators,
/// `not`, conditional expressions, and each operand of a chain of one
/// binary operator count one level. CPython refuses parentheses past 200
/// ("too many nested parentheses"); asserts in packetdrill scripts nest a
/// few levels. The bound keeps this recursive parser, and the recursive
/// evaluation and drop of its tree, within a thread's stack.
const MAX_NESTING: u32 = 100;

const KEYWORDS_UNSUPPORTED: &[&str] = &[
    "if", "elif", "else", "for", "while", "def", "class", "import", "from", "return", "with", "try", "except",
    "lambda", "global", "del", "raise", "yield", "in", "is", "finally", "nonlocal", "async", "await",
];

/// Parses a `%{ }%` block.
pub fn parse_program(src: &str) -> Result<Program, PyError> {
    let toks = lex(src)?;
    let mut p = PParser { toks, pos: 0, reads: Vec::new(), depth: 0 };
    let mut stmts = Vec::new();
    loop {
        match p.peek() {
            PTok::End => break,
            PTok::Newline | PTok::Op(";") => {
                p.pos += 1;
            }
            _ => {
                stmts.push(p.stmt()?);
                match p.peek() {
                    PTok::Newline | PTok::Op(";") | PTok::End => {}
                    PTok::Op(":") => return Err(PyError::Unsupported("compound statements".into())),
                    t => return Err(PyError::exc("SyntaxError", format!("invalid syntax near {t:?}"))),
                }
            }
        }
    }
    let mut reads = p.reads;
    reads.sort();
    reads.dedup();
    Ok(Program { stmts, reads })
}

impl PParser {
    fn peek(&self) -> &PTok {
        &self.toks[self.pos]
    }
    fn peek_at(&self, k: usize) -> &PTok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), PTok::Op(o) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn is_name(&self, n: &str) -> bool {
        matches!(self.peek(), PTok::Name(x) if x == n)
    }
    /// One level deeper ([`MAX_NESTING`]).
    fn enter(&mut self) -> Result<(), PyError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(PyError::exc("SyntaxError", format!("expression nested more than {MAX_NESTING} levels deep")));
        }
        Ok(())
    }

    fn expect(&mut self, op: &str) -> Result<(), PyError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(PyError::exc("SyntaxError", format!("expected '{op}'")))
        }
    }

    fn stmt(&mut self) -> Result<Stmt, PyError> {
        if let PTok::Name(n) = self.peek().clone() {
            if KEYWORDS_UNSUPPORTED.contains(&n.as_str()) {
                return Err(PyError::Unsupported(format!("'{n}' statement")));
            }
            if n == "pass" {
                self.pos += 1;
                return Ok(Stmt::Pass);
            }
            if n == "assert" {
                self.pos += 1;
                let test = self.test()?;
                let msg = if self.eat(",") { Some(self.test()?) } else { None };
                return Ok(Stmt::Assert(test, msg));
            }
            if let PTok::Op(op) = self.peek_at(1).clone() {
                if op == "=" {
                    self.pos += 2;
                    let mut e = self.testlist()?;
                    // a = b = c
                    let mut targets = vec![n];
                    while self.eat("=") {
                        match e {
                            PExpr::Name(t) => targets.push(t),
                            _ => return Err(PyError::Unsupported("assignment to a non-name".into())),
                        }
                        e = self.testlist()?;
                    }
                    if targets.len() > 1 {
                        return Err(PyError::Unsupported("chained assignment".into()));
                    }
                    return Ok(Stmt::Assign(targets.pop().unwrap_or_default(), e));
                }
                if op.len() >= 2 && op.ends_with('=') && !matches!(op, "==" | "<=" | ">=" | "!=") {
                    self.pos += 2;
                    let e = self.testlist()?;
                    let bin: &'static str = &op[..op.len() - 1];
                    let bin = OPS.iter().find(|o| **o == bin).copied().unwrap_or("+");
                    self.reads.push(n.clone());
                    return Ok(Stmt::AugAssign(n, bin, e));
                }
            }
        }
        let e = self.testlist()?;
        if self.eat("=") {
            return Err(PyError::Unsupported("assignment to a non-name target".into()));
        }
        Ok(Stmt::Expr(e))
    }

    /// `test (',' test)*` as a tuple when there is a comma.
    fn testlist(&mut self) -> Result<PExpr, PyError> {
        let first = self.test()?;
        if !matches!(self.peek(), PTok::Op(",")) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(",") {
            if matches!(self.peek(), PTok::Newline | PTok::End | PTok::Op(";") | PTok::Op(")")) {
                break;
            }
            items.push(self.test()?);
        }
        Ok(PExpr::Tuple(items))
    }

    fn test(&mut self) -> Result<PExpr, PyError> {
        if self.is_name("lambda") {
            return Err(PyError::Unsupported("lambda".into()));
        }
        self.enter()?;
        let e = self.conditional()?;
        self.depth -= 1;
        Ok(e)
    }

    /// `or_test ['if' or_test 'else' test]`.
    fn conditional(&mut self) -> Result<PExpr, PyError> {
        let body = self.or_test()?;
        if self.is_name("if") {
            self.pos += 1;
            let cond = self.or_test()?;
            if !self.is_name("else") {
                return Err(PyError::exc("SyntaxError", "expected 'else' in conditional expression"));
            }
            self.pos += 1;
            let other = self.test()?;
            return Ok(PExpr::IfElse(Box::new(cond), Box::new(body), Box::new(other)));
        }
        Ok(body)
    }

    fn or_test(&mut self) -> Result<PExpr, PyError> {
        let mut e = self.and_test()?;
        let mut chain = 0;
        while self.is_name("or") {
            self.pos += 1;
            self.enter()?;
            chain += 1;
            let r = self.and_test()?;
            e = PExpr::Or(Box::new(e), Box::new(r));
        }
        self.depth -= chain;
        Ok(e)
    }

    fn and_test(&mut self) -> Result<PExpr, PyError> {
        let mut e = self.not_test()?;
        let mut chain = 0;
        while self.is_name("and") {
            self.pos += 1;
            self.enter()?;
            chain += 1;
            let r = self.not_test()?;
            e = PExpr::And(Box::new(e), Box::new(r));
        }
        self.depth -= chain;
        Ok(e)
    }

    fn not_test(&mut self) -> Result<PExpr, PyError> {
        if self.is_name("not") {
            self.pos += 1;
            self.enter()?;
            let e = self.not_test()?;
            self.depth -= 1;
            return Ok(PExpr::Not(Box::new(e)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<PExpr, PyError> {
        let first = self.bitor()?;
        let mut operands = vec![first];
        let mut ops = Vec::new();
        loop {
            let op = match self.peek() {
                PTok::Op(o @ ("<" | ">" | "==" | ">=" | "<=" | "!=")) => *o,
                PTok::Name(n)
                    if n == "in"
                        || n == "is"
                        || (n == "not" && matches!(self.peek_at(1), PTok::Name(m) if m == "in")) =>
                {
                    return Err(PyError::Unsupported(format!("'{n}' comparison")))
                }
                _ => break,
            };
            self.pos += 1;
            ops.push(op);
            operands.push(self.bitor()?);
        }
        if ops.is_empty() {
            Ok(operands.pop().unwrap_or(PExpr::Const(Value::None)))
        } else {
            Ok(PExpr::Compare(operands, ops))
        }
    }

    fn binary_level(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut PParser) -> Result<PExpr, PyError>,
    ) -> Result<PExpr, PyError> {
        let mut e = next(self)?;
        let mut chain = 0;
        while let Some(op) = ops.iter().find(|o| matches!(self.peek(), PTok::Op(x) if x == *o)).copied() {
            self.pos += 1;
            // `a + b + c` nests left: each operand is one level deeper.
            self.enter()?;
            chain += 1;
            let r = next(self)?;
            e = PExpr::Binary(op, Box::new(e), Box::new(r));
        }
        self.depth -= chain;
        Ok(e)
    }
    fn bitor(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["|"], PParser::bitxor)
    }
    fn bitxor(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["^"], PParser::bitand)
    }
    fn bitand(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["&"], PParser::shift)
    }
    fn shift(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["<<", ">>"], PParser::arith)
    }
    fn arith(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["+", "-"], PParser::term)
    }
    fn term(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&["*", "/", "//", "%"], PParser::factor)
    }

    fn factor(&mut self) -> Result<PExpr, PyError> {
        for op in ["-", "+", "~"] {
            if self.eat(op) {
                self.enter()?;
                let e = self.factor()?;
                self.depth -= 1;
                return Ok(PExpr::Unary(op, Box::new(e)));
            }
        }
        self.power()
    }

    fn power(&mut self) -> Result<PExpr, PyError> {
        let base = self.atom_expr()?;
        if self.eat("**") {
            // Right-associative: `a ** b ** c` recurses through factor.
            self.enter()?;
            let exp = self.factor()?;
            self.depth -= 1;
            return Ok(PExpr::Binary("**", Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom_expr(&mut self) -> Result<PExpr, PyError> {
        let a = self.atom()?;
        if matches!(self.peek(), PTok::Op("(")) {
            let PExpr::Name(fname) = a else {
                return Err(PyError::Unsupported("calling a non-name".into()));
            };
            // The callee is a builtin, not a variable read.
            if let Some(pos) = self.reads.iter().rposition(|r| *r == fname) {
                self.reads.remove(pos);
            }
            self.pos += 1;
            let mut args = Vec::new();
            if !self.eat(")") {
                loop {
                    if matches!(self.peek_at(1), PTok::Op("=")) && matches!(self.peek(), PTok::Name(_)) {
                        return Err(PyError::Unsupported("keyword arguments".into()));
                    }
                    args.push(self.test()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                    if self.eat(")") {
                        break;
                    }
                }
            }
            return Ok(PExpr::Call(fname, args));
        }
        if matches!(self.peek(), PTok::Op("[")) {
            return Err(PyError::Unsupported("subscripts".into()));
        }
        if matches!(self.peek(), PTok::Op(".")) {
            return Err(PyError::Unsupported("attribute access".into()));
        }
        Ok(a)
    }

    fn atom(&mut self) -> Result<PExpr, PyError> {
        let t = self.peek().clone();
        self.pos += 1;
        match t {
            PTok::Int(v) => Ok(PExpr::Const(Value::Int(v))),
            PTok::Float(v) => Ok(PExpr::Const(Value::Float(v))),
            PTok::Str(mut s) => {
                while let PTok::Str(more) = self.peek().clone() {
                    self.pos += 1;
                    s.push_str(&more);
                }
                Ok(PExpr::Const(Value::Str(s)))
            }
            PTok::Name(n) => match n.as_str() {
                "True" => Ok(PExpr::Const(Value::Bool(true))),
                "False" => Ok(PExpr::Const(Value::Bool(false))),
                "None" => Ok(PExpr::Const(Value::None)),
                k if KEYWORDS_UNSUPPORTED.contains(&k) || k == "and" || k == "or" || k == "not" => {
                    Err(PyError::exc("SyntaxError", format!("invalid syntax at '{k}'")))
                }
                _ => {
                    self.reads.push(n.clone());
                    Ok(PExpr::Name(n))
                }
            },
            PTok::Op("(") => {
                if self.eat(")") {
                    return Ok(PExpr::Tuple(Vec::new()));
                }
                let first = self.test()?;
                if self.eat(")") {
                    return Ok(first);
                }
                let mut items = vec![first];
                while self.eat(",") {
                    if self.eat(")") {
                        return Ok(PExpr::Tuple(items));
                    }
                    items.push(self.test()?);
                }
                self.expect(")")?;
                Ok(PExpr::Tuple(items))
            }
            PTok::Op("[") => Err(PyError::Unsupported("lists".into())),
            PTok::Op("{") => Err(PyError::Unsupported("dicts and sets".into())),
            other => Err(PyError::exc("SyntaxError", format!("invalid syntax at {other:?}"))),
        }
    }
}

// ---------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------

/// A Python namespace that blocks run in, in script order.
#[derive(Default, Debug)]
pub struct Interpreter {
    globals: HashMap<String, Value>,
    /// What `print` wrote, one entry per call.
    pub output: Vec<String>,
}

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    /// Binds a global variable.
    pub fn set(&mut self, name: &str, v: Value) {
        self.globals.insert(name.to_string(), v);
    }

    /// Reads a global variable.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.globals.get(name)
    }

    /// Runs a parsed block.
    pub fn run(&mut self, p: &Program) -> Result<(), PyError> {
        for s in &p.stmts {
            match s {
                Stmt::Pass => {}
                Stmt::Expr(e) => {
                    self.eval(e)?;
                }
                Stmt::Assign(n, e) => {
                    let v = self.eval(e)?;
                    self.globals.insert(n.clone(), v);
                }
                Stmt::AugAssign(n, op, e) => {
                    let cur = self.lookup(n)?;
                    let r = self.eval(e)?;
                    let v = binop(op, cur, r)?;
                    self.globals.insert(n.clone(), v);
                }
                Stmt::Assert(t, msg) => {
                    if !self.eval(t)?.truthy() {
                        let message = match msg {
                            Some(m) => self.eval(m)?.to_str(),
                            None => String::new(),
                        };
                        return Err(PyError::Exception { kind: "AssertionError".into(), message });
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses and runs source text.
    pub fn exec(&mut self, src: &str) -> Result<(), PyError> {
        let p = parse_program(src)?;
        self.run(&p)
    }

    /// Evaluates one expression.
    pub fn eval_str(&mut self, src: &str) -> Result<Value, PyError> {
        let p = parse_program(src)?;
        match p.stmts.as_slice() {
            [Stmt::Expr(e)] => self.eval(e),
            _ => Err(PyError::Unsupported("expected a single expression".into())),
        }
    }

    fn lookup(&self, n: &str) -> Result<Value, PyError> {
        self.globals.get(n).cloned().ok_or_else(|| PyError::exc("NameError", format!("name '{n}' is not defined")))
    }

    fn eval(&mut self, e: &PExpr) -> Result<Value, PyError> {
        Ok(match e {
            PExpr::Const(v) => v.clone(),
            PExpr::Name(n) => self.lookup(n)?,
            PExpr::Tuple(items) => Value::Tuple(items.iter().map(|i| self.eval(i)).collect::<Result<_, _>>()?),
            PExpr::Not(x) => Value::Bool(!self.eval(x)?.truthy()),
            PExpr::And(a, b) => {
                let l = self.eval(a)?;
                if !l.truthy() {
                    l
                } else {
                    self.eval(b)?
                }
            }
            PExpr::Or(a, b) => {
                let l = self.eval(a)?;
                if l.truthy() {
                    l
                } else {
                    self.eval(b)?
                }
            }
            PExpr::IfElse(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            PExpr::Unary(op, x) => {
                let v = self.eval(x)?;
                match (*op, &v) {
                    ("-", Value::Float(f)) => Value::Float(-f),
                    ("+", Value::Float(f)) => Value::Float(*f),
                    ("-", _) if v.as_int().is_some() => Value::Int(checked(v.as_int().unwrap_or(0).checked_neg())?),
                    ("+", _) if v.as_int().is_some() => Value::Int(v.as_int().unwrap_or(0)),
                    ("~", _) if v.as_int().is_some() => Value::Int(!v.as_int().unwrap_or(0)),
                    _ => {
                        return Err(PyError::type_err(format!("bad operand type for unary {op}: '{}'", v.type_name())))
                    }
                }
            }
            PExpr::Binary(op, a, b) => {
                let l = self.eval(a)?;
                let r = self.eval(b)?;
                binop(op, l, r)?
            }
            PExpr::Compare(operands, ops) => {
                let mut left = self.eval(&operands[0])?;
                for (i, op) in ops.iter().enumerate() {
                    let right = self.eval(&operands[i + 1])?;
                    if !compare(op, &left, &right)? {
                        return Ok(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
            PExpr::Call(f, args) => {
                let vals: Vec<Value> = args.iter().map(|a| self.eval(a)).collect::<Result<_, _>>()?;
                self.call(f, vals)?
            }
        })
    }

    fn call(&mut self, f: &str, args: Vec<Value>) -> Result<Value, PyError> {
        let one = |args: &[Value]| -> Result<Value, PyError> {
            match args {
                [v] => Ok(v.clone()),
                _ => Err(PyError::type_err(format!("{f}() takes exactly one argument ({} given)", args.len()))),
            }
        };
        Ok(match f {
            "print" => {
                let line: Vec<String> = args.iter().map(Value::to_str).collect();
                self.output.push(line.join(" "));
                Value::None
            }
            "str" => Value::Str(one(&args)?.to_str()),
            "repr" => Value::Str(one(&args)?.repr()),
            "bool" => Value::Bool(one(&args)?.truthy()),
            "int" => match one(&args)? {
                Value::Float(v) if v.is_finite() => Value::Int(v.trunc() as i128),
                Value::Str(s) => Value::Int(s.trim().parse().map_err(|_| {
                    PyError::exc("ValueError", format!("invalid literal for int() with base 10: '{s}'"))
                })?),
                v => Value::Int(v.as_int().ok_or_else(|| {
                    PyError::type_err(format!("int() argument must be a number, not '{}'", v.type_name()))
                })?),
            },
            "float" => match one(&args)? {
                Value::Str(s) => Value::Float(
                    s.trim()
                        .parse()
                        .map_err(|_| PyError::exc("ValueError", format!("could not convert string to float: '{s}'")))?,
                ),
                v => Value::Float(v.as_f64().ok_or_else(|| PyError::type_err("float() argument must be a number"))?),
            },
            "abs" => match one(&args)? {
                Value::Float(v) => Value::Float(v.abs()),
                v => Value::Int(checked(
                    v.as_int().ok_or_else(|| PyError::type_err("bad operand type for abs()"))?.checked_abs(),
                )?),
            },
            "hex" => {
                let v = one(&args)?.as_int().ok_or_else(|| PyError::type_err("hex() needs an integer"))?;
                Value::Str(if v < 0 { format!("-0x{:x}", -v) } else { format!("0x{v:x}") })
            }
            "len" => match one(&args)? {
                Value::Str(s) => Value::Int(s.chars().count() as i128),
                Value::Tuple(t) => Value::Int(t.len() as i128),
                v => return Err(PyError::type_err(format!("object of type '{}' has no len()", v.type_name()))),
            },
            "round" => match args.as_slice() {
                [v] => {
                    let x = v.as_f64().ok_or_else(|| PyError::type_err("round() needs a number"))?;
                    // Python rounds half to even.
                    let r = x.round();
                    let r = if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 { r - x.signum() } else { r };
                    Value::Int(r as i128)
                }
                _ => return Err(PyError::Unsupported("round() with ndigits".into())),
            },
            "min" | "max" => {
                let items = match args.as_slice() {
                    [Value::Tuple(t)] => t.clone(),
                    _ => args,
                };
                let mut best: Option<Value> = None;
                for v in items {
                    best = Some(match best {
                        None => v,
                        Some(b) => {
                            let better = if f == "min" { compare("<", &v, &b)? } else { compare(">", &v, &b)? };
                            if better {
                                v
                            } else {
                                b
                            }
                        }
                    });
                }
                best.ok_or_else(|| PyError::exc("ValueError", format!("{f}() arg is an empty sequence")))?
            }
            _ => {
                if self.globals.contains_key(f) {
                    return Err(PyError::type_err(format!("'{}' object is not callable", self.globals[f].type_name())));
                }
                return Err(PyError::exc("NameError", format!("name '{f}' is not defined")));
            }
        })
    }
}

fn checked(v: Option<i128>) -> Result<i128, PyError> {
    v.ok_or_else(|| PyError::Unsupported("integer beyond 128 bits".into()))
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn py_mod(a: i128, b: i128) -> i128 {
    let r = a % b;
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

fn binop(op: &str, l: Value, r: Value) -> Result<Value, PyError> {
    if op == "%" {
        if let Value::Str(fmt) = &l {
            return Ok(Value::Str(percent_format(fmt, &r)?));
        }
    }
    if op == "+" {
        match (&l, &r) {
            (Value::Str(a), Value::Str(b)) => return Ok(Value::Str(format!("{a}{b}"))),
            (Value::Tuple(a), Value::Tuple(b)) => return Ok(Value::Tuple(a.iter().chain(b).cloned().collect())),
            _ => {}
        }
    }
    if op == "*" {
        match (&l, &r) {
            (Value::Str(s), n) | (n, Value::Str(s)) if n.as_int().is_some() => {
                return Ok(Value::Str(s.repeat(n.as_int().unwrap_or(0).max(0) as usize)))
            }
            _ => {}
        }
    }
    let bad = || {
        PyError::type_err(format!("unsupported operand type(s) for {op}: '{}' and '{}'", l.type_name(), r.type_name()))
    };
    if let (Some(a), Some(b)) = (l.as_int(), r.as_int()) {
        return Ok(match op {
            "+" => Value::Int(checked(a.checked_add(b))?),
            "-" => Value::Int(checked(a.checked_sub(b))?),
            "*" => Value::Int(checked(a.checked_mul(b))?),
            "/" => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "division by zero"));
                }
                Value::Float(a as f64 / b as f64)
            }
            "//" => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "integer division or modulo by zero"));
                }
                Value::Int(floor_div(a, b))
            }
            "%" => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "integer division or modulo by zero"));
                }
                Value::Int(py_mod(a, b))
            }
            "**" => {
                if b < 0 {
                    Value::Float((a as f64).powf(b as f64))
                } else {
                    let e = u32::try_from(b).map_err(|_| PyError::Unsupported("huge exponent".into()))?;
                    Value::Int(checked(a.checked_pow(e))?)
                }
            }
            "|" => Value::Int(a | b),
            "&" => Value::Int(a & b),
            "^" => Value::Int(a ^ b),
            "<<" => {
                if b < 0 {
                    return Err(PyError::exc("ValueError", "negative shift count"));
                }
                let s = u32::try_from(b).map_err(|_| PyError::Unsupported("huge shift".into()))?;
                let v = a.checked_shl(s).filter(|v| v >> s == a);
                Value::Int(checked(v)?)
            }
            ">>" => {
                if b < 0 {
                    return Err(PyError::exc("ValueError", "negative shift count"));
                }
                Value::Int(a >> b.min(127))
            }
            _ => return Err(bad()),
        });
    }
    if let (Some(a), Some(b)) = (l.as_f64(), r.as_f64()) {
        return Ok(Value::Float(match op {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            "/" => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float division by zero"));
                }
                a / b
            }
            "//" => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float floor division by zero"));
                }
                (a / b).floor()
            }
            "%" => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float modulo"));
                }
                let m = a % b;
                if m != 0.0 && ((m < 0.0) != (b < 0.0)) {
                    m + b
                } else {
                    m
                }
            }
            "**" => a.powf(b),
            _ => return Err(bad()),
        }));
    }
    Err(bad())
}

fn compare(op: &str, l: &Value, r: &Value) -> Result<bool, PyError> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (l, r) {
        (a, b) if a.as_int().is_some() && b.as_int().is_some() => a.as_int().partial_cmp(&b.as_int()),
        (a, b) if a.as_f64().is_some() && b.as_f64().is_some() => {
            a.as_f64().unwrap_or(0.0).partial_cmp(&b.as_f64().unwrap_or(0.0))
        }
        (Value::Str(a), Value::Str(b)) => a.partial_cmp(b),
        _ => None,
    };
    match op {
        "==" => Ok(match ord {
            Some(o) => o == Ordering::Equal,
            None => l == r,
        }),
        "!=" => Ok(match ord {
            Some(o) => o != Ordering::Equal,
            None => l != r,
        }),
        _ => {
            let Some(o) = ord else {
                if let (Value::Float(a), Value::Float(b)) = (l, r) {
                    if a.is_nan() || b.is_nan() {
                        return Ok(false);
                    }
                }
                return Err(PyError::type_err(format!(
                    "'{op}' not supported between instances of '{}' and '{}'",
                    l.type_name(),
                    r.type_name()
                )));
            };
            Ok(match op {
                "<" => o == Ordering::Less,
                "<=" => o != Ordering::Greater,
                ">" => o == Ordering::Greater,
                ">=" => o != Ordering::Less,
                _ => false,
            })
        }
    }
}

/// `fmt % args` (printf-style formatting).
fn percent_format(fmt: &str, args: &Value) -> Result<String, PyError> {
    let args: Vec<Value> = match args {
        Value::Tuple(t) => t.clone(),
        v => vec![v.clone()],
    };
    let mut next = args.into_iter();
    let mut out = String::new();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while i < chars.len() && "-+ 0#".contains(chars[i]) {
            flags.push(chars[i]);
            i += 1;
        }
        let mut width = String::new();
        while i < chars.len() && chars[i].is_ascii_digit() {
            width.push(chars[i]);
            i += 1;
        }
        let mut prec: Option<usize> = None;
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            let mut p = String::new();
            while i < chars.len() && chars[i].is_ascii_digit() {
                p.push(chars[i]);
                i += 1;
            }
            prec = Some(p.parse().unwrap_or(0));
        }
        let Some(&conv) = chars.get(i) else {
            return Err(PyError::exc("ValueError", "incomplete format"));
        };
        i += 1;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = next.next().ok_or_else(|| PyError::type_err("not enough arguments for format string"))?;
        let body = match conv {
            'd' | 'i' | 'u' => {
                let v = match &arg {
                    Value::Float(f) => *f as i128,
                    v => v.as_int().ok_or_else(|| {
                        PyError::type_err(format!("%{conv} format: a real number is required, not {}", arg.type_name()))
                    })?,
                };
                let s = v.abs().to_string();
                sign_prefix(v < 0, &flags) + &s
            }
            'x' | 'X' | 'o' => {
                let v =
                    arg.as_int().ok_or_else(|| PyError::type_err(format!("%{conv} format: an integer is required")))?;
                let mut s = match conv {
                    'x' => format!("{:x}", v.abs()),
                    'X' => format!("{:X}", v.abs()),
                    _ => format!("{:o}", v.abs()),
                };
                if flags.contains('#') {
                    s = match conv {
                        'x' => format!("0x{s}"),
                        'X' => format!("0X{s}"),
                        _ => format!("0o{s}"),
                    };
                }
                sign_prefix(v < 0, &flags) + &s
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let v = arg.as_f64().ok_or_else(|| PyError::type_err("must be real number"))?;
                let p = prec.unwrap_or(6);
                let s = match conv {
                    'f' | 'F' => format!("{:.*}", p, v.abs()),
                    'e' | 'E' => {
                        let s = format!("{:.*e}", p, v.abs());
                        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                        let e: i32 = e.parse().unwrap_or(0);
                        let s = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
                        if conv == 'E' {
                            s.to_uppercase()
                        } else {
                            s
                        }
                    }
                    _ => float_repr(v.abs()),
                };
                sign_prefix(v < 0.0, &flags) + &s
            }
            's' => {
                let s = arg.to_str();
                match prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'r' => arg.repr(),
            'c' => match &arg {
                Value::Str(s) => s.clone(),
                v => v.as_int().and_then(|c| char::from_u32(c as u32)).map(String::from).unwrap_or_default(),
            },
            other => return Err(PyError::exc("ValueError", format!("unsupported format character '{other}'"))),
        };
        let w: usize = width.parse().unwrap_or(0);
        let len = body.chars().count();
        if len >= w {
            out.push_str(&body);
        } else if flags.contains('-') {
            out.push_str(&body);
            out.push_str(&" ".repeat(w - len));
        } else if flags.contains('0') && "diuxXofFeEgG".contains(conv) {
            let (sign, digits) = if body.starts_with(['-', '+', ' ']) { body.split_at(1) } else { ("", body.as_str()) };
            out.push_str(sign);
            out.push_str(&"0".repeat(w - len));
            out.push_str(digits);
        } else {
            out.push_str(&" ".repeat(w - len));
            out.push_str(&body);
        }
    }
    if next.next().is_some() {
        return Err(PyError::type_err("not all arguments converted during string formatting"));
    }
    Ok(out)
}

fn sign_prefix(neg: bool, flags: &str) -> String {
    if neg {
        "-".into()
    } else if flags.contains('+') {
        "+".into()
    } else if flags.contains(' ') {
        " ".into()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(src: &str) -> Value {
        Interpreter::new().eval_str(src).unwrap()
    }

    #[test]
    fn test_arithmetic_operators() {
        assert_eq!(ev("7 // 2"), Value::Int(3));
        assert_eq!(ev("-7 // 2"), Value::Int(-4));
        assert_eq!(ev("-7 % 3"), Value::Int(2));
        assert_eq!(ev("7 / 2"), Value::Float(3.5));
        assert_eq!(ev("2 ** 10 - 1"), Value::Int(1023));
        assert_eq!(ev("(1 + 2) * 3"), Value::Int(9));
        assert_eq!(ev("0x7fffffff"), Value::Int(0x7fff_ffff));
        assert_eq!(ev("1 << 4 | 1"), Value::Int(17));
    }

    #[test]
    fn test_deep_nesting_is_a_syntax_error() {
        // Each of these overflowed the stack of a spawned thread (2 MiB).
        let hostile = [
            format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)),
            format!("{}1", "-".repeat(100_000)),
            format!("{}1", "not ".repeat(100_000)),
            vec!["1"; 100_000].join(" + "),
            vec!["1"; 100_000].join(" and "),
            vec!["2"; 10_000].join(" ** "),
        ];
        let results = std::thread::spawn(move || {
            hostile.iter().map(|src| Interpreter::new().eval_str(src).map_err(|e| e.to_string())).collect::<Vec<_>>()
        })
        .join()
        .expect("no stack overflow");
        for r in results {
            let e = r.unwrap_err();
            assert!(e.contains("nested more than 100 levels"), "{e}");
        }
        assert_eq!(ev(&format!("{}1{}", "(".repeat(90), ")".repeat(90))), Value::Int(1));
        assert_eq!(ev(&vec!["1"; 90].join(" + ")), Value::Int(90));
    }

    #[test]
    fn test_chained_comparison() {
        assert_eq!(ev("1 <= 2 <= 3"), Value::Bool(true));
        assert_eq!(ev("1 <= 5 <= 3"), Value::Bool(false));
        assert_eq!(ev("990 <= 1000 < 1010 != 7"), Value::Bool(true));
        assert_eq!(ev("not 1 == 2 and 3 > 2"), Value::Bool(true));
        assert_eq!(ev("0 or 5"), Value::Int(5));
    }

    #[test]
    fn test_percent_formatting() {
        assert_eq!(ev("'cwnd=%d' % 10"), Value::Str("cwnd=10".into()));
        assert_eq!(ev("'a: %d b: %s c: %05.1f' % (1, 'x', 2.75)"), Value::Str("a: 1 b: x c: 002.8".into()));
        assert_eq!(ev("'%x|%-4d|' % (255, 7)"), Value::Str("ff|7   |".into()));
    }

    #[test]
    fn test_assert_message_and_state_across_blocks() {
        let mut i = Interpreter::new();
        i.set("tcpi_snd_cwnd", Value::Int(36));
        i.exec("cwnd = 35").unwrap();
        i.exec("cwnd += 1; assert tcpi_snd_cwnd == cwnd, tcpi_snd_cwnd").unwrap();
        let e = i.exec("print(tcpi_snd_cwnd); assert tcpi_snd_cwnd == 48, tcpi_snd_cwnd").unwrap_err();
        assert_eq!(e.to_string(), "AssertionError: 36");
        assert_eq!(i.output, vec!["36".to_string()]);
        let e = i.exec("assert 0").unwrap_err();
        assert_eq!(e.to_string(), "AssertionError");
    }

    #[test]
    fn test_continuation_comments_and_indentation() {
        let mut i = Interpreter::new();
        i.exec("\nx = 1 + \\\n  2   # three\n   assert x == 3, 'x=%d' % x;\\\n").unwrap();
        assert_eq!(i.get("x"), Some(&Value::Int(3)));
    }

    #[test]
    fn test_errors() {
        let mut i = Interpreter::new();
        assert_eq!(i.exec("y = z").unwrap_err().to_string(), "NameError: name 'z' is not defined");
        assert_eq!(
            i.exec("y = 1 // 0").unwrap_err().to_string(),
            "ZeroDivisionError: integer division or modulo by zero"
        );
        assert!(matches!(i.exec("if 1: pass"), Err(PyError::Unsupported(_))));
        assert!(matches!(i.exec("import os"), Err(PyError::Unsupported(_))));
    }

    #[test]
    fn test_float_repr() {
        assert_eq!(ev("str(1.0)"), Value::Str("1.0".into()));
        assert_eq!(ev("str(0.1 + 0.2)"), Value::Str("0.30000000000000004".into()));
        assert_eq!(ev("str(1e16)"), Value::Str("1e+16".into()));
    }

    #[test]
    fn test_names_read() {
        let p = parse_program("x = tcpi_rtt; print(tcpi_snd_cwnd + x)").unwrap();
        assert_eq!(p.names_read(), &["tcpi_rtt".to_string(), "tcpi_snd_cwnd".to_string(), "x".to_string()]);
    }
}
