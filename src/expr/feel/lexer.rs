//! Splits a FEEL expression into tokens.

use crate::expr::ExprError;
use crate::source::Span;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// A name part: letters, digits, `_`, `?` (a multi-word name is several of these).
    Word(String),
    /// `` `any text` ``: a name written between backticks (a Camunda extension).
    Quoted(String),
    /// A number's text (parsed by the parser, which knows its span).
    Number(String),
    /// A double-quoted string, escapes decoded.
    Str(String),
    /// `@"..."`: a temporal literal.
    At(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Eq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    StarStar,
    Slash,
    Eof,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn err(message: impl Into<String>, offset: usize, len: usize) -> ExprError {
    ExprError::new(message, Span::new(offset, len)).feel()
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '?'
}

fn is_name_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '?'
}

/// The tokens of `src`, ending with [`Tok::Eof`].
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, ExprError> {
    let mut out = Vec::new();
    let mut chars = src.char_indices().peekable();
    let bytes = src.as_bytes();
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let next = src[at + c.len_utf8()..].chars().next();
        let mut simple = |tok: Tok, len: usize| {
            out.push(Token {
                tok,
                span: Span::new(at, len),
            });
            len
        };
        let len = match c {
            '(' => simple(Tok::LParen, 1),
            ')' => simple(Tok::RParen, 1),
            '[' => simple(Tok::LBracket, 1),
            ']' => simple(Tok::RBracket, 1),
            '{' => simple(Tok::LBrace, 1),
            '}' => simple(Tok::RBrace, 1),
            ',' => simple(Tok::Comma, 1),
            ':' => simple(Tok::Colon, 1),
            '+' => simple(Tok::Plus, 1),
            '-' => simple(Tok::Minus, 1),
            '/' if next == Some('/') || next == Some('*') => {
                return Err(err("comments are not supported in conditions", at, 2));
            }
            '/' => simple(Tok::Slash, 1),
            '*' if next == Some('*') => simple(Tok::StarStar, 2),
            '*' => simple(Tok::Star, 1),
            '=' if next == Some('=') => {
                return Err(err("`==` is not a FEEL operator", at, 2)
                    .help("FEEL compares with a single `=`: `status = \"open\"`"));
            }
            '=' => simple(Tok::Eq, 1),
            '!' if next == Some('=') => simple(Tok::NotEq, 2),
            '!' => {
                return Err(err("`!` is not a FEEL operator", at, 1)
                    .help("negate with `not(...)`; compare with `!=`"));
            }
            '<' if next == Some('=') => simple(Tok::Le, 2),
            '<' => simple(Tok::Lt, 1),
            '>' if next == Some('=') => simple(Tok::Ge, 2),
            '>' => simple(Tok::Gt, 1),
            '&' | '|' => {
                let word = if c == '&' { "and" } else { "or" };
                return Err(err(format!("`{c}` is not a FEEL operator"), at, 1)
                    .help(format!("FEEL writes `{word}`")));
            }
            '.' if next == Some('.') => simple(Tok::DotDot, 2),
            '.' if next.is_some_and(|d| d.is_ascii_digit()) => {
                let end = number_end(bytes, at);
                out.push(Token {
                    tok: Tok::Number(format!("0{}", &src[at..end])),
                    span: Span::new(at, end - at),
                });
                end - at
            }
            '.' => simple(Tok::Dot, 1),
            '0'..='9' => {
                let end = number_end(bytes, at);
                out.push(Token {
                    tok: Tok::Number(src[at..end].to_owned()),
                    span: Span::new(at, end - at),
                });
                end - at
            }
            '"' => {
                let (text, end) = string(src, at)?;
                out.push(Token {
                    tok: Tok::Str(text),
                    span: Span::new(at, end - at),
                });
                end - at
            }
            '@' if next == Some('"') => {
                let (text, end) = string(src, at + 1)?;
                out.push(Token {
                    tok: Tok::At(text),
                    span: Span::new(at, end - at),
                });
                end - at
            }
            '\'' => {
                return Err(err("FEEL strings are written in double quotes", at, 1)
                    .help("write \"text\" instead of 'text'"));
            }
            '`' => {
                let Some(close) = src[at + 1..].find('`') else {
                    return Err(err("unclosed `` ` ``", at, 1).help("close the name with `` ` ``"));
                };
                let name = &src[at + 1..at + 1 + close];
                if name.trim().is_empty() {
                    return Err(err("empty name between backticks", at, close + 2));
                }
                out.push(Token {
                    tok: Tok::Quoted(name.to_owned()),
                    span: Span::new(at, close + 2),
                });
                close + 2
            }
            c if is_name_start(c) => {
                let end = src[at..]
                    .char_indices()
                    .find(|&(_, d)| !is_name_part(d))
                    .map_or(src.len(), |(i, _)| at + i);
                out.push(Token {
                    tok: Tok::Word(src[at..end].to_owned()),
                    span: Span::new(at, end - at),
                });
                end - at
            }
            '$' | '#' if next == Some('{') => {
                return Err(err(
                    format!("`{c}{{` does not belong in a FEEL expression"),
                    at,
                    2,
                )
                .help("FEEL names variables directly: `=amount > 100`"));
            }
            other => {
                let mut e = err(
                    format!("unexpected character `{other}`"),
                    at,
                    other.len_utf8(),
                );
                e = match other {
                    '≥' => e.help("use `>=`"),
                    '≤' => e.help("use `<=`"),
                    '≠' => e.help("use `!=`"),
                    '‘' | '’' | '“' | '”' => e.help("use straight double quotes: \""),
                    _ => e,
                };
                return Err(e);
            }
        };
        // Skip the token's characters.
        let end = at + len;
        while chars.peek().is_some_and(|&(i, _)| i < end) {
            chars.next();
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), 0),
    });
    Ok(out)
}

/// The end of a number starting at `start`: digits, a fraction (not `..`), an exponent.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let digits = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits(j);
        }
    }
    i
}

/// A double-quoted string starting at `start` (the quote): its text and the offset after it.
fn string(src: &str, start: usize) -> Result<(String, usize), ExprError> {
    let mut text = String::new();
    let mut it = src[start + 1..].char_indices();
    while let Some((i, c)) = it.next() {
        match c {
            '"' => return Ok((text, start + 1 + i + 1)),
            '\\' => {
                let Some((j, e)) = it.next() else { break };
                let decoded = match e {
                    '"' => '"',
                    '\\' => '\\',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\'' => '\'',
                    'u' => {
                        let hex = src.get(start + 1 + j + 1..start + 1 + j + 5).unwrap_or("");
                        let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                        let Some(ch) = ch else {
                            return Err(err(
                                "invalid `\\u` escape (four hex digits expected)",
                                start + 1 + i,
                                2,
                            ));
                        };
                        for _ in 0..4 {
                            it.next();
                        }
                        ch
                    }
                    // Any other escape is kept as written (`"\d+"` in a regular
                    // expression), as Camunda's FEEL does.
                    other => {
                        text.push('\\');
                        other
                    }
                };
                text.push(decoded);
            }
            c => text.push(c),
        }
    }
    Err(err("unterminated string", start, src.len() - start).help("close the string with `\"`"))
}
