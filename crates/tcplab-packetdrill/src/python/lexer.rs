//! Tokens of a block: `#` comments and `\` continuations dropped,
//! newlines kept as statement separators outside brackets.

use super::PyError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum PTok {
    Name(String),
    Int(i128),
    Float(f64),
    Str(String),
    Op(Punct),
    Newline,
    End,
}

/// An operator or delimiter token.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Punct {
    PowAssign,
    FloorDivAssign,
    ShrAssign,
    ShlAssign,
    Pow,
    FloorDiv,
    Shl,
    Shr,
    Le,
    Ge,
    EqEq,
    Ne,
    AddAssign,
    SubAssign,
    MulAssign,
    DivAssign,
    ModAssign,
    AndAssign,
    OrAssign,
    XorAssign,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Lt,
    Gt,
    Assign,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Colon,
    Semi,
    Pipe,
    Amp,
    Caret,
    Tilde,
    Dot,
    LBrace,
    RBrace,
}

/// Every operator's text, longest first so that `**=` is not lexed as
/// `**` and `=`.
const PUNCTS: &[(&str, Punct)] = &[
    ("**=", Punct::PowAssign),
    ("//=", Punct::FloorDivAssign),
    (">>=", Punct::ShrAssign),
    ("<<=", Punct::ShlAssign),
    ("**", Punct::Pow),
    ("//", Punct::FloorDiv),
    ("<<", Punct::Shl),
    (">>", Punct::Shr),
    ("<=", Punct::Le),
    (">=", Punct::Ge),
    ("==", Punct::EqEq),
    ("!=", Punct::Ne),
    ("+=", Punct::AddAssign),
    ("-=", Punct::SubAssign),
    ("*=", Punct::MulAssign),
    ("/=", Punct::DivAssign),
    ("%=", Punct::ModAssign),
    ("&=", Punct::AndAssign),
    ("|=", Punct::OrAssign),
    ("^=", Punct::XorAssign),
    ("+", Punct::Plus),
    ("-", Punct::Minus),
    ("*", Punct::Star),
    ("/", Punct::Slash),
    ("%", Punct::Percent),
    ("<", Punct::Lt),
    (">", Punct::Gt),
    ("=", Punct::Assign),
    ("(", Punct::LParen),
    (")", Punct::RParen),
    ("[", Punct::LBracket),
    ("]", Punct::RBracket),
    (",", Punct::Comma),
    (":", Punct::Colon),
    (";", Punct::Semi),
    ("|", Punct::Pipe),
    ("&", Punct::Amp),
    ("^", Punct::Caret),
    ("~", Punct::Tilde),
    (".", Punct::Dot),
    ("{", Punct::LBrace),
    ("}", Punct::RBrace),
];

impl Punct {
    pub(super) fn as_str(self) -> &'static str {
        PUNCTS.iter().find(|(_, p)| *p == self).map_or("", |(s, _)| s)
    }
}

/// As the operator's text in quotes: syntax errors print tokens with
/// `{:?}` (`invalid syntax near Op(":")`).
impl std::fmt::Debug for Punct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Tokenizes a block: `#` comments, `\` continuation, newlines are
/// statement separators outside brackets, indentation is ignored.
pub(super) fn lex(src: &str) -> Result<Vec<PTok>, PyError> {
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
        let Some(&(text, op)) = PUNCTS.iter().find(|(text, _)| rest.starts_with(text)) else {
            return Err(PyError::exc("SyntaxError", format!("invalid character '{c}'")));
        };
        match op {
            Punct::LParen | Punct::LBracket | Punct::LBrace => depth += 1,
            Punct::RParen | Punct::RBracket | Punct::RBrace => depth -= 1,
            _ => {}
        }
        out.push(PTok::Op(op));
        i += text.chars().count();
    }
    out.push(PTok::Newline);
    out.push(PTok::End);
    Ok(out)
}
