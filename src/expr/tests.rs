use serde_json::json;

use super::*;

fn vars(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(map) => map,
        _ => panic!("variables must be an object"),
    }
}

fn eval_with(src: &str, v: Value) -> Truth {
    parse(src)
        .unwrap_or_else(|e| panic!("{src:?} should parse: {e:?}"))
        .eval(&vars(v))
}

fn t(src: &str, v: Value) {
    assert_eq!(eval_with(src, v.clone()), Truth::True, "{src} with {v}");
}

fn f(src: &str, v: Value) {
    assert_eq!(eval_with(src, v.clone()), Truth::False, "{src} with {v}");
}

fn u(src: &str, v: Value) {
    assert_eq!(eval_with(src, v.clone()), Truth::Unknown, "{src} with {v}");
}

fn canon(src: &str) -> String {
    parse(src)
        .unwrap_or_else(|e| panic!("{src:?} should parse: {e:?}"))
        .to_string()
}

fn error(src: &str) -> ExprError {
    match parse(src) {
        Ok(e) => panic!("{src:?} should not parse, got {e}"),
        Err(e) => e,
    }
}

/// Asserts the error message contains `message` and its span is exactly the last
/// occurrence of `at` in `src`.
fn error_at(src: &str, message: &str, at: &str) -> ExprError {
    let e = error(src);
    assert!(
        e.message.contains(message),
        "{src:?}: message {:?} should contain {message:?}",
        e.message
    );
    let offset = src
        .rfind(at)
        .unwrap_or_else(|| panic!("{at:?} not in {src:?}"));
    assert_eq!(
        e.span,
        Span::new(offset, at.len()),
        "{src:?}: span of {:?} should be {at:?}",
        e.message
    );
    e
}

fn var(path: &str) -> Operand {
    Operand::Var(VarPath::new(path.split('.').map(str::to_owned).collect()).unwrap())
}

fn lit(v: Value) -> Operand {
    Operand::Literal(v)
}

fn cmp(left: Operand, op: CmpOp, right: Operand) -> Node {
    Node::Compare { left, op, right }
}

// ---------------------------------------------------------------- Truth

#[test]
fn truth_kleene_tables() {
    use Truth::{False as F, True as T, Unknown as U};
    assert_eq!((T.not(), F.not(), U.not()), (F, T, U));
    assert_eq!(!T, F);
    let and = [
        (T, T, T),
        (T, F, F),
        (T, U, U),
        (F, U, F),
        (U, U, U),
        (F, F, F),
    ];
    for (a, b, r) in and {
        assert_eq!(a.and(b), r, "{a} and {b}");
        assert_eq!(b.and(a), r, "{b} and {a}");
    }
    let or = [
        (T, T, T),
        (T, F, T),
        (T, U, T),
        (F, U, U),
        (U, U, U),
        (F, F, F),
    ];
    for (a, b, r) in or {
        assert_eq!(a.or(b), r, "{a} or {b}");
        assert_eq!(b.or(a), r, "{b} or {a}");
    }
    assert_eq!(Truth::from_bool(true), T);
    assert_eq!(Truth::from(false), F);
    assert_eq!(
        (T.to_string(), F.to_string(), U.to_string()),
        ("TRUE".into(), "FALSE".into(), "UNKNOWN".into())
    );
    assert_eq!(serde_json::to_value(U).unwrap(), json!("UNKNOWN"));
    assert_eq!(serde_json::to_value(T).unwrap(), json!("TRUE"));
}

// ---------------------------------------------------------------- syntax

#[test]
fn variable_references() {
    assert_eq!(
        parse("${approved}").unwrap().ast().unwrap(),
        &Node::Truthy(var("approved"))
    );
    assert_eq!(
        parse("${ order.total } > 10").unwrap().ast().unwrap(),
        &cmp(var("order.total"), CmpOp::Gt, lit(json!(10)))
    );
    assert_eq!(
        parse("${a-b_c.0.x-y}").unwrap().ast().unwrap(),
        &Node::Truthy(var("a-b_c.0.x-y"))
    );
    assert_eq!(canon("${  x  }"), "${x}");
}

