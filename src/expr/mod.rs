//! The condition language: gateway conditions, flow conditions, hook guards and policy
//! rules. A condition that starts with `=` (Camunda 8), or a BPMN condition whose
//! `language` names FEEL ([`parse_in`]), is FEEL instead: see [`feel`] and
//! docs/conditions.md for the subset, evaluated with the same three-valued outcome. A condition is data, never code: there is no `eval`, no function call and no side
//! effect. It is evaluated against the process variables (JSON values) with three-valued
//! (Kleene) logic, so a condition over a variable that is not set yet is UNKNOWN rather than
//! an error.
//!
//! # Grammar
//!
//! ```text
//! condition  := or
//! or         := and   ( ("||" | "or")  and )*
//! and        := not   ( ("&&" | "and") not )*
//! not        := ("!" | "not") not
//!             | compare
//! compare    := primary [ cmp-op primary ]          -- non-associative: `a < b < c` is an error
//! cmp-op     := "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in"
//!             | "eq" | "ne" | "lt" | "le" | "gt" | "ge"  -- JUEL's, inside `${}` only
//! primary    := "(" or ")"
//!             | "${" path "}"                        -- a variable reference (`#{` too)
//!             | "${" or "}"                          -- JUEL style: bare words inside are variables
//!             | literal
//!             | "[" [ literal ("," literal)* [","] ] "]"   -- a list, only right of `in` / `not in`
//!             | word                                 -- outside `${}`: the string "word"
//! path       := ident ( "." segment )*               -- whitespace allowed inside `${ }`
//! ident      := [A-Za-z_] [A-Za-z0-9_-]*
//! segment    := [A-Za-z0-9_-]+                       -- member of an object, or index of an array
//! literal    := number | string | "true" | "True" | "false" | "False" | "null" | "None"
//! number     := "-"? digit+ ( "." digit+ )? ( ("e" | "E") ("+" | "-")? digit+ )?
//! string     := "'" … "'" | '"' … '"'                -- escapes: \\ \' \" \n \t
//! word       := [A-Za-z_] [A-Za-z0-9_.-]*            -- not a reserved word
//! ```
//!
//! Reserved words: `and`, `or`, `not`, `in`, `true`, `True`, `false`, `False`, `null`,
//! `None`. Words that only differ from one of them in case (`AND`, `TRUE`, `none`, ...) are
//! rejected rather than read as strings, since they are almost always a mistake.
//!
//! Outside `${}` a bare word is a string literal (`${planning_preference} == agent` compares
//! with `"agent"`). Inside `${...}` (the Flowable/JUEL form, `${credit_score > 0.6}`) a bare
//! word is a variable path; a `${` nested inside another is an error. A parenthesised or
//! `${}`-wrapped group that holds a single value is that value, so `(${a}) > 1` is fine,
//! but a group holding a condition can't be compared.
//!
//! A single `=` is an error ("use `==` to compare"), as are `=>`, `=<`, `<>`, a single `&`
//! or `|`, and `${` without `}`. An empty (or all-whitespace) source is an error. Nesting
//! (parentheses and negation) is limited to [`MAX_DEPTH`] levels.
//!
//! # Evaluation
//!
//! - A variable that is not set, or a path segment that does not exist (a missing member, an
//!   index out of range, a member of a non-object), makes its comparison UNKNOWN.
//! - Numbers compare numerically (integers and decimals mix freely). Strings compare
//!   exactly for `==`/`!=` and by code point for ordering. Booleans support `==`/`!=` only.
//! - `null`: `x == null` is TRUE iff `x` is JSON null (FALSE for any other value) and
//!   `x != null` is its negation; ordering against null is UNKNOWN.
//! - Numeric strings: when one side is a number and the other a string whose trimmed text
//!   is a number (`"0.75"`, as LLMs often answer), the two compare numerically. Two strings
//!   always compare as strings.
//! - Any other mix of types (a non-numeric string against a number, a boolean against a
//!   number, arrays and objects) is UNKNOWN, for `==` and `!=` too.
//! - `x in [..]` is TRUE if `x` equals (by the rules above) some item, FALSE if it is
//!   comparable with every item and equals none, and UNKNOWN otherwise or when `x` is
//!   missing. `x not in [..]` is `not (x in [..])`.
//! - A bare value used as a condition (`${approved}`, `true`) is its truth if it is a
//!   boolean and UNKNOWN otherwise (missing, null, a number, a string...).
//! - `!`, `&&`, `||` follow Kleene logic: `!U = U`, `F && U = F`, `T || U = T`, ...

