//! Recursive-descent parser for packetdrill scripts, after the grammar of
//! packetdrill's `parser.y`:
//!
//! ```text
//! script   := option* [command] event* [command]
//! event    := time action
//! time     := '*' | ['+'] num ['~' ['+'] num]
//! action   := packet | syscall | command | code
//! packet   := ('<'|'>') ['[' ip_info ']'] (tcp | icmp)
//! tcp      := flags seq ['ack' N] ['win' N]
//!             ['urg' N] ['<' ('...' | tcp_option (',' tcp_option)*) '>']
//! icmp     := 'icmp' type [code] ['mtu' N] ['id' N]
//!             ['[' (seq | 'udp' '(' N ')' | 'raw' '(' N ')') ']']
//! seq      := N ':' N '(' N ')'
//! syscall  := ['...' num] name '(' [expr (',' expr)*] ')' '=' expr
//!             [ERRNO '(' words ')'] ['(' words ')']
//! expr     := atom ('|' atom)* ; atom := '...' | N | WORD ['=' expr]
//!             | WORD '(' exprs ')' ['=' expr] | STRING | '[' exprs ']'
//!             | '{' exprs '}'
//! ```
//!
//! Semantic rules of `parser.y` are enforced here too: a time range, `*`
//! and `<...>`-options only for outbound packets, `end = start + len` in
//! `seq`, value ranges of option fields. Errors carry line and column.

use crate::ast::*;
use crate::lexer::{decimal_to_usecs, tokenize, Tok, Token};
use std::fmt;

/// A parse or semantic error at a script position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

/// How deep an expression may nest: brackets, braces, calls, `NAME=`
/// assignments, and operands of one `|` chain each count one level.
/// Linux's scripts nest 3 deep at most; the bound keeps the recursive
/// parser, and the recursive walks and drop of the tree it builds, within
/// a thread's stack on hostile input (10,000 brackets overflowed it).
pub const MAX_EXPR_DEPTH: u32 = 100;

/// Parses a script.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    let toks = tokenize(src).map_err(|e| ParseError { line: e.line, col: e.col, message: e.message })?;
    let mut p = Parser { toks, pos: 0, depth: 0 };
    p.script()
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Expression nesting at the current position ([`MAX_EXPR_DEPTH`]).
    /// Not restored on errors: the first error ends the parse.
    depth: u32,
}

type PResult<T> = Result<T, ParseError>;

