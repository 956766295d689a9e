//! Evaluation: comparing JSON values and combining truths.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::{CmpOp, Node, Operand, Truth, Variables};

pub(super) fn eval(node: &Node, vars: &dyn Variables) -> Truth {
    match node {
        Node::Or(items) => {
            let mut acc = Truth::False;
            for item in items {
                acc = acc.or(eval(item, vars));
                if acc == Truth::True {
                    break;
                }
            }
            acc
        }
        Node::And(items) => {
            let mut acc = Truth::True;
            for item in items {
                acc = acc.and(eval(item, vars));
                if acc == Truth::False {
                    break;
                }
            }
            acc
        }
        Node::Not(inner) => eval(inner, vars).not(),
        Node::Truthy(operand) => match resolve(operand, vars) {
            Some(Value::Bool(b)) => Truth::from_bool(*b),
            _ => Truth::Unknown,
        },
        Node::Compare { left, op, right } => {
            let Some(left) = resolve(left, vars) else {
                return Truth::Unknown;
            };
            match (op, right) {
                (CmpOp::In, Operand::List(items)) => in_list(left, items),
                (CmpOp::NotIn, Operand::List(items)) => in_list(left, items).not(),
                (CmpOp::In | CmpOp::NotIn, _) => Truth::Unknown,
                (_, right) => match resolve(right, vars) {
                    Some(right) => apply(left, *op, right),
                    None => Truth::Unknown,
                },
            }
        }
    }
}

fn resolve<'v>(operand: &'v Operand, vars: &'v dyn Variables) -> Option<&'v Value> {
    match operand {
        Operand::Var(path) => path.resolve(vars),
        Operand::Literal(value) => Some(value),
        Operand::List(_) => None,
    }
}

/// `left op right` on two present values.
pub(super) fn apply(left: &Value, op: CmpOp, right: &Value) -> Truth {
    let rel = || relate(left, right);
    match op {
        CmpOp::Eq => equal(rel()),
        CmpOp::Ne => equal(rel()).not(),
        CmpOp::Lt => ordered(rel(), |o| o == Ordering::Less),
        CmpOp::Le => ordered(rel(), |o| o != Ordering::Greater),
        CmpOp::Gt => ordered(rel(), |o| o == Ordering::Greater),
        CmpOp::Ge => ordered(rel(), |o| o != Ordering::Less),
        CmpOp::In | CmpOp::NotIn => {
            let Value::Array(items) = right else {
                return Truth::Unknown;
            };
            let found = in_list(left, items);
            if op == CmpOp::In { found } else { found.not() }
        }
    }
}

fn in_list(value: &Value, items: &[Value]) -> Truth {
    let mut result = Truth::False;
    for item in items {
        match equal(relate(value, item)) {
            Truth::True => return Truth::True,
            Truth::Unknown => result = Truth::Unknown,
            Truth::False => {}
        }
    }
    result
}

/// How two values relate.
enum Rel {
    /// Comparable and ordered (numbers, strings).
    Ordered(Ordering),
    /// Comparable for equality only (booleans, null against anything).
    Equal(bool),
    Incomparable,
}

fn equal(rel: Rel) -> Truth {
    match rel {
        Rel::Ordered(o) => Truth::from_bool(o == Ordering::Equal),
        Rel::Equal(b) => Truth::from_bool(b),
        Rel::Incomparable => Truth::Unknown,
    }
}

fn ordered(rel: Rel, test: impl Fn(Ordering) -> bool) -> Truth {
    match rel {
        Rel::Ordered(o) => Truth::from_bool(test(o)),
        _ => Truth::Unknown,
    }
}

fn relate(a: &Value, b: &Value) -> Rel {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Rel::Equal(a.is_null() && b.is_null()),
        (Value::Number(x), Value::Number(y)) => compare_nums(Num::of(x), Num::of(y)),
        (Value::Number(x), Value::String(s)) => match Num::parse(s) {
            Some(y) => compare_nums(Num::of(x), y),
            None => Rel::Incomparable,
        },
        (Value::String(s), Value::Number(y)) => match Num::parse(s) {
            Some(x) => compare_nums(x, Num::of(y)),
            None => Rel::Incomparable,
        },
        (Value::String(x), Value::String(y)) => Rel::Ordered(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Rel::Equal(x == y),
        _ => Rel::Incomparable,
    }
}

/// A number for comparison: integers exactly, everything else as `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// The number as JSON (`None`: not finite, or beyond what JSON numbers hold here).
    pub(super) fn to_json(self) -> Option<Value> {
        match self {
            Num::Int(i) => i64::try_from(i).ok().map(Value::from),
            Num::Float(f) => serde_json::Number::from_f64(f).map(Value::Number),
        }
    }

    pub(super) fn of(n: &Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// A string holding a number (surrounding whitespace ignored): an optional sign,
    /// digits, an optional fraction and exponent. `inf`, `NaN` and hex are not numbers.
    pub(super) fn parse(s: &str) -> Option<Num> {
        let s = s.trim();
        let body = s.strip_prefix(['-', '+']).unwrap_or(s);
        if body.is_empty() || !body.bytes().any(|b| b.is_ascii_digit()) {
            return None;
        }
        if body.bytes().all(|b| b.is_ascii_digit())
            && let Ok(i) = s.parse::<i128>()
        {
            return Some(Num::Int(i));
        }
        if !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        let f = s.parse::<f64>().ok()?;
        f.is_finite().then_some(Num::Float(f))
    }

    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

fn compare_nums(a: Num, b: Num) -> Rel {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Rel::Ordered(x.cmp(&y)),
        _ => match a.as_f64().partial_cmp(&b.as_f64()) {
            Some(o) => Rel::Ordered(o),
            None => Rel::Incomparable,
        },
    }
}
