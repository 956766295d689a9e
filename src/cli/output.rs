//! Terminal styling shared by the commands: colour only on a terminal, never with
//! NO_COLOR, always with `--color always`.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::diag::{Diagnostic, RenderOptions, render};

use super::ColorChoice;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

impl Style {
    pub fn detect(choice: ColorChoice) -> Style {
        let tty = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color,
        };
        let width = crate::view::human::terminal_width();
        Style { color, width }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn red(&self, text: &str) -> String {
        self.paint("1;31", text)
    }

    pub fn yellow(&self, text: &str) -> String {
        self.paint("1;33", text)
    }

    pub fn green(&self, text: &str) -> String {
        self.paint("1;32", text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn error_word(&self) -> String {
        self.red("error")
    }

    pub fn diagnostic(&self, d: &Diagnostic) -> String {
        render(
            d,
            RenderOptions {
                color: self.color,
                unicode: true,
                width: self.width,
            },
        )
    }
}

pub use crate::diag::count;

/// Set once stdout is closed by its reader: later output is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Write results to stdout (what [`outln!`] and [`out!`] do). A reader that went away
/// (broken pipe) ends the output quietly, never the command; another error is logged once.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            tracing::warn!("cannot write to stdout: {e}");
        }
    }
}

/// `text` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,:/=@%+".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod shell_quote_tests {
    use super::shell_quote;

    #[test]
    fn only_what_needs_quotes_is_quoted() {
        assert_eq!(shell_quote("A-17"), "A-17");
        assert_eq!(shell_quote("two words"), "'two words'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_quote(""), "''");
    }
}
