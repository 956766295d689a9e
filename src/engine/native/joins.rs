//! Synchronising joins (parallel, inclusive and complex gateways with several incoming
//! flows). A join fires once a token has arrived on every incoming flow that some live
//! token can still reach; for a parallel join whose missing flows nothing can reach any
//! more (a hook skipped, removed or terminated a branch, or a branch ended elsewhere)
//! that is the dead-branch release. Tokens that arrive on a flow already satisfied wait
//! for the next activation.

use std::collections::{BTreeMap, VecDeque};

use super::run::{Run, Step};
use super::tokens::{At, ScopeId, TokenId};

/// The tokens waiting at one join, by the flow they arrived on (`None`: by a jump).
#[derive(Debug, Default)]
pub(super) struct JoinState {
    arrivals: BTreeMap<Option<String>, VecDeque<TokenId>>,
}

impl JoinState {
    fn is_empty(&self) -> bool {
        self.arrivals.values().all(VecDeque::is_empty)
    }

    fn has(&self, flow: &str) -> bool {
        self.arrivals
            .get(&Some(flow.to_string()))
            .is_some_and(|q| !q.is_empty())
    }

    /// One token from each flow that has any: the tokens of one activation.
    fn take_activation(&mut self) -> Vec<TokenId> {
        let taken = self
            .arrivals
            .values_mut()
            .filter_map(VecDeque::pop_front)
            .collect();
        self.arrivals.retain(|_, q| !q.is_empty());
        taken
    }
}

impl Run {
    /// A token reaches a join along `via`: it waits there, and the join fires if it can.
    pub(super) fn park(&mut self, token: TokenId, join: &str, via: Option<String>) {
        let scope = self.tokens.scope_of(token);
        self.tokens.place(token, At::Join(join.to_string()));
        self.joins
            .entry((scope, join.to_string()))
            .or_default()
            .arrivals
            .entry(via)
            .or_default()
            .push_back(token);
        self.try_fire(scope, join);
    }

    /// The incoming flows of `join` that have no token and that some live token of
    /// `scope` (other than those waiting at the join) can still reach.
    fn awaited(&self, scope: ScopeId, join: &str, state: &JoinState) -> Vec<String> {
        let missing: Vec<&str> = self
            .topology
            .incoming(join)
            .map(|f| f.id.as_str())
            .filter(|f| !state.has(f))
            .collect();
        if missing.is_empty() {
            return Vec::new();
        }
        let (nodes, flows) = self.tokens.positions_in(scope, join);
        let reachable = self.topology.reaches(nodes, flows, &missing);
        // Tokens that have traversed an incoming flow but not yet arrived are coming too
        // (a branch with nothing on it reaches the join in the same step as the split).
        let arriving: Vec<&str> = self
            .ready
            .iter()
            .filter_map(|step| match step {
                Step::Arrive {
                    token,
                    node,
                    via: Some(flow),
                } if node == join && self.tokens.scope_of(*token) == scope => Some(flow.as_str()),
                _ => None,
            })
            .collect();
        let awaited: Vec<String> = missing
            .iter()
            .filter(|f| reachable.contains(**f) || arriving.contains(*f))
            .map(|f| f.to_string())
            .collect();
        if awaited.is_empty() {
            tracing::debug!(
                join,
                missing = ?missing,
                "dead-branch release: no live token can reach the join's missing flows"
            );
        }
        awaited
    }

    /// Fire `join` in `scope` if it has tokens and waits for nothing that can still
    /// come. The tokens of the activation merge into one that enters the join.
    fn try_fire(&mut self, scope: ScopeId, join: &str) -> bool {
        let key = (scope, join.to_string());
        let Some(state) = self.joins.get(&key) else {
            return false;
        };
        if state.is_empty() || !self.awaited(scope, join, state).is_empty() {
            return false;
        }
        let Some(state) = self.joins.get_mut(&key) else {
            return false;
        };
        let consumed = state.take_activation();
        if state.is_empty() {
            self.joins.remove(&key);
        }
        let merged = self.tokens.add(scope, At::Node(join.to_string()));
        for token in consumed {
            self.tokens.remove(token);
        }
        self.ready.push_back(Step::Enter {
            token: merged,
            node: join.to_string(),
        });
        true
    }

    /// Fire every join that can fire now (after tokens ended or moved). `true` if any did.
    pub(super) fn release_joins(&mut self) -> bool {
        let waiting: Vec<(ScopeId, String)> = self.joins.keys().cloned().collect();
        let mut fired = false;
        for (scope, join) in waiting {
            fired |= self.try_fire(scope, &join);
        }
        fired
    }

    /// Why a run with tokens left but nothing moving is stuck.
    pub(super) fn stuck_message(&self) -> String {
        let joins: Vec<String> = self
            .joins
            .iter()
            .filter(|(_, state)| !state.is_empty())
            .map(|((scope, join), state)| {
                format!(
                    "`{join}` (waiting for {})",
                    self.awaited(*scope, join, state).join(", ")
                )
            })
            .collect();
        if joins.is_empty() {
            let at: Vec<String> = self
                .tokens
                .all()
                .map(|(_, t)| format!("{:?}", t.at))
                .collect();
            format!(
                "the run is stuck: tokens remain ({}) but none can move",
                at.join(", ")
            )
        } else {
            format!("the run is stuck: join {} can never fire", joins.join(", "))
        }
    }
}
