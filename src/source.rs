//! Source text and positions: the one place that knows how byte offsets map to lines and
//! columns. Every user file (YAML config, BPMN, policy) is held as a [`SourceFile`], and
//! every position the parsers record is a [`Span`] into that file's UTF-8 text.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A byte range in a source text. Offsets are into the UTF-8 text the parser saw (for a
/// BPMN file in another encoding, the text after transcoding).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub offset: usize,
    pub len: usize,
}

impl Span {
    pub const fn new(offset: usize, len: usize) -> Self {
        Span { offset, len }
    }

    /// The span from the start of `self` to the end of `other`.
    pub fn to(self, other: Span) -> Span {
        let end = (other.offset + other.len).max(self.offset + self.len);
        Span::new(self.offset, end - self.offset)
    }

    pub fn end(self) -> usize {
        self.offset + self.len
    }
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// A named source text with a line index, cheap to clone.
#[derive(Debug, Clone)]
pub struct SourceFile {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    text: String,
    /// Built on the first line lookup: most files read are never reported on.
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        SourceFile {
            inner: Arc::new(Inner {
                path: path.into(),
                text: text.into(),
                line_starts: OnceLock::new(),
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn text(&self) -> &str {
        &self.inner.text
    }

    /// The line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let text = &self.inner.text;
        line_col(
            text,
            self.inner.line_starts.get_or_init(|| line_starts(text)),
            offset,
        )
    }

    /// The text of a span, or "" if the span is out of range.
    pub fn slice(&self, span: Span) -> &str {
        self.inner.text.get(span.offset..span.end()).unwrap_or("")
    }
}

/// Byte offsets at which each line starts.
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// Line and column of `offset` given precomputed line starts.
pub fn line_col(text: &str, starts: &[usize], offset: usize) -> LineCol {
    let offset = offset.min(text.len());
    let line = starts.partition_point(|&s| s <= offset).max(1) - 1;
    let start = starts[line];
    let column = text
        .get(start..offset)
        .map(|s| s.chars().count())
        .unwrap_or(offset - start)
        + 1;
    LineCol {
        line: line + 1,
        column,
    }
}

/// The largest user file cuga-flo reads (a model, a config, a policy, answers, inputs).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Read a user file: a regular file only (a FIFO, a device or a directory is refused at
/// once, never waited on or read without end), at most [`MAX_FILE_BYTES`].
pub fn read_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let path = path.as_ref();
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading would wait for a writer.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a pipe, socket or device)"
        };
        return Err(Error::new(ErrorKind::InvalidInput, format!("it is {what}")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_file`] as UTF-8 text.
pub fn read_text(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// Read text from a stream (stdin) up to [`MAX_FILE_BYTES`].
pub fn read_text_from(reader: impl std::io::Read) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

fn too_big() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_lines_and_character_columns() {
        let f = SourceFile::new("x", "ab\nçd\n\nz");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        // 'd' sits after the two-byte 'ç'
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(f.line_col(8), LineCol { line: 4, column: 1 });
        assert_eq!(f.line_col(999), LineCol { line: 4, column: 2 });
    }
}