impl Parser {
    fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn peek_tok(&self) -> &Tok {
        &self.peek().tok
    }
    fn peek2(&self) -> &Tok {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)].tok
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn err_at<T>(&self, t: &Token, msg: impl Into<String>) -> PResult<T> {
        let shown = if t.tok == Tok::Eof { "end of file".to_string() } else { t.text.clone() };
        Err(ParseError { line: t.line, col: t.col, message: format!("parse error at '{}': {}", shown, msg.into()) })
    }
    fn semantic<T>(&self, line: u32, col: u32, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError { line, col, message: format!("semantic error: {}", msg.into()) })
    }
    fn is_punct(&self, c: char) -> bool {
        *self.peek_tok() == Tok::Punct(c)
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.next();
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char, what: &str) -> PResult<Token> {
        if self.is_punct(c) {
            Ok(self.next())
        } else {
            let t = self.peek().clone();
            self.err_at(&t, format!("expected '{c}' {what}"))
        }
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek_tok(), Tok::Word(x) if x == w)
    }
    fn expect_word(&mut self, w: &str) -> PResult<Token> {
        if self.is_word(w) {
            Ok(self.next())
        } else {
            let t = self.peek().clone();
            self.err_at(&t, format!("expected '{w}'"))
        }
    }
    /// A non-negative integer (decimal or hex) that fits `max`.
    fn uint(&mut self, what: &str, max: u64) -> PResult<u64> {
        let t = self.next();
        let v = match t.tok {
            Tok::Int(v) | Tok::Hex(v) => v,
            _ => return self.err_at(&t, format!("expected {what} (an integer)")),
        };
        if v < 0 || v as u64 > max {
            return self.semantic(t.line, t.col, format!("{what} out of range"));
        }
        Ok(v as u64)
    }

    /// `word N` if the next token is `word`: N within `max`.
    fn keyed_uint(&mut self, word: &str, what: &str, max: u64) -> PResult<Option<u64>> {
        if !self.is_word(word) {
            return Ok(None);
        }
        self.next();
        self.uint(what, max).map(Some)
    }
    /// `start:end(len)`, with `end = start + len` (parser.y's `seq`).
    fn seq_range(&mut self) -> PResult<(u32, u32, u32)> {
        let st = self.peek().clone();
        let seq = self.uint("TCP start sequence number", u32::MAX as u64)? as u32;
        self.expect_punct(':', "in sequence range start:end(len)")?;
        let end_seq = self.uint("TCP end sequence number", u32::MAX as u64)? as u32;
        self.expect_punct('(', "before the payload length")?;
        let payload = self.uint("TCP payload size", u16::MAX as u64)? as u32;
        self.expect_punct(')', "after the payload length")?;
        if end_seq != seq.wrapping_add(payload) {
            return self.semantic(st.line, st.col, "inconsistent TCP sequence numbers and payload size");
        }
        Ok((seq, end_seq, payload))
    }

    fn script(&mut self) -> PResult<Script> {
        let mut options = Vec::new();
        while let Tok::Opt { name, value } = self.peek_tok().clone() {
            let t = self.next();
            options.push(HeaderOption { line: t.line, name, value });
        }
        let init_command = if let Tok::BackQuoted(text) = self.peek_tok().clone() {
            let t = self.next();
            Some(Command { line: t.line, text })
        } else {
            None
        };
        let mut events = Vec::new();
        let mut cleanup_command = None;
        loop {
            match self.peek_tok().clone() {
                Tok::Eof => break,
                Tok::BackQuoted(text) => {
                    let t = self.next();
                    cleanup_command = Some(Command { line: t.line, text });
                    let after = self.peek().clone();
                    if after.tok != Tok::Eof {
                        return self.err_at(&after, "expected end of script after the cleanup command");
                    }
                    break;
                }
                Tok::Opt { .. } => {
                    let t = self.peek().clone();
                    return self.err_at(&t, "options must come before the first event");
                }
                _ => events.push(self.event()?),
            }
        }
        Ok(Script { options, init_command, events, cleanup_command })
    }

    fn time_value(&mut self) -> PResult<i64> {
        let t = self.next();
        match t.tok {
            Tok::Int(v) if v >= 0 => match v.checked_mul(1_000_000) {
                Some(us) => Ok(us),
                None => self.semantic(t.line, t.col, "time out of range"),
            },
            Tok::Int(_) => self.semantic(t.line, t.col, "negative time"),
            Tok::Float => match decimal_to_usecs(&t.text) {
                Some(us) => Ok(us),
                None => self.err_at(&t, "bad time"),
            },
            _ => self.err_at(&t, "expected a time"),
        }
    }

    fn event_time(&mut self) -> PResult<(EventTime, Token)> {
        let first = self.peek().clone();
        if self.eat_punct('*') {
            return Ok((EventTime::Any, first));
        }
        if self.eat_punct('+') {
            let a = self.time_value()?;
            if self.eat_punct('~') {
                self.expect_punct('+', "after '~' in a relative time range")?;
                let b = self.time_value()?;
                return Ok((EventTime::RelativeRange(a, b), first));
            }
            return Ok((EventTime::Relative(a), first));
        }
        match first.tok {
            Tok::Int(_) | Tok::Float => {}
            _ => return self.err_at(&first, "expected an event time (e.g. 0.100, +.1, *)"),
        }
        let a = self.time_value()?;
        if self.eat_punct('~') {
            let b = self.time_value()?;
            return Ok((EventTime::AbsoluteRange(a, b), first));
        }
        Ok((EventTime::Absolute(a), first))
    }

    fn event(&mut self) -> PResult<Event> {
        let (time, tt) = self.event_time()?;
        let line = tt.line;
        let at = self.peek().clone();
        let action = match at.tok.clone() {
            Tok::Punct('<') | Tok::Punct('>') => self.packet()?,
            Tok::BackQuoted(text) => {
                self.next();
                Action::Command(Command { line: at.line, text })
            }
            Tok::Code(text) => {
                self.next();
                Action::Code(CodeBlock { text, text_line: at.line })
            }
            Tok::Ellipsis | Tok::Word(_) => Action::Syscall(self.syscall()?),
            _ => return self.err_at(&at, "expected a packet, system call, `command` or %{ code }%"),
        };
        if let EventTime::RelativeRange(a, b) | EventTime::AbsoluteRange(a, b) = time {
            if b < a {
                return self.semantic(line, tt.col, "time range is backwards");
            }
        }
        let outbound = matches!(
            &action,
            Action::Packet(PacketSpec { direction: Direction::Outbound, .. })
                | Action::Icmp(IcmpSpec { direction: Direction::Outbound, .. })
        );
        match time {
            EventTime::Any if !outbound => {
                return self.semantic(line, tt.col, "event time <star> can only be used with outbound packets")
            }
            EventTime::AbsoluteRange(..) | EventTime::RelativeRange(..) if !outbound => {
                return self.semantic(line, tt.col, "event time range can only be used with outbound packets")
            }
            _ => {}
        }
        Ok(Event { line, time, action })
    }

    fn packet(&mut self) -> PResult<Action> {
        let dt = self.next();
        let direction = if dt.tok == Tok::Punct('<') { Direction::Inbound } else { Direction::Outbound };
        let ip = if self.is_punct('[') || self.is_punct('(') { Some(self.ip_info(direction)?) } else { None };
        if self.is_word("icmp") {
            self.next();
            return Ok(Action::Icmp(self.icmp(direction, ip)?));
        }
        if matches!(self.peek_tok(), Tok::Int(_)) && *self.peek2() == Tok::Punct('>') {
            let t = self.peek().clone();
            return self.err_at(&t, "explicit port numbers (src>dst) are not supported");
        }
        // flags := WORD ['.'] | '.' | '-'
        let ft = self.peek().clone();
        let flags = match ft.tok.clone() {
            Tok::Word(w) => {
                self.next();
                let mut f = w;
                if self.eat_punct('.') {
                    f.push('.');
                }
                f
            }
            Tok::Punct('.') => {
                self.next();
                ".".to_string()
            }
            Tok::Punct('-') => {
                self.next();
                String::new()
            }
            _ => return self.err_at(&ft, "expected TCP flags (e.g. S, P., F., R, .)"),
        };
        let flags = match flags.chars().map(|c| PacketFlag::from_letter(c).ok_or(c)).collect() {
            Ok(f) => PacketFlags(f),
            Err(bad) => return self.semantic(ft.line, ft.col, format!("Invalid TCP flag: '{bad}'")),
        };
        let (seq, end_seq, payload) = self.seq_range()?;
        let ack = self.keyed_uint("ack", "TCP ack sequence number", u32::MAX as u64)?.map(|v| v as u32);
        let win = self.keyed_uint("win", "TCP window value", u16::MAX as u64)?.map(|v| v as u16);
        let urg = self.keyed_uint("urg", "urg_ptr value", u16::MAX as u64)?.map(|v| v as u16);
        let options = if self.is_punct('<') {
            let lt = self.next();
            if *self.peek_tok() == Tok::Ellipsis {
                self.next();
                self.expect_punct('>', "after <...")?;
                if direction != Direction::Outbound {
                    return self.semantic(
                        lt.line,
                        lt.col,
                        "<...> for TCP options can only be used with outbound packets",
                    );
                }
                None
            } else {
                let mut v = vec![self.tcp_option()?];
                while self.eat_punct(',') {
                    v.push(self.tcp_option()?);
                }
                self.expect_punct('>', "to close the TCP option list")?;
                Some(v)
            }
        } else {
            Some(Vec::new())
        };
        if let Some(v) = &options {
            let len: usize = v.iter().map(TcpOpt::wire_len).sum();
            if len > 40 {
                return self.semantic(dt.line, dt.col, "TCP option list too long");
            }
            if len & 3 != 0 && !v.iter().any(|o| matches!(o, TcpOpt::Other(_))) {
                return self.semantic(
                    dt.line,
                    dt.col,
                    format!(
                        "TCP options are not padded correctly to ensure TCP header is a multiple of 4 bytes: {} excess bytes",
                        len & 3
                    ),
                );
            }
        }
        if win.is_none() && direction == Direction::Inbound {
            return self.semantic(dt.line, dt.col, "window must be specified for inbound packets");
        }
        Ok(Action::Packet(PacketSpec { direction, ip, flags, seq, end_seq, payload, ack, win, urg, options }))
    }

    /// The rest of an ICMP packet line after `icmp` (`icmp_packet_spec`).
    fn icmp(&mut self, direction: Direction, ip: Option<IpCheck>) -> PResult<IcmpSpec> {
        let tt = self.next();
        let Tok::Word(icmp_type) = tt.tok.clone() else {
            return self.err_at(&tt, "expected an ICMP type (e.g. unreachable)");
        };
        let code = match self.peek_tok() {
            Tok::Word(w) if w != "mtu" && w != "id" => {
                let w = w.clone();
                self.next();
                Some(w)
            }
            _ => None,
        };
        let mtu = self.keyed_uint("mtu", "ICMP MTU", u32::MAX as u64)?.map(|v| v as u32);
        let echo_id = self.keyed_uint("id", "ICMP echo id", u16::MAX as u64)?.map(|v| v as u32);
        let echoed = if self.eat_punct('[') {
            let e = if self.is_word("udp") || self.is_word("raw") {
                let udp = self.is_word("udp");
                self.next();
                self.expect_punct('(', "before the echoed payload length")?;
                let payload = self.uint("echoed payload size", u16::MAX as u64)? as u32;
                self.expect_punct(')', "after the echoed payload length")?;
                if udp {
                    IcmpEchoed::Udp { payload }
                } else {
                    IcmpEchoed::Raw { payload }
                }
            } else {
                let (seq, _, payload) = self.seq_range()?;
                IcmpEchoed::Tcp { seq, payload }
            };
            self.expect_punct(']', "to close the echoed packet")?;
            e
        } else {
            IcmpEchoed::Default
        };
        Ok(IcmpSpec { direction, ip, icmp_type, code, mtu, echo_id, echoed })
    }

    fn ip_info(&mut self, direction: Direction) -> PResult<IpCheck> {
        let open = self.next();
        let close = if open.tok == Tok::Punct('[') { ']' } else { ')' };
        let t = self.next();
        let check = match &t.tok {
            Tok::Word(w) => match w.as_str() {
                "noecn" => IpCheck::Ecn(0),
                "ect1" => IpCheck::Ecn(1),
                "ect0" => IpCheck::Ecn(2),
                "ce" => IpCheck::Ecn(3),
                "ect01" => {
                    if direction != Direction::Outbound {
                        return self.semantic(t.line, t.col, "[ect01] can only be used with outbound packets");
                    }
                    IpCheck::Ect01
                }
                "tos" => IpCheck::Tos(self.uint("tos", 255)? as u8),
                _ => return self.err_at(&t, "expected noecn, ect0, ect1, ect01, ce or tos"),
            },
            _ => return self.err_at(&t, "expected an ECN/TOS annotation"),
        };
        if self.is_punct(',') || !self.is_punct(close) {
            let t = self.peek().clone();
            return self.err_at(&t, "only an ECN/TOS annotation is supported inside [...]");
        }
        self.next();
        Ok(check)
    }

    fn tcp_option(&mut self) -> PResult<TcpOpt> {
        let t = self.next();
        let Tok::Word(w) = &t.tok else {
            return self.err_at(&t, "expected a TCP option (mss, nop, sackOK, wscale, sack, TS, eol)");
        };
        Ok(match w.as_str() {
            "nop" => TcpOpt::Nop,
            "eol" => TcpOpt::Eol,
            "mss" => TcpOpt::Mss(self.uint("mss value", u16::MAX as u64)? as u16),
            "wscale" => TcpOpt::Wscale(self.uint("window scale shift count", 255)? as u8),
            "sackOK" => TcpOpt::SackOk,
            "sack" => {
                let mut blocks = Vec::new();
                while matches!(self.peek_tok(), Tok::Int(_) | Tok::Hex(_)) {
                    let l = self.uint("TCP SACK left sequence number", u32::MAX as u64)? as u32;
                    self.expect_punct(':', "in SACK block left:right")?;
                    let r = self.uint("TCP SACK right sequence number", u32::MAX as u64)? as u32;
                    blocks.push((l, r));
                }
                if blocks.is_empty() {
                    return self.err_at(&t, "sack needs at least one left:right block");
                }
                TcpOpt::Sack(blocks)
            }
            "TS" => {
                self.expect_word("val")?;
                let val = self.uint("ts val", u32::MAX as u64)? as u32;
                self.expect_word("ecr")?;
                let ecr = self.uint("ecr val", u32::MAX as u64)? as u32;
                TcpOpt::Timestamp { val, ecr }
            }
            other => {
                // md5 <hex>, FO <cookie>, FOEXP <cookie>, exp ...: keep the
                // words up to the next ',' or '>' so the script still parses.
                let mut text = other.to_string();
                while !self.is_punct(',') && !self.is_punct('>') && *self.peek_tok() != Tok::Eof {
                    text.push(' ');
                    text.push_str(&self.next().text);
                }
                TcpOpt::Other(text)
            }
        })
    }

    fn syscall(&mut self) -> PResult<SyscallSpec> {
        let end_usecs = if *self.peek_tok() == Tok::Ellipsis {
            self.next();
            Some(self.time_value()?)
        } else {
            None
        };
        let nt = self.next();
        let Tok::Word(name) = nt.tok.clone() else {
            return self.err_at(&nt, "expected a system call name");
        };
        self.expect_punct('(', "after the system call name")?;
        let mut args = Vec::new();
        if !self.eat_punct(')') {
            args.push(self.expr()?);
            while self.eat_punct(',') {
                args.push(self.expr()?);
            }
            self.expect_punct(')', "to close the argument list")?;
        }
        self.expect_punct('=', "before the expected return value")?;
        let result = self.expr()?;
        let mut errno = None;
        let mut note = None;
        if let Tok::Word(w) = self.peek_tok().clone() {
            // opt_errno := WORD note
            if *self.peek2() == Tok::Punct('(') {
                self.next();
                errno = Some(w);
                note = Some(self.note()?);
            }
        }
        if note.is_none() && self.is_punct('(') {
            note = Some(self.note()?);
        }
        Ok(SyscallSpec { end_usecs, name, args, result, errno, note })
    }

    fn note(&mut self) -> PResult<String> {
        self.expect_punct('(', "to open a note")?;
        let mut words = Vec::new();
        loop {
            let t = self.peek().clone();
            match t.tok {
                Tok::Punct(')') => {
                    self.next();
                    break;
                }
                Tok::Eof => return self.err_at(&t, "unterminated note (missing ')')"),
                _ => {
                    self.next();
                    words.push(t.text);
                }
            }
        }
        Ok(words.join(" "))
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let mut e = self.atom()?;
        let mut chain = 0;
        while self.eat_punct('|') {
            // `A|B|C` nests left: each operand is one level deeper.
            self.enter()?;
            chain += 1;
            let r = self.atom()?;
            e = Expr::Or(Box::new(e), Box::new(r));
        }
        self.depth -= 1 + chain;
        Ok(e)
    }

    /// One level deeper into an expression, or an error at the current
    /// token past [`MAX_EXPR_DEPTH`].
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            let t = self.peek().clone();
            return self.err_at(&t, format!("expression nested more than {MAX_EXPR_DEPTH} levels deep"));
        }
        Ok(())
    }

    fn atom(&mut self) -> PResult<Expr> {
        let t = self.next();
        Ok(match t.tok.clone() {
            Tok::Ellipsis => Expr::Ellipsis,
            Tok::Int(v) | Tok::Hex(v) => Expr::Int(v),
            Tok::Word(w) => {
                if self.is_punct('=') && *self.peek2() != Tok::Punct('=') {
                    self.next();
                    let v = self.expr()?;
                    Expr::Assign(w, Box::new(v))
                } else if self.is_punct('(') {
                    // htons(8080), inet_addr("..."): a call-like form; keep
                    // it as a braced list named by the word.
                    self.next();
                    let mut args = Vec::new();
                    if !self.eat_punct(')') {
                        args.push(self.expr()?);
                        while self.eat_punct(',') {
                            args.push(self.expr()?);
                        }
                        self.expect_punct(')', "to close the call")?;
                    }
                    if self.is_punct('=') && *self.peek2() != Tok::Punct('=') {
                        // msghdr's `msg_iov(1)=[...]`: one length, then a value.
                        let eq = self.next();
                        if args.len() != 1 {
                            return self.err_at(&eq, "expected one length in name(len)=value");
                        }
                        let len = args.remove(0);
                        let value = self.expr()?;
                        return Ok(Expr::AssignLen { name: w, len: Box::new(len), value: Box::new(value) });
                    }
                    args.insert(0, Expr::Word(w));
                    Expr::Braced(args)
                } else {
                    Expr::Word(w)
                }
            }
            Tok::Str(s) => {
                if *self.peek_tok() == Tok::Ellipsis {
                    self.next();
                }
                Expr::Str(s)
            }
            Tok::Punct('[') => {
                let mut v = Vec::new();
                if !self.eat_punct(']') {
                    v.push(self.expr()?);
                    while self.eat_punct(',') {
                        v.push(self.expr()?);
                    }
                    self.expect_punct(']', "to close the list")?;
                }
                Expr::List(v)
            }
            Tok::Punct('{') => {
                let mut v = Vec::new();
                if !self.eat_punct('}') {
                    v.push(self.expr()?);
                    while self.eat_punct(',') {
                        v.push(self.expr()?);
                    }
                    self.expect_punct('}', "to close the braces")?;
                }
                Expr::Braced(v)
            }
            _ => return self.err_at(&t, "expected an expression"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_parse_error_has_line_and_column() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0 ack 1").unwrap_err();
        assert_eq!((e.line, e.col), (2, 12));
        assert!(e.message.contains("expected '('"), "{}", e.message);
    }

    #[test]
    fn test_parse_deep_nesting_is_an_error_at_its_line() {
        // 10,000 brackets used to overflow the stack; now an error at the
        // line, on a thread with the default 2 MiB stack of spawned threads.
        let deep = format!(
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, {}1{}, 4) = 0\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let chain = format!("0 fcntl(3, F_SETFL, {}) = 0\n", vec!["O_RDWR"; 100_000].join("|"));
        let (deep, chain) = std::thread::spawn(move || (parse(&deep), parse(&chain))).join().expect("no overflow");
        let e = deep.unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("nested more than 100 levels"), "{e}");
        let e = chain.unwrap_err();
        assert_eq!(e.line, 1, "{e}");
        // At the bound, it parses.
        let ok = format!("0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, {}1{}, 4) = 0", "[".repeat(98), "]".repeat(98));
        assert!(std::thread::spawn(move || parse(&ok).is_ok()).join().expect("no overflow"));
    }

    #[test]
    fn test_parse_huge_time_is_an_error() {
        // Found by fuzzing (fuzz/corpus/packetdrill/regression-time-overflow):
        // seconds were turned into µs with an unchecked multiplication.
        let e = parse("88888888888888888 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3").unwrap_err();
        assert_eq!((e.line, e.col), (1, 1));
        assert!(e.message.contains("time out of range"), "{e}");
        assert!(parse("9223372036854 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3").is_ok());
    }

    #[test]
    fn test_parse_inconsistent_seq_is_semantic_error() {
        let e = parse("0 < . 1:10(5) ack 1 win 100").unwrap_err();
        assert!(e.message.contains("inconsistent TCP sequence numbers"), "{}", e.message);
    }

    #[test]
    fn test_parse_range_only_for_outbound() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+.1~+.2 < . 1:1(0) ack 1 win 10").unwrap_err();
        assert!(e.message.contains("time range can only be used with outbound"), "{}", e.message);
        assert_eq!(e.line, 2);
    }
}
