//! Recursive-descent parser for the FEEL subset in the module documentation.

use serde_json::{Number, Value};

use super::lexer::{Tok, Token, tokenize};
use super::{Arith, BUILTINS, FeelNode, Range, Test, UNSUPPORTED_FUNCTIONS};
use crate::expr::{CmpOp, ExprError, MAX_DEPTH};
use crate::source::Span;

/// Words that end a name: operators and keywords of FEEL.
const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "in",
    "between",
    "instance",
    "of",
    "then",
    "else",
    "satisfies",
    "return",
    "if",
    "for",
    "some",
    "every",
    "true",
    "false",
    "null",
    "function",
    "external",
    "not",
];

/// Parses a FEEL expression (without its leading `=`).
pub(in crate::expr) fn parse(src: &str) -> Result<FeelNode, ExprError> {
    if src.trim().is_empty() {
        return Err(
            ExprError::new("empty FEEL expression", Span::new(0, src.len()))
                .feel()
                .help("write a condition after the `=`, such as `=amount > 100`"),
        );
    }
    let tokens = tokenize(src)?;
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        depth: 0,
        range_end: false,
    };
    let node = p.expression()?;
    let next = p.peek().clone();
    if next.tok != Tok::Eof {
        let help = match &next.tok {
            Tok::RParen => "there is no `(` for this `)`".to_owned(),
            Tok::RBracket => "there is no `[` for this `]`".to_owned(),
            _ => "join conditions with `and` or `or`".to_owned(),
        };
        return Err(p.unexpected(&next).help(help));
    }
    Ok(node)
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Parsing the high end of a range, where `[` closes the range (`[1..10[`) rather
    /// than indexing.
    range_end: bool,
}

