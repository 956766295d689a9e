//! Recursive-descent parser for the grammar in the module documentation.

use serde_json::Value;

use super::lexer::{Tok, Token, tokenize};
use super::{CmpOp, ExprError, MAX_DEPTH, Node, Operand, VarPath};
use crate::source::Span;

pub(super) fn parse(src: &str) -> Result<Node, ExprError> {
    if src.trim().is_empty() {
        return Err(ExprError::new("empty condition", Span::new(0, src.len()))
            .help("write a condition such as `${approved} == true`"));
    }
    let (tokens, lex_error) = tokenize(src);
    let mut parser = Parser {
        src,
        tokens,
        lex_error,
        pos: 0,
        depth: 0,
    };
    let node = parser.or_expr(false)?;
    let next = parser.peek()?;
    if next.tok != Tok::Eof {
        let help = match next.tok {
            Tok::RParen => Some("there is no `(` for this `)`".to_owned()),
            Tok::RBrace => Some("there is no `${` for this `}`".to_owned()),
            _ => keyword_help(&next.tok)
                .or_else(|| Some("join conditions with `and` or `or`".to_owned())),
        };
        return Err(parser.unexpected(&next, help));
    }
    Ok(node)
}

/// The result of parsing a primary: a value, or a (parenthesised) condition.
enum Primary {
    Value(Operand, Span),
    Cond(Node, Span),
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    /// The error that stopped the lexer, reported when the parser reaches it.
    lex_error: Option<ExprError>,
    pos: usize,
    depth: usize,
}

/// Words that are operators or literals.
const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "true", "True", "false", "False", "null", "None",
];

