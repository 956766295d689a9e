//! Answering a parked run's open question (`runs answer`): the question is found by its
//! control point (or its key), the answer checked against what it offers (a guardrail's
//! approvers, a tool call's approve/deny, the flows, actions or outputs offered), and
//! journalled, durable before it is applied or shown. A question a consulted remote
//! person asked back takes a reply instead, which goes to them when the run resumes.
//! Nothing is written when the answer is refused.

use crate::journal::store::{Journal, JournalError};
use crate::journal::{Event, EventSink, FlowState, Record};
use crate::reason::park::{self, Given};
use crate::vocab::{Decider, Offered, Question};

/// What a person answers.
#[derive(Debug, Clone, Default)]
pub struct AnswerRequest {
    /// The control point (or the question's key) answered.
    pub control_point: String,
    /// The answer, as given (flows, action, outputs, ...).
    pub given: Given,
    /// `approve` / `deny`: a guardrail's or a tool call's decision.
    pub decision: Option<String>,
    /// A reply to a question a consulted remote person asked back.
    pub reply: Option<String>,
    /// Who answers.
    pub by: Option<String>,
    /// Why.
    pub reason: Option<String>,
}

/// What was journalled.
#[derive(Debug, Clone)]
pub enum Answered {
    /// An answer to the question, applied when the run resumes.
    Answer {
        question: Box<Question>,
        answer: serde_json::Value,
    },
    /// A reply to the remote agent that asked back, sent when the run resumes.
    Reply {
        question: Box<Question>,
        agent: String,
        task_id: String,
        reply: String,
    },
}

/// Why an answer is refused (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("run `{id}` has finished ({status}); it has no open question")]
    Finished { id: String, status: &'static str },
    #[error("{}", if *.already {
        format!("`{wanted}` of run `{id}` is answered already (the run applies it when resumed)")
    } else {
        format!("run `{id}` has no open question at `{wanted}`")
    })]
    NoQuestion {
        id: String,
        wanted: String,
        already: bool,
        /// The elements of the run's open questions.
        open: Vec<String>,
    },
    #[error(
        "`{element}` of run `{id}` waits for a reply to the question remote agent `{agent}` asked back (A2A task {task_id}): {instruction}"
    )]
    ReplyNeeded {
        id: String,
        element: String,
        agent: String,
        task_id: String,
        instruction: String,
    },
    #[error(
        "`{element}` of run `{id}` is not a question a consulted remote person asked back: --reply does not answer it"
    )]
    NotAskedBack { id: String, element: String },
    #[error(
        "`{element}` of run `{id}` waits for remote agent `{agent}` (A2A task {task_id}, {state}), not for a person: it cannot be answered with `runs answer`"
    )]
    RemoteWait {
        id: String,
        element: String,
        agent: String,
        task_id: String,
        state: String,
    },
    #[error("`{0}` is neither `approve` nor `deny`")]
    NotADecision(String),
    #[error("`{element}` of run `{id}` is not a guardrail: `{decision}` is not an answer to it")]
    NotAGuardrail {
        id: String,
        element: String,
        decision: String,
    },
    #[error("give either `approve`/`deny` or --flow/--choice, not both")]
    DecisionAndFlow,
    #[error("{} may not decide guardrail `{element}` of run `{id}`",
        by.as_ref().map_or_else(|| "an unnamed approver".to_string(), |b| format!("`{b}`")))]
    NotAnApprover {
        id: String,
        element: String,
        by: Option<String>,
        approvers: Vec<String>,
    },
    #[error("the answer to `{element}` of run `{id}` is refused: {why}")]
    Refused {
        id: String,
        element: String,
        why: String,
    },
    #[error("cannot journal the {what}: {source}")]
    Journal {
        what: &'static str,
        #[source]
        source: JournalError,
    },
}

impl super::Help for AnswerError {
    fn help(&self) -> Option<String> {
        const PENDING: &str = "`cuga-flo runs pending` shows what each question offers";
        match self {
            AnswerError::NoQuestion { open, .. } => Some(if open.is_empty() {
                "the run has no open questions".to_string()
            } else {
                format!("its open questions are at: {}", open.join(", "))
            }),
            AnswerError::ReplyNeeded { id, element, .. } => Some(format!(
                "reply with `cuga-flo runs answer {id} {element} --reply TEXT`"
            )),
            AnswerError::NotAskedBack { .. } | AnswerError::NotAGuardrail { .. } => {
                Some(PENDING.to_string())
            }
            AnswerError::RemoteWait { id, .. } => Some(format!(
                "`cuga-flo runs resume {id}` asks the agent again (GetTask on the same task); a question \
                 the agent asks is answered through the resumed run (an answers file, or a person at \
                 the terminal)"
            )),
            AnswerError::NotAnApprover { approvers, .. } => Some(format!(
                "its approvers are {}: answer with --by NAME",
                approvers.join(", ")
            )),
            AnswerError::Refused { .. } => Some(format!("nothing was recorded; {PENDING}")),
            _ => None,
        }
    }
}

