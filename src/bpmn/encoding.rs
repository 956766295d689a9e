//! Step 1 of parsing: the bytes of a BPMN file transcoded to UTF-8, honouring a byte
//! order mark or the XML declaration's `encoding`, plus the XML 1.0 character check.

use encoding_rs::{DecoderResult, Encoding};

use super::BpmnError;
use crate::source::Span;

/// The input transcoded to UTF-8.
pub(super) struct Decoded {
    pub text: String,
    /// The encoding the XML declaration names, as written (else the byte order mark's
    /// encoding, else `UTF-8`).
    pub label: String,
    /// The first malformed byte sequence, as a well-formedness error at the U+FFFD that
    /// replaces it in `text`.
    pub malformed: Option<BpmnError>,
}

/// Transcode the whole input to UTF-8. A byte order mark (or the UTF-16 pattern of
/// `<?`) wins over the declaration. Labels are those of the WHATWG Encoding Standard, so
/// `ISO-8859-1` and `ASCII` decode as windows-1252, as browsers do.
pub(super) fn decode(bytes: &[u8]) -> Result<Decoded, BpmnError> {
    if let Some((encoding, skip)) = sniff(bytes) {
        let (text, malformed) = transcode(encoding, bytes.get(skip..).unwrap_or_default(), skip);
        let label = declared_encoding(&text).unwrap_or_else(|| encoding.name().to_owned());
        return Ok(Decoded {
            text,
            label,
            malformed,
        });
    }
    let head = String::from_utf8_lossy(bytes.get(..1024).unwrap_or(bytes));
    let label = declared_encoding(&head);
    let encoding = match &label {
        Some(label) => encoding_for(label)?,
        None => encoding_rs::UTF_8,
    };
    let (text, malformed) = transcode(encoding, bytes, 0);
    Ok(Decoded {
        text,
        label: label.unwrap_or_else(|| "UTF-8".to_owned()),
        malformed,
    })
}

/// The encoding given by a byte order mark, or by `<?` written in UTF-16; with the
/// number of bytes to skip.
fn sniff(bytes: &[u8]) -> Option<(&'static Encoding, usize)> {
    Encoding::for_bom(bytes).or(match bytes.get(..4) {
        Some([0x3C, 0, 0x3F, 0]) => Some((encoding_rs::UTF_16LE, 0)),
        Some([0, 0x3C, 0, 0x3F]) => Some((encoding_rs::UTF_16BE, 0)),
        _ => None,
    })
}

/// The decoder for a declared label, for a document whose bytes are ASCII-compatible.
fn encoding_for(label: &str) -> Result<&'static Encoding, BpmnError> {
    match Encoding::for_label(label.trim().as_bytes()) {
        None => Err(BpmnError::UnknownEncoding(label.to_owned())),
        Some(e) if e == encoding_rs::REPLACEMENT => {
            Err(BpmnError::UnknownEncoding(label.to_owned()))
        }
        Some(e) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => {
            Err(BpmnError::BadEncoding {
                encoding: label.to_owned(),
                message: "the declaration is written in single bytes and there is no byte order \
                          mark, so the bytes are not UTF-16"
                    .to_owned(),
            })
        }
        Some(e) => Ok(e),
    }
}

/// The `encoding` pseudo-attribute of an XML declaration at the start of `head`.
fn declared_encoding(head: &str) -> Option<String> {
    let decl = head.strip_prefix("<?xml")?;
    let decl = decl.get(..decl.find("?>")?)?;
    let rest = decl.get(decl.find("encoding")? + "encoding".len()..)?;
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let value = rest.get(1..)?;
    Some(value.get(..value.find(quote)?)?.to_owned())
}

/// Decode `bytes` (which start at `file_offset` in the file), replacing malformed
/// sequences with U+FFFD and reporting the first one.
fn transcode(
    encoding: &'static Encoding,
    bytes: &[u8],
    file_offset: usize,
) -> (String, Option<BpmnError>) {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(bytes.len());
    let mut malformed = None;
    let mut read_total = 0;
    loop {
        let rest = bytes.get(read_total..).unwrap_or_default();
        let needed = decoder.max_utf8_buffer_length_without_replacement(rest.len());
        text.reserve(needed.unwrap_or(rest.len()));
        let (result, read) = decoder.decode_to_string_without_replacement(rest, &mut text, true);
        read_total += read;
        match result {
            DecoderResult::InputEmpty => break,
            DecoderResult::OutputFull => {}
            DecoderResult::Malformed(bad, pending) => {
                let end = read_total.saturating_sub(usize::from(pending));
                let start = end.saturating_sub(usize::from(bad));
                if malformed.is_none() {
                    let shown: Vec<String> = bytes
                        .get(start..end)
                        .unwrap_or_default()
                        .iter()
                        .map(|b| format!("0x{b:02X}"))
                        .collect();
                    malformed = Some(BpmnError::NotWellFormed {
                        message: format!(
                            "invalid {} byte sequence {} at byte {} of the file",
                            encoding.name(),
                            shown.join(" "),
                            start + file_offset
                        ),
                        span: Span::new(text.len(), '\u{FFFD}'.len_utf8()),
                    });
                }
                text.push('\u{FFFD}');
            }
        }
    }
    (text, malformed)
}

/// Characters XML 1.0 allows.
pub(super) fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// The first character XML 1.0 does not allow, as a well-formedness error.
pub(super) fn first_illegal_char(text: &str) -> Option<BpmnError> {
    let (at, c) = suspect_offsets(text)
        .filter_map(|at| Some((at, text.get(at..)?.chars().next()?)))
        .find(|&(_, c)| !is_xml_char(c))?;
    Some(BpmnError::NotWellFormed {
        message: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
        span: Span::new(at, c.len_utf8()),
    })
}

/// The offsets of the bytes that may start a character XML does not allow, in order.
///
/// In UTF-8 text such a character is either a C0 control other than tab, line feed and
/// carriage return (one byte below 0x20) or U+FFFE / U+FFFF (three bytes starting with
/// 0xEF); surrogates cannot occur in a `str`. Both kinds of byte start a character. The
/// text is scanned a block at a time with a test the compiler turns into vector compares,
/// and only the rare block holding a suspect is looked at byte by byte.
fn suspect_offsets(text: &str) -> impl Iterator<Item = usize> + '_ {
    const BLOCK: usize = 64;
    let has_suspect = |block: &[u8]| block.iter().fold(false, |seen, &b| seen | is_suspect(b));
    text.as_bytes()
        .chunks(BLOCK)
        .enumerate()
        .filter(move |(_, block)| has_suspect(block))
        .flat_map(|(n, block)| {
            (block.iter().enumerate())
                .filter(|&(_, &b)| is_suspect(b))
                .map(move |(i, _)| n * BLOCK + i)
        })
}

/// A byte that may start a character XML does not allow (see [`suspect_offsets`]).
fn is_suspect(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0xEF
}