impl Parser<'_> {
    fn peek_at(&self, ahead: usize) -> Result<Token, ExprError> {
        match self.tokens.get(self.pos + ahead) {
            Some(token) => Ok(token.clone()),
            None => Err(self.lex_error.clone().unwrap_or_else(|| {
                // The token list always ends with Eof unless the lexer failed; stay total.
                ExprError::new("unexpected end of condition", Span::new(self.src.len(), 0))
            })),
        }
    }

    fn peek(&self) -> Result<Token, ExprError> {
        self.peek_at(0)
    }

    fn advance(&mut self) {
        self.pos += 1;
    }

    fn text(&self, span: Span) -> &str {
        self.src.get(span.offset..span.end()).unwrap_or("")
    }

    /// The span of the token before the current one (or the end of the text).
    fn prev_span(&self) -> Option<Span> {
        self.pos.checked_sub(1).map(|i| self.tokens[i].span)
    }

    fn enter(&mut self, span: Span) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(
                ExprError::new("condition is nested too deeply", span).help(format!(
                    "at most {MAX_DEPTH} levels of `(` and `not` are allowed"
                )),
            );
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn describe(&self, token: &Token) -> String {
        match &token.tok {
            Tok::Eof => "end of condition".to_owned(),
            Tok::Str(_) => "a string".to_owned(),
            _ => format!("`{}`", self.text(token.span)),
        }
    }

    fn unexpected(&self, token: &Token, help: Option<String>) -> ExprError {
        ExprError {
            help,
            ..ExprError::new(format!("unexpected {}", self.describe(token)), token.span)
        }
    }

    fn is_word(token: &Token, word: &str) -> bool {
        matches!(&token.tok, Tok::Word(w) if w == word)
    }

    fn or_expr(&mut self, inner: bool) -> Result<Node, ExprError> {
        let mut items = vec![self.and_expr(inner)?];
        loop {
            let token = self.peek()?;
            if token.tok == Tok::OrOr || Self::is_word(&token, "or") {
                self.advance();
                items.push(self.and_expr(inner)?);
            } else {
                break;
            }
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            Node::Or(items)
        })
    }

    fn and_expr(&mut self, inner: bool) -> Result<Node, ExprError> {
        let mut items = vec![self.not_expr(inner)?];
        loop {
            let token = self.peek()?;
            if token.tok == Tok::AndAnd || Self::is_word(&token, "and") {
                self.advance();
                items.push(self.not_expr(inner)?);
            } else {
                break;
            }
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            Node::And(items)
        })
    }

    fn not_expr(&mut self, inner: bool) -> Result<Node, ExprError> {
        let token = self.peek()?;
        if token.tok == Tok::Bang || Self::is_word(&token, "not") {
            self.advance();
            self.enter(token.span)?;
            let operand = self.not_expr(inner)?;
            self.leave();
            return Ok(Node::Not(Box::new(operand)));
        }
        self.compare(inner)
    }

    /// A comparison operator at the current position: the operator, its span and how many
    /// tokens it takes.
    fn peek_cmp_op(&self, inner: bool) -> Result<Option<(CmpOp, Span, usize)>, ExprError> {
        let token = self.peek()?;
        // JUEL's word operators, inside `${...}` where JUEL reserves them.
        if inner
            && let Tok::Word(w) = &token.tok
            && let Some(op) = juel_op(w)
        {
            return Ok(Some((op, token.span, 1)));
        }
        let op = match &token.tok {
            Tok::EqEq => CmpOp::Eq,
            Tok::NotEq => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            Tok::Word(w) if w == "in" => CmpOp::In,
            Tok::Word(w) if w == "not" => {
                let next = self.peek_at(1)?;
                if Self::is_word(&next, "in") {
                    return Ok(Some((CmpOp::NotIn, token.span.to(next.span), 2)));
                }
                return Ok(None);
            }
            _ => return Ok(None),
        };
        Ok(Some((op, token.span, 1)))
    }

    fn compare(&mut self, inner: bool) -> Result<Node, ExprError> {
        let left = self.primary(inner)?;
        let left_word = match &left {
            Primary::Value(operand, span) => self.bare_word(operand, *span, inner),
            Primary::Cond(..) => None,
        };
        let Some((op, op_span, op_tokens)) = self.peek_cmp_op(inner)? else {
            return match left {
                Primary::Value(Operand::List(_), span) => {
                    Err(ExprError::new("a list is not a condition", span)
                        .help("lists go on the right of `in`: `${x} in [1, 2]`"))
                }
                // A word alone (`approved`, as Python writes a condition) is the text
                // "approved", which is never true or false: it is a variable in another
                // dialect.
                Primary::Value(_, span) if left_word.is_some() => {
                    let w = left_word.unwrap_or_default();
                    Err(ExprError::new(
                        format!("`{w}` outside `${{}}` is the text \"{w}\", not a condition"),
                        span,
                    )
                    .help(format!(
                        "write `${{{w}}}` to read the variable (cuga-flo does not evaluate \
                         Python or other script conditions)"
                    )))
                }
                Primary::Value(operand, _) => Ok(Node::Truthy(operand)),
                Primary::Cond(node, _) => Ok(node),
            };
        };
        let left_span = match &left {
            Primary::Value(_, span) | Primary::Cond(_, span) => *span,
        };
        let left = match left {
            Primary::Value(Operand::List(_), span) => {
                return Err(ExprError::new(
                    "a list can only be used on the right of `in` or `not in`",
                    span,
                ));
            }
            Primary::Value(operand, _) => operand,
            Primary::Cond(_, _) => {
                return Err(ExprError::new(
                    format!("a condition can't be compared with `{op}`"),
                    op_span,
                )
                .help("comparisons compare values; combine conditions with `and` / `or`"));
            }
        };
        self.pos += op_tokens;

        let next = self.peek()?;
        if !self.starts_value(&next.tok) {
            let span = if next.tok == Tok::Eof {
                op_span
            } else {
                next.span
            };
            return Err(ExprError::new(
                format!("expected a value after `{}`", self.text(op_span)),
                span,
            ));
        }
        let (right, right_span) = match self.primary(inner)? {
            Primary::Cond(_, span) => {
                return Err(ExprError::new(
                    format!("expected a value after `{op}`, found a condition"),
                    span,
                )
                .help("comparisons compare values; combine conditions with `and` / `or`"));
            }
            Primary::Value(operand, span) => match (op, operand) {
                (CmpOp::In | CmpOp::NotIn, operand @ Operand::List(_)) => (operand, span),
                (CmpOp::In | CmpOp::NotIn, _) => {
                    return Err(
                        ExprError::new(format!("expected a list after `{op}`"), span)
                            .help(format!("write the values in brackets: `{op} [1, 2]`")),
                    );
                }
                (_, Operand::List(_)) => {
                    return Err(ExprError::new(
                        format!("a list can't be compared with `{op}`"),
                        span,
                    )
                    .help("to test membership use `in`: `${x} in [1, 2]`"));
                }
                (_, operand) => (operand, span),
            },
        };

        if let Some((_, span2, _)) = self.peek_cmp_op(inner)? {
            return Err(ExprError::new("comparisons can't be chained", span2).help(
                "compare two values at a time and combine with `and`: `${a} < ${b} and ${b} < ${c}`",
            ));
        }
        // Two constants, one of them a bare word (`v == 2`, `status == 'ok'`, as Python and
        // SpiffWorkflow write conditions): the word is text here, so the comparison is
        // always the same, where its author meant a variable.
        let right_word = self.bare_word(&right, right_span, inner);
        if !matches!(left, Operand::Var(_))
            && !matches!(right, Operand::Var(_))
            && let Some(w) = left_word.clone().or(right_word)
        {
            let whole = left_span.to(right_span);
            let written = self.text(whole).to_owned();
            let fixed = written.replacen(&w, &format!("${{{w}}}"), 1);
            return Err(ExprError::new(
                format!(
                    "`{written}` compares two constants: outside `${{}}`, `{w}` is the text \"{w}\""
                ),
                whole,
            )
            .help(format!(
                "write `{fixed}` to compare the variable (cuga-flo does not evaluate Python \
                 or other script conditions)"
            )));
        }
        Ok(Node::Compare { left, op, right })
    }

    /// The word `operand` was written as, when it is a bare word read as text (outside
    /// `${}`, not quoted, not a keyword).
    fn bare_word(&self, operand: &Operand, span: Span, inner: bool) -> Option<String> {
        match operand {
            Operand::Literal(Value::String(w)) if !inner && self.text(span) == w => Some(w.clone()),
            _ => None,
        }
    }

    /// Whether a token can start a primary.
    fn starts_value(&self, tok: &Tok) -> bool {
        match tok {
            Tok::VarOpen | Tok::LParen | Tok::LBracket | Tok::Number(_) | Tok::Str(_) => true,
            Tok::Word(w) => !matches!(w.as_str(), "and" | "or" | "not" | "in"),
            _ => false,
        }
    }

    fn primary(&mut self, inner: bool) -> Result<Primary, ExprError> {
        let token = self.peek()?;
        match &token.tok {
            Tok::LParen => {
                self.advance();
                self.enter(token.span)?;
                let node = self.or_expr(inner)?;
                let close = self.peek()?;
                match close.tok {
                    Tok::RParen => self.advance(),
                    Tok::Eof => {
                        return Err(
                            ExprError::new("unclosed `(`", token.span).help("add a matching `)`")
                        );
                    }
                    _ => {
                        let help = keyword_help(&close.tok)
                            .unwrap_or_else(|| "expected `)`, `and` or `or`".to_owned());
                        return Err(self.unexpected(&close, Some(help)));
                    }
                }
                self.leave();
                Ok(group(node, token.span.to(close.span)))
            }
            Tok::VarOpen => self.var_group(&token, inner),
            Tok::LBracket => self.list(&token, inner),
            Tok::Number(n) => {
                self.advance();
                Ok(Primary::Value(
                    Operand::Literal(Value::Number(n.clone())),
                    token.span,
                ))
            }
            Tok::Str(s) => {
                self.advance();
                Ok(Primary::Value(
                    Operand::Literal(Value::String(s.clone())),
                    token.span,
                ))
            }
            Tok::Word(w) if self.starts_value(&token.tok) => {
                let operand = self.word(w, token.span, inner)?;
                self.advance();
                Ok(Primary::Value(operand, token.span))
            }
            _ => Err(self.expected_value(&token)),
        }
    }

    /// The error for a token that can't start a value.
    fn expected_value(&self, token: &Token) -> ExprError {
        match self.prev_span() {
            Some(prev) => {
                let span = if token.tok == Tok::Eof {
                    prev
                } else {
                    token.span
                };
                let mut e = ExprError::new(
                    format!("expected a value after `{}`", self.text(prev)),
                    span,
                );
                if token.tok != Tok::Eof {
                    e.help = Some(format!("found {}", self.describe(token)));
                }
                e
            }
            None => self.unexpected(
                token,
                Some("a condition starts with a value, a `${variable}`, `not` or `(`".to_owned()),
            ),
        }
    }

    /// A literal keyword, a variable path (inside `${}`) or a bare string (outside).
    fn word(&self, w: &str, span: Span, inner: bool) -> Result<Operand, ExprError> {
        Ok(match w {
            "true" | "True" => Operand::Literal(Value::Bool(true)),
            "false" | "False" => Operand::Literal(Value::Bool(false)),
            "null" | "None" => Operand::Literal(Value::Null),
            _ => {
                if let Some(keyword) = lookalike(w) {
                    return Err(ExprError::new(
                        format!("`{w}` is not a keyword (keywords are lowercase)"),
                        span,
                    )
                    .help(format!(
                        "write `{keyword}`, or quote it ('{w}') to mean the string"
                    )));
                }
                if inner {
                    Operand::Var(path(w, span)?)
                } else {
                    Operand::Literal(Value::String(w.to_owned()))
                }
            }
        })
    }

    /// `${ ... }`: a variable path, or (JUEL style) an expression over bare variable names.
    fn var_group(&mut self, open: &Token, inner: bool) -> Result<Primary, ExprError> {
        if inner {
            return Err(ExprError::new("nested `${` is not allowed", open.span)
                .help("inside `${...}` variables are written without `${}`: `${a > b}`"));
        }
        // Find the closing `}` first, so that an unclosed or nested `${` is reported as such.
        let mut i = self.pos + 1;
        let close_span = loop {
            match self.tokens.get(i).map(|t| &t.tok) {
                Some(Tok::RBrace) => break Some(self.tokens[i].span),
                Some(Tok::VarOpen) => {
                    return Err(
                        ExprError::new("nested `${` is not allowed", self.tokens[i].span).help(
                            "inside `${...}` variables are written without `${}`: `${a > b}`",
                        ),
                    );
                }
                Some(Tok::Eof) => {
                    return Err(ExprError::new("unclosed `${`", open.span)
                        .help("add `}` after the variable name"));
                }
                Some(_) => i += 1,
                // The lexer stopped inside; its error is reported when the parser gets there.
                None => break None,
            }
        };
        self.advance();
        if let Some(close) = close_span
            && i == self.pos
        {
            return Err(
                ExprError::new("empty `${}`", open.span.to(close)).help("write `${variable_name}`")
            );
        }
        let node = self.or_expr(true)?;
        let close = self.peek()?;
        if close.tok != Tok::RBrace {
            let help = keyword_help(&close.tok)
                .unwrap_or_else(|| "expected `}` to close the `${`".to_owned());
            return Err(self.unexpected(&close, Some(help)));
        }
        self.advance();
        Ok(group(node, open.span.to(close.span)))
    }

    /// `[ literal, ... ]`
    fn list(&mut self, open: &Token, inner: bool) -> Result<Primary, ExprError> {
        self.advance();
        let mut items = Vec::new();
        loop {
            let token = self.peek()?;
            let item = match &token.tok {
                Tok::RBracket => {
                    self.advance();
                    return Ok(Primary::Value(
                        Operand::List(items),
                        open.span.to(token.span),
                    ));
                }
                Tok::Eof => {
                    return Err(ExprError::new("unclosed `[`", open.span).help("add `]`"));
                }
                Tok::Number(n) => Value::Number(n.clone()),
                Tok::Str(s) => Value::String(s.clone()),
                Tok::Word(w) if self.starts_value(&token.tok) => {
                    match self.word(w, token.span, inner) {
                        Ok(Operand::Literal(value)) => value,
                        Ok(_) => {
                            return Err(ExprError::new(
                                "a list can only hold literal values",
                                token.span,
                            )
                            .help(format!("quote it to mean the string: '{w}'")));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Tok::VarOpen => {
                    return Err(ExprError::new(
                        "a list can only hold literal values, not variables",
                        token.span,
                    ));
                }
                _ => {
                    return Err(ExprError::new("expected a value in the list", token.span)
                        .help(format!("found {}", self.describe(&token))));
                }
            };
            items.push(item);
            self.advance();
            let sep = self.peek()?;
            match sep.tok {
                Tok::Comma => self.advance(),
                Tok::RBracket => {}
                Tok::Eof => {
                    return Err(ExprError::new("unclosed `[`", open.span).help("add `]`"));
                }
                _ => {
                    return Err(self.unexpected(&sep, Some("expected `,` or `]`".to_owned())));
                }
            }
        }
    }
}

/// A group holding a single value is that value; otherwise it is a condition.
fn group(node: Node, span: Span) -> Primary {
    match node {
        Node::Truthy(operand) => Primary::Value(operand, span),
        node => Primary::Cond(node, span),
    }
}

/// A variable path from a word.
fn path(w: &str, span: Span) -> Result<VarPath, ExprError> {
    let segments: Vec<String> = w.split('.').map(str::to_owned).collect();
    VarPath::new(segments).ok_or_else(|| {
        ExprError::new(format!("invalid variable path `{w}`"), span)
            .help("path segments are separated by single dots: `${order.total}`")
    })
}

/// The keyword a word mistakenly resembles (`AND` → `and`), if any.
fn lookalike(w: &str) -> Option<&'static str> {
    if KEYWORDS.contains(&w) {
        return None;
    }
    KEYWORDS
        .iter()
        .copied()
        .find(|k| k.eq_ignore_ascii_case(w))
        .map(|k| match k {
            "True" => "true",
            "False" => "false",
            "None" => "null",
            k => k,
        })
}

/// A JUEL word operator (`eq`, `ne`, `lt`, `le`, `gt`, `ge`).
fn juel_op(w: &str) -> Option<CmpOp> {
    Some(match w {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "lt" => CmpOp::Lt,
        "le" => CmpOp::Le,
        "gt" => CmpOp::Gt,
        "ge" => CmpOp::Ge,
        _ => return None,
    })
}

/// Help for an unexpected word: a miscased keyword, or a JUEL word operator.
fn keyword_help(tok: &Tok) -> Option<String> {
    let Tok::Word(w) = tok else {
        return None;
    };
    let juel = match w.as_str() {
        "eq" => Some("=="),
        "ne" => Some("!="),
        "lt" => Some("<"),
        "le" => Some("<="),
        "gt" => Some(">"),
        "ge" => Some(">="),
        _ => None,
    };
    if let Some(op) = juel {
        return Some(format!("write `{op}` to compare"));
    }
    lookalike(w).map(|k| format!("keywords are lowercase: `{k}`"))
}
