//! Parses arbitrary bytes as a BPMN document and, when that succeeds, runs every model
//! check. Neither may panic; every error span must lie inside the decoded text.

#![no_main]

use std::path::Path;

use cuga_flo::{bpmn, check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match bpmn::parse(Path::new("fuzz.bpmn"), data) {
        Ok(doc) => {
            let _ = check::check_model(&doc);
        }
        Err(errs) => {
            assert!(!errs.errors.is_empty());
            if let Some(text) = &errs.text {
                for e in &errs.errors {
                    if let Some(span) = e.span() {
                        assert!(span.end() <= text.text().len(), "{e:?}");
                    }
                }
            }
        }
    }
});
