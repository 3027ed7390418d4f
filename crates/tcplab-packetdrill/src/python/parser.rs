//! The block's syntax tree and the recursive-descent parser that builds
//! it, recording the names a block reads on the way.

use super::lexer::{lex, PTok, Punct};
use super::{PyError, Value};
use std::fmt;

/// `+ - * / // % ** | & ^ << >>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitOr,
    BitAnd,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    /// The operator a token stands for in `a OP b`.
    fn of(p: Punct) -> Option<BinOp> {
        Some(match p {
            Punct::Plus => BinOp::Add,
            Punct::Minus => BinOp::Sub,
            Punct::Star => BinOp::Mul,
            Punct::Slash => BinOp::Div,
            Punct::FloorDiv => BinOp::FloorDiv,
            Punct::Percent => BinOp::Mod,
            Punct::Pow => BinOp::Pow,
            Punct::Pipe => BinOp::BitOr,
            Punct::Amp => BinOp::BitAnd,
            Punct::Caret => BinOp::BitXor,
            Punct::Shl => BinOp::Shl,
            Punct::Shr => BinOp::Shr,
            _ => return None,
        })
    }

    /// The operator a token applies in `name OP= value`.
    fn augmented(p: Punct) -> Option<BinOp> {
        Some(match p {
            Punct::AddAssign => BinOp::Add,
            Punct::SubAssign => BinOp::Sub,
            Punct::MulAssign => BinOp::Mul,
            Punct::DivAssign => BinOp::Div,
            Punct::FloorDivAssign => BinOp::FloorDiv,
            Punct::ModAssign => BinOp::Mod,
            Punct::PowAssign => BinOp::Pow,
            Punct::OrAssign => BinOp::BitOr,
            Punct::AndAssign => BinOp::BitAnd,
            Punct::XorAssign => BinOp::BitXor,
            Punct::ShlAssign => BinOp::Shl,
            Punct::ShrAssign => BinOp::Shr,
            _ => return None,
        })
    }
}

/// Python's spelling, which its error messages quote.
impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::BitOr => "|",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        })
    }
}

/// `-x`, `+x`, `~x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UnaryOp {
    Neg,
    Pos,
    Invert,
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnaryOp::Neg => "-",
            UnaryOp::Pos => "+",
            UnaryOp::Invert => "~",
        })
    }
}

