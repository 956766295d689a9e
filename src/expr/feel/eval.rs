//! Evaluation of a FEEL tree over the process variables. Values are FEEL's (null,
//! boolean, number, string, list, context, date, date and time, range); anything FEEL
//! would call an error is null, and null as the final result is UNKNOWN.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::{Arith, FeelNode, Test};
use crate::expr::eval::Num;
use crate::expr::{CmpOp, Truth, Variables};

/// At most this many combinations are tried by `some`/`every`; beyond, the result is null.
const MAX_COMBINATIONS: usize = 100_000;

const MS_PER_DAY: i64 = 86_400_000;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum FV {
    Null,
    Bool(bool),
    Num(Num),
    Str(String),
    List(Vec<FV>),
    Ctx(Map<String, Value>),
    /// Days since 1970-01-01.
    Date(i64),
    /// Milliseconds since the Unix epoch, UTC.
    DateTime(i64),
    Range(Box<RangeV>),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct RangeV {
    low: FV,
    high: FV,
    low_closed: bool,
    high_closed: bool,
}

impl FV {
    fn from_json(v: &Value) -> FV {
        match v {
            Value::Null => FV::Null,
            Value::Bool(b) => FV::Bool(*b),
            Value::Number(n) => FV::Num(Num::of(n)),
            Value::String(s) => FV::Str(s.clone()),
            Value::Array(items) => FV::List(items.iter().map(FV::from_json).collect()),
            Value::Object(map) => FV::Ctx(map.clone()),
        }
    }

    fn truth(&self) -> Truth {
        match self {
            FV::Bool(b) => Truth::from_bool(*b),
            _ => Truth::Unknown,
        }
    }

    fn from_truth(t: Truth) -> FV {
        match t {
            Truth::True => FV::Bool(true),
            Truth::False => FV::Bool(false),
            Truth::Unknown => FV::Null,
        }
    }
}

struct Scope<'a> {
    vars: &'a dyn Variables,
    /// Names bound by `some`/`every`.
    locals: Vec<(String, FV)>,
    /// The items of enclosing filters (innermost last).
    items: Vec<FV>,
}

impl Scope<'_> {
    /// The value of a name, if anything defines it.
    fn lookup(&self, name: &str) -> Option<FV> {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        if let Some(item) = self.items.last() {
            if name == "item" {
                return Some(item.clone());
            }
            if let FV::Ctx(map) = item
                && let Some(v) = map.get(name)
            {
                return Some(FV::from_json(v));
            }
        }
        self.vars.lookup(name).map(FV::from_json)
    }
}

/// The truth of a FEEL expression: TRUE or FALSE when it is a boolean, else UNKNOWN.
pub(in crate::expr) fn eval(node: &FeelNode, vars: &dyn Variables) -> Truth {
    let mut scope = Scope {
        vars,
        locals: Vec::new(),
        items: Vec::new(),
    };
    value(node, &mut scope).truth()
}

/// The value of a FEEL expression as JSON: `None` when it is null (or an error), or a
/// date, date-time or range (which JSON does not hold).
pub(in crate::expr) fn eval_value(node: &FeelNode, vars: &dyn Variables) -> Option<Value> {
    let mut scope = Scope {
        vars,
        locals: Vec::new(),
        items: Vec::new(),
    };
    to_json(&value(node, &mut scope))
}

fn to_json(v: &FV) -> Option<Value> {
    Some(match v {
        FV::Null | FV::Date(_) | FV::DateTime(_) | FV::Range(_) => return None,
        FV::Bool(b) => Value::Bool(*b),
        FV::Num(n) => n.to_json()?,
        FV::Str(s) => Value::String(s.clone()),
        FV::List(items) => Value::Array(
            items
                .iter()
                .map(|i| to_json(i).unwrap_or(Value::Null))
                .collect(),
        ),
        FV::Ctx(map) => Value::Object(map.clone()),
    })
}

