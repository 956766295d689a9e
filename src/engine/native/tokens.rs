//! Tokens and scopes. Every live token has a position and belongs to a scope: the process
//! level ([`ROOT`]) or one running instance of a sub-process. A token waiting for a
//! control-point answer keeps its position, so the engine always knows where every token
//! is (which is what dead-branch release needs).

use std::collections::{BTreeMap, BTreeSet};

pub(super) type TokenId = u64;
pub(super) type ScopeId = u64;

/// The process level.
pub(super) const ROOT: ScopeId = 0;

/// Where a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum At {
    /// About to enter, or inside, a node (a task being executed, a sub-process running).
    Node(String),
    /// About to traverse a flow (its hook being evaluated).
    Flow(String),
    /// Waiting at a synchronising join.
    Join(String),
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub scope: ScopeId,
    pub at: At,
}

/// A running instance of a sub-process.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    pub subprocess: String,
    /// The token waiting at the sub-process node (in the parent scope).
    pub parent_token: TokenId,
    pub parent_scope: ScopeId,
}

#[derive(Debug, Default)]
pub(super) struct Tokens {
    last_token: TokenId,
    last_scope: ScopeId,
    live: BTreeMap<TokenId, Token>,
    scopes: BTreeMap<ScopeId, Scope>,
}

impl Tokens {
    pub fn add(&mut self, scope: ScopeId, at: At) -> TokenId {
        self.last_token += 1;
        self.live.insert(self.last_token, Token { scope, at });
        self.last_token
    }

    pub fn contains(&self, id: TokenId) -> bool {
        self.live.contains_key(&id)
    }

    pub fn place(&mut self, id: TokenId, at: At) {
        if let Some(t) = self.live.get_mut(&id) {
            t.at = at;
        }
    }

    /// Where token `id` is.
    pub fn at(&self, id: TokenId) -> Option<&At> {
        self.live.get(&id).map(|t| &t.at)
    }

    pub fn remove(&mut self, id: TokenId) -> Option<Token> {
        self.live.remove(&id)
    }

    pub fn scope_of(&self, id: TokenId) -> ScopeId {
        self.live.get(&id).map_or(ROOT, |t| t.scope)
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    pub fn count_in(&self, scope: ScopeId) -> usize {
        self.live.values().filter(|t| t.scope == scope).count()
    }

    pub fn all(&self) -> impl Iterator<Item = (&TokenId, &Token)> {
        self.live.iter()
    }

    /// The nodes some token is at or waiting at.
    pub fn held_nodes(&self) -> BTreeSet<&str> {
        self.live
            .values()
            .filter_map(|t| match &t.at {
                At::Node(n) | At::Join(n) => Some(n.as_str()),
                At::Flow(_) => None,
            })
            .collect()
    }

    /// The positions of the tokens in `scope`, except those waiting at `join`: the nodes
    /// they are at and the flows they are about to traverse.
    pub fn positions_in(&self, scope: ScopeId, join: &str) -> (Vec<&str>, Vec<&str>) {
        let mut nodes = Vec::new();
        let mut flows = Vec::new();
        for t in self.live.values().filter(|t| t.scope == scope) {
            match &t.at {
                At::Join(n) if n == join => {}
                At::Node(n) | At::Join(n) => nodes.push(n.as_str()),
                At::Flow(f) => flows.push(f.as_str()),
            }
        }
        (nodes, flows)
    }

    pub fn open_scope(&mut self, subprocess: &str, parent_token: TokenId) -> ScopeId {
        self.last_scope += 1;
        let parent_scope = self.scope_of(parent_token);
        self.scopes.insert(
            self.last_scope,
            Scope {
                subprocess: subprocess.to_string(),
                parent_token,
                parent_scope,
            },
        );
        self.last_scope
    }

    /// A running sub-process instance.
    pub fn scope(&self, scope: ScopeId) -> Option<&Scope> {
        self.scopes.get(&scope)
    }

    /// The running sub-process instance whose node `token` waits at, if any.
    pub fn scope_owned_by(&self, token: TokenId) -> Option<ScopeId> {
        self.scopes
            .iter()
            .find(|(_, s)| s.parent_token == token)
            .map(|(id, _)| *id)
    }

    pub fn close_scope(&mut self, scope: ScopeId) -> Option<Scope> {
        self.scopes.remove(&scope)
    }

    /// `scope` and the scopes nested in it, at any depth.
    pub fn nested(&self, scope: ScopeId) -> BTreeSet<ScopeId> {
        let mut out = BTreeSet::from([scope]);
        loop {
            let more: Vec<ScopeId> = self
                .scopes
                .iter()
                .filter(|(id, s)| !out.contains(*id) && out.contains(&s.parent_scope))
                .map(|(id, _)| *id)
                .collect();
            if more.is_empty() {
                return out;
            }
            out.extend(more);
        }
    }

    /// Discard every token of `scopes`, and close those scopes except `keep`.
    pub fn discard(&mut self, scopes: &BTreeSet<ScopeId>, keep: ScopeId) {
        self.live.retain(|_, t| !scopes.contains(&t.scope));
        self.scopes
            .retain(|id, _| *id == keep || !scopes.contains(id));
    }
}
