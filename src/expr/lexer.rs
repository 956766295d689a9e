//! Splits a condition into tokens. Lexing is context-free; whether a word is a variable or a
//! string is decided by the parser.

use serde_json::Number;

use super::ExprError;
use crate::source::Span;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// `${`
    VarOpen,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Bang,
    /// `[A-Za-z_][A-Za-z0-9_.-]*`: a keyword, a variable path or a bare string.
    Word(String),
    Number(Number),
    /// A quoted string, escapes decoded.
    Str(String),
    Eof,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// The tokens of `src`, ending with [`Tok::Eof`]; or, if a character can't be lexed, the
/// tokens before it and the error.
pub(super) fn tokenize(src: &str) -> (Vec<Token>, Option<ExprError>) {
    let mut lexer = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
    };
    match lexer.run() {
        Ok(()) => (lexer.tokens, None),
        Err(e) => (lexer.tokens, Some(e)),
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
}

fn err(message: impl Into<String>, offset: usize, len: usize) -> ExprError {
    ExprError::new(message, Span::new(offset, len))
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

impl Lexer<'_> {
    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(ahead)
    }

    fn push(&mut self, tok: Tok, start: usize) {
        self.tokens.push(Token {
            tok,
            span: Span::new(start, self.pos - start),
        });
    }

    /// Pushes a token of `len` ASCII bytes starting here.
    fn simple(&mut self, tok: Tok, len: usize) {
        let start = self.pos;
        self.pos += len;
        self.push(tok, start);
    }

    fn run(&mut self) -> Result<(), ExprError> {
        while let Some(c) = self.peek_at(0) {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
                continue;
            }
            let next = self.peek_at(1);
            let at = self.pos;
            match c {
                // `#{...}` is JUEL's deferred form of `${...}` (Camunda 7, Flowable).
                '$' | '#' if next == Some('{') => self.simple(Tok::VarOpen, 2),
                '$' => {
                    return Err(err("expected `{` after `$`", at, 1)
                        .help("variables are written `${name}`"));
                }
                '{' => {
                    return Err(
                        err("unexpected `{`", at, 1).help("variables are written `${name}`")
                    );
                }
                '}' => self.simple(Tok::RBrace, 1),
                '(' => self.simple(Tok::LParen, 1),
                ')' => self.simple(Tok::RParen, 1),
                '[' => self.simple(Tok::LBracket, 1),
                ']' => self.simple(Tok::RBracket, 1),
                ',' => self.simple(Tok::Comma, 1),
                '=' => match next {
                    Some('=') => self.simple(Tok::EqEq, 2),
                    Some('>') => {
                        return Err(err("unknown operator `=>`", at, 2).help("did you mean `>=`?"));
                    }
                    Some('<') => {
                        return Err(err("unknown operator `=<`", at, 2).help("did you mean `<=`?"));
                    }
                    _ => {
                        return Err(err("`=` is not a comparison operator", at, 1).help(
                            "use `==` to compare (a FEEL condition starts with `=`: `=x = 1`)",
                        ));
                    }
                },
                '!' if next == Some('=') => self.simple(Tok::NotEq, 2),
                '!' => self.simple(Tok::Bang, 1),
                '<' => match next {
                    Some('=') => self.simple(Tok::Le, 2),
                    Some('>') => {
                        return Err(
                            err("unknown operator `<>`", at, 2).help("use `!=` for \"not equal\"")
                        );
                    }
                    _ => self.simple(Tok::Lt, 1),
                },
                '>' if next == Some('=') => self.simple(Tok::Ge, 2),
                '>' => self.simple(Tok::Gt, 1),
                '&' if next == Some('&') => self.simple(Tok::AndAnd, 2),
                '&' => return Err(err("unexpected `&`", at, 1).help("use `&&` or `and`")),
                '|' if next == Some('|') => self.simple(Tok::OrOr, 2),
                '|' => return Err(err("unexpected `|`", at, 1).help("use `||` or `or`")),
                '\'' | '"' => self.string(c)?,
                '-' | '0'..='9' => self.number()?,
                'a'..='z' | 'A'..='Z' | '_' => {
                    let len = self.src[at..]
                        .find(|c: char| !is_word_char(c))
                        .unwrap_or(self.src.len() - at);
                    self.pos += len;
                    self.push(Tok::Word(self.src[at..self.pos].to_owned()), at);
                }
                _ => return Err(unexpected_char(c, at)),
            }
        }
        let end = self.src.len();
        self.tokens.push(Token {
            tok: Tok::Eof,
            span: Span::new(end, 0),
        });
        Ok(())
    }

    fn string(&mut self, quote: char) -> Result<(), ExprError> {
        let start = self.pos;
        self.pos += 1;
        let mut text = String::new();
        let unterminated = |lexer: &Self| {
            err("unterminated string", start, lexer.src.len() - start)
                .help(format!("close the string with `{quote}`"))
        };
        loop {
            let Some(c) = self.peek_at(0) else {
                return Err(unterminated(self));
            };
            self.pos += c.len_utf8();
            if c == quote {
                break;
            }
            if c != '\\' {
                text.push(c);
                continue;
            }
            let Some(escaped) = self.peek_at(0) else {
                return Err(unterminated(self));
            };
            text.push(match escaped {
                '\\' => '\\',
                '\'' => '\'',
                '"' => '"',
                'n' => '\n',
                't' => '\t',
                other => {
                    return Err(err(
                        format!("unknown escape `\\{other}` in string"),
                        self.pos - 1,
                        1 + other.len_utf8(),
                    )
                    .help(r#"the escapes are \\ \' \" \n \t"#));
                }
            });
            self.pos += escaped.len_utf8();
        }
        self.push(Tok::Str(text), start);
        Ok(())
    }

    fn number(&mut self) -> Result<(), ExprError> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let digits_from = |mut i: usize| {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut i = start;
        if bytes[i] == b'-' {
            i += 1;
            if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(err("expected a digit after `-`", start, 1)
                    .help("a negative number is written `-5` (there is no arithmetic)"));
            }
        }
        i = digits_from(i);
        let mut float = false;
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            float = true;
            i = digits_from(i + 1);
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if bytes.get(j).is_some_and(u8::is_ascii_digit) {
                float = true;
                i = digits_from(j);
            }
        }
        // A number must not run into a word: `1abc`, `1.`, `1.2.3`, `1e`.
        let tail = self.src[i..]
            .find(|c: char| !is_word_char(c))
            .map_or(self.src.len(), |n| i + n);
        if tail > i {
            let text = &self.src[start..tail];
            let help = if text.ends_with('.') || text[1..].contains('.') {
                "a decimal is written with digits on both sides of the point: `0.5`"
            } else {
                "quote it to make it a string: '...'"
            };
            return Err(err(format!("invalid number `{text}`"), start, tail - start).help(help));
        }
        self.pos = i;
        let text = &self.src[start..i];
        let number = if float {
            None
        } else {
            text.parse::<i64>()
                .ok()
                .map(Number::from)
                .or_else(|| text.parse::<u64>().ok().map(Number::from))
        };
        let number = match number {
            Some(n) => n,
            None => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .ok_or_else(|| err(format!("number `{text}` is too large"), start, i - start))?,
        };
        self.push(Tok::Number(number), start);
        Ok(())
    }
}

fn unexpected_char(c: char, at: usize) -> ExprError {
    let e = err(format!("unexpected character `{c}`"), at, c.len_utf8());
    match c {
        '≥' => e.help("use `>=`"),
        '≤' => e.help("use `<=`"),
        '≠' => e.help("use `!=`"),
        '‘' | '’' | '“' | '”' => e.help("use straight quotes: ' or \""),
        c if c.is_alphabetic() => {
            e.help("names are ASCII: letters, digits, `_` and `-`; quote other text as a string")
        }
        _ => e,
    }
}
