//! Tokenizer for the packetdrill script language.
//!
//! Follows the token classes of packetdrill's `lexer.l`: newlines are plain
//! whitespace (the grammar delimits statements by itself), `//` and `/* */`
//! are comments, `--name[=value]` header options, `` `...` `` shell
//! commands and `%{ ... }%` Python blocks are single tokens whose text is
//! kept verbatim. Keywords (`ack`, `win`, `mss`, `TS`, ...) are ordinary
//! words; the parser gives them meaning by position.
//!
//! Every token carries the 1-based line and column of its first character.
//! The lexer never panics; malformed input yields a [`LexError`].

use std::fmt;

/// Kinds of tokens.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Decimal integer, possibly negative (`-1`).
    Int(i64),
    /// Hexadecimal integer (`0x2`).
    Hex(i64),
    /// A decimal with a fraction (`.1`, `0.100`). The value is kept in
    /// microseconds-exact form by the parser from `text`.
    Float,
    /// Identifier-like word: `[A-Za-z_][A-Za-z0-9_]*`.
    Word(String),
    /// Double-quoted string.
    Str(String),
    /// `--name` or `--name=value` (only valid before the first event).
    Opt {
        name: String,
        value: Option<String>,
    },
    /// `` `shell command` `` (verbatim, may span lines).
    BackQuoted(String),
    /// `%{ python }%` (verbatim, may span lines).
    Code(String),
    /// `...`
    Ellipsis,
    /// Single punctuation character: `+ - * ~ < > . : ( ) [ ] { } , = |`.
    Punct(char),
    Eof,
}

/// A token with its position and source text.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
    /// The characters the token was made from (for error messages and
    /// exact decimal parsing).
    pub text: String,
}

/// A lexical error at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

