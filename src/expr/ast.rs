//! The syntax tree of a condition and its canonical text form.

use std::fmt;

use serde_json::Value;

use super::Variables;

/// A condition. `Or` and `And` hold two or more operands: a chain `a || b || c` is one
/// node; an explicitly parenthesised `(a || b) || c` keeps its nesting.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Or(Vec<Node>),
    And(Vec<Node>),
    Not(Box<Node>),
    /// `left op right`; for `in` / `not in` the right side is an [`Operand::List`].
    Compare {
        left: Operand,
        op: CmpOp,
        right: Operand,
    },
    /// A value used as a condition: TRUE/FALSE if it is a boolean, else UNKNOWN.
    Truthy(Operand),
}

/// A value in a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Var(VarPath),
    Literal(Value),
    List(Vec<Value>),
}

/// A variable path such as `order.items.0.price`: the first segment names a process
/// variable, the others select object members or (when numeric) array items.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VarPath {
    segments: Vec<String>,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
}

impl VarPath {
    /// A path from its segments; `None` if there are none or one is empty.
    pub fn new(segments: Vec<String>) -> Option<VarPath> {
        if segments.is_empty() || segments.iter().any(String::is_empty) {
            return None;
        }
        Some(VarPath { segments })
    }

    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The variable the path starts from.
    pub fn root(&self) -> &str {
        &self.segments[0]
    }

    /// The value at this path, if every step exists.
    pub fn resolve<'v>(&self, vars: &'v dyn Variables) -> Option<&'v Value> {
        let (first, rest) = self.segments.split_first()?;
        let mut current = vars.lookup(first)?;
        for segment in rest {
            current = match current {
                Value::Object(map) => map.get(segment.as_str())?,
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(current)
    }
}

impl fmt::Display for VarPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.segments.join("."))
    }
}

impl CmpOp {
    /// The operator's canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }

    /// The operator with its sides swapped: `a < b` is `b > a`. (`in` has no mirror image
    /// and is returned unchanged.)
    pub fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }

    /// Applies the operator to two values with the language's comparison rules. For `in`
    /// and `not in`, `right` must be a JSON array (anything else gives UNKNOWN).
    pub fn apply(self, left: &Value, right: &Value) -> super::Truth {
        super::eval::apply(left, self, right)
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Node {
    /// Visits this node and every node below it, in source order (parents first).
    pub fn walk(&self, visit: &mut dyn FnMut(&Node)) {
        visit(self);
        match self {
            Node::Or(items) | Node::And(items) => {
                for item in items {
                    item.walk(visit);
                }
            }
            Node::Not(inner) => inner.walk(visit),
            Node::Compare { .. } | Node::Truthy(_) => {}
        }
    }

    /// The operands held directly by this node (none for `Or`, `And`, `Not`).
    pub fn operands(&self) -> Vec<&Operand> {
        match self {
            Node::Compare { left, right, .. } => vec![left, right],
            Node::Truthy(operand) => vec![operand],
            _ => Vec::new(),
        }
    }
}

/// Canonical text: `||`, `&&`, `!`, variables as `${path}`, strings in single quotes, and
/// parentheses exactly where the tree needs them.
impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Or(items) => join(f, items, " || ", |n| matches!(n, Node::Or(_))),
            Node::And(items) => join(f, items, " && ", |n| {
                matches!(n, Node::Or(_) | Node::And(_))
            }),
            Node::Not(inner) => {
                f.write_str("!")?;
                match **inner {
                    Node::Not(_) | Node::Truthy(_) => fmt::Display::fmt(inner, f),
                    _ => write!(f, "({inner})"),
                }
            }
            Node::Compare { left, op, right } => write!(f, "{left} {op} {right}"),
            Node::Truthy(operand) => fmt::Display::fmt(operand, f),
        }
    }
}

fn join(
    f: &mut fmt::Formatter<'_>,
    items: &[Node],
    sep: &str,
    needs_parens: impl Fn(&Node) -> bool,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        if needs_parens(item) {
            write!(f, "({item})")?;
        } else {
            fmt::Display::fmt(item, f)?;
        }
    }
    Ok(())
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Var(path) => write!(f, "${{{path}}}"),
            Operand::Literal(value) => write_literal(f, value),
            Operand::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_literal(f, item)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// A literal in the condition syntax. (Arrays and objects never come from the parser; they
/// are written as JSON.)
fn write_literal(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    match value {
        Value::String(s) => {
            f.write_str("'")?;
            for c in s.chars() {
                match c {
                    '\\' => f.write_str("\\\\")?,
                    '\'' => f.write_str("\\'")?,
                    '\n' => f.write_str("\\n")?,
                    '\t' => f.write_str("\\t")?,
                    c => write!(f, "{c}")?,
                }
            }
            f.write_str("'")
        }
        Value::Number(n) => write!(f, "{n}"),
        Value::Bool(b) => write!(f, "{b}"),
        Value::Null => f.write_str("null"),
        Value::Array(_) | Value::Object(_) => write!(f, "{value}"),
    }
}
