use serde_json::{Value, json};

use crate::expr::{CmpOp, Language, Truth, parse, parse_in};
use crate::source::Span;

use Truth::{False as F, True as T, Unknown as U};

fn vars() -> Value {
    json!({
        "amount": 150,
        "price": 9.5,
        "zero": 0,
        "limit": "200",
        "status": "open",
        "name": "Ada Lovelace",
        "approved": true,
        "rejected": false,
        "nothing": null,
        "tags": ["urgent", "vip"],
        "scores": [3, 7, 12],
        "empty": [],
        "flags": [true, true],
        "order": {"total": 250, "customer": {"tier": "gold"}, "items": [{"price": 5}, {"price": 50}]},
        "Vacation Approval": "Approved",
        "due": "2024-03-01",
        "stamp": "2024-03-01T10:30:00Z",
        "systemStatus": "ALL SYSTEMS GO",
        "isCarReady": false,
        "riskLevels": ["green", "yellow"],
        "latestMilestoneId": "m-7",
    })
}

/// Every row: a FEEL condition (with Camunda 8's `=`) and its truth under [`vars`].
const CASES: &[(&str, Truth)] = &[
    // Comparisons: `=` is equality.
    ("=amount = 150", T),
    ("=amount = 151", F),
    ("=amount != 150", F),
    ("= amount > 100", T),
    ("=amount >= 150", T),
    ("=amount < 150", F),
    ("=amount <= 149.5", F),
    ("=price > 9", T),
    ("=status = \"open\"", T),
    ("=status != \"open\"", F),
    ("=status < \"p\"", T),
    ("=systemStatus = \"ALL SYSTEMS GO\"", T),
    ("=approved", T),
    ("=approved = true", T),
    ("=rejected", F),
    ("=not(isCarReady)", T),
    ("=not(approved)", F),
    // A numeric string compares with a number, as in cuga-flo's own conditions.
    ("=limit > 150", T),
    ("=limit = 200", T),
    // Three-valued: missing and null are UNKNOWN, and so are mismatched types.
    ("=missing > 1", U),
    ("=missing = \"x\"", U),
    ("=missing", U),
    ("=not(missing)", U),
    ("=nothing = 1", U),
    ("=status > 1", U),
    ("=approved > 1", U),
    ("=amount", U),
    ("=status = 1", U),
    // Null checks are decided.
    ("=latestMilestoneId != null", T),
    ("=latestMilestoneId = null", F),
    ("=missing = null", T),
    ("=missing != null", F),
    ("=nothing = null", T),
    ("=null = nothing", T),
    ("=is defined(missing)", F),
    ("=is defined(nothing)", T),
    ("=is defined(order.total)", T),
    ("=is defined(order.nope)", F),
    // Logic (Kleene).
    ("=amount > 100 and status = \"open\"", T),
    ("=amount > 100 and status = \"closed\"", F),
    ("=amount > 200 or approved", T),
    ("=missing > 1 and amount > 1000", F),
    ("=missing > 1 or amount > 100", T),
    ("=missing > 1 or amount > 1000", U),
    ("=missing > 1 and amount > 100", U),
    ("=not(amount > 100 and approved)", F),
    ("=(amount > 100) = true", T),
    // Lists, `in`, ranges, between.
    ("=amount in [1..200]", T),
    ("=amount in [1..150]", T),
    ("=amount in [1..150)", F),
    ("=amount in (150..200]", F),
    ("=amount in ]150..200]", F),
    ("=amount in [1..150[", F),
    ("=amount in (100, 150, 200)", T),
    ("=amount in [100, 200]", F),
    ("=status in (\"open\", \"blocked\")", T),
    ("=status in [\"closed\", \"blocked\"]", F),
    ("=status in \"open\"", T),
    ("=amount in > 100", T),
    ("=amount in (< 10, > 140)", T),
    ("=amount in (< 10, > 200)", F),
    ("=missing in [1..10]", U),
    ("=amount between 100 and 200", T),
    ("=amount between 151 and 200", F),
    ("=\"vip\" in tags", T),
    ("=\"gold\" in tags", F),
    ("=amount in scores", F),
    ("=12 in scores", T),
    ("=[1, 2] = [1, 2]", T),
    ("=[1, 2] = [1, 3]", F),
    // Path access and indexing.
    ("=order.total > 200", T),
    ("=order.customer.tier = \"gold\"", T),
    ("=order.customer.nope = \"gold\"", U),
    ("=order.missing.deeper = 1", U),
    ("=scores[1] = 3", T),
    ("=scores[-1] = 12", T),
    ("=scores[10] = 1", U),
    ("=count(scores[item > 5]) = 2", T),
    ("=count(order.items[price > 10]) = 1", T),
    ("=sum(order.items.price) = 55", T),
    // Names with spaces, and backtick names.
    ("=Vacation Approval = \"Approved\"", T),
    ("=`Vacation Approval` = \"Approved\"", T),
    // Built-ins.
    ("=contains(name, \"Love\")", T),
    ("=contains(name, \"love\")", F),
    ("=contains(missing, \"x\")", U),
    ("=starts with(name, \"Ada\")", T),
    ("=ends with(name, \"Ada\")", F),
    ("=string length(status) = 4", T),
    ("=upper case(status) = \"OPEN\"", T),
    ("=lower case(\"ABC\") = \"abc\"", T),
    // An escape FEEL does not define is kept as written (regular expressions).
    ("=string length(\"a\\.b\") = 4", T),
    ("=\"say \\\"hi\\\"\" = \"say \\u0022hi\\u0022\"", T),
    ("=substring(name, 1, 3) = \"Ada\"", T),
    ("=substring(name, -8) = \"Lovelace\"", T),
    ("=string(amount) = \"150\"", T),
    ("=number(limit) = 200", T),
    ("=count(tags) = 2", T),
    ("=count(empty) = 0", T),
    ("=count(missing) = 0", U),
    ("=sum(scores) = 22", T),
    ("=sum(1, 2, 3) = 6", T),
    ("=sum(empty) = 0", U),
    ("=min(scores) = 3", T),
    ("=max(scores) = 12", T),
    ("=max(\"a\", \"c\", \"b\") = \"c\"", T),
    ("=mean(scores) > 7", T),
    ("=all(flags)", T),
    ("=any([false, approved])", T),
    ("=list contains(tags, \"vip\")", T),
    ("=is empty(empty)", T),
    ("=abs(-3) = 3", T),
    ("=floor(2.7) = 2", T),
    ("=ceiling(2.1) = 3", T),
    // Arithmetic.
    ("=amount * 2 > 250", T),
    ("=amount / 4 = 37.5", T),
    ("=amount - zero = 150", T),
    ("=amount / zero > 1", U),
    ("=2 ** 10 = 1024", T),
    ("=-amount < 0", T),
    ("=\"a\" + \"b\" = \"ab\"", T),
    ("=amount + missing > 1", U),
    // Dates.
    ("=date(due) = date(\"2024-03-01\")", T),
    ("=date(due) < date(\"2024-12-31\")", T),
    ("=date(due) > @\"2024-02-29\"", T),
    ("=date(2024, 3, 1) = date(due)", T),
    ("=date(\"2024-02-30\") = date(due)", U),
    ("=date(due).month = 3", T),
    (
        "=date and time(stamp) > date and time(\"2024-03-01T10:00:00+00:00\")",
        T,
    ),
    (
        "=date and time(stamp) = date and time(\"2024-03-01T12:30:00+02:00\")",
        T,
    ),
    ("=date and time(stamp).hour = 10", T),
    ("=date(due) < today()", T),
    ("=date and time(stamp) < now()", T),
    ("=date(due) < now()", U),
    ("=due < today()", U),
    // Quantifiers and if.
    ("=some risk in riskLevels satisfies risk = \"yellow\"", T),
    ("=every risk in riskLevels satisfies risk = \"yellow\"", F),
    ("=some s in scores satisfies s > 10", T),
    ("=every s in scores satisfies s > 1", T),
    ("=some x in missing satisfies x > 1", U),
    ("=if amount > 100 then approved else rejected", T),
    ("=if missing then true else false", U),
];