/// `< <= > >= == !=`, which chain (`a < b <= c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    fn of(p: Punct) -> Option<CmpOp> {
        Some(match p {
            Punct::Lt => CmpOp::Lt,
            Punct::Le => CmpOp::Le,
            Punct::Gt => CmpOp::Gt,
            Punct::Ge => CmpOp::Ge,
            Punct::EqEq => CmpOp::Eq,
            Punct::Ne => CmpOp::Ne,
            _ => return None,
        })
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum PExpr {
    Const(Value),
    Name(String),
    Unary(UnaryOp, Box<PExpr>),
    Binary(BinOp, Box<PExpr>, Box<PExpr>),
    /// `a < b <= c`: operands and operators.
    Compare(Vec<PExpr>, Vec<CmpOp>),
    And(Box<PExpr>, Box<PExpr>),
    Or(Box<PExpr>, Box<PExpr>),
    Not(Box<PExpr>),
    IfElse(Box<PExpr>, Box<PExpr>, Box<PExpr>),
    Call(String, Vec<PExpr>),
    Tuple(Vec<PExpr>),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Stmt {
    Assign(String, PExpr),
    AugAssign(String, BinOp, PExpr),
    Assert(PExpr, Option<PExpr>),
    Expr(PExpr),
    Pass,
}

/// A parsed block, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub(super) stmts: Vec<Stmt>,
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
            PTok::Newline | PTok::Op(Punct::Semi) => {
                p.pos += 1;
            }
            _ => {
                stmts.push(p.stmt()?);
                match p.peek() {
                    PTok::Newline | PTok::Op(Punct::Semi) | PTok::End => {}
                    PTok::Op(Punct::Colon) => return Err(PyError::Unsupported("compound statements".into())),
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
    fn eat(&mut self, op: Punct) -> bool {
        if *self.peek() == PTok::Op(op) {
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

    fn expect(&mut self, op: Punct) -> Result<(), PyError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(PyError::exc("SyntaxError", format!("expected '{}'", op.as_str())))
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
                let msg = if self.eat(Punct::Comma) { Some(self.test()?) } else { None };
                return Ok(Stmt::Assert(test, msg));
            }
            if let PTok::Op(op) = self.peek_at(1).clone() {
                if op == Punct::Assign {
                    self.pos += 2;
                    let mut e = self.testlist()?;
                    // a = b = c
                    let mut targets = vec![n];
                    while self.eat(Punct::Assign) {
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
                if let Some(bin) = BinOp::augmented(op) {
                    self.pos += 2;
                    let e = self.testlist()?;
                    self.reads.push(n.clone());
                    return Ok(Stmt::AugAssign(n, bin, e));
                }
            }
        }
        let e = self.testlist()?;
        if self.eat(Punct::Assign) {
            return Err(PyError::Unsupported("assignment to a non-name target".into()));
        }
        Ok(Stmt::Expr(e))
    }

    /// `test (',' test)*` as a tuple when there is a comma.
    fn testlist(&mut self) -> Result<PExpr, PyError> {
        let first = self.test()?;
        if *self.peek() != PTok::Op(Punct::Comma) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(Punct::Comma) {
            if matches!(self.peek(), PTok::Newline | PTok::End | PTok::Op(Punct::Semi | Punct::RParen)) {
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
                PTok::Op(p) => match CmpOp::of(*p) {
                    Some(op) => op,
                    None => break,
                },
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
        ops: &[BinOp],
        next: fn(&mut PParser) -> Result<PExpr, PyError>,
    ) -> Result<PExpr, PyError> {
        let mut e = next(self)?;
        let mut chain = 0;
        while let Some(op) = self.peek_binary().filter(|op| ops.contains(op)) {
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
    fn peek_binary(&self) -> Option<BinOp> {
        match self.peek() {
            PTok::Op(p) => BinOp::of(*p),
            _ => None,
        }
    }
    fn bitor(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::BitOr], PParser::bitxor)
    }
    fn bitxor(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::BitXor], PParser::bitand)
    }
    fn bitand(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::BitAnd], PParser::shift)
    }
    fn shift(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::Shl, BinOp::Shr], PParser::arith)
    }
    fn arith(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::Add, BinOp::Sub], PParser::term)
    }
    fn term(&mut self) -> Result<PExpr, PyError> {
        self.binary_level(&[BinOp::Mul, BinOp::Div, BinOp::FloorDiv, BinOp::Mod], PParser::factor)
    }

    fn factor(&mut self) -> Result<PExpr, PyError> {
        for (token, op) in [(Punct::Minus, UnaryOp::Neg), (Punct::Plus, UnaryOp::Pos), (Punct::Tilde, UnaryOp::Invert)]
        {
            if self.eat(token) {
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
        if self.eat(Punct::Pow) {
            // Right-associative: `a ** b ** c` recurses through factor.
            self.enter()?;
            let exp = self.factor()?;
            self.depth -= 1;
            return Ok(PExpr::Binary(BinOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom_expr(&mut self) -> Result<PExpr, PyError> {
        let a = self.atom()?;
        if matches!(self.peek(), PTok::Op(Punct::LParen)) {
            let PExpr::Name(fname) = a else {
                return Err(PyError::Unsupported("calling a non-name".into()));
            };
            // The callee is a builtin, not a variable read.
            if let Some(pos) = self.reads.iter().rposition(|r| *r == fname) {
                self.reads.remove(pos);
            }
            self.pos += 1;
            let mut args = Vec::new();
            if !self.eat(Punct::RParen) {
                loop {
                    if matches!(self.peek_at(1), PTok::Op(Punct::Assign)) && matches!(self.peek(), PTok::Name(_)) {
                        return Err(PyError::Unsupported("keyword arguments".into()));
                    }
                    args.push(self.test()?);
                    if self.eat(Punct::RParen) {
                        break;
                    }
                    self.expect(Punct::Comma)?;
                    if self.eat(Punct::RParen) {
                        break;
                    }
                }
            }
            return Ok(PExpr::Call(fname, args));
        }
        if matches!(self.peek(), PTok::Op(Punct::LBracket)) {
            return Err(PyError::Unsupported("subscripts".into()));
        }
        if matches!(self.peek(), PTok::Op(Punct::Dot)) {
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
            PTok::Op(Punct::LParen) => {
                if self.eat(Punct::RParen) {
                    return Ok(PExpr::Tuple(Vec::new()));
                }
                let first = self.test()?;
                if self.eat(Punct::RParen) {
                    return Ok(first);
                }
                let mut items = vec![first];
                while self.eat(Punct::Comma) {
                    if self.eat(Punct::RParen) {
                        return Ok(PExpr::Tuple(items));
                    }
                    items.push(self.test()?);
                }
                self.expect(Punct::RParen)?;
                Ok(PExpr::Tuple(items))
            }
            PTok::Op(Punct::LBracket) => Err(PyError::Unsupported("lists".into())),
            PTok::Op(Punct::LBrace) => Err(PyError::Unsupported("dicts and sets".into())),
            other => Err(PyError::exc("SyntaxError", format!("invalid syntax at {other:?}"))),
        }
    }
}