fn value(node: &FeelNode, scope: &mut Scope) -> FV {
    match node {
        FeelNode::Literal(v) => FV::from_json(v),
        FeelNode::Temporal(s) => temporal(s).unwrap_or(FV::Null),
        FeelNode::Name(n) => scope.lookup(n).unwrap_or(FV::Null),
        FeelNode::Member(inner, m) => member(value(inner, scope), m),
        FeelNode::Index(list, filter) => index(value(list, scope), filter, scope),
        FeelNode::List(items) => FV::List(items.iter().map(|i| value(i, scope)).collect()),
        FeelNode::Range(r) => FV::Range(Box::new(RangeV {
            low: value(&r.low, scope),
            high: value(&r.high, scope),
            low_closed: r.low_closed,
            high_closed: r.high_closed,
        })),
        FeelNode::Neg(inner) => match value(inner, scope) {
            FV::Num(Num::Int(i)) => FV::Num(Num::Int(-i)),
            FV::Num(Num::Float(f)) => FV::Num(Num::Float(-f)),
            _ => FV::Null,
        },
        FeelNode::Arith(op, a, b) => {
            let (a, b) = (value(a, scope), value(b, scope));
            arith(*op, &a, &b)
        }
        FeelNode::Compare(op, a, b) => {
            let (a, b) = (value(a, scope), value(b, scope));
            FV::from_truth(compare(&a, *op, &b))
        }
        FeelNode::IsNull(inner, negated) => {
            let is_null = value(inner, scope) == FV::Null;
            FV::Bool(is_null != *negated)
        }
        FeelNode::Between(x, low, high) => {
            let (x, low, high) = (value(x, scope), value(low, scope), value(high, scope));
            FV::from_truth(compare(&x, CmpOp::Ge, &low).and(compare(&x, CmpOp::Le, &high)))
        }
        FeelNode::In(x, tests) => {
            let x = value(x, scope);
            let mut acc = Truth::False;
            for t in tests {
                acc = acc.or(test(&x, t, scope));
                if acc == Truth::True {
                    break;
                }
            }
            FV::from_truth(acc)
        }
        FeelNode::And(items) => {
            let mut acc = Truth::True;
            for i in items {
                acc = acc.and(value(i, scope).truth());
                if acc == Truth::False {
                    break;
                }
            }
            FV::from_truth(acc)
        }
        FeelNode::Or(items) => {
            let mut acc = Truth::False;
            for i in items {
                acc = acc.or(value(i, scope).truth());
                if acc == Truth::True {
                    break;
                }
            }
            FV::from_truth(acc)
        }
        FeelNode::If(c, a, b) => match value(c, scope).truth() {
            Truth::True => value(a, scope),
            Truth::False => value(b, scope),
            Truth::Unknown => FV::Null,
        },
        FeelNode::Quantified {
            every,
            bindings,
            condition,
        } => quantified(*every, bindings, condition, scope),
        FeelNode::Call(name, args) => call(name, args, scope),
    }
}

fn member(v: FV, m: &str) -> FV {
    match v {
        FV::Ctx(map) => map.get(m).map_or(FV::Null, FV::from_json),
        FV::List(items) => FV::List(items.into_iter().map(|i| member(i, m)).collect()),
        FV::Date(days) => {
            let (y, mo, d) = civil(days);
            match m {
                "year" => int(y),
                "month" => int(i64::from(mo)),
                "day" => int(i64::from(d)),
                "weekday" => int((days + 3).rem_euclid(7) + 1),
                _ => FV::Null,
            }
        }
        FV::DateTime(ms) => {
            let days = ms.div_euclid(MS_PER_DAY);
            let in_day = ms.rem_euclid(MS_PER_DAY) / 1000;
            match m {
                "hour" => int(in_day / 3600),
                "minute" => int(in_day / 60 % 60),
                "second" => int(in_day % 60),
                other => member(FV::Date(days), other),
            }
        }
        _ => FV::Null,
    }
}

fn int(i: i64) -> FV {
    FV::Num(Num::Int(i128::from(i)))
}

