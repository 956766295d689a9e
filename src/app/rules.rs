//! A policy's rules: the fenced ```` ```rules ```` blocks of its markdown, one rule per
//! line (blank lines and `#` comments ignored):
//!
//! ```text
//! when <condition> then <action> [<target>...] [set <var> = <json>[, ...]] [because "<text>"]
//! when <condition> then take <flow>[, <flow>...] [because "<text>"]
//! ```
//!
//! Read here, as the app is authored; `validate` checks them against the model and the
//! permissions, and [`crate::reason::rules`] decides with them before any reasoner.

use serde_json::{Map, Value};

use crate::expr::{self, Expr};
use crate::vocab::HookAction;

/// The variables a rule sets.
pub type Variables = Map<String, Value>;

/// What a rule decides.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleAction {
    /// A hook action and its arguments (targets for skip_to / remove_node / swap_nodes,
    /// the insertable task id for add_node).
    Hook {
        action: HookAction,
        args: Vec<String>,
    },
    /// A gateway: the flows to take.
    Take(Vec<String>),
}

/// One rule of a policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The line in the policy file (1-based).
    pub line: usize,
    /// The rule as written (trimmed).
    pub text: String,
    pub condition: Expr,
    pub action: RuleAction,
    pub set: Variables,
    pub because: Option<String>,
}

impl Rule {
    /// The nodes a hook rule names in the model (skip_to, remove_node, swap_nodes).
    pub fn node_targets(&self) -> &[String] {
        match &self.action {
            RuleAction::Hook {
                action: HookAction::SkipTo | HookAction::RemoveNode | HookAction::SwapNodes,
                args,
            } => args,
            _ => &[],
        }
    }

    /// Why the rule decided: its `because`, else the rule as written.
    pub fn reason(&self) -> String {
        self.because
            .clone()
            .unwrap_or_else(|| format!("rule: {}", self.text))
    }
}

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RuleError {
    /// The line in the policy file (1-based).
    pub line: usize,
    pub message: String,
}

/// The rules of a policy, in order; every rule that could not be read is an error.
pub fn parse_rules(policy_text: &str) -> Result<Vec<Rule>, Vec<RuleError>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let mut fence: Option<(char, usize, bool)> = None; // (char, length, is a rules block)
    for (i, raw) in policy_text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if let Some((c, n, is_rules)) = fence {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= n && trimmed[run * c.len_utf8()..].trim().is_empty() {
                fence = None;
                continue;
            }
            if !is_rules || trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            match parse_rule(trimmed, line) {
                Ok(r) => rules.push(r),
                Err(message) => errors.push(RuleError { line, message }),
            }
            continue;
        }
        for c in ['`', '~'] {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 {
                let info = trimmed[run..].split_whitespace().next().unwrap_or("");
                fence = Some((c, run, info == "rules"));
            }
        }
    }
    if let Some((_, _, true)) = fence {
        errors.push(RuleError {
            line: policy_text.lines().count().max(1),
            message: "the `rules` block is not closed".into(),
        });
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

/// The byte offset of the first `keyword` standing as a word outside quotes and brackets.
fn find_keyword(s: &str, keyword: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut quote: Option<u8> = None;
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
        } else {
            match b {
                b'"' | b'\'' => quote = Some(b),
                b'[' | b'{' | b'(' => depth += 1,
                b']' | b'}' | b')' => depth -= 1,
                _ if depth <= 0
                    && s[i..].starts_with(keyword)
                    && (i == 0 || bytes[i - 1].is_ascii_whitespace())
                    && bytes
                        .get(i + keyword.len())
                        .is_none_or(|c| c.is_ascii_whitespace()) =>
                {
                    return Some(i);
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Split at top-level commas (outside quotes and brackets).
fn split_commas(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth <= 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_rule(text: &str, line: usize) -> Result<Rule, String> {
    let rest = text
        .strip_prefix("when")
        .filter(|r| r.starts_with(char::is_whitespace))
        .ok_or("a rule starts with `when <condition> then ...`")?;
    let then = find_keyword(rest, "then").ok_or("missing `then <action>` after the condition")?;
    let cond_text = rest[..then].trim();
    if cond_text.is_empty() {
        return Err("missing the condition after `when`".into());
    }
    let condition = expr::parse(cond_text).map_err(|e| format!("bad condition: {e}"))?;
    let mut tail = rest[then + "then".len()..].trim();

    let mut because = None;
    if let Some(at) = find_keyword(tail, "because") {
        let quoted = tail[at + "because".len()..].trim();
        let s: String = serde_json::from_str(quoted)
            .map_err(|_| "`because` takes one double-quoted text: because \"...\"")?;
        because = Some(s);
        tail = tail[..at].trim();
    }
    let mut set = Variables::new();
    if let Some(at) = find_keyword(tail, "set") {
        let assignments = tail[at + "set".len()..].trim();
        if assignments.is_empty() {
            return Err("`set` needs `<var> = <json value>`".into());
        }
        for part in split_commas(assignments) {
            let (var, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{}`: write `<var> = <json value>`", part.trim()))?;
            let var = var.trim();
            if var.is_empty()
                || !var
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!("`{var}` is not a variable name"));
            }
            let value: Value = serde_json::from_str(value.trim()).map_err(|_| {
                format!(
                    "the value of `{var}` is not JSON: `{}` (quote texts: \"...\")",
                    value.trim()
                )
            })?;
            set.insert(var.to_string(), value);
        }
        tail = tail[..at].trim();
    }

    let mut words = tail.split_whitespace();
    let name = words.next().ok_or("missing the action after `then`")?;
    let args_text = tail[name.len()..].trim();
    let action = if name == "take" {
        let flows: Vec<String> = args_text
            .split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        if flows.is_empty() || flows.iter().any(|f| f.contains(char::is_whitespace)) {
            return Err("`take` names flow ids separated by `,`".into());
        }
        if !set.is_empty() {
            return Err("a gateway rule cannot `set` variables".into());
        }
        RuleAction::Take(flows)
    } else {
        let action: HookAction = name.parse().map_err(|()| {
            format!(
                "`{name}` is not an action (`take` or one of {})",
                HookAction::names().collect::<Vec<_>>().join(", ")
            )
        })?;
        let args: Vec<String> = words.map(str::to_string).collect();
        let wanted = match action {
            HookAction::SkipTo | HookAction::RemoveNode | HookAction::AddNode => 1,
            HookAction::SwapNodes => 2,
            _ => 0,
        };
        if args.len() != wanted {
            return Err(format!(
                "`{action}` takes {wanted} node id(s), not {}",
                args.len()
            ));
        }
        RuleAction::Hook { action, args }
    };
    Ok(Rule {
        line,
        text: text.to_string(),
        condition,
        action,
        set,
        because,
    })
}
