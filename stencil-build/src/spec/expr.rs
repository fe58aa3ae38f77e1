//! The expression language of `[[update]] expr`: a small arithmetic grammar
//! parsed into a syntax tree whose nodes keep their byte span in the string.
//!
//! ```text
//! expr    := term (("+" | "-") term)*
//! term    := unary (("*" | "/") unary)*
//! unary   := ("-" | "+") unary | power
//! power   := primary ("^" unary)?
//! primary := number | "(" expr ")"
//!          | name                              parameter, constant, sum index
//!          | name "(" expr ("," expr)* ")"     function call, sum(...)
//!          | name ("." "prev")? "[" expr ("," expr)* "]"
//!                                              field read or table entry
//! ```

use std::ops::Range;

/// Deepest nesting accepted; deeper input is an error, never a stack overflow.
pub const MAX_DEPTH: usize = 200;

/// Tallest syntax tree accepted (a chain of n `+` is n levels): what the
/// later passes, which walk the tree recursively, may have to descend.
pub const MAX_HEIGHT: usize = 1000;

/// A syntax-tree node and the bytes of the expression it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What the node is.
    pub kind: Kind,
    /// Byte range in the expression string.
    pub span: Range<usize>,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^` (integer powers only; checked when lowering)
    Pow,
}

/// Node kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A literal; `integer` is set when it was written without `.` or exponent.
    Number {
        /// Its value.
        value: f64,
        /// Its value when written as an integer.
        integer: Option<i64>,
    },
    /// A bare name.
    Name(String),
    /// `name[..]` or `name.prev[..]`.
    Index {
        /// The indexed name.
        name: String,
        /// Span of the name alone.
        name_span: Range<usize>,
        /// Whether `.prev` was written.
        prev: bool,
        /// The indices.
        args: Vec<Node>,
    },
    /// `name(..)`.
    Call {
        /// The function.
        name: String,
        /// Span of the name alone.
        name_span: Range<usize>,
        /// The arguments.
        args: Vec<Node>,
    },
    /// Unary minus.
    Neg(Box<Node>),
    /// A binary operation.
    Binary(BinOp, Box<Node>, Box<Node>),
}

/// A syntax error in an expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// Byte range in the expression string.
    pub span: Range<usize>,
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub hint: Option<String>,
}

/// Parses a whole expression.
pub fn parse(text: &str) -> Result<Node, ParseError> {
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
        len: text.len(),
    };
    let node = p.expr()?;
    match p.peek() {
        None => Ok(node),
        Some(t) => Err(p.error_at(
            t.span.clone(),
            format!("unexpected `{}` after the expression", t.text(text)),
            None,
        )),
    }
}

/// Levels of `node`'s tree, counted without recursion.
fn height(node: &Node) -> usize {
    let mut tallest = 0;
    let mut stack = vec![(node, 1)];
    while let Some((n, level)) = stack.pop() {
        tallest = tallest.max(level);
        match &n.kind {
            Kind::Number { .. } | Kind::Name(_) => {}
            Kind::Index { args, .. } | Kind::Call { args, .. } => {
                stack.extend(args.iter().map(|a| (a, level + 1)));
            }
            Kind::Neg(a) => stack.push((a, level + 1)),
            Kind::Binary(_, a, b) => stack.extend([(&**a, level + 1), (&**b, level + 1)]),
        }
    }
    tallest
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64, Option<i64>),
    Ident(String),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Range<usize>,
}

impl Token {
    fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.span.clone()]
    }
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = if c.is_ascii_digit()
            || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i = number_end(bytes, i);
            number(&text[start..i], start..i)?
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(text[start..i].to_string())
        } else if b"+-*/^()[],.".contains(&c) {
            i += 1;
            Tok::Punct(c as char)
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            let hint = match ch {
                '{' | '}' => Some("group with parentheses `( )`".to_string()),
                '%' => {
                    Some("there is no `%`; periodic boundaries are set in [boundary]".to_string())
                }
                _ => None,
            };
            return Err(ParseError {
                span: i..i + ch.len_utf8(),
                message: format!("unexpected character `{ch}`"),
                hint,
            });
        };
        tokens.push(Token {
            tok,
            span: start..i,
        });
    }
    Ok(tokens)
}

fn number_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            i = j;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

fn number(text: &str, span: Range<usize>) -> Result<Tok, ParseError> {
    let bad = || ParseError {
        span: span.clone(),
        message: format!("`{text}` is not a number"),
        hint: Some("write numbers like `2`, `0.5`, `1e-3` or `2.5E+2`".into()),
    };
    let value: f64 = text.parse().map_err(|_| bad())?;
    if !value.is_finite() {
        return Err(bad());
    }
    let integer = if text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    };
    Ok(Tok::Num(value, integer))
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    len: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_punct(&self, c: char) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(p), .. }) if *p == c)
    }

    fn error_at(&self, span: Range<usize>, message: String, hint: Option<&str>) -> ParseError {
        ParseError {
            span,
            message,
            hint: hint.map(str::to_string),
        }
    }

    fn end_span(&self) -> Range<usize> {
        self.len..self.len
    }

    fn expect(&mut self, c: char, what: &str) -> Result<Range<usize>, ParseError> {
        if self.peek_punct(c) {
            self.pos += 1;
            return Ok(self.tokens[self.pos - 1].span.clone());
        }
        let span = self.peek().map_or(self.end_span(), |t| t.span.clone());
        Err(self.error_at(span, format!("expected `{c}` {what}"), None))
    }

    fn nested<T>(
        &mut self,
        at: usize,
        f: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(
                at..at + 1,
                format!("expression nested more than {MAX_DEPTH} levels deep"),
                Some("split it into several [[update]] statements with temp fields"),
            ));
        }
        let out = f(self);
        self.depth -= 1;
        out
    }

    /// A left-associative chain of `ops`. Its tree grows one level per
    /// operator, so its height is checked as it grows: no tree taller than
    /// [`MAX_HEIGHT`] is ever built (or dropped, which recurses too).
    fn binary_loop(
        &mut self,
        ops: &[(char, BinOp)],
        operand: fn(&mut Self) -> Result<Node, ParseError>,
    ) -> Result<Node, ParseError> {
        let mut lhs = operand(self)?;
        let mut tall = height(&lhs);
        while let Some(&(_, op)) = ops.iter().find(|(c, _)| self.peek_punct(*c)) {
            self.pos += 1;
            let rhs = operand(self)?;
            tall = tall.max(height(&rhs)) + 1;
            if self.depth + tall > MAX_HEIGHT {
                return Err(self.error_at(
                    rhs.span,
                    format!("expression more than {MAX_HEIGHT} operations deep"),
                    Some("sum terms with `sum(r, lo, hi, ...)`, or split the expression into several [[update]] statements with temp fields"),
                ));
            }
            let span = lhs.span.start..rhs.span.end;
            lhs = Node {
                kind: Kind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        let at = self.peek().map_or(self.len, |t| t.span.start);
        self.nested(at, |p| {
            p.binary_loop(&[('+', BinOp::Add), ('-', BinOp::Sub)], Self::term)
        })
    }

    fn term(&mut self) -> Result<Node, ParseError> {
        self.binary_loop(&[('*', BinOp::Mul), ('/', BinOp::Div)], Self::unary)
    }

    fn unary(&mut self) -> Result<Node, ParseError> {
        let start = self.peek().map_or(self.len, |t| t.span.start);
        if self.peek_punct('-') || self.peek_punct('+') {
            let neg = self.peek_punct('-');
            self.pos += 1;
            let inner = self.nested(start, Self::unary)?;
            if !neg {
                return Ok(inner);
            }
            let span = start..inner.span.end;
            return Ok(Node {
                kind: Kind::Neg(Box::new(inner)),
                span,
            });
        }
        self.power()
    }

    fn power(&mut self) -> Result<Node, ParseError> {
        let base = self.primary()?;
        if !self.peek_punct('^') {
            return Ok(base);
        }
        self.pos += 1;
        let at = self.peek().map_or(self.len, |t| t.span.start);
        let exponent = self.nested(at, Self::unary)?;
        let span = base.span.start..exponent.span.end;
        Ok(Node {
            kind: Kind::Binary(BinOp::Pow, Box::new(base), Box::new(exponent)),
            span,
        })
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.error_at(
                self.end_span(),
                "the expression ends too early".into(),
                Some("complete the expression"),
            ));
        };
        self.pos += 1;
        match token.tok {
            Tok::Num(value, integer) => Ok(Node {
                kind: Kind::Number { value, integer },
                span: token.span,
            }),
            Tok::Punct('(') => {
                let inner = self.expr()?;
                let close = self.expect(')', "to close this parenthesis")?;
                Ok(Node {
                    kind: inner.kind,
                    span: token.span.start..close.end,
                })
            }
            Tok::Ident(name) => self.after_name(name, token.span),
            Tok::Punct(c) => {
                Err(self.error_at(token.span, format!("expected a value, found `{c}`"), None))
            }
        }
    }

    fn after_name(&mut self, name: String, name_span: Range<usize>) -> Result<Node, ParseError> {
        let prev = self.peek_punct('.');
        if prev {
            self.pos += 1;
            match self.peek().cloned() {
                Some(Token {
                    tok: Tok::Ident(p), ..
                }) if p == "prev" => self.pos += 1,
                other => {
                    let span = other.map_or(self.end_span(), |t| t.span);
                    return Err(self.error_at(
                        span,
                        "expected `prev` after `.`".into(),
                        Some("the previous time level is read as `u.prev[0,0]`"),
                    ));
                }
            }
            if !self.peek_punct('[') {
                let span = self.peek().map_or(self.end_span(), |t| t.span.clone());
                return Err(self.error_at(
                    span,
                    format!("expected `[` after `{name}.prev`"),
                    Some("write offsets, e.g. `u.prev[0,0]`"),
                ));
            }
        }
        let (open, close, is_index) = if self.peek_punct('[') {
            ('[', ']', true)
        } else if self.peek_punct('(') {
            ('(', ')', false)
        } else {
            return Ok(Node {
                kind: Kind::Name(name),
                span: name_span,
            });
        };
        let start = name_span.start;
        let open_span = self.expect(open, "")?;
        let args = self.nested(open_span.start, |p| p.arguments(close))?;
        let end = self.tokens[self.pos - 1].span.end;
        let kind = if is_index {
            Kind::Index {
                name,
                name_span,
                prev,
                args,
            }
        } else {
            Kind::Call {
                name,
                name_span,
                args,
            }
        };
        Ok(Node {
            kind,
            span: start..end,
        })
    }

    fn arguments(&mut self, close: char) -> Result<Vec<Node>, ParseError> {
        let mut args = Vec::new();
        if self.peek_punct(close) {
            self.pos += 1;
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.peek_punct(',') {
                self.pos += 1;
                continue;
            }
            self.expect(close, "or `,` in this list")?;
            return Ok(args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(n: &Node) -> String {
        match &n.kind {
            Kind::Number { value, .. } => format!("{value}"),
            Kind::Name(s) => s.clone(),
            Kind::Index {
                name, prev, args, ..
            } => {
                let a: Vec<_> = args.iter().map(show).collect();
                format!(
                    "{name}{}[{}]",
                    if *prev { ".prev" } else { "" },
                    a.join(",")
                )
            }
            Kind::Call { name, args, .. } => {
                let a: Vec<_> = args.iter().map(show).collect();
                format!("{name}({})", a.join(","))
            }
            Kind::Neg(x) => format!("(-{})", show(x)),
            Kind::Binary(op, a, b) => format!("({} {op:?} {})", show(a), show(b)),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let n = parse("a - b - c * d / e + -f ^ 2").unwrap();
        assert_eq!(
            show(&n),
            "(((a Sub b) Sub ((c Mul d) Div e)) Add (-(f Pow 2)))"
        );
    }

    #[test]
    fn reads_calls_and_numbers() {
        let n = parse("u.prev[0, -1] + sum(r, 1, 4, c[r]*u[0,r]) + 1.5e-3 + .5 + 2E2").unwrap();
        assert_eq!(
            show(&n),
            "((((u.prev[0,(-1)] Add sum(r,1,4,(c[r] Mul u[0,r]))) Add 0.0015) Add 0.5) Add 200)"
        );
    }

    #[test]
    fn spans_point_at_the_source() {
        let text = "alpha * u[0,1]";
        let n = parse(text).unwrap();
        let Kind::Binary(_, _, rhs) = &n.kind else {
            panic!()
        };
        assert_eq!(&text[rhs.span.clone()], "u[0,1]");
        assert_eq!(n.span, 0..text.len());
    }

    #[test]
    fn errors_are_located() {
        let e = parse("u[0,0] + * 2").unwrap_err();
        assert_eq!(
            (e.span, e.message.as_str()),
            (9..10, "expected a value, found `*`")
        );
        let e = parse("(u[0] + 1").unwrap_err();
        assert_eq!(
            (e.span, e.message.as_str()),
            (9..9, "expected `)` to close this parenthesis")
        );
        let e = parse("u[0] $ 1").unwrap_err();
        assert_eq!(e.span, 5..6);
        let e = parse("u.next[0]").unwrap_err();
        assert_eq!(e.span, 2..6);
        let e = parse("1 2").unwrap_err();
        assert_eq!(e.message, "unexpected `2` after the expression");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        for text in [
            "(".repeat(100_000) + "1",
            "-".repeat(100_000) + "1",
            "2^".repeat(100_000) + "1",
        ] {
            let e = parse(&text).unwrap_err();
            assert!(e.message.contains("nested more than"), "{}", e.message);
        }
        let ok = "(".repeat(50) + "1" + &")".repeat(50);
        assert!(parse(&ok).is_ok());
    }
}