fn index(list: FV, filter: &FeelNode, scope: &mut Scope) -> FV {
    let items = match list {
        FV::List(items) => items,
        FV::Null => return FV::Null,
        other => vec![other],
    };
    // A number selects an item (1-based, negative from the end); anything else filters.
    if let FV::Num(n) = value(filter, scope) {
        let Some(i) = integer(n) else {
            return FV::Null;
        };
        let len = items.len() as i128;
        let at = if i > 0 { i - 1 } else { len + i };
        return usize::try_from(at)
            .ok()
            .and_then(|at| items.get(at).cloned())
            .unwrap_or(FV::Null);
    }
    let mut kept = Vec::new();
    for item in items {
        scope.items.push(item.clone());
        let keep = value(filter, scope).truth();
        scope.items.pop();
        if keep == Truth::True {
            kept.push(item);
        }
    }
    FV::List(kept)
}

fn integer(n: Num) -> Option<i128> {
    match n {
        Num::Int(i) => Some(i),
        Num::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => Some(f as i128),
        Num::Float(_) => None,
    }
}

fn test(x: &FV, t: &Test, scope: &mut Scope) -> Truth {
    match t {
        Test::Compare(op, v) => compare(x, *op, &value(v, scope)),
        Test::Value(v) => match value(v, scope) {
            FV::List(items) => {
                let mut acc = Truth::False;
                for item in &items {
                    acc = acc.or(equal(x, item));
                }
                acc
            }
            FV::Range(r) => in_range(x, &r),
            other => equal(x, &other),
        },
    }
}

fn in_range(x: &FV, r: &RangeV) -> Truth {
    let low = if r.low_closed { CmpOp::Ge } else { CmpOp::Gt };
    let high = if r.high_closed { CmpOp::Le } else { CmpOp::Lt };
    compare(x, low, &r.low).and(compare(x, high, &r.high))
}

fn quantified(
    every: bool,
    bindings: &[(String, FeelNode)],
    condition: &FeelNode,
    scope: &mut Scope,
) -> FV {
    let mut lists = Vec::new();
    for (name, list) in bindings {
        let items = match value(list, scope) {
            FV::List(items) => items,
            FV::Null => return FV::Null,
            other => vec![other],
        };
        lists.push((name.clone(), items));
    }
    let total = lists
        .iter()
        .try_fold(1usize, |acc, (_, l)| acc.checked_mul(l.len()));
    let Some(total) = total.filter(|t| *t <= MAX_COMBINATIONS) else {
        return FV::Null;
    };
    let mut acc = Truth::from_bool(every);
    for i in 0..total {
        let mut rest = i;
        let depth = scope.locals.len();
        for (name, items) in &lists {
            scope
                .locals
                .push((name.clone(), items[rest % items.len()].clone()));
            rest /= items.len();
        }
        let t = value(condition, scope).truth();
        scope.locals.truncate(depth);
        acc = if every { acc.and(t) } else { acc.or(t) };
        if acc == Truth::from_bool(!every) {
            break;
        }
    }
    FV::from_truth(acc)
}

/// Equality: TRUE/FALSE for comparable values, UNKNOWN with null or mismatched types.
fn equal(a: &FV, b: &FV) -> Truth {
    match (a, b) {
        (FV::Bool(x), FV::Bool(y)) => Truth::from_bool(x == y),
        (FV::List(x), FV::List(y)) => {
            if x.len() != y.len() {
                return Truth::False;
            }
            x.iter()
                .zip(y)
                .fold(Truth::True, |acc, (p, q)| acc.and(equal(p, q)))
        }
        (FV::Ctx(x), FV::Ctx(y)) => Truth::from_bool(x == y),
        (FV::Range(x), FV::Range(y)) => Truth::from_bool(x == y),
        _ => match order(a, b) {
            Some(o) => Truth::from_bool(o == Ordering::Equal),
            None => Truth::Unknown,
        },
    }
}

