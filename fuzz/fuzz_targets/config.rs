//! Decodes arbitrary UTF-8 as a flow config. Decoding may report anything but never
//! panics, and every diagnostic points inside the text.

#![no_main]

use cuga_flo::app::decode::decode;
use cuga_flo::source::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = SourceFile::new("fuzz_config.yaml", text);
    let (_, diags) = decode(&source);
    for d in &diags {
        for label in &d.labels {
            assert!(label.span.end() <= text.len(), "{d:?}");
        }
    }
});