mod ast;
mod eval;
pub mod feel;
mod lexer;
mod parser;
mod truth;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

pub use ast::{CmpOp, Node, Operand, VarPath};
pub use feel::FeelNode;
pub use serde_json::Value;
pub use truth::Truth;

use crate::source::Span;

/// How deeply parentheses and negations may nest.
pub const MAX_DEPTH: usize = 64;

/// Where the process variables come from: anything that can look a variable up by name.
/// Dotted paths (`${order.total}`) look up the first segment here and walk the rest inside
/// the JSON value.
pub trait Variables {
    fn lookup(&self, name: &str) -> Option<&Value>;
}

impl Variables for serde_json::Map<String, Value> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl Variables for BTreeMap<String, Value> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl<S: BuildHasher> Variables for HashMap<String, Value, S> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// A JSON object holds variables as its members; any other value holds none.
impl Variables for Value {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.as_object()?.get(name)
    }
}

/// The language a condition is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// cuga-flo's own condition language (with the JUEL forms `${...}` and `#{...}`).
    #[default]
    CugaFlo,
    /// FEEL, as Camunda 8 writes conditions (`=x > 1`), or any condition whose
    /// `language` (or the document's `expressionLanguage`) names FEEL.
    Feel,
}

impl Language {
    /// The language a BPMN `language`/`expressionLanguage` attribute names: FEEL when it
    /// names FEEL, cuga-flo's own otherwise (what it is written in is then up to the text).
    pub fn of_attribute(language: Option<&str>) -> Language {
        match language {
            Some(l) if feel::names_feel(l) => Language::Feel,
            _ => Language::CugaFlo,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Language::CugaFlo => "cuga-flo",
            Language::Feel => "FEEL",
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem in a condition's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub message: String,
    /// The byte range in the condition's source where the problem is.
    pub span: Span,
    pub help: Option<String>,
    /// The language the condition was read as.
    pub language: Language,
    /// The text is valid in its language but uses something cuga-flo does not evaluate
    /// (a FEEL construct outside the supported subset), rather than being malformed.
    pub unsupported: bool,
}

impl ExprError {
    pub(crate) fn new(message: impl Into<String>, span: Span) -> Self {
        ExprError {
            message: message.into(),
            span,
            help: None,
            language: Language::CugaFlo,
            unsupported: false,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The same error with its span moved by `offset` bytes: for a condition embedded in a
    /// larger file, pass the offset of the condition's first byte in that file.
    pub fn shifted(mut self, offset: usize) -> Self {
        self.span.offset += offset;
        self
    }
}

/// A parsed condition: its syntax tree and the text it was parsed from.
///
/// Equality compares the source text too; compare [`Expr::ast`] for structural equality.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    source: String,
    tree: Tree,
}

#[derive(Debug, Clone, PartialEq)]
enum Tree {
    Native(Node),
    /// A FEEL tree, and the offset of the FEEL text in the source (after a leading `=`).
    Feel(FeelNode, usize),
}

/// One `variable op literal(s)` atom of a condition, for generating test values.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The variable path, e.g. `order.total`.
    pub variable: String,
    /// The operator, read with the variable on the left (`1 < ${x}` is reported as `x > 1`).
    pub op: CmpOp,
    /// The literal compared with: one value, or the list items for `in` / `not in`.
    pub literals: Vec<Value>,
}

/// Parses a condition: FEEL when it starts with `=` (Camunda 8's marker, never valid in
/// cuga-flo's own language), cuga-flo's own language (with JUEL's `${...}`/`#{...}`)
/// otherwise.
pub fn parse(src: &str) -> Result<Expr, ExprError> {
    if let Some(offset) = feel_marker(src) {
        return parse_feel(src, offset);
    }
    let ast = parser::parse(src)?;
    Ok(Expr {
        source: src.to_owned(),
        tree: Tree::Native(ast),
    })
}

/// Parses a condition written under a BPMN `language` attribute (or the document's
/// `expressionLanguage`): FEEL when the attribute names FEEL (a leading `=` is then
/// allowed too), else as [`parse`] does.
pub fn parse_in(src: &str, language: Option<&str>) -> Result<Expr, ExprError> {
    if let Some(script) = language.filter(|l| names_script(l)) {
        // A script is code; cuga-flo evaluates conditions, never code.
        let mut e = ExprError::new(
            format!("a `{script}` condition is code, which cuga-flo does not run"),
            Span::new(0, src.len()),
        )
        .help(
            "write it as a cuga-flo condition (`${var} > 1`) or FEEL, or route the gateway \
             with a decision agent",
        );
        e.unsupported = true;
        return Err(e);
    }
    match Language::of_attribute(language) {
        Language::Feel => parse_feel(src, feel_marker(src).unwrap_or(0)),
        Language::CugaFlo => parse(src),
    }
}

/// Whether a `language` attribute names a scripting language (Python, JavaScript,
/// Groovy, Java, MVEL, Ruby, Drools rules): a condition in it is code.
fn names_script(language: &str) -> bool {
    let l = language.trim().to_ascii_lowercase();
    const SCRIPTS: &[&str] = &[
        "python",
        "jython",
        "javascript",
        "ecmascript",
        "groovy",
        "mvel",
        "ruby",
        "java.com/java",
        "drools/rule",
    ];
    SCRIPTS.iter().any(|s| l.contains(s)) || matches!(l.as_str(), "js" | "java" | "py")
}

/// The offset after a leading `=` (and whitespace before it) that marks FEEL; `==` is not one.
fn feel_marker(src: &str) -> Option<usize> {
    let trimmed = src.trim_start();
    let rest = trimmed.strip_prefix('=')?;
    if rest.starts_with('=') {
        return None;
    }
    Some(src.len() - rest.len())
}

fn parse_feel(src: &str, offset: usize) -> Result<Expr, ExprError> {
    let tree = feel::parse(&src[offset..]).map_err(|e| e.shifted(offset))?;
    Ok(Expr {
        source: src.to_owned(),
        tree: Tree::Feel(tree, offset),
    })
}

impl std::str::FromStr for Expr {
    type Err = ExprError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

impl Expr {
    /// The text this condition was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The language the condition is written in.
    pub fn language(&self) -> Language {
        match self.tree {
            Tree::Native(_) => Language::CugaFlo,
            Tree::Feel(..) => Language::Feel,
        }
    }

    /// The syntax tree of a condition in cuga-flo's own language.
    pub fn ast(&self) -> Option<&Node> {
        match &self.tree {
            Tree::Native(node) => Some(node),
            Tree::Feel(..) => None,
        }
    }

    /// The syntax tree of a FEEL condition.
    pub fn feel_ast(&self) -> Option<&FeelNode> {
        match &self.tree {
            Tree::Feel(node, _) => Some(node),
            Tree::Native(_) => None,
        }
    }

    /// Evaluates the condition against the process variables.
    pub fn eval(&self, vars: &dyn Variables) -> Truth {
        match &self.tree {
            Tree::Native(node) => eval::eval(node, vars),
            Tree::Feel(node, _) => feel::eval(node, vars),
        }
    }

    /// The value of the expression, for the places that want a value rather than a truth
    /// (a multi-instance collection or cardinality): a variable path or a literal as what
    /// it names; FEEL evaluated as FEEL; a condition as its truth (a boolean). `None` when
    /// the value is missing, null or UNKNOWN.
    pub fn value(&self, vars: &dyn Variables) -> Option<Value> {
        match &self.tree {
            Tree::Native(Node::Truthy(Operand::Var(path))) => {
                path.resolve(vars).filter(|v| !v.is_null()).cloned()
            }
            Tree::Native(Node::Truthy(Operand::Literal(v))) => (!v.is_null()).then(|| v.clone()),
            Tree::Native(Node::Truthy(Operand::List(items))) => Some(Value::Array(items.clone())),
            Tree::Native(node) => match eval::eval(node, vars) {
                Truth::True => Some(Value::Bool(true)),
                Truth::False => Some(Value::Bool(false)),
                Truth::Unknown => None,
            },
            Tree::Feel(node, _) => feel::eval_value(node, vars),
        }
    }

    /// The distinct variable paths referenced (`order.total`), in order of first appearance.
    pub fn variables(&self) -> Vec<String> {
        let ast = match &self.tree {
            Tree::Native(node) => node,
            Tree::Feel(node, _) => return feel::variables(node),
        };
        let mut out: Vec<String> = Vec::new();
        ast.walk(&mut |node| {
            for operand in node.operands() {
                if let Operand::Var(path) = operand {
                    let name = path.to_string();
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
            }
        });
        out
    }

    /// The distinct literal values appearing (list items included), in order of first
    /// appearance. Bare words outside `${}` are string literals.
    pub fn literals(&self) -> Vec<Value> {
        let ast = match &self.tree {
            Tree::Native(node) => node,
            Tree::Feel(node, _) => return feel::literals(node),
        };
        let mut out: Vec<Value> = Vec::new();
        let mut add = |value: &Value| {
            if !out.contains(value) {
                out.push(value.clone());
            }
        };
        ast.walk(&mut |node| {
            for operand in node.operands() {
                match operand {
                    Operand::Literal(value) => add(value),
                    Operand::List(items) => items.iter().for_each(&mut add),
                    Operand::Var(_) => {}
                }
            }
        });
        out
    }

    /// Every comparison between a variable and literal(s), in source order. A bare
    /// `${flag}` used as a condition means the same as `${flag} == true` and is reported so.
    pub fn comparisons(&self) -> Vec<Comparison> {
        let ast = match &self.tree {
            Tree::Native(node) => node,
            Tree::Feel(node, _) => return feel::comparisons(node),
        };
        let mut out = Vec::new();
        ast.walk(&mut |node| match node {
            Node::Compare { left, op, right } => {
                let found = match (left, right) {
                    (Operand::Var(path), Operand::Literal(value)) => {
                        Some((path, *op, vec![value.clone()]))
                    }
                    (Operand::Var(path), Operand::List(items)) => Some((path, *op, items.clone())),
                    (Operand::Literal(value), Operand::Var(path)) => {
                        Some((path, op.flipped(), vec![value.clone()]))
                    }
                    _ => None,
                };
                if let Some((path, op, literals)) = found {
                    out.push(Comparison {
                        variable: path.to_string(),
                        op,
                        literals,
                    });
                }
            }
            Node::Truthy(Operand::Var(path)) => out.push(Comparison {
                variable: path.to_string(),
                op: CmpOp::Eq,
                literals: vec![Value::Bool(true)],
            }),
            _ => {}
        });
        out
    }
}

/// The canonical text: parses back to an equal syntax tree (FEEL: the text after `=`,
/// marked with `=`).
impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.tree {
            Tree::Native(node) => std::fmt::Display::fmt(node, f),
            Tree::Feel(_, offset) => write!(f, "={}", self.source[*offset..].trim()),
        }
    }
}
