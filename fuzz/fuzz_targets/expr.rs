//! Parses arbitrary UTF-8 as a condition. A parse error must point inside the text; a
//! parsed condition must evaluate without panicking and its canonical text must parse back
//! to an equal syntax tree.

#![no_main]

use cuga_flo::expr::{Value, parse};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let vars = match json!({
        "a": 1,
        "b": "0.75",
        "c": true,
        "d": null,
        "s": "agent",
        "f": 2.5,
        "o": {"x": [1, "two", false], "y": {"z": -3}},
        "l": [1, 2, 3],
    }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    match parse(src) {
        Err(e) => {
            assert!(e.span.end() <= src.len(), "{src:?}: {e:?}");
            assert!(src.is_char_boundary(e.span.offset), "{src:?}: {e:?}");
            assert!(src.is_char_boundary(e.span.end()), "{src:?}: {e:?}");
        }
        Ok(expr) => {
            let _ = expr.eval(&vars);
            let _ = (expr.variables(), expr.literals(), expr.comparisons());
            let text = expr.to_string();
            let again =
                parse(&text).unwrap_or_else(|e| panic!("{src:?} → {text:?} does not parse: {e:?}"));
            assert_eq!(again.ast(), expr.ast(), "{src:?} → {text:?}");
            assert_eq!(again.to_string(), text);
            assert_eq!(again.eval(&vars), expr.eval(&vars));
        }
    }
});