/// The order of two values of one ordered kind (a numeric string counts as a number
/// against a number, as in cuga-flo's own conditions).
fn order(a: &FV, b: &FV) -> Option<Ordering> {
    match (a, b) {
        (FV::Num(x), FV::Num(y)) => num_cmp(*x, *y),
        (FV::Num(x), FV::Str(s)) => num_cmp(*x, Num::parse(s)?),
        (FV::Str(s), FV::Num(y)) => num_cmp(Num::parse(s)?, *y),
        (FV::Str(x), FV::Str(y)) => Some(x.cmp(y)),
        (FV::Date(x), FV::Date(y)) | (FV::DateTime(x), FV::DateTime(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        _ => a.as_f64().partial_cmp(&b.as_f64()),
    }
}

fn compare(a: &FV, op: CmpOp, b: &FV) -> Truth {
    let ordered = |test: fn(Ordering) -> bool| match order(a, b) {
        Some(o) => Truth::from_bool(test(o)),
        None => Truth::Unknown,
    };
    match op {
        CmpOp::Eq => equal(a, b),
        CmpOp::Ne => equal(a, b).not(),
        CmpOp::Lt => ordered(|o| o == Ordering::Less),
        CmpOp::Le => ordered(|o| o != Ordering::Greater),
        CmpOp::Gt => ordered(|o| o == Ordering::Greater),
        CmpOp::Ge => ordered(|o| o != Ordering::Less),
        CmpOp::In | CmpOp::NotIn => Truth::Unknown,
    }
}

fn arith(op: Arith, a: &FV, b: &FV) -> FV {
    if let (Arith::Add, FV::Str(x), FV::Str(y)) = (op, a, b) {
        return FV::Str(format!("{x}{y}"));
    }
    let (FV::Num(x), FV::Num(y)) = (a, b) else {
        return FV::Null;
    };
    if let (Num::Int(i), Num::Int(j)) = (*x, *y) {
        let exact = match op {
            Arith::Add => i.checked_add(j),
            Arith::Sub => i.checked_sub(j),
            Arith::Mul => i.checked_mul(j),
            Arith::Div if j != 0 && i % j == 0 => Some(i / j),
            Arith::Pow => u32::try_from(j).ok().and_then(|e| i.checked_pow(e)),
            Arith::Div => None,
        };
        if let Some(r) = exact {
            return FV::Num(Num::Int(r));
        }
    }
    let (x, y) = (x.as_f64(), y.as_f64());
    let r = match op {
        Arith::Add => x + y,
        Arith::Sub => x - y,
        Arith::Mul => x * y,
        Arith::Div if y == 0.0 => return FV::Null,
        Arith::Div => x / y,
        Arith::Pow => x.powf(y),
    };
    if r.is_finite() {
        FV::Num(Num::Float(r))
    } else {
        FV::Null
    }
}

/// Whether a name (or a member of one) is set, even to null.
fn defined(node: &FeelNode, scope: &mut Scope) -> bool {
    match node {
        FeelNode::Name(n) => scope.lookup(n).is_some(),
        FeelNode::Member(inner, m) => match value(inner, scope) {
            FV::Ctx(map) => map.contains_key(m),
            _ => false,
        },
        other => value(other, scope) != FV::Null,
    }
}

fn call(name: &str, args: &[FeelNode], scope: &mut Scope) -> FV {
    if name == "is defined" {
        return FV::Bool(defined(&args[0], scope));
    }
    let values: Vec<FV> = args.iter().map(|a| value(a, scope)).collect();
    let str_arg = |i: usize| match values.get(i) {
        Some(FV::Str(s)) => Some(s.as_str()),
        _ => None,
    };
    let num_arg = |i: usize| match values.get(i) {
        Some(FV::Num(n)) => Some(*n),
        _ => None,
    };
    // The items of a list function: one list argument, or the arguments themselves.
    let items = || -> Option<Vec<FV>> {
        match values.as_slice() {
            [FV::List(items)] => Some(items.clone()),
            [FV::Null] => None,
            many => Some(many.to_vec()),
        }
    };
    let string_test = |f: fn(&str, &str) -> bool| match (str_arg(0), str_arg(1)) {
        (Some(s), Some(m)) => FV::Bool(f(s, m)),
        _ => FV::Null,
    };
    match name {
        "not" => FV::from_truth(values[0].truth().not()),
        "string length" => str_arg(0).map_or(FV::Null, |s| int(s.chars().count() as i64)),
        "upper case" => str_arg(0).map_or(FV::Null, |s| FV::Str(s.to_uppercase())),
        "lower case" => str_arg(0).map_or(FV::Null, |s| FV::Str(s.to_lowercase())),
        "contains" => string_test(|s, m| s.contains(m)),
        "starts with" => string_test(|s, m| s.starts_with(m)),
        "ends with" => string_test(|s, m| s.ends_with(m)),
        "substring" => substring(str_arg(0), num_arg(1), values.get(2)),
        "string" => match &values[0] {
            FV::Null => FV::Null,
            v => FV::Str(to_string(v)),
        },
        "number" => match &values[0] {
            FV::Num(n) => FV::Num(*n),
            FV::Str(s) => Num::parse(s).map_or(FV::Null, FV::Num),
            _ => FV::Null,
        },
        "count" => match &values[0] {
            FV::List(items) => int(items.len() as i64),
            _ => FV::Null,
        },
        "sum" | "mean" => {
            let Some(items) = items() else {
                return FV::Null;
            };
            if items.is_empty() {
                return FV::Null;
            }
            let mut total = FV::Num(Num::Int(0));
            for item in &items {
                total = arith(Arith::Add, &total, item);
                if !matches!(item, FV::Num(_)) || total == FV::Null {
                    return FV::Null;
                }
            }
            if name == "mean" {
                arith(Arith::Div, &total, &int(items.len() as i64))
            } else {
                total
            }
        }
        "min" | "max" => {
            let Some(items) = items() else {
                return FV::Null;
            };
            let want = if name == "min" {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut best: Option<FV> = None;
            for item in items {
                best = match best {
                    None => Some(item),
                    Some(b) => match order(&item, &b) {
                        Some(o) if o == want => Some(item),
                        Some(_) => Some(b),
                        None => return FV::Null,
                    },
                };
            }
            best.unwrap_or(FV::Null)
        }
        "all" | "any" => {
            let Some(items) = items() else {
                return FV::Null;
            };
            let every = name == "all";
            let mut acc = Truth::from_bool(every);
            for item in &items {
                let t = item.truth();
                acc = if every { acc.and(t) } else { acc.or(t) };
            }
            FV::from_truth(acc)
        }
        "list contains" => match &values[0] {
            FV::List(items) => {
                let mut acc = Truth::False;
                for item in items {
                    acc = acc.or(equal(item, &values[1]));
                }
                FV::from_truth(acc)
            }
            _ => FV::Null,
        },
        "is empty" => match &values[0] {
            FV::List(items) => FV::Bool(items.is_empty()),
            _ => FV::Null,
        },
        "abs" => match num_arg(0) {
            Some(Num::Int(i)) => FV::Num(Num::Int(i.abs())),
            Some(Num::Float(f)) => FV::Num(Num::Float(f.abs())),
            None => FV::Null,
        },
        "floor" | "ceiling" => match num_arg(0) {
            Some(Num::Int(i)) => FV::Num(Num::Int(i)),
            Some(Num::Float(f)) => {
                let r = if name == "floor" { f.floor() } else { f.ceil() };
                integer(Num::Float(r)).map_or(FV::Num(Num::Float(r)), |i| FV::Num(Num::Int(i)))
            }
            None => FV::Null,
        },
        "date" => match values.as_slice() {
            [FV::Str(s)] => parse_date(s).map_or(FV::Null, FV::Date),
            [FV::Date(d)] => FV::Date(*d),
            [FV::DateTime(ms)] => FV::Date(ms.div_euclid(MS_PER_DAY)),
            [FV::Num(y), FV::Num(m), FV::Num(d)] => match (integer(*y), integer(*m), integer(*d)) {
                (Some(y), Some(m), Some(d)) => ymd(y, m, d).map_or(FV::Null, FV::Date),
                _ => FV::Null,
            },
            _ => FV::Null,
        },
        "date and time" => match &values[0] {
            FV::Str(s) => parse_date_time(s).map_or(FV::Null, FV::DateTime),
            FV::DateTime(ms) => FV::DateTime(*ms),
            _ => FV::Null,
        },
        "now" => FV::DateTime(now_ms()),
        "today" => FV::Date(now_ms().div_euclid(MS_PER_DAY)),
        _ => FV::Null,
    }
}

fn now_ms() -> i64 {
    i64::try_from(crate::clock::now_ms()).unwrap_or(i64::MAX)
}

fn substring(s: Option<&str>, start: Option<Num>, len: Option<&FV>) -> FV {
    let (Some(s), Some(start)) = (s, start.and_then(integer)) else {
        return FV::Null;
    };
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len() as i128;
    let from = if start > 0 { start - 1 } else { n + start };
    if !(0..=n).contains(&from) {
        return FV::Null;
    }
    let count = match len {
        None => n - from,
        Some(FV::Num(l)) => match integer(*l) {
            Some(l) if l >= 0 => l.min(n - from),
            _ => return FV::Null,
        },
        Some(_) => return FV::Null,
    };
    let (from, count) = (from as usize, count as usize);
    FV::Str(chars[from..from + count].iter().collect())
}

fn to_string(v: &FV) -> String {
    match v {
        FV::Null => "null".into(),
        FV::Bool(b) => b.to_string(),
        FV::Num(Num::Int(i)) => i.to_string(),
        FV::Num(Num::Float(f)) => f.to_string(),
        FV::Str(s) => s.clone(),
        FV::List(items) => format!(
            "[{}]",
            items.iter().map(to_string).collect::<Vec<_>>().join(", ")
        ),
        FV::Ctx(map) => Value::Object(map.clone()).to_string(),
        FV::Date(d) => {
            let (y, m, d) = civil(*d);
            format!("{y:04}-{m:02}-{d:02}")
        }
        FV::DateTime(ms) => {
            let (y, m, d) = civil(ms.div_euclid(MS_PER_DAY));
            let s = ms.rem_euclid(MS_PER_DAY) / 1000;
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
                s / 3600,
                s / 60 % 60,
                s % 60
            )
        }
        FV::Range(_) => "range".into(),
    }
}

/// A temporal literal's value: a date (`2024-01-31`) or a date and time.
pub(super) fn temporal(s: &str) -> Option<FV> {
    if s.contains('T') {
        parse_date_time(s).map(FV::DateTime)
    } else {
        parse_date(s).map(FV::Date)
    }
}

/// `YYYY-MM-DD` → days since 1970-01-01.
fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i128> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    ymd(num(0..4)?, num(5..7)?, num(8..10)?)
}

/// `YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]` → milliseconds since the epoch (no zone: UTC).
fn parse_date_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let days = parse_date(s.get(..10)?)?;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(days * MS_PER_DAY);
    }
    let rest = rest.strip_prefix('T')?;
    let (time, offset_ms) = if let Some(t) = rest.strip_suffix('Z') {
        (t, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (t, zone) = rest.split_at(i);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let (h, m) = zone[1..].split_once(':')?;
        let (h, m): (i64, i64) = (two_digits(h)?, two_digits(m)?);
        if h > 14 || m > 59 {
            return None;
        }
        (t, sign * (h * 3600 + m * 60) * 1000)
    } else {
        (rest, 0)
    };
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut parts = hms.split(':');
    let h = two_digits(parts.next()?)?;
    let m = two_digits(parts.next()?)?;
    let sec = parts.next().map_or(Some(0), two_digits)?;
    if parts.next().is_some() || h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let ms = if frac.is_empty() {
        0
    } else {
        if !frac.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let f: String = frac.chars().chain(std::iter::repeat('0')).take(3).collect();
        f.parse::<i64>().ok()?
    };
    Some(days * MS_PER_DAY + ((h * 60 + m) * 60 + sec) * 1000 + ms - offset_ms)
}

fn two_digits(s: &str) -> Option<i64> {
    (s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Days since 1970-01-01 of a valid calendar date (proleptic Gregorian).
fn ymd(y: i128, m: i128, d: i128) -> Option<i64> {
    let (y, m, d) = (
        i64::try_from(y).ok()?,
        u32::try_from(m).ok()?,
        u32::try_from(d).ok()?,
    );
    if !(1..=12).contains(&m) || d == 0 || !(-999_999..=999_999).contains(&y) {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let len = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d > len[m as usize - 1] {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The calendar date of a day number (inverse of [`ymd`]).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