fn is_keyword(w: &str) -> bool {
    KEYWORDS.contains(&w)
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at_word(&self, word: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(w) if w == word)
    }

    fn text(&self, span: Span) -> &str {
        self.src.get(span.offset..span.end()).unwrap_or("")
    }

    fn describe(&self, token: &Token) -> String {
        match &token.tok {
            Tok::Eof => "end of expression".to_owned(),
            Tok::Str(_) => "a string".to_owned(),
            _ => format!("`{}`", self.text(token.span)),
        }
    }

    fn unexpected(&self, token: &Token) -> ExprError {
        ExprError::new(format!("unexpected {}", self.describe(token)), token.span).feel()
    }

    fn expect(&mut self, tok: Tok, what: &str) -> Result<Token, ExprError> {
        let t = self.peek().clone();
        if t.tok == tok {
            Ok(self.advance())
        } else {
            Err(self.unexpected(&t).help(format!("expected {what}")))
        }
    }

    fn expect_word(&mut self, word: &str) -> Result<Token, ExprError> {
        if self.at_word(word) {
            Ok(self.advance())
        } else {
            let t = self.peek().clone();
            Err(self.unexpected(&t).help(format!("expected `{word}`")))
        }
    }

    fn enter(&mut self, span: Span) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::new("expression is nested too deeply", span)
                .feel()
                .help(format!("at most {MAX_DEPTH} levels of nesting are allowed")));
        }
        Ok(())
    }

    fn unsupported(&self, span: Span, what: &str) -> ExprError {
        ExprError::new(
            format!("{what} is not supported in cuga-flo's FEEL subset"),
            span,
        )
        .unsupported()
        .help("docs/conditions.md lists the FEEL that cuga-flo evaluates")
    }

    fn expression(&mut self) -> Result<FeelNode, ExprError> {
        let start = self.peek().span;
        self.enter(start)?;
        let outer = std::mem::replace(&mut self.range_end, false);
        let node = self.textual();
        self.range_end = outer;
        self.depth -= 1;
        node
    }

    fn textual(&mut self) -> Result<FeelNode, ExprError> {
        let token = self.peek().clone();
        let Tok::Word(w) = &token.tok else {
            return self.disjunction();
        };
        match w.as_str() {
            "if" => {
                self.advance();
                let c = self.expression()?;
                self.expect_word("then")?;
                let a = self.expression()?;
                self.expect_word("else")?;
                let b = self.expression()?;
                Ok(FeelNode::If(Box::new(c), Box::new(a), Box::new(b)))
            }
            "some" | "every" => {
                let every = w == "every";
                self.advance();
                let mut bindings = Vec::new();
                loop {
                    let name = self.name_only("a name to bind")?;
                    self.expect_word("in")?;
                    let list = self.expression()?;
                    bindings.push((name, list));
                    if self.peek().tok == Tok::Comma {
                        self.advance();
                    } else {
                        break;
                    }
                }
                self.expect_word("satisfies")?;
                let condition = self.expression()?;
                Ok(FeelNode::Quantified {
                    every,
                    bindings,
                    condition: Box::new(condition),
                })
            }
            "for" => Err(self.unsupported(token.span, "a `for` expression")),
            "function" | "external" => Err(self.unsupported(token.span, "a function definition")),
            _ => self.disjunction(),
        }
    }

    /// A name (one or more words, or a backtick name), for `some x in ...`.
    fn name_only(&mut self, what: &str) -> Result<String, ExprError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Quoted(q) => {
                self.advance();
                Ok(q.clone())
            }
            Tok::Word(w) if !is_keyword(w) => Ok(self.words()),
            _ => Err(self.unexpected(&t).help(format!("expected {what}"))),
        }
    }

    /// Consecutive non-keyword words, joined by single spaces.
    fn words(&mut self) -> String {
        let mut parts: Vec<String> = Vec::new();
        while let Tok::Word(w) = &self.peek().tok {
            if is_keyword(w) {
                break;
            }
            parts.push(w.clone());
            self.advance();
        }
        parts.join(" ")
    }

    fn disjunction(&mut self) -> Result<FeelNode, ExprError> {
        let mut items = vec![self.conjunction()?];
        while self.at_word("or") {
            self.advance();
            items.push(self.conjunction()?);
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            FeelNode::Or(items)
        })
    }

    fn conjunction(&mut self) -> Result<FeelNode, ExprError> {
        let mut items = vec![self.comparison()?];
        while self.at_word("and") {
            self.advance();
            items.push(self.comparison()?);
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            FeelNode::And(items)
        })
    }

    fn cmp_op(tok: &Tok) -> Option<CmpOp> {
        Some(match tok {
            Tok::Eq => CmpOp::Eq,
            Tok::NotEq => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            _ => return None,
        })
    }

    fn comparison(&mut self) -> Result<FeelNode, ExprError> {
        let left = self.sum()?;
        let token = self.peek().clone();
        let node = if let Some(op) = Self::cmp_op(&token.tok) {
            self.advance();
            let right = self.sum()?;
            let is_null = |n: &FeelNode| matches!(n, FeelNode::Literal(Value::Null));
            match op {
                CmpOp::Eq | CmpOp::Ne if is_null(&right) || is_null(&left) => {
                    let other = if is_null(&right) { left } else { right };
                    FeelNode::IsNull(Box::new(other), op == CmpOp::Ne)
                }
                _ => FeelNode::Compare(op, Box::new(left), Box::new(right)),
            }
        } else {
            match &token.tok {
                Tok::Word(w) if w == "between" => {
                    self.advance();
                    let low = self.sum()?;
                    self.expect_word("and")?;
                    let high = self.sum()?;
                    FeelNode::Between(Box::new(left), Box::new(low), Box::new(high))
                }
                Tok::Word(w) if w == "in" => {
                    self.advance();
                    let tests = self.tests()?;
                    FeelNode::In(Box::new(left), tests)
                }
                Tok::Word(w) if w == "instance" => {
                    return Err(self.unsupported(token.span, "`instance of`"));
                }
                _ => return Ok(left),
            }
        };
        let next = self.peek().clone();
        if Self::cmp_op(&next.tok).is_some()
            || matches!(&next.tok, Tok::Word(w) if w == "in" || w == "between")
        {
            return Err(ExprError::new("comparisons can't be chained", next.span)
                .feel()
                .help("compare two values at a time and combine with `and`"));
        }
        Ok(node)
    }

    /// The positive unary tests right of `in`.
    fn tests(&mut self) -> Result<Vec<Test>, ExprError> {
        if self.peek().tok == Tok::LParen {
            let open = self.advance();
            self.enter(open.span)?;
            // `(a..b)` is an open range, `(t1, t2)` a list of tests, `(x)` one.
            let first = self.test()?;
            if self.peek().tok == Tok::DotDot {
                let Test::Value(low) = first else {
                    return Err(self.unexpected(&self.peek().clone()));
                };
                let range = self.range_rest(low, false)?;
                self.depth -= 1;
                return Ok(vec![Test::Value(range)]);
            }
            let mut tests = vec![first];
            while self.peek().tok == Tok::Comma {
                self.advance();
                tests.push(self.test()?);
            }
            self.expect(Tok::RParen, "`,` or `)`")?;
            self.depth -= 1;
            return Ok(tests);
        }
        Ok(vec![self.test()?])
    }

    fn test(&mut self) -> Result<Test, ExprError> {
        let token = self.peek().clone();
        if let Some(op) = Self::cmp_op(&token.tok) {
            if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return Err(self
                    .unsupported(token.span, "a `=`/`!=` test after `in`")
                    .help("write the value itself: `x in (1, 2)`, or compare: `x != 1`"));
            }
            self.advance();
            return Ok(Test::Compare(op, self.sum()?));
        }
        if matches!(&token.tok, Tok::Word(w) if w == "not") && self.peek_at(1).tok == Tok::LParen {
            return Err(self.unsupported(token.span, "a negated test `not(...)` after `in`"));
        }
        Ok(Test::Value(self.sum()?))
    }

    fn sum(&mut self) -> Result<FeelNode, ExprError> {
        let mut left = self.product()?;
        loop {
            let op = match self.peek().tok {
                Tok::Plus => Arith::Add,
                Tok::Minus => Arith::Sub,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.product()?;
            left = FeelNode::Arith(op, Box::new(left), Box::new(right));
        }
    }

    fn product(&mut self) -> Result<FeelNode, ExprError> {
        let mut left = self.power()?;
        loop {
            let op = match self.peek().tok {
                Tok::Star => Arith::Mul,
                Tok::Slash => Arith::Div,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.power()?;
            left = FeelNode::Arith(op, Box::new(left), Box::new(right));
        }
    }

    fn power(&mut self) -> Result<FeelNode, ExprError> {
        let mut left = self.unary()?;
        while self.peek().tok == Tok::StarStar {
            self.advance();
            let right = self.unary()?;
            left = FeelNode::Arith(Arith::Pow, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<FeelNode, ExprError> {
        if self.peek().tok == Tok::Minus {
            let minus = self.advance();
            self.enter(minus.span)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(match inner {
                FeelNode::Literal(Value::Number(n)) => FeelNode::Literal(negate(&n)),
                other => FeelNode::Neg(Box::new(other)),
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<FeelNode, ExprError> {
        let mut node = self.primary()?;
        loop {
            match self.peek().tok.clone() {
                Tok::Dot => {
                    self.advance();
                    let t = self.peek().clone();
                    let member = match &t.tok {
                        Tok::Word(_) => self.words_any(),
                        Tok::Quoted(q) => {
                            self.advance();
                            q.clone()
                        }
                        _ => {
                            return Err(self
                                .unexpected(&t)
                                .help("expected a member name after `.`"));
                        }
                    };
                    node = FeelNode::Member(Box::new(node), member);
                }
                Tok::LBracket if !self.range_end => {
                    let open = self.advance();
                    self.enter(open.span)?;
                    let filter = self.expression()?;
                    self.expect(Tok::RBracket, "`]`")?;
                    self.depth -= 1;
                    node = FeelNode::Index(Box::new(node), Box::new(filter));
                }
                Tok::LParen => {
                    let t = self.peek().clone();
                    return Err(self.unsupported(t.span, "calling the result of an expression"));
                }
                _ => return Ok(node),
            }
        }
    }

    /// A member name after `.`: words, keywords allowed after the first.
    fn words_any(&mut self) -> String {
        let mut parts: Vec<String> = Vec::new();
        while let Tok::Word(w) = &self.peek().tok {
            if !parts.is_empty() && is_keyword(w) {
                break;
            }
            parts.push(w.clone());
            self.advance();
        }
        parts.join(" ")
    }

    fn primary(&mut self) -> Result<FeelNode, ExprError> {
        let token = self.peek().clone();
        match &token.tok {
            Tok::Number(text) => {
                self.advance();
                number(text, token.span).map(FeelNode::Literal)
            }
            Tok::Str(s) => {
                self.advance();
                Ok(FeelNode::Literal(Value::String(s.clone())))
            }
            Tok::At(s) => {
                self.advance();
                if super::eval::temporal(s).is_none() {
                    return Err(self.unsupported(
                        token.span,
                        &format!(
                            "the temporal literal `@\"{s}\"` (only dates and dates and times)"
                        ),
                    ));
                }
                Ok(FeelNode::Temporal(s.clone()))
            }
            Tok::LParen => {
                self.advance();
                let inner = self.expression()?;
                if self.peek().tok == Tok::DotDot {
                    return self.range_rest(inner, false);
                }
                let close = self.peek().clone();
                if close.tok != Tok::RParen {
                    let help = if close.tok == Tok::Eof {
                        "add a matching `)`"
                    } else {
                        "expected `)`, `and` or `or`"
                    };
                    return Err(self.unexpected(&close).help(help));
                }
                self.advance();
                Ok(inner)
            }
            Tok::LBracket => self.list_or_range(),
            Tok::RBracket => {
                // `]a..b]`: a range open at its start.
                self.advance();
                let low = self.sum()?;
                if self.peek().tok != Tok::DotDot {
                    return Err(self.unexpected(&token).help("there is no `[` for this `]`"));
                }
                self.range_rest(low, false)
            }
            Tok::LBrace => Err(self.unsupported(token.span, "a context literal `{...}`")),
            Tok::Quoted(q) => {
                self.advance();
                Ok(FeelNode::Name(q.clone()))
            }
            Tok::Word(_) => self.name_or_call(),
            _ => {
                let help = if token.tok == Tok::Eof {
                    "the expression ends where a value is expected"
                } else {
                    "expected a value, a name, `(` or `[`"
                };
                Err(self.unexpected(&token).help(help))
            }
        }
    }

    /// The function whose (possibly multi-word, keyword-containing) name starts here and
    /// is followed by `(`: its name and how many words it takes.
    fn function_here(&self) -> Option<(&'static str, usize, bool)> {
        let mut best: Option<(&'static str, usize, bool)> = None;
        let candidates = BUILTINS
            .iter()
            .map(|(n, _, _)| (*n, true))
            .chain(UNSUPPORTED_FUNCTIONS.iter().map(|n| (*n, false)));
        for (name, supported) in candidates {
            let words: Vec<&str> = name.split(' ').collect();
            let matches = words
                .iter()
                .enumerate()
                .all(|(i, w)| matches!(&self.peek_at(i).tok, Tok::Word(t) if t == w));
            if matches
                && self.peek_at(words.len()).tok == Tok::LParen
                && best.is_none_or(|(_, n, _)| words.len() > n)
            {
                best = Some((name, words.len(), supported));
            }
        }
        best
    }

    fn name_or_call(&mut self) -> Result<FeelNode, ExprError> {
        let token = self.peek().clone();
        let Tok::Word(w) = &token.tok else {
            return Err(self.unexpected(&token));
        };
        if let Some((name, words, supported)) = self.function_here() {
            let start = token.span;
            for _ in 0..words {
                self.advance();
            }
            let name_span = start.to(self.tokens[self.pos - 1].span);
            if !supported {
                return Err(self.unsupported(name_span, &format!("the FEEL function `{name}`")));
            }
            let args = self.arguments(name)?;
            let (_, min, max) = BUILTINS
                .iter()
                .find(|(n, _, _)| *n == name)
                .copied()
                .unwrap_or((name, 0, usize::MAX));
            if args.len() < min || args.len() > max {
                let expected = match (min, max) {
                    (a, b) if a == b => format!("{a}"),
                    (a, usize::MAX) => format!("at least {a}"),
                    (a, b) => format!("{a} to {b}"),
                };
                return Err(ExprError::new(
                    format!(
                        "`{name}` takes {expected} argument{}, found {}",
                        if max == 1 { "" } else { "s" },
                        args.len()
                    ),
                    name_span,
                )
                .feel());
            }
            return Ok(FeelNode::Call(name, args));
        }
        match w.as_str() {
            "true" => {
                self.advance();
                return Ok(FeelNode::Literal(Value::Bool(true)));
            }
            "false" => {
                self.advance();
                return Ok(FeelNode::Literal(Value::Bool(false)));
            }
            "null" => {
                self.advance();
                return Ok(FeelNode::Literal(Value::Null));
            }
            "not" => {
                return Err(ExprError::new("`not` is a function in FEEL", token.span)
                    .feel()
                    .help("write `not(condition)`"));
            }
            "if" | "some" | "every" | "for" | "function" => {
                // A textual expression in operand position: parenthesise it.
                return self.textual();
            }
            w if is_keyword(w) => {
                return Err(self
                    .unexpected(&token)
                    .help("expected a value, a name, `(` or `[`"));
            }
            _ => {}
        }
        let name = self.words();
        if self.peek().tok == Tok::LParen {
            let span = token.span.to(self.tokens[self.pos - 1].span);
            return Err(self.unsupported(
                span,
                &format!("calling `{name}` (not a built-in function cuga-flo knows)"),
            ));
        }
        Ok(FeelNode::Name(name))
    }

    fn arguments(&mut self, name: &str) -> Result<Vec<FeelNode>, ExprError> {
        let open = self.expect(Tok::LParen, "`(`")?;
        self.enter(open.span)?;
        let mut args = Vec::new();
        if self.peek().tok == Tok::RParen {
            self.advance();
            self.depth -= 1;
            return Ok(args);
        }
        loop {
            let arg = self.expression()?;
            if self.peek().tok == Tok::Colon {
                let colon = self.peek().span;
                return Err(self.unsupported(colon, &format!("a named argument in `{name}(...)`")));
            }
            args.push(arg);
            match self.peek().tok {
                Tok::Comma => {
                    self.advance();
                }
                Tok::RParen => {
                    self.advance();
                    break;
                }
                Tok::Eof => {
                    return Err(ExprError::new("unclosed `(`", open.span)
                        .feel()
                        .help("add a matching `)`"));
                }
                _ => {
                    let t = self.peek().clone();
                    return Err(self.unexpected(&t).help("expected `,` or `)`"));
                }
            }
        }
        self.depth -= 1;
        Ok(args)
    }

    /// `[a, b]` or `[a..b]` / `[a..b)`.
    fn list_or_range(&mut self) -> Result<FeelNode, ExprError> {
        let open = self.advance();
        self.enter(open.span)?;
        if self.peek().tok == Tok::RBracket {
            self.advance();
            self.depth -= 1;
            return Ok(FeelNode::List(Vec::new()));
        }
        let first = self.expression()?;
        if self.peek().tok == Tok::DotDot {
            self.depth -= 1;
            return self.range_rest(first, true);
        }
        let mut items = vec![first];
        loop {
            match self.peek().tok {
                Tok::Comma => {
                    self.advance();
                    items.push(self.expression()?);
                }
                Tok::RBracket => {
                    self.advance();
                    break;
                }
                Tok::Eof => {
                    return Err(ExprError::new("unclosed `[`", open.span)
                        .feel()
                        .help("add `]`"));
                }
                _ => {
                    let t = self.peek().clone();
                    return Err(self.unexpected(&t).help("expected `,` or `]`"));
                }
            }
        }
        self.depth -= 1;
        Ok(FeelNode::List(items))
    }

    /// After the low end of a range, at `..`: the high end and the closing bracket.
    fn range_rest(&mut self, low: FeelNode, low_closed: bool) -> Result<FeelNode, ExprError> {
        self.expect(Tok::DotDot, "`..`")?;
        let outer = std::mem::replace(&mut self.range_end, true);
        let high = self.sum();
        self.range_end = outer;
        let high = high?;
        let close = self.peek().clone();
        let high_closed = match close.tok {
            Tok::RBracket => true,
            Tok::RParen | Tok::LBracket => false,
            _ => {
                return Err(self
                    .unexpected(&close)
                    .help("close the range with `]` or `)`"));
            }
        };
        self.advance();
        Ok(FeelNode::Range(Box::new(Range {
            low,
            high,
            low_closed,
            high_closed,
        })))
    }
}

fn negate(n: &Number) -> Value {
    if let Some(i) = n.as_i64().and_then(i64::checked_neg) {
        Value::from(i)
    } else {
        n.as_f64()
            .and_then(|f| Number::from_f64(-f))
            .map_or(Value::Null, Value::Number)
    }
}

fn number(text: &str, span: Span) -> Result<Value, ExprError> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Value::from(i));
    }
    text.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
        .map(Value::Number)
        .ok_or_else(|| ExprError::new(format!("number `{text}` is too large"), span).feel())
}