#[test]
fn literals_of_every_kind() {
    let e = parse(
        "${x} in [1, -2, 3.5, -4e2, 5E-1, 'a', \"b\", true, True, false, False, null, None, word]",
    )
    .unwrap();
    assert_eq!(
        e.literals(),
        vec![
            json!(1),
            json!(-2),
            json!(3.5),
            json!(-400.0),
            json!(0.5),
            json!("a"),
            json!("b"),
            json!(true),
            json!(false),
            json!(null),
            json!("word"),
        ]
    );
    assert_eq!(
        canon("${x} in [1, -2, 3.5, 'it\\'s', \"say \\\"hi\\\"\", True, None, a.b-c]"),
        r#"${x} in [1, -2, 3.5, 'it\'s', 'say "hi"', true, null, 'a.b-c']"#
    );
    // Big integers stay exact; beyond u64 they become decimals.
    assert_eq!(
        parse("${x} == 18446744073709551615").unwrap().literals(),
        vec![json!(18446744073709551615u64)]
    );
    assert_eq!(
        parse("${x} == 99999999999999999999").unwrap().literals(),
        vec![json!(1e20)]
    );
}

#[test]
fn string_escapes() {
    let e = parse(r#"${s} == 'a\\b\'c\"d\ne\tf'"#).unwrap();
    assert_eq!(e.literals(), vec![json!("a\\b'c\"d\ne\tf")]);
    assert_eq!(e.to_string(), r#"${s} == 'a\\b\'c"d\ne\tf'"#);
    assert_eq!(parse(&e.to_string()).unwrap().ast(), e.ast());
    // The other quote needs no escape; non-ASCII text is fine.
    assert_eq!(
        parse(r#"${s} == "it's ünïcode}""#).unwrap().literals(),
        vec![json!("it's ünïcode}")]
    );
}

#[test]
fn bare_words_outside_are_strings() {
    let e = parse("${planning_preference} == agent").unwrap();
    assert_eq!(
        e.ast().unwrap(),
        &cmp(var("planning_preference"), CmpOp::Eq, lit(json!("agent")))
    );
    assert_eq!(e.to_string(), "${planning_preference} == 'agent'");
    assert_eq!(
        parse("${v} == release-1.2_rc").unwrap().literals(),
        vec![json!("release-1.2_rc")]
    );
}

#[test]
fn juel_form() {
    let e = parse("${gatewayDecision == 'Flow_x'}").unwrap();
    assert_eq!(
        e.ast().unwrap(),
        &cmp(var("gatewayDecision"), CmpOp::Eq, lit(json!("Flow_x")))
    );
    assert_eq!(e.to_string(), "${gatewayDecision} == 'Flow_x'");
    assert_eq!(
        canon("${credit_score > 0.6 && !approved}"),
        "${credit_score} > 0.6 && !${approved}"
    );
    assert_eq!(canon("${a > b}"), "${a} > ${b}");
    assert_eq!(canon("${x not in [1, 2]}"), "${x} not in [1, 2]");
    // A `${}` group holding a value is that value.
    assert_eq!(canon("${(x)} == 1"), "${x} == 1");
    assert_eq!(canon("${true}"), "true");
    // A group holding a condition combines with others.
    assert_eq!(canon("${a > 1 || b} && ${c}"), "(${a} > 1 || ${b}) && ${c}");
}

#[test]
fn operators_and_keywords() {
    assert_eq!(
        canon("${a} == 1 and ${b} != 2 or not ${c} < 3"),
        "${a} == 1 && ${b} != 2 || !(${c} < 3)"
    );
    assert_eq!(
        canon("${a}<=1&&${b}>=2||${c}>3&&${d}<4"),
        "${a} <= 1 && ${b} >= 2 || ${c} > 3 && ${d} < 4"
    );
    assert_eq!(canon("${x} not in ['a']"), "${x} not in ['a']");
    assert_eq!(canon("!!${x}"), "!!${x}");
    assert_eq!(canon("not not ${x}"), "!!${x}");
    // `!` binds looser than comparisons.
    assert_eq!(
        parse("!${a} == 1").unwrap().ast().unwrap(),
        &Node::Not(Box::new(cmp(var("a"), CmpOp::Eq, lit(json!(1)))))
    );
}

#[test]
fn precedence_and_parentheses() {
    let e = parse("${a} || ${b} && ${c}").unwrap();
    assert_eq!(
        e.ast().unwrap(),
        &Node::Or(vec![
            Node::Truthy(var("a")),
            Node::And(vec![Node::Truthy(var("b")), Node::Truthy(var("c"))])
        ])
    );
    assert_eq!(canon("(${a} || ${b}) && ${c}"), "(${a} || ${b}) && ${c}");
    assert_eq!(canon("${a} || (${b} || ${c})"), "${a} || (${b} || ${c})");
    assert_eq!(canon("((${a}))"), "${a}");
    assert_eq!(canon("(${a}) > (1)"), "${a} > 1");
    assert_eq!(canon("!(${a} && ${b})"), "!(${a} && ${b})");
    for src in [
        "(${a} || ${b}) && ${c}",
        "${a} || (${b} || ${c})",
        "(${a} && ${b}) && ${c}",
        "!(!${a} || ${b} in [1])",
    ] {
        let e = parse(src).unwrap();
        assert_eq!(parse(&e.to_string()).unwrap().ast(), e.ast(), "{src}");
    }
}

#[test]
fn literal_on_the_left_and_literal_conditions() {
    assert_eq!(
        parse("0.5 < ${x}").unwrap().ast().unwrap(),
        &cmp(lit(json!(0.5)), CmpOp::Lt, var("x"))
    );
    assert_eq!(parse("true").unwrap().eval(&vars(json!({}))), Truth::True);
    assert_eq!(parse("False").unwrap().eval(&vars(json!({}))), Truth::False);
    assert_eq!(
        parse("'yes'").unwrap().eval(&vars(json!({}))),
        Truth::Unknown
    );
    assert_eq!(
        parse("1 == 1.0").unwrap().eval(&vars(json!({}))),
        Truth::True
    );
}

#[test]
fn empty_list_and_trailing_comma() {
    f("${x} in []", json!({"x": 1}));
    u("${x} in []", json!({}));
    assert_eq!(canon("${x} in [1, 2,]"), "${x} in [1, 2]");
}

// ---------------------------------------------------------------- errors

#[test]
fn error_empty() {
    for src in ["", "   ", "\n\t "] {
        let e = error(src);
        assert_eq!(e.message, "empty condition");
        assert_eq!(e.span, Span::new(0, src.len()));
    }
}

#[test]
fn error_single_equals_and_odd_operators() {
    let e = error_at("${a} = 1", "`=` is not a comparison operator", "=");
    assert_eq!(
        e.help.as_deref(),
        Some("use `==` to compare (a FEEL condition starts with `=`: `=x = 1`)")
    );
    let e = error_at("${a} => 1", "unknown operator `=>`", "=>");
    assert_eq!(e.help.as_deref(), Some("did you mean `>=`?"));
    let e = error_at("${a} =< 1", "unknown operator `=<`", "=<");
    assert_eq!(e.help.as_deref(), Some("did you mean `<=`?"));
    error_at("${a} <> 1", "unknown operator `<>`", "<>");
    error_at("${a} & ${b}", "unexpected `&`", "&");
    error_at("${a} | ${b}", "unexpected `|`", "|");
    error_at("${a} ≥ 1", "unexpected character `≥`", "≥");
    error_at("${a} == @", "unexpected character `@`", "@");
}

#[test]
fn error_missing_values() {
    error_at("${a} >", "expected a value after `>`", ">");
    error_at("${a} > )", "expected a value after `>`", ")");
    error_at("${a} == && ${b}", "expected a value after `==`", "&&");
    error_at("${a} and", "expected a value after `and`", "and");
    error_at("${a} || ", "expected a value after `||`", "||");
    error_at("not", "expected a value after `not`", "not");
    error_at("${a} == 1 and or", "expected a value after `and`", "or");
    error_at("()", "expected a value after `(`", ")");
    error_at("> 1", "unexpected `>`", ">");
    error_at("and ${x}", "unexpected `and`", "and");
}

#[test]
fn error_unbalanced() {
    let e = error_at("${a} > 1)", "unexpected `)`", ")");
    assert!(e.help.is_some());
    error_at("(${a} > 1", "unclosed `(`", "(");
    error_at("${a} > 1}", "unexpected `}`", "}");
    error_at("${a > 1", "unclosed `${`", "${");
    error_at("${a} == ${b", "unclosed `${`", "${");
    error_at("${a} in [1, 2", "unclosed `[`", "[");
    error_at("${a} in [1 2]", "unexpected `2`", "2");
    error_at("${a} in [1, ${b}]", "only hold literal values", "${");
    error_at("${a in [1, b]}", "only hold literal values", "b");
    error_at("(${a} > 1 ${b})", "unexpected `${`", "${");
    error_at("${a b}", "unexpected `b`", "b");
}

#[test]
fn error_variables() {
    error_at("${} == 1", "empty `${}`", "${}");
    error_at("${a > ${b}}", "nested `${` is not allowed", "${");
    error_at("${a..b}", "invalid variable path `a..b`", "a..b");
    error_at("${a.}", "invalid variable path", "a.");
    error_at("$a == 1", "expected `{` after `$`", "$");
    error_at("{a} == 1", "unexpected `{`", "{");
    error_at("${prénom}", "unexpected character `é`", "é");
}

#[test]
fn error_strings_and_numbers() {
    error_at("${a} == 'abc", "unterminated string", "'abc");
    error_at("${a} == \"abc\\\"", "unterminated string", "\"abc\\\"");
    error_at(r"${a} == 'a\qb'", "unknown escape `\\q`", r"\q");
    error_at("${a} == 1abc", "invalid number `1abc`", "1abc");
    error_at("${a} == 1.", "invalid number `1.`", "1.");
    error_at("${a} == 1.2.3", "invalid number `1.2.3`", "1.2.3");
    error_at("${a} == 1e", "invalid number `1e`", "1e");
    error_at("${a} == - 1", "expected a digit after `-`", "-");
    error_at("${a} == 1e999", "is too large", "1e999");
}

#[test]
fn error_chained_and_misplaced() {
    let e = error_at("${a} < ${b} < ${c}", "comparisons can't be chained", "<");
    assert!(e.help.unwrap().contains("and"));
    error_at(
        "1 == ${a} not in [1]",
        "comparisons can't be chained",
        "not in",
    );
    error_at(
        "(${a} > 1) == true",
        "a condition can't be compared with `==`",
        "==",
    );
    error_at("${a} == (${b} > 1)", "found a condition", "(${b} > 1)");
    error_at("${a} in ${b}", "expected a list after `in`", "${b}");
    error_at("${a} == [1]", "a list can't be compared with `==`", "[1]");
    error_at("[1] in [1, 2]", "only be used on the right of `in`", "[1]");
    error_at("[1, 2]", "a list is not a condition", "[1, 2]");
    error_at("${a} ${b}", "unexpected `${`", "${");
}

#[test]
fn error_keyword_lookalikes() {
    let e = error_at("${a} == TRUE", "`TRUE` is not a keyword", "TRUE");
    assert!(e.help.unwrap().contains("`true`"));
    let e = error_at("${a} == NONE", "`NONE` is not a keyword", "NONE");
    assert!(e.help.unwrap().contains("`null`"));
    let e = error_at("${a} == 1 AND ${b} == 2", "unexpected `AND`", "AND");
    assert_eq!(e.help.as_deref(), Some("keywords are lowercase: `and`"));
    let e = error_at("${a} eq 'x'", "unexpected `eq`", "eq");
    assert_eq!(e.help.as_deref(), Some("write `==` to compare"));
}

#[test]
fn error_nesting_limit() {
    let deep = format!("{}${{a}}{}", "(".repeat(200), ")".repeat(200));
    let e = error(&deep);
    assert!(e.message.contains("nested too deeply"));
    assert_eq!(e.span, Span::new(MAX_DEPTH, 1));
    let nots = format!("{}${{a}}", "!".repeat(10_000));
    assert!(error(&nots).message.contains("nested too deeply"));
    let ok = format!("{}${{a}}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert!(parse(&ok).is_ok());
    // Long flat chains are fine (no recursion per operand).
    let chain = vec!["${a}"; 50_000].join(" || ");
    assert_eq!(
        parse(&chain).unwrap().eval(&vars(json!({"a": false}))),
        Truth::False
    );
}

#[test]
fn error_spans_can_be_shifted() {
    let e = error("${a} = 1").shifted(100);
    assert_eq!(e.span, Span::new(105, 1));
    assert_eq!(e.to_string(), "`=` is not a comparison operator");
}

// ---------------------------------------------------------------- evaluation

#[test]
fn upstream_examples() {
    t("${credit_score} > 0.6", json!({"credit_score": 0.75}));
    t("${credit_score} > 0.6", json!({"credit_score": "0.75"}));
    u("${credit_score} > 0.6", json!({}));
    f("${credit_score} > 0.6", json!({"credit_score": 0.5}));
    t(
        "${planning_preference} == agent",
        json!({"planning_preference": "agent"}),
    );
    f(
        "${planning_preference} == agent",
        json!({"planning_preference": "human"}),
    );
    t("${p} == 'agent'", json!({"p": "agent"}));
    t("${approved} == true", json!({"approved": true}));
    t("${approved} == True", json!({"approved": true}));
    f("${approved} == True", json!({"approved": false}));
    t("${a} > ${b}", json!({"a": 3, "b": 2}));
    f("${a} > ${b}", json!({"a": 2, "b": 3}));
    t(
        "${gatewayDecision == 'Flow_x'}",
        json!({"gatewayDecision": "Flow_x"}),
    );
    f(
        "${gatewayDecision == 'Flow_x'}",
        json!({"gatewayDecision": "Flow_y"}),
    );
    t("${x} in [1, 2, \"three\"]", json!({"x": 2}));
    t("${x} in [1, 2, \"three\"]", json!({"x": "three"}));
    t("${credit_score > 0.6}", json!({"credit_score": 0.61}));
}

#[test]
fn missing_variables_and_paths() {
    let v = json!({"order": {"total": 120, "items": [{"sku": "A"}, {"sku": "B"}]}, "n": 1});
    t("${order.total} >= 100", v.clone());
    t("${order.items.1.sku} == 'B'", v.clone());
    u("${order.items.2.sku} == 'B'", v.clone());
    u("${order.missing} == 1", v.clone());
    u("${order.items.x} == 1", v.clone());
    u("${n.x} == 1", v.clone());
    u("${nope} == 1", v.clone());
    u("${nope} != 1", v.clone());
    u("${nope} == null", v.clone());
    u("${nope}", v.clone());
    u("${order.total} > ${nope}", v.clone());
}

#[test]
fn numbers() {
    let v = json!({"i": 3, "f": 3.0, "neg": -2, "big": 18446744073709551615u64, "h": 0.1});
    t("${i} == ${f}", v.clone());
    t("${i} == 3.0", v.clone());
    t("${neg} < 0", v.clone());
    t("${neg} <= -2", v.clone());
    t("${neg} >= -2.5", v.clone());
    f("${i} != 3", v.clone());
    t("${big} > 18446744073709551614", v.clone());
    t("${big} == 18446744073709551615", v.clone());
    t("${h} < 1e0", v.clone());
}

#[test]
fn numeric_strings() {
    let v = json!({"s": "0.75", "i": "42", "pad": " 7 ", "word": "abc", "n": 42, "inf": "inf", "e": "1e3"});
    t("${s} == 0.75", v.clone());
    t("${s} >= 0.7", v.clone());
    t("${i} == 42", v.clone());
    t("42 == ${i}", v.clone());
    t("${n} == ${i}", v.clone());
    t("${pad} == 7", v.clone());
    t("${e} == 1000", v.clone());
    u("${word} == 42", v.clone());
    u("${word} != 42", v.clone());
    u("${inf} > 1", v.clone());
    // Two strings compare as strings.
    f("${i} == '42.0'", v.clone());
    t("${i} < '5'", v.clone());
}

#[test]
fn strings() {
    let v = json!({"s": "banana"});
    t("${s} == 'banana'", v.clone());
    f("${s} == 'Banana'", v.clone());
    t("${s} > 'apple'", v.clone());
    t("${s} < 'cherry'", v.clone());
    t("${s} >= 'banana'", v.clone());
    f("${s} < 'Banana'", v.clone());
}

#[test]
fn booleans() {
    let v = json!({"b": true, "c": false, "n": 1, "s": "true"});
    t("${b}", v.clone());
    f("${c}", v.clone());
    t("!${c}", v.clone());
    t("${b} != false", v.clone());
    u("${b} > false", v.clone());
    u("${b} == 1", v.clone());
    u("${b} != 1", v.clone());
    u("${s} == true", v.clone());
    u("${n}", v.clone());
    u("${s}", v.clone());
}

#[test]
fn nulls() {
    let v = json!({"z": null, "a": 1, "arr": [1]});
    t("${z} == null", v.clone());
    t("${z} == None", v.clone());
    f("${z} != null", v.clone());
    f("${a} == null", v.clone());
    t("${a} != null", v.clone());
    f("${arr} == null", v.clone());
    u("${z} < 1", v.clone());
    u("${z} >= null", v.clone());
    u("${z}", v.clone());
    f("${z} == 1", v.clone());
}

#[test]
fn arrays_and_objects_are_incomparable() {
    let v = json!({"arr": [1, 2], "obj": {"k": 1}});
    u("${arr} == ${arr}", v.clone());
    u("${obj} == 1", v.clone());
    u("${obj} != 'x'", v.clone());
    u("${arr} in [1]", v.clone());
}

#[test]
fn membership() {
    let v = json!({"n": 2, "s": "b", "missing_list": null, "ns": "2", "b": true});
    t("${n} in [1, 2, 3]", v.clone());
    f("${n} in [1, 3]", v.clone());
    f("${n} not in [1, 2]", v.clone());
    t("${n} not in [1, 3]", v.clone());
    t("${s} in ['a', 'b']", v.clone());
    // Equal to an item: TRUE even though another item was incomparable.
    t("${n} in ['x', 2]", v.clone());
    // Equal to none, some item incomparable: UNKNOWN.
    u("${n} in ['x', 3]", v.clone());
    u("${n} not in ['x', 3]", v.clone());
    // Numeric strings and null items follow the comparison rules.
    t("${ns} in [1, 2]", v.clone());
    f("${n} in [null, 1]", v.clone());
    t("${missing_list} in [null]", v.clone());
    t("${b} in [true]", v.clone());
    u("${b} in [1]", v.clone());
    u("${nope} in [1]", v.clone());
    u("${nope} not in [1]", v.clone());
    // Literal on the left.
    t("2 in [1, 2]", v.clone());
}

#[test]
fn kleene_connectives() {
    let v = json!({"t": true, "f": false});
    f("${f} && ${nope}", v.clone());
    u("${t} && ${nope}", v.clone());
    t("${t} || ${nope}", v.clone());
    u("${f} || ${nope}", v.clone());
    u("!${nope}", v.clone());
    u("not (${nope} == 1)", v.clone());
    t("${t} and (${f} or ${t})", v.clone());
    f("!${t}", v.clone());
}

#[test]
fn apply_on_values() {
    assert_eq!(CmpOp::Lt.apply(&json!(1), &json!("2")), Truth::True);
    assert_eq!(CmpOp::In.apply(&json!(1), &json!([0, 1])), Truth::True);
    assert_eq!(CmpOp::NotIn.apply(&json!(1), &json!([0])), Truth::True);
    assert_eq!(CmpOp::In.apply(&json!(1), &json!(1)), Truth::Unknown);
}

#[test]
fn variable_sources() {
    let e = parse("${a.b} == 1").unwrap();
    let mut btree = std::collections::BTreeMap::new();
    btree.insert("a".to_owned(), json!({"b": 1}));
    assert_eq!(e.eval(&btree), Truth::True);
    let mut hash = std::collections::HashMap::new();
    hash.insert("a".to_owned(), json!({"b": 2}));
    assert_eq!(e.eval(&hash), Truth::False);
    assert_eq!(e.eval(&json!({"a": {"b": 1}})), Truth::True);
    assert_eq!(e.eval(&json!(5)), Truth::Unknown);
}

// ---------------------------------------------------------------- analysis

#[test]
fn variables_in_first_appearance_order() {
    let e = parse("${b} > 1 && (${a.x} == ${b} || ${c in [1]}) && !${a.x} && ${a}").unwrap();
    assert_eq!(e.variables(), vec!["b", "a.x", "c", "a"]);
}

#[test]
fn literals_are_distinct_in_order() {
    let e = parse("${a} == 1 || ${b} in [2, 1, 'x'] || 'x' == ${c} || ${d} == null").unwrap();
    assert_eq!(
        e.literals(),
        vec![json!(1), json!(2), json!("x"), json!(null)]
    );
}

#[test]
fn comparisons_with_flips() {
    let e = parse(
        "${a} >= 1 && 0.5 < ${b} && ${c} not in ['x', 2] && ${d} == ${e} && ${f} && 1 == 2 && !${g} == agent",
    )
    .unwrap();
    let got = e.comparisons();
    let want = vec![
        Comparison {
            variable: "a".into(),
            op: CmpOp::Ge,
            literals: vec![json!(1)],
        },
        Comparison {
            variable: "b".into(),
            op: CmpOp::Gt,
            literals: vec![json!(0.5)],
        },
        Comparison {
            variable: "c".into(),
            op: CmpOp::NotIn,
            literals: vec![json!("x"), json!(2)],
        },
        Comparison {
            variable: "f".into(),
            op: CmpOp::Eq,
            literals: vec![json!(true)],
        },
        Comparison {
            variable: "g".into(),
            op: CmpOp::Eq,
            literals: vec![json!("agent")],
        },
    ];
    assert_eq!(got, want);
    assert_eq!(
        serde_json::to_value(&got[2]).unwrap(),
        json!({"variable": "c", "op": "not_in", "literals": ["x", 2]})
    );
}

#[test]
fn display_round_trips() {
    for src in [
        "${a}",
        "${a.b.0} == 'x'",
        "${a} == 1 && ${b} != 2 || !(${c} < 3)",
        "!!${x}",
        "!(${a} || ${b})",
        "${x} in [1, -2.5, 'q', true, null]",
        "${x} not in []",
        "-1e-7 <= ${x}",
        "${s} == 'tab\\there\\nnew \\\\ \\' \"'",
        "${gatewayDecision == 'Flow_x'}",
        "true || false && null",
        "${a} == agent",
        "(${a} && ${b}) && (${c} || ${d}) || (${e} || ${f})",
    ] {
        let e = parse(src).unwrap();
        let text = e.to_string();
        let again = parse(&text).unwrap_or_else(|err| panic!("{text:?}: {err:?}"));
        assert_eq!(again.ast(), e.ast(), "{src} → {text}");
        assert_eq!(again.to_string(), text);
    }
}

#[test]
fn expr_keeps_its_source() {
    let e: Expr = "${a}==1".parse().unwrap();
    assert_eq!(e.source(), "${a}==1");
    assert_eq!(e.to_string(), "${a} == 1");
}