struct Cursor<'a> {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
    _src: &'a str,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek_at(i) == Some(c))
    }
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits a whole script into tokens, ending with [`Tok::Eof`].
pub fn tokenize(src: &str) -> Result<Vec<Token>, LexError> {
    let mut c = Cursor { chars: src.chars().collect(), pos: 0, line: 1, col: 1, _src: src };
    let mut out = Vec::new();
    loop {
        // Whitespace and comments.
        loop {
            match c.peek() {
                Some(ch) if ch.is_whitespace() => {
                    c.bump();
                }
                Some('/') if c.peek_at(1) == Some('/') => {
                    while let Some(ch) = c.peek() {
                        if ch == '\n' {
                            break;
                        }
                        c.bump();
                    }
                }
                Some('/') if c.peek_at(1) == Some('*') => {
                    let (l, co) = (c.line, c.col);
                    c.bump();
                    c.bump();
                    loop {
                        if c.starts_with("*/") {
                            c.bump();
                            c.bump();
                            break;
                        }
                        if c.bump().is_none() {
                            return Err(LexError { line: l, col: co, message: "unterminated /* comment".into() });
                        }
                    }
                }
                _ => break,
            }
        }
        let (line, col, start) = (c.line, c.col, c.pos);
        let Some(ch) = c.peek() else {
            out.push(Token { tok: Tok::Eof, line, col, text: String::new() });
            return Ok(out);
        };
        let tok = if c.starts_with("%{") {
            c.bump();
            c.bump();
            let body_start = c.pos;
            loop {
                if c.starts_with("}%") {
                    break;
                }
                if c.bump().is_none() {
                    return Err(LexError { line, col, message: "unterminated %{ code block (missing }%)".into() });
                }
            }
            let body: String = c.chars[body_start..c.pos].iter().collect();
            c.bump();
            c.bump();
            Tok::Code(body)
        } else if ch == '`' {
            c.bump();
            let body_start = c.pos;
            loop {
                match c.peek() {
                    Some('`') => break,
                    Some(_) => {
                        c.bump();
                    }
                    None => {
                        return Err(LexError {
                            line,
                            col,
                            message: "unterminated ` command (missing closing `)".into(),
                        })
                    }
                }
            }
            let body: String = c.chars[body_start..c.pos].iter().collect();
            c.bump();
            Tok::BackQuoted(body)
        } else if c.starts_with("--") && c.peek_at(2).is_some_and(is_word_start) {
            c.bump();
            c.bump();
            let mut name = String::new();
            while let Some(ch) = c.peek().filter(|&ch| is_word_char(ch)) {
                name.push(ch);
                c.bump();
            }
            let value = if c.peek() == Some('=') {
                c.bump();
                let mut v = String::new();
                while let Some(ch) = c.peek().filter(|ch| !ch.is_whitespace()) {
                    v.push(ch);
                    c.bump();
                }
                Some(v)
            } else {
                None
            };
            Tok::Opt { name, value }
        } else if c.starts_with("...") {
            c.bump();
            c.bump();
            c.bump();
            Tok::Ellipsis
        } else if ch == '"' {
            c.bump();
            let mut s = String::new();
            loop {
                match c.bump() {
                    Some('"') => break,
                    Some('\\') => match c.bump() {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some(o) => s.push(o),
                        None => return Err(LexError { line, col, message: "unterminated string".into() }),
                    },
                    Some(o) => s.push(o),
                    None => return Err(LexError { line, col, message: "unterminated string".into() }),
                }
            }
            Tok::Str(s)
        } else if ch.is_ascii_digit()
            || (ch == '.' && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
            || (ch == '-' && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
        {
            lex_number(&mut c, line, col)?
        } else if is_word_start(ch) {
            let mut w = String::new();
            while let Some(ch) = c.peek().filter(|&ch| is_word_char(ch)) {
                w.push(ch);
                c.bump();
            }
            Tok::Word(w)
        } else if "+-*~<>.:()[]{},=|".contains(ch) {
            c.bump();
            Tok::Punct(ch)
        } else {
            return Err(LexError { line, col, message: format!("unexpected character '{ch}'") });
        };
        let text: String = c.chars[start..c.pos].iter().collect();
        out.push(Token { tok, line, col, text });
    }
}

fn lex_number(c: &mut Cursor<'_>, line: u32, col: u32) -> Result<Tok, LexError> {
    let neg = c.peek() == Some('-');
    if neg {
        c.bump();
    }
    if c.peek() == Some('0') && matches!(c.peek_at(1), Some('x') | Some('X')) {
        c.bump();
        c.bump();
        let mut digits = String::new();
        while let Some(d) = c.peek().filter(|d| d.is_ascii_hexdigit()) {
            digits.push(d);
            c.bump();
        }
        let v = i64::from_str_radix(&digits, 16).map_err(|_| LexError {
            line,
            col,
            message: format!("bad hexadecimal number 0x{digits}"),
        })?;
        return Ok(Tok::Hex(if neg { -v } else { v }));
    }
    let mut int_digits = String::new();
    while let Some(d) = c.peek().filter(|d| d.is_ascii_digit()) {
        int_digits.push(d);
        c.bump();
    }
    if c.peek() == Some('.') && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
        c.bump();
        while c.peek().is_some_and(|d| d.is_ascii_digit()) {
            c.bump();
        }
        return Ok(Tok::Float);
    }
    let v: i64 = int_digits.parse().map_err(|_| LexError {
        line,
        col,
        message: format!("integer out of range: {int_digits}"),
    })?;
    Ok(Tok::Int(if neg { -v } else { v }))
}

/// Converts the text of a non-negative decimal (`.1`, `0.004`, `3`) to
/// microseconds exactly (digits beyond the sixth decimal are rounded
/// half-up). packetdrill multiplies a C `double` by 1e6 and truncates,
/// which can lose 1 µs; the exact form is used here so that `0.57` is
/// 570000 µs and not 569999.
pub fn decimal_to_usecs(text: &str) -> Option<i64> {
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    if !int_part.chars().all(|c| c.is_ascii_digit()) || !frac_part.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = if int_part.is_empty() { 0 } else { int_part.parse().ok()? };
    let mut frac = String::from(frac_part);
    let round_up = frac.len() > 6 && frac.as_bytes()[6] >= b'5';
    frac.truncate(6);
    while frac.len() < 6 {
        frac.push('0');
    }
    let micros: i64 = frac.parse().ok()?;
    secs.checked_mul(1_000_000)?.checked_add(micros + round_up as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn test_lex_packet_line() {
        let k = kinds("+.1 < S. 0:0(0) ack 1 <mss 1000,nop>");
        assert_eq!(k[0], Tok::Punct('+'));
        assert_eq!(k[1], Tok::Float);
        assert_eq!(k[2], Tok::Punct('<'));
        assert_eq!(k[3], Tok::Word("S".into()));
        assert_eq!(k[4], Tok::Punct('.'));
        assert_eq!(k[5], Tok::Int(0));
        assert_eq!(k[6], Tok::Punct(':'));
    }

    #[test]
    fn test_lex_ellipsis_after_integer() {
        let k = kinds("+0...0.010 connect");
        assert_eq!(
            k,
            vec![Tok::Punct('+'), Tok::Int(0), Tok::Ellipsis, Tok::Float, Tok::Word("connect".into()), Tok::Eof]
        );
    }

    #[test]
    fn test_lex_comments_code_command_option() {
        let k = kinds("--tolerance_usecs=7000 // c\n/* x\ny */ `a\nb` %{ x = 1 }% -1 0x1f");
        assert_eq!(k[0], Tok::Opt { name: "tolerance_usecs".into(), value: Some("7000".into()) });
        assert_eq!(k[1], Tok::BackQuoted("a\nb".into()));
        assert_eq!(k[2], Tok::Code(" x = 1 ".into()));
        assert_eq!(k[3], Tok::Int(-1));
        assert_eq!(k[4], Tok::Hex(31));
    }

    #[test]
    fn test_lex_positions() {
        let t = tokenize("0 socket\n  +0 x").unwrap();
        assert_eq!((t[1].line, t[1].col), (1, 3));
        assert_eq!((t[2].line, t[2].col), (2, 3));
    }

    #[test]
    fn test_lex_unterminated_code_reports_start() {
        let e = tokenize("\n  %{ x").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
    }

    #[test]
    fn test_decimal_to_usecs_exact() {
        assert_eq!(decimal_to_usecs(".1"), Some(100_000));
        assert_eq!(decimal_to_usecs("0.57"), Some(570_000));
        assert_eq!(decimal_to_usecs("3"), Some(3_000_000));
        assert_eq!(decimal_to_usecs("0.0000015"), Some(2));
    }
}