/// Answer the open question of run `id` (its journal `journal`, read as `records`) that
/// `request` names, journalled and committed: what was journalled, and its record.
pub fn answer(
    journal: &Journal,
    records: &[Record],
    id: &str,
    request: AnswerRequest,
) -> Result<(Answered, Record), AnswerError> {
    let state = FlowState::fold(records.iter());
    if let Some(status) = state.status {
        return Err(AnswerError::Finished {
            id: id.to_string(),
            status: status.as_str(),
        });
    }
    let wanted = &request.control_point;
    let question = state
        .open_questions
        .values()
        .find(|q| &q.key == wanted || &q.element == wanted)
        .cloned();
    let Some(question) = question else {
        let open = state
            .open_questions
            .values()
            .map(|q| q.element.clone())
            .collect();
        let already = state
            .unapplied_answers
            .keys()
            .any(|k| k == wanted || k.split(':').nth_back(1) == Some(wanted.as_str()));
        return Err(AnswerError::NoQuestion {
            id: id.to_string(),
            wanted: wanted.clone(),
            already,
            open,
        });
    };
    // A consulted remote person asked a question back: a person here replies, and the
    // reply goes to them in the same A2A task when the run resumes.
    if let Some(remote) = question
        .remote
        .as_ref()
        .filter(|r| r.until_ms.is_some() && r.state == "input-required")
    {
        let Some(reply) = request.reply.clone().filter(|r| !r.trim().is_empty()) else {
            return Err(AnswerError::ReplyNeeded {
                id: id.to_string(),
                element: question.element.clone(),
                agent: remote.agent.clone(),
                task_id: remote.task_id.clone(),
                instruction: question.instruction.clone().unwrap_or_default(),
            });
        };
        let record = commit(
            journal,
            "reply",
            Event::RemoteReplied {
                node: question.element.clone(),
                key: question.key.clone(),
                task_id: remote.task_id.clone(),
                reply: reply.clone(),
                by: request.by,
            },
        )?;
        let (agent, task_id) = (remote.agent.clone(), remote.task_id.clone());
        return Ok((
            Answered::Reply {
                question: Box::new(question),
                agent,
                task_id,
                reply,
            },
            record,
        ));
    }
    if request.reply.is_some() {
        return Err(AnswerError::NotAskedBack {
            id: id.to_string(),
            element: question.element.clone(),
        });
    }
    if let Some(remote) = &question.remote {
        return Err(AnswerError::RemoteWait {
            id: id.to_string(),
            element: question.element.clone(),
            agent: remote.agent.clone(),
            task_id: remote.task_id.clone(),
            state: remote.state.clone(),
        });
    }
    let mut given = request.given;
    approval(
        &question,
        request.decision.as_deref(),
        &mut given,
        request.by.as_deref(),
        id,
    )?;
    let answer = park::check_answer(&question, &given).map_err(|why| AnswerError::Refused {
        id: id.to_string(),
        element: question.element.clone(),
        why: why.to_string(),
    })?;
    // Durable before it is applied, and before it is shown.
    let record = commit(
        journal,
        "answer",
        Event::QuestionAnswered {
            key: question.key.clone(),
            answer: answer.clone(),
            decided_by: Decider::Human,
            by: request.by,
            reason: request.reason,
        },
    )?;
    Ok((
        Answered::Answer {
            question: Box::new(question),
            answer,
        },
        record,
    ))
}

fn commit(journal: &Journal, what: &'static str, event: Event) -> Result<Record, AnswerError> {
    journal
        .emit(event)
        .and_then(|r| journal.commit().map(|()| r))
        .map_err(|source| AnswerError::Journal { what, source })
}

/// A guardrail's question: `approve` / `deny` name its flows, and only its approvers
/// may answer it; a tool call's: `approve` / `deny` confirm it or not.
fn approval(
    question: &Question,
    decision: Option<&str>,
    given: &mut Given,
    by: Option<&str>,
    id: &str,
) -> Result<(), AnswerError> {
    let decided = |d: &str| {
        crate::app::guardrail::decision_of(d).ok_or_else(|| AnswerError::NotADecision(d.into()))
    };
    if matches!(question.offered, Offered::ToolCall { .. }) {
        if let Some(d) = decision {
            given.confirm = Some(decided(d)?);
        }
        return Ok(());
    }
    let Some(approval) = &question.approval else {
        return match decision {
            Some(d) => Err(AnswerError::NotAGuardrail {
                id: id.to_string(),
                element: question.element.clone(),
                decision: d.to_string(),
            }),
            None => Ok(()),
        };
    };
    if let Some(d) = decision {
        let approved = decided(d)?;
        if !given.flows.is_empty() || given.choice.is_some() {
            return Err(AnswerError::DecisionAndFlow);
        }
        let flow = if approved {
            &approval.approve_flow
        } else {
            &approval.deny_flow
        };
        given.flows = vec![flow.clone()];
    }
    if !crate::app::guardrail::admits(&approval.approvers, by) {
        return Err(AnswerError::NotAnApprover {
            id: id.to_string(),
            element: question.element.clone(),
            by: by.map(str::to_string),
            approvers: approval.approvers.clone(),
        });
    }
    Ok(())
}
