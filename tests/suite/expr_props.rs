//! Property tests for the condition language: random conditions (generated as text) over
//! random variable maps.

use cuga_flo::expr::{Expr, Truth, Value, parse};
use proptest::prelude::*;
use serde_json::{Map, json};

/// A value a variable may hold.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(|i| json!(i)),
        prop::sample::select(vec![0.75, -2.5, 1.0, 3.25]).prop_map(|f| json!(f)),
        prop::sample::select(vec!["agent", "x", "0.75", "2", "", "it's"]).prop_map(|s| json!(s)),
        Just(json!([1, "x"])),
        Just(json!({"x": 1})),
    ]
}

/// Variables `a`..`d`, an object `o` and an array `arr`, each possibly missing.
fn variables() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(value()),
    )
        .prop_map(|(a, b, c, d, ox, arr0)| {
            let mut map = Map::new();
            for (name, v) in [("a", a), ("b", b), ("c", c), ("d", d)] {
                if let Some(v) = v {
                    map.insert(name.to_owned(), v);
                }
            }
            if let Some(x) = ox {
                map.insert("o".to_owned(), json!({ "x": x }));
            }
            if let Some(first) = arr0 {
                map.insert("arr".to_owned(), json!([first]));
            }
            map
        })
}

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..5).prop_map(|i| i.to_string()),
        prop::sample::select(vec!["0.75", "-2.5", "1.0", "3.25e0", "1e-3"]).prop_map(String::from),
        prop::sample::select(vec![
            "'agent'",
            "\"x\"",
            "'0.75'",
            "'2'",
            "''",
            r"'it\'s'",
            r#""tab\tnew\nline \\ \"q\"""#,
        ])
        .prop_map(String::from),
        prop::sample::select(vec!["agent", "x", "release-1.2"]).prop_map(String::from),
        prop::sample::select(vec!["true", "false", "True", "False", "null", "None"])
            .prop_map(String::from),
    ]
}

fn variable() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d", "o.x", "arr.0", "missing", " a "])
        .prop_map(|name| format!("${{{name}}}"))
}

fn operand() -> impl Strategy<Value = String> {
    prop_oneof![3 => variable(), 2 => literal()]
}

fn list() -> impl Strategy<Value = String> {
    prop::collection::vec(literal(), 0..4).prop_map(|items| format!("[{}]", items.join(", ")))
}

/// A comparison, a bare operand, or a JUEL-style `${...}` condition. A comparison reads a
/// variable on its left (two constants, one a bare word, are refused: `v == 2` is a
/// Python condition, not cuga-flo's), and a lone operand is a variable or a keyword.
fn atom() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]);
    let names = || prop::sample::select(vec!["a", "b", "c", "o.x"]);
    let keyword = prop::sample::select(vec!["true", "false", "True", "False", "null", "None"])
        .prop_map(String::from);
    prop_oneof![
        3 => (variable(), op, operand()).prop_map(|(l, op, r)| format!("{l} {op} {r}")),
        2 => (variable(), prop::sample::select(vec!["in", "not in"]), list())
            .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
        1 => prop_oneof![variable(), keyword],
        1 => (names(), prop::sample::select(vec!["==", ">", "<="]), literal())
            .prop_map(|(n, op, l)| format!("${{{n} {op} {l}}}")),
        1 => (names(), names()).prop_map(|(a, b)| format!("${{{a} != {b} || !{b}}}")),
    ]
}

/// A condition as text.
fn condition() -> impl Strategy<Value = String> {
    atom().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| format!("({e})")),
            (prop::sample::select(vec!["!", "not "]), inner.clone())
                .prop_map(|(not, e)| format!("{not}{e}")),
            (
                inner.clone(),
                prop::sample::select(vec!["&&", "and", "||", "or"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            prop::collection::vec(inner, 2..4).prop_map(|items| items.join(" || ")),
        ]
    })
}

