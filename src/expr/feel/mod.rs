//! A subset of FEEL (the DMN Friendly Enough Expression Language), as Camunda 8 (Zeebe)
//! writes sequence-flow conditions (`=amount > 100`). Parsed into a syntax tree and
//! evaluated by walking it, with the same three-valued outcome as cuga-flo's own
//! conditions: a boolean result is TRUE or FALSE, anything else (null, a missing variable,
//! a type mismatch) is UNKNOWN. docs/conditions.md lists the subset; anything outside it
//! is a parse error naming the construct, never a wrong guess.
//!
//! # Grammar (precedence from loosest)
//!
//! ```text
//! expression  := "if" expression "then" expression "else" expression
//!              | ("some" | "every") name "in" expression ("," name "in" expression)*
//!                "satisfies" expression
//!              | disjunction
//! disjunction := conjunction ("or" conjunction)*
//! conjunction := comparison ("and" comparison)*
//! comparison  := sum [ ("=" | "!=" | "<" | "<=" | ">" | ">=") sum
//!                    | "between" sum "and" sum
//!                    | "in" tests ]
//! tests       := "(" test ("," test)* ")" | test
//! test        := ("<" | "<=" | ">" | ">=") sum | range | sum
//! sum         := product (("+" | "-") product)*
//! product     := power (("*" | "/") power)*
//! power       := unary ("**" unary)*
//! unary       := "-" unary | postfix
//! postfix     := primary ("." name | "[" expression "]")*
//! primary     := number | string | "true" | "false" | "null" | @"temporal"
//!              | name | builtin "(" [expression ("," expression)*] ")"
//!              | "(" expression ")" | "[" [expression ("," expression)*] "]" | range
//! range       := ("[" | "(" | "]") sum ".." sum ("]" | ")" | "[")
//! name        := word+ | "`" any text "`"         -- several words make one name
//! ```

mod eval;
mod lexer;
mod parser;

#[cfg(test)]
mod tests;

use serde_json::Value;

use super::{CmpOp, Comparison, ExprError};

pub(super) use eval::{eval, eval_value};
pub(super) use parser::parse;