#[test]
fn feel_conditions_evaluate_with_three_valued_logic() {
    let v = vars();
    let mut failures = Vec::new();
    for (src, want) in CASES {
        match parse(src) {
            Ok(e) => {
                assert_eq!(e.language(), Language::Feel, "{src}");
                let got = e.eval(&v);
                if got != *want {
                    failures.push(format!("{src}: expected {want}, got {got}"));
                }
            }
            Err(e) => failures.push(format!("{src}: does not parse: {e} at {:?}", e.span)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_language_attribute_naming_feel_reads_the_text_as_feel_with_or_without_equals() {
    let v = vars();
    for language in [
        "https://www.omg.org/spec/DMN/20191111/FEEL/",
        "http://www.omg.org/spec/FEEL/20140401",
        "feel",
        "FEEL",
    ] {
        let e = parse_in("Vacation Approval = \"Approved\"", Some(language)).unwrap();
        assert_eq!(e.language(), Language::Feel, "{language}");
        assert_eq!(e.eval(&v), T, "{language}");
        let e = parse_in("=amount > 1", Some(language)).unwrap();
        assert_eq!(e.eval(&v), T, "{language}");
    }
    for language in [None, Some("http://www.w3.org/1999/XPath"), Some("juel")] {
        let e = parse_in("${amount} > 1", language).unwrap();
        assert_eq!(e.language(), Language::CugaFlo);
    }
}

#[test]
fn juel_deferred_form_reads_like_dollar() {
    let v = vars();
    assert_eq!(parse("#{amount > 100}").unwrap().eval(&v), T);
    assert_eq!(
        parse("#{status == 'open'} && ${approved}")
            .unwrap()
            .eval(&v),
        T
    );
}

/// Every row: a FEEL text, the message it must give, the text the error points at, and
/// whether it is "unsupported" (valid FEEL outside the subset) rather than malformed.
const ERRORS: &[(&str, &str, &str, bool)] = &[
    ("=x == 1", "`==` is not a FEEL operator", "==", false),
    ("=x > 1 & y", "`&` is not a FEEL operator", "&", false),
    ("=!x", "`!` is not a FEEL operator", "!", false),
    (
        "=x = 'ab",
        "FEEL strings are written in double quotes",
        "'",
        false,
    ),
    ("=x = \"a", "unterminated string", "\"a", false),
    ("=", "empty FEEL expression", "", false),
    ("=x >", "unexpected end of expression", "", false),
    ("=(x > 1", "unexpected end of expression", "", false),
    ("=not x", "`not` is a function in FEEL", "not", false),
    ("=a < b < c", "comparisons can't be chained", "<", false),
    (
        "=${x} > 1",
        "`${` does not belong in a FEEL expression",
        "${",
        false,
    ),
    (
        "=matches(x, \"a+\")",
        "the FEEL function `matches` is not supported",
        "matches",
        true,
    ),
    (
        "=date(x) > now() - duration(\"P1D\")",
        "the FEEL function `duration` is not supported",
        "duration",
        true,
    ),
    (
        "=myCheck(x)",
        "calling `myCheck` (not a built-in function cuga-flo knows)",
        "myCheck",
        true,
    ),
    (
        "=for i in xs return i > 1",
        "a `for` expression is not supported",
        "for",
        true,
    ),
    (
        "={a: 1}.a = 1",
        "a context literal `{...}` is not supported",
        "{",
        true,
    ),
    (
        "=x instance of number",
        "`instance of` is not supported",
        "instance",
        true,
    ),
    (
        "=contains(string: x)",
        "a named argument in `contains(...)` is not supported",
        ":",
        true,
    ),
    ("=x = @\"P1D\"", "the temporal literal", "@\"P1D\"", true),
    (
        "=string length(a, b) = 1",
        "`string length` takes 1 argument, found 2",
        "string length",
        false,
    ),
];

#[test]
fn feel_errors_name_the_construct_and_point_at_it() {
    for (src, message, at, unsupported) in ERRORS {
        let e = match parse(src) {
            Ok(e) => panic!("{src:?} should not parse, got {e}"),
            Err(e) => e,
        };
        assert!(
            e.message.contains(message),
            "{src:?}: message {:?} should contain {message:?}",
            e.message
        );
        assert_eq!(e.language, Language::Feel, "{src}");
        assert_eq!(e.unsupported, *unsupported, "{src}: {}", e.message);
        let offset = if at.is_empty() {
            src.len()
        } else {
            src.rfind(at).unwrap()
        };
        assert_eq!(
            e.span.offset, offset,
            "{src:?}: {} at {:?}",
            e.message, e.span
        );
        if !at.is_empty() {
            assert_eq!(e.span, Span::new(offset, at.len()), "{src:?}");
        }
        assert!(
            !e.help.as_deref().unwrap_or("").contains("use `==`"),
            "{src}: FEEL is never told to use `==`"
        );
    }
}

#[test]
fn variables_literals_and_comparisons_of_feel_conditions() {
    let e = parse("=order.total > 100 and status in (\"a\", \"b\") and not(flag)").unwrap();
    assert_eq!(e.variables(), ["order.total", "status", "flag"]);
    let e = parse("=some r in risks satisfies r = limit").unwrap();
    assert_eq!(e.variables(), ["risks", "limit"]);
    let e = parse("=Vacation Approval = \"Approved\"").unwrap();
    assert_eq!(e.variables(), ["Vacation Approval"]);
    let cmp = e.comparisons();
    assert_eq!(cmp.len(), 1);
    assert_eq!(cmp[0].variable, "Vacation Approval");
    assert_eq!(cmp[0].op, CmpOp::Eq);
    assert_eq!(cmp[0].literals, [json!("Approved")]);
    let e = parse("=100 < amount").unwrap();
    assert_eq!(e.comparisons()[0].op, CmpOp::Gt);
    let e = parse("=approved").unwrap();
    assert_eq!(e.comparisons()[0].literals, [json!(true)]);
    let e = parse("=x != null").unwrap();
    assert_eq!(e.comparisons()[0].op, CmpOp::Ne);
    assert_eq!(e.literals(), Vec::<Value>::new());
}

#[test]
fn feel_display_round_trips() {
    for (src, _) in CASES {
        let e = parse(src).unwrap();
        let again = parse(&e.to_string()).unwrap_or_else(|err| panic!("{src} → {e}: {err}"));
        assert_eq!(again.feel_ast(), e.feel_ast(), "{src}");
    }
}

#[test]
fn deep_nesting_and_huge_quantifiers_are_bounded() {
    let deep = format!("={}x{}", "(".repeat(200), ")".repeat(200));
    let e = parse(&deep).unwrap_err();
    assert!(e.message.contains("nested too deeply"), "{}", e.message);
    let neg = format!("={}1 > 0", "-".repeat(200));
    assert!(parse(&neg).is_err());
    let big = json!({"xs": (0..1000).collect::<Vec<_>>()});
    let e = parse("=some a in xs, b in xs, c in xs satisfies a + b + c < 0").unwrap();
    assert_eq!(e.eval(&big), U);
}
