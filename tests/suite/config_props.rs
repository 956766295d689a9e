//! The flow-config decoder never panics and always points inside the file, whatever the
//! file holds: random text, and random edits of a real config.

use cuga_flo::app::decode::decode;
use cuga_flo::source::SourceFile;
use proptest::prelude::*;

const REAL: &str =
    include_str!("../../applications/incident_response/config/incident_response_config.yaml");

fn assert_in_bounds(text: &str) {
    let source = SourceFile::new("p.yaml", text);
    let (_, diags) = decode(&source);
    for d in &diags {
        for label in &d.labels {
            assert!(label.span.end() <= text.len(), "{d:?}");
            assert!(text.is_char_boundary(label.span.offset), "{d:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        assert_in_bounds(&text);
    }

    #[test]
    fn yaml_shaped_text_never_panics(text in "[a-z_:{}\\[\\],\\-\\n \"'&*!|>#0-9.]{0,300}") {
        assert_in_bounds(&text);
    }

    #[test]
    fn edits_of_a_real_config_never_panic(at in 0usize..REAL.len(), cut in 0usize..40, insert in "[a-z:\\-\\n {}\\[\\]'\"]{0,12}") {
        let mut at = at;
        while !REAL.is_char_boundary(at) { at -= 1; }
        let mut end = (at + cut).min(REAL.len());
        while !REAL.is_char_boundary(end) { end -= 1; }
        let text = format!("{}{}{}", &REAL[..at], insert, &REAL[end..]);
        assert_in_bounds(&text);
    }
}