/// A FEEL syntax tree.
#[derive(Debug, Clone, PartialEq)]
pub enum FeelNode {
    /// A literal (null, boolean, number, string) as a JSON value.
    Literal(Value),
    /// `@"2024-01-31"`, `@"2024-01-31T10:00:00Z"`: checked when parsed.
    Temporal(String),
    /// A variable (or a bound name); may contain single spaces (`Vacation Approval`).
    Name(String),
    /// `a.b`
    Member(Box<FeelNode>, String),
    /// `a[1]` (1-based, negative from the end) or `a[item > 3]` (a filter).
    Index(Box<FeelNode>, Box<FeelNode>),
    List(Vec<FeelNode>),
    Range(Box<Range>),
    Neg(Box<FeelNode>),
    Arith(Arith, Box<FeelNode>, Box<FeelNode>),
    /// `left op right` (`=`, `!=`, `<`, `<=`, `>`, `>=`).
    Compare(CmpOp, Box<FeelNode>, Box<FeelNode>),
    /// `x = null` (`negated`: `x != null`): the one comparison with null that is decided.
    IsNull(Box<FeelNode>, bool),
    Between(Box<FeelNode>, Box<FeelNode>, Box<FeelNode>),
    /// `x in test` / `x in (test, ...)`: TRUE if any test holds.
    In(Box<FeelNode>, Vec<Test>),
    And(Vec<FeelNode>),
    Or(Vec<FeelNode>),
    /// A call of a built-in function (the name as in [`BUILTINS`]).
    Call(&'static str, Vec<FeelNode>),
    If(Box<FeelNode>, Box<FeelNode>, Box<FeelNode>),
    /// `some`/`every` name in list, ... satisfies condition.
    Quantified {
        every: bool,
        bindings: Vec<(String, FeelNode)>,
        condition: Box<FeelNode>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub low: FeelNode,
    pub high: FeelNode,
    pub low_closed: bool,
    pub high_closed: bool,
}

/// A positive unary test, right of `in`.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// Equal to the value; member of it when it is a list; inside it when it is a range.
    Value(FeelNode),
    /// `< 5`, `>= 10`...
    Compare(CmpOp, FeelNode),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// The built-in functions: name, least and most arguments (`usize::MAX`: any number).
pub const BUILTINS: &[(&str, usize, usize)] = &[
    ("not", 1, 1),
    ("is defined", 1, 1),
    ("string length", 1, 1),
    ("upper case", 1, 1),
    ("lower case", 1, 1),
    ("contains", 2, 2),
    ("starts with", 2, 2),
    ("ends with", 2, 2),
    ("substring", 2, 3),
    ("string", 1, 1),
    ("number", 1, 1),
    ("count", 1, 1),
    ("sum", 1, usize::MAX),
    ("min", 1, usize::MAX),
    ("max", 1, usize::MAX),
    ("mean", 1, usize::MAX),
    ("all", 1, usize::MAX),
    ("any", 1, usize::MAX),
    ("list contains", 2, 2),
    ("is empty", 1, 1),
    ("abs", 1, 1),
    ("floor", 1, 1),
    ("ceiling", 1, 1),
    ("date", 1, 3),
    ("date and time", 1, 1),
    ("now", 0, 0),
    ("today", 0, 0),
];

/// Functions FEEL (or Camunda's FEEL) has that cuga-flo does not evaluate: named in the
/// diagnostic rather than reported as unknown names.
pub const UNSUPPORTED_FUNCTIONS: &[&str] = &[
    "matches",
    "replace",
    "split",
    "string join",
    "substring before",
    "substring after",
    "duration",
    "years and months duration",
    "time",
    "day of week",
    "day of year",
    "week of year",
    "month of year",
    "get value",
    "get entries",
    "context",
    "context put",
    "context merge",
    "append",
    "concatenate",
    "insert before",
    "remove",
    "reverse",
    "index of",
    "union",
    "distinct values",
    "flatten",
    "product",
    "median",
    "stddev",
    "mode",
    "sort",
    "sublist",
    "decimal",
    "round up",
    "round down",
    "round half up",
    "round half down",
    "modulo",
    "sqrt",
    "log",
    "exp",
    "odd",
    "even",
    "is",
    "last day of month",
];

impl FeelNode {
    /// Visits this node and every node below it, parents first.
    pub fn walk(&self, visit: &mut dyn FnMut(&FeelNode)) {
        visit(self);
        direct_children(self, &mut |child| child.walk(visit));
    }

    /// The variable path this node reads (`order.total`), if it is a name or members of one.
    pub fn path(&self) -> Option<String> {
        match self {
            FeelNode::Name(n) => Some(n.clone()),
            FeelNode::Member(inner, m) => inner.path().map(|p| format!("{p}.{m}")),
            _ => None,
        }
    }
}

/// The variable paths read (free names: not the names `some`/`every` bind, not inside a
/// filter where names can be the item's members), in order of first appearance.
pub(super) fn variables(node: &FeelNode) -> Vec<String> {
    let mut out = Vec::new();
    free_paths(node, &mut Vec::new(), &mut out);
    out
}

fn free_paths(node: &FeelNode, bound: &mut Vec<String>, out: &mut Vec<String>) {
    if let Some(path) = node.path() {
        let root = match node {
            FeelNode::Name(n) => n.as_str(),
            _ => path.split('.').next().unwrap_or(""),
        };
        if !bound.iter().any(|b| b == root) && !out.contains(&path) {
            out.push(path);
        }
        return;
    }
    match node {
        FeelNode::Quantified {
            bindings,
            condition,
            ..
        } => {
            let depth = bound.len();
            for (name, list) in bindings {
                free_paths(list, bound, out);
                bound.push(name.clone());
            }
            free_paths(condition, bound, out);
            bound.truncate(depth);
        }
        // A filter's names may be the item's members: only the list is certainly a variable.
        FeelNode::Index(list, filter) => {
            free_paths(list, bound, out);
            if matches!(**filter, FeelNode::Literal(_) | FeelNode::Neg(_)) {
                free_paths(filter, bound, out);
            }
        }
        other => direct_children(other, &mut |child| free_paths(child, bound, out)),
    }
}

fn direct_children(node: &FeelNode, f: &mut dyn FnMut(&FeelNode)) {
    match node {
        FeelNode::Literal(_) | FeelNode::Temporal(_) | FeelNode::Name(_) => {}
        FeelNode::Member(a, _) | FeelNode::Neg(a) | FeelNode::IsNull(a, _) => f(a),
        FeelNode::Index(a, b) | FeelNode::Arith(_, a, b) | FeelNode::Compare(_, a, b) => {
            f(a);
            f(b);
        }
        FeelNode::Between(a, b, c) | FeelNode::If(a, b, c) => {
            f(a);
            f(b);
            f(c);
        }
        FeelNode::List(items) | FeelNode::And(items) | FeelNode::Or(items) => {
            items.iter().for_each(&mut *f)
        }
        FeelNode::Call(_, args) => args.iter().for_each(&mut *f),
        FeelNode::Range(r) => {
            f(&r.low);
            f(&r.high);
        }
        FeelNode::In(x, tests) => {
            f(x);
            for t in tests {
                match t {
                    Test::Value(v) | Test::Compare(_, v) => f(v),
                }
            }
        }
        FeelNode::Quantified {
            bindings,
            condition,
            ..
        } => {
            for (_, list) in bindings {
                f(list);
            }
            f(condition);
        }
    }
}

/// The literal values appearing, in order of first appearance.
pub(super) fn literals(node: &FeelNode) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    node.walk(&mut |n| {
        if let FeelNode::Literal(v) = n
            && !out.contains(v)
        {
            out.push(v.clone());
        }
    });
    out
}

/// Every comparison of a variable path with literal(s), for generating test values.
pub(super) fn comparisons(node: &FeelNode) -> Vec<Comparison> {
    let vars = variables(node);
    let free = |n: &FeelNode| n.path().filter(|p| vars.contains(p));
    let literal = |n: &FeelNode| match n {
        FeelNode::Literal(v) => Some(v.clone()),
        FeelNode::Neg(inner) => match &**inner {
            FeelNode::Literal(Value::Number(x)) => {
                x.as_i64().map(|i| Value::from(-i)).or_else(|| {
                    x.as_f64()
                        .and_then(|f| serde_json::Number::from_f64(-f))
                        .map(Value::Number)
                })
            }
            _ => None,
        },
        _ => None,
    };
    let mut out = Vec::new();
    node.walk(&mut |n| match n {
        FeelNode::Compare(op, a, b) => {
            if let (Some(var), Some(v)) = (free(a), literal(b)) {
                out.push(Comparison {
                    variable: var,
                    op: *op,
                    literals: vec![v],
                });
            } else if let (Some(v), Some(var)) = (literal(a), free(b)) {
                out.push(Comparison {
                    variable: var,
                    op: op.flipped(),
                    literals: vec![v],
                });
            }
        }
        FeelNode::IsNull(a, negated) => {
            if let Some(var) = free(a) {
                out.push(Comparison {
                    variable: var,
                    op: if *negated { CmpOp::Ne } else { CmpOp::Eq },
                    literals: vec![Value::Null],
                });
            }
        }
        FeelNode::In(a, tests) => {
            if let Some(var) = free(a) {
                let mut items = Vec::new();
                for t in tests {
                    match t {
                        Test::Value(FeelNode::List(list)) => {
                            items.extend(list.iter().filter_map(&literal))
                        }
                        Test::Value(FeelNode::Range(r)) => {
                            items.extend([&r.low, &r.high].into_iter().filter_map(&literal))
                        }
                        Test::Value(v) | Test::Compare(_, v) => items.extend(literal(v)),
                    }
                }
                if !items.is_empty() {
                    out.push(Comparison {
                        variable: var,
                        op: CmpOp::In,
                        literals: items,
                    });
                }
            }
        }
        FeelNode::Between(a, lo, hi) => {
            if let Some(var) = free(a) {
                for (op, bound) in [(CmpOp::Ge, lo), (CmpOp::Le, hi)] {
                    if let Some(v) = literal(bound) {
                        out.push(Comparison {
                            variable: var.clone(),
                            op,
                            literals: vec![v],
                        });
                    }
                }
            }
        }
        // A name used as a condition, or negated: a boolean flag.
        FeelNode::And(items) | FeelNode::Or(items) => {
            for item in items {
                if let Some(var) = free(item) {
                    out.push(flag(var));
                }
            }
        }
        FeelNode::Call("not", args) => {
            if let Some(var) = args.first().and_then(free) {
                out.push(flag(var));
            }
        }
        _ => {}
    });
    if let Some(var) = free(node) {
        out.insert(0, flag(var));
    }
    out
}

fn flag(variable: String) -> Comparison {
    Comparison {
        variable,
        op: CmpOp::Eq,
        literals: vec![Value::Bool(true)],
    }
}

/// Whether a `language` attribute (or `expressionLanguage`) names FEEL: the OMG URIs
/// (`https://www.omg.org/spec/DMN/20191111/FEEL/`, `http://www.omg.org/spec/FEEL/20140401`)
/// and plain `feel`, in any case.
pub fn names_feel(language: &str) -> bool {
    let l = language.trim().to_ascii_lowercase();
    l == "feel"
        || l.split(['/', ':', '#'])
            .any(|part| part == "feel" || part.starts_with("feel-") || part == "s-feel")
}

impl ExprError {
    pub(crate) fn feel(mut self) -> Self {
        self.language = super::Language::Feel;
        self
    }

    pub(crate) fn unsupported(mut self) -> Self {
        self.unsupported = true;
        self.language = super::Language::Feel;
        self
    }
}