fn must_parse(src: &str) -> Expr {
    parse(src).unwrap_or_else(|e| panic!("{src:?} should parse: {e:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn display_round_trips(src in condition()) {
        let e = must_parse(&src);
        let text = e.to_string();
        let again = must_parse(&text);
        prop_assert_eq!(again.ast(), e.ast(), "{} → {}", src, text);
        prop_assert_eq!(again.to_string(), text);
    }

    #[test]
    fn display_preserves_meaning(src in condition(), vars in variables()) {
        let e = must_parse(&src);
        let again = must_parse(&e.to_string());
        prop_assert_eq!(again.eval(&vars), e.eval(&vars));
    }

    #[test]
    fn double_negation(src in condition(), vars in variables()) {
        let e = must_parse(&src);
        prop_assert_eq!(must_parse(&format!("!!({src})")).eval(&vars), e.eval(&vars));
        prop_assert_eq!(must_parse(&format!("not not ({src})")).eval(&vars), e.eval(&vars));
    }

    #[test]
    fn de_morgan(a in condition(), b in condition(), vars in variables()) {
        let lhs = must_parse(&format!("!(({a}) && ({b}))")).eval(&vars);
        let rhs = must_parse(&format!("!({a}) || !({b})")).eval(&vars);
        prop_assert_eq!(lhs, rhs);
        let lhs = must_parse(&format!("!(({a}) || ({b}))")).eval(&vars);
        let rhs = must_parse(&format!("!({a}) && !({b})")).eval(&vars);
        prop_assert_eq!(lhs, rhs);
    }

    #[test]
    fn and_or_commute(a in condition(), b in condition(), vars in variables()) {
        prop_assert_eq!(
            must_parse(&format!("({a}) && ({b})")).eval(&vars),
            must_parse(&format!("({b}) && ({a})")).eval(&vars)
        );
        prop_assert_eq!(
            must_parse(&format!("({a}) || ({b})")).eval(&vars),
            must_parse(&format!("({b}) || ({a})")).eval(&vars)
        );
    }

    #[test]
    fn excluded_middle_is_never_false(src in condition(), vars in variables()) {
        let e = must_parse(&format!("({src}) || !({src})"));
        prop_assert_ne!(e.eval(&vars), Truth::False);
        let e = must_parse(&format!("({src}) && !({src})"));
        prop_assert_ne!(e.eval(&vars), Truth::True);
    }

    #[test]
    fn analysis_agrees_with_the_text(src in condition()) {
        let e = must_parse(&src);
        let text = e.to_string();
        for name in e.variables() {
            let wrapped = format!("${{{name}}}");
            prop_assert!(text.contains(&wrapped), "{} not in {}", name, text);
        }
        for c in e.comparisons() {
            prop_assert!(e.variables().contains(&c.variable));
            // A bare `${flag}` is reported as `flag == true` without a literal in the text.
            for lit in c.literals.iter().filter(|l| **l != Value::Bool(true)) {
                prop_assert!(e.literals().contains(lit));
            }
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>(), vars in variables()) {
        check_any(&src, &vars)?;
    }

    #[test]
    fn near_miss_strings_never_panic(
        src in r#"[${}()\[\],'"!=<>&| abinotrudeflsNTF0-9.\\_-]{0,40}"#,
        vars in variables(),
    ) {
        check_any(&src, &vars)?;
    }

    /// FEEL (`=`-marked) text made of FEEL's own words and symbols, in any order.
    #[test]
    fn feel_near_miss_strings_never_panic(
        src in r#"=((and|or|in|some|every|satisfies|not|if|then|else|null|true|false|between|date|count|string length|is defined|a|b|c|o\.x|arr|x|\(|\)|\[|\]|\]|\.\.|,|=|!=|<|>=|\+|\*|"x"|1|-1|2\.5|@"2024-01-01"|`a b`) ){0,14}"#,
        vars in variables(),
    ) {
        check_any(&src, &vars)?;
    }

    #[test]
    fn feel_arbitrary_strings_never_panic(src in any::<String>(), vars in variables()) {
        check_any(&format!("={src}"), &vars)?;
    }
}

/// Whatever `src` is, `parse` either fails with a span inside the text, or gives a condition
/// that evaluates and round-trips.
fn check_any(src: &str, vars: &Map<String, Value>) -> Result<(), TestCaseError> {
    match parse(src) {
        Err(e) => {
            prop_assert!(e.span.end() <= src.len(), "{:?}: {:?}", src, e);
            prop_assert!(src.is_char_boundary(e.span.offset), "{:?}: {:?}", src, e);
            prop_assert!(src.is_char_boundary(e.span.end()), "{:?}: {:?}", src, e);
            prop_assert!(!e.message.is_empty());
        }
        Ok(e) => {
            let _ = e.eval(vars);
            let _ = (e.variables(), e.literals(), e.comparisons());
            let again = must_parse(&e.to_string());
            prop_assert_eq!(again.ast(), e.ast(), "{:?} → {}", src, e);
            prop_assert_eq!(again.feel_ast(), e.feel_ast(), "{:?} → {}", src, e);
        }
    }
    Ok(())
}
