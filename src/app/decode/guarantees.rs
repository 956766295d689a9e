//! The `guarantees` section: what every run must keep, whatever the hooks do.

use std::collections::BTreeMap;

use super::super::config::*;
use super::super::yaml::{Node, Value};
use super::reader::Cx;

pub(crate) const GUARANTEE_KEYS: &[&str] = &[
    "id",
    "description",
    "reach",
    "only_after",
    "always_visit",
    "never_reach",
];

const HELP: &str = "a guarantee is one of `reach: <node>` with `only_after: [<node>, ...]`, \
                    `always_visit: [<node>, ...]` or `never_reach: <node>`";

impl Cx<'_> {
    pub(super) fn guarantees(&mut self, node: &Node) -> Vec<Guarantee> {
        let items = self.seq(node, "`guarantees`");
        let list: Vec<Guarantee> = items.iter().filter_map(|i| self.guarantee(i)).collect();
        let mut seen: BTreeMap<&str, &Located<String>> = BTreeMap::new();
        for g in &list {
            if let Some(first) = seen.insert(g.id.as_str(), &g.id) {
                let d = crate::diag::Diagnostic::error(
                    "config::duplicate",
                    format!("two guarantees are named `{}`", g.id.value),
                )
                .at(self.file, g.id.span, "named again here".to_string())
                .also(first.span, "first named here");
                self.diags.push(d);
            }
        }
        list
    }

    fn guarantee(&mut self, node: &Node) -> Option<Guarantee> {
        let f = self.fields(node, "a guarantee", GUARANTEE_KEYS);
        let Some(id) = self.opt_string(&f, "id", "a guarantee") else {
            self.error(
                "config::missing_key",
                node.span,
                "guarantee has no `id`".into(),
                "name this guarantee",
                Some("add `id: <name>` (it names the guarantee in diagnostics and denials)".into()),
            );
            return None;
        };
        let what = format!("guarantee `{}`", id.value);
        let _ = self.opt_string(&f, "description", &what);
        let reach = self.opt_string(&f, "reach", &what);
        let only_after = f.get("only_after").map(|n| self.ids(n, "`only_after`"));
        let always = f.get("always_visit").map(|n| self.ids(n, "`always_visit`"));
        let never = f.get("never_reach").map(|n| self.ids(n, "`never_reach`"));
        let kinds = [reach.is_some(), always.is_some(), never.is_some()]
            .iter()
            .filter(|k| **k)
            .count();
        if kinds != 1 {
            let message = if kinds == 0 {
                format!("{what} says nothing")
            } else {
                format!("{what} mixes several kinds of guarantee")
            };
            self.error(
                "config::guarantee",
                id.span,
                message,
                "one kind per guarantee",
                Some(HELP.into()),
            );
            return None;
        }
        let rule = if let Some(reach) = reach {
            let Some(after) = only_after.filter(|a| !a.is_empty()) else {
                self.error(
                    "config::guarantee",
                    reach.span,
                    format!("{what} has `reach` but no `only_after`"),
                    "reached only after what?",
                    Some(HELP.into()),
                );
                return None;
            };
            GuaranteeRule::OnlyAfter { reach, after }
        } else {
            if let Some(span) = f.key_span("only_after") {
                self.error(
                    "config::guarantee",
                    span,
                    format!("{what} has `only_after` but no `reach`"),
                    "only after, before reaching what?",
                    Some(HELP.into()),
                );
                return None;
            }
            match (always, never) {
                (Some(ids), _) if !ids.is_empty() => GuaranteeRule::AlwaysVisit(ids),
                (_, Some(ids)) if !ids.is_empty() => GuaranteeRule::NeverReach(ids),
                _ => {
                    self.error(
                        "config::guarantee",
                        id.span,
                        format!("{what} names no node"),
                        "no node",
                        Some(HELP.into()),
                    );
                    return None;
                }
            }
        };
        Some(Guarantee {
            id,
            rule,
            span: node.span,
        })
    }

    /// One node id or a list of them.
    fn ids(&mut self, node: &Node, what: &str) -> Vec<Located<String>> {
        match &node.value {
            Value::Seq(_) => self.string_list(node, what),
            _ => self.string(node, what).into_iter().collect(),
        }
    }
}
