//! A person at the terminal answers: the control point, its policy (the first lines), the
//! relevant variables and the permitted choices are printed, numbered; a choice is read
//! and checked, and asked again (up to a bound) when it is not one of them. Tasks ask for
//! each declared output (JSON, or plain text taken as a string).
//!
//! The input and output are injectable ([`HumanReasoner::with_io`]) so the dialogue can be
//! driven without a terminal.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::bridge::{BoxFuture, ControlPointContext, Variables};
use crate::vocab::{Decider, HookAction, VarKind};

use super::park;
use super::{
    AddTask, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, Policy, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};
use crate::diag::printable;
use crate::terminal::Asking;

/// How many policy lines are shown.
pub const POLICY_LINES: usize = 40;
/// How many times an invalid entry is asked again before giving up.
pub const DEFAULT_ATTEMPTS: usize = 5;
/// How many variables are shown at most.
const MAX_VARIABLES: usize = 30;
/// How long a shown value may be.
const MAX_VALUE_CHARS: usize = 100;

/// A person at the terminal.
pub struct HumanReasoner {
    io: Arc<Mutex<Console>>,
    attempts: usize,
    /// Who the person is (`start --by`, else `$USER`): at a guardrail with approvers,
    /// only an approver is asked.
    person: Option<String>,
}

struct Console {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

impl HumanReasoner {
    /// Read from standard input, write prompts to standard error (standard output carries
    /// the run's stream).
    pub fn terminal() -> Self {
        Self::with_io(io::BufReader::new(io::stdin()), io::stderr())
    }

    /// Whether a person can answer: standard input and standard error are terminals.
    pub fn terminal_available() -> bool {
        io::stdin().is_terminal() && io::stderr().is_terminal()
    }

    /// Read answers from `input` and write prompts to `output`.
    pub fn with_io(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> Self {
        HumanReasoner {
            io: Arc::new(Mutex::new(Console {
                input: Box::new(input),
                output: Box::new(output),
            })),
            attempts: DEFAULT_ATTEMPTS,
            person: std::env::var("USER").ok().filter(|u| !u.is_empty()),
        }
    }

    /// Who answers at the terminal (default: `$USER`).
    pub fn as_person(mut self, person: Option<String>) -> Self {
        if person.is_some() {
            self.person = person;
        }
        self
    }

    /// How many times an invalid entry is asked again (at least once).
    pub fn with_attempts(mut self, attempts: usize) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    fn run<T, F>(&self, f: F) -> BoxFuture<'_, Result<T, ReasonError>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Dialogue<'_>) -> Result<T, ReasonError> + Send + 'static,
    {
        let io = Arc::clone(&self.io);
        let attempts = self.attempts;
        let work = move || {
            let mut console = io.lock().unwrap_or_else(|e| e.into_inner());
            let mut d = Dialogue {
                console: &mut console,
                attempts,
            };
            f(&mut d)
        };
        Box::pin(async move {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    // The steps before the question are shown first (the run's engine
                    // commits them as soon as it waits for this answer).
                    crate::terminal::caught_up(std::time::Duration::from_millis(500)).await;
                    handle
                        .spawn_blocking(work)
                        .await
                        .map_err(|e| ReasonError::Io(format!("the terminal prompt failed: {e}")))?
                }
                Err(_) => work(),
            }
        })
    }
}

impl Reasoner for HumanReasoner {
    fn describe(&self) -> String {
        "human at the terminal".to_string()
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        let asking = Asking::start(park::task_question(&req));
        self.run(move |d| {
            let _asking = asking;
            d.task(&req)
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        let asking = Asking::start(park::gateway_question(&req));
        let person = self.person.clone();
        self.run(move |d| {
            let _asking = asking;
            match &req.approvers {
                Some(approvers) => d.approval(&req, approvers, person.as_deref()),
                None => d.gateway(&req),
            }
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        let asking = Asking::start(park::hook_question(&req));
        self.run(move |d| {
            let _asking = asking;
            d.hook(&req)
        })
    }

    fn confirm(&self, req: super::tools::ConfirmRequest) -> super::tools::Confirming<'_> {
        let asking = Asking::start(super::tools::confirm_question(&req));
        let person = self.person.clone();
        self.run(move |d| {
            let _asking = asking;
            let who = req.name.as_deref().unwrap_or(&req.task_id);
            d.say(&format!(
                "\n? the agent of task `{}` asks to call {}",
                printable(who),
                printable(&req.tool)
            ))?;
            d.say(&format!("  why you are asked: {}", printable(&req.why)))?;
            let args = serde_json::to_string_pretty(&req.arguments).unwrap_or_default();
            for line in args.lines() {
                d.say(&format!("  {}", printable(line)))?;
            }
            if let Some(said) = &req.said {
                d.say(&format!("  the agent says: {}", printable(said)))?;
            }
            let approved = d.ask_until(&req.task_id, "approve or deny [a/d]", |line| match line
                .to_ascii_lowercase()
                .as_str()
            {
                "a" | "approve" | "y" | "yes" => Ok(true),
                "d" | "deny" | "n" | "no" => Ok(false),
                _ => Err("answer `a` (approve) or `d` (deny)".to_string()),
            })?;
            let reason = d.optional("reason (optional)")?;
            Ok(super::tools::Confirmation {
                approved,
                decided_by: Decider::Human,
                by: person,
                reason,
            })
        })
    }
}

impl super::Consult for HumanReasoner {
    fn consult(
        &self,
        c: super::Consultation,
    ) -> BoxFuture<'_, Result<super::Consulted, ReasonError>> {
        let super::Consultation {
            element, question, ..
        } = c;
        self.run(move |d| {
            d.say(&format!("\n? the agent of `{element}` asks: {question}"))?;
            match d.ask("answer")? {
                Some(answer) => Ok(super::Consulted::Answer(answer)),
                None => Err(ReasonError::Io("no answer: the input ended".into())),
            }
        })
    }
}

/// One exchange with the person.
struct Dialogue<'a> {
    console: &'a mut Console,
    attempts: usize,
}

fn io_error(e: io::Error) -> ReasonError {
    ReasonError::Io(format!("terminal: {e}"))
}

impl Dialogue<'_> {
    fn say(&mut self, text: &str) -> Result<(), ReasonError> {
        writeln!(self.console.output, "{text}").map_err(io_error)
    }

    /// Print a prompt and read one line (trimmed); `None` at the end of the input.
    fn ask(&mut self, prompt: &str) -> Result<Option<String>, ReasonError> {
        write!(self.console.output, "{prompt}> ").map_err(io_error)?;
        self.console.output.flush().map_err(io_error)?;
        let mut line = String::new();
        let n = self.console.input.read_line(&mut line).map_err(io_error)?;
        if n == 0 {
            writeln!(self.console.output).map_err(io_error)?;
            return Ok(None);
        }
        Ok(Some(line.trim().to_string()))
    }

    /// Ask until `parse` accepts the entry (at most `attempts` times).
    fn ask_until<T>(
        &mut self,
        element: &str,
        prompt: &str,
        mut parse: impl FnMut(&str) -> Result<T, String>,
    ) -> Result<T, ReasonError> {
        for _ in 0..self.attempts {
            let Some(line) = self.ask(prompt)? else {
                return Err(ReasonError::no_answer(
                    element,
                    "the terminal's input ended before an answer was given",
                ));
            };
            match parse(&line) {
                Ok(v) => return Ok(v),
                Err(why) => self.say(&format!("  {why}"))?,
            }
        }
        Err(ReasonError::invalid(
            element,
            format!("no valid entry after {} attempts", self.attempts),
        ))
    }

    /// An optional free-text entry (empty or the end of the input: none).
    fn optional(&mut self, prompt: &str) -> Result<Option<String>, ReasonError> {
        Ok(self.ask(prompt)?.filter(|s| !s.is_empty()))
    }

    /// Number the options and read one choice (or several, comma-separated).
    fn choose(
        &mut self,
        element: &str,
        what: &str,
        options: &[(String, String)],
        multiple: bool,
    ) -> Result<Vec<usize>, ReasonError> {
        self.choose_named(element, what, options, &[], multiple)
    }

    /// [`Dialogue::choose`] where an option may also be typed by one of its `names` (a
    /// flow's label, its target's name), in any case.
    fn choose_named(
        &mut self,
        element: &str,
        what: &str,
        options: &[(String, String)],
        names: &[Vec<String>],
        multiple: bool,
    ) -> Result<Vec<usize>, ReasonError> {
        for (i, (_, label)) in options.iter().enumerate() {
            self.say(&format!("  {}) {label}", i + 1))?;
        }
        let n = options.len();
        let prompt = if multiple {
            format!("Choose one or more {what}s, separated by commas (1-{n})")
        } else {
            format!("Choose a {what} (1-{n})")
        };
        self.ask_until(element, &prompt, |line| {
            let parts: Vec<&str> = line
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if parts.is_empty() {
                return Err(format!("enter a number from 1 to {n}"));
            }
            if parts.len() > 1 && !multiple {
                return Err(format!("choose one {what}"));
            }
            let mut picked = Vec::new();
            for part in parts {
                let named = |i: usize| {
                    names.get(i).is_some_and(|names| {
                        (names.iter()).any(|name| name.trim().eq_ignore_ascii_case(part))
                    })
                };
                let index = match part.parse::<usize>() {
                    Ok(k) if (1..=n).contains(&k) => k - 1,
                    _ => (0..n)
                        .find(|&i| options[i].0 == part)
                        .or_else(|| {
                            // A name only one option has.
                            let mut by_name = (0..n).filter(|&i| named(i));
                            match (by_name.next(), by_name.next()) {
                                (Some(i), None) => Some(i),
                                _ => None,
                            }
                        })
                        .ok_or_else(|| {
                            format!(
                                "`{part}` is not a choice; enter a number from 1 to {n}, an id or a name"
                            )
                        })?,
                };
                if !picked.contains(&index) {
                    picked.push(index);
                }
            }
            Ok(picked)
        })
    }

    fn header(&mut self, title: &str) -> Result<(), ReasonError> {
        self.say("")?;
        self.say(&format!("== {title} =="))
    }

    fn policy(&mut self, policy: Option<&Policy>) -> Result<(), ReasonError> {
        let Some(p) = policy else { return Ok(()) };
        self.say(&format!("Policy ({}):", p.path))?;
        let (head, rest) = p.excerpt(POLICY_LINES);
        for line in head.lines() {
            self.say(&format!("  | {line}"))?;
        }
        if rest > 0 {
            self.say(&format!("  | ... ({rest} more lines in {})", p.path))?;
        }
        Ok(())
    }

    fn variables(
        &mut self,
        title: &str,
        vars: &Variables,
        only: &[String],
    ) -> Result<(), ReasonError> {
        let shown: Vec<(&String, &Value)> = vars
            .iter()
            .filter(|(k, _)| {
                if only.is_empty() {
                    !k.starts_with('_')
                } else {
                    only.contains(k)
                }
            })
            .collect();
        if shown.is_empty() {
            return Ok(());
        }
        self.say(&format!("{title}:"))?;
        for (k, v) in shown.iter().take(MAX_VARIABLES) {
            self.say(&format!("  {k} = {}", short(v)))?;
        }
        if shown.len() > MAX_VARIABLES {
            self.say(&format!("  ... ({} more)", shown.len() - MAX_VARIABLES))?;
        }
        Ok(())
    }

    fn task(&mut self, req: &TaskRequest) -> Result<TaskAnswer, ReasonError> {
        let id = req.task_id.as_str();
        let mut title = format!("Task {id}");
        if let Some(n) = &req.name {
            title.push_str(&format!(" \"{n}\""));
        }
        if let Some(a) = &req.agent {
            title.push_str(&format!(" (agent {a})"));
        }
        self.header(&title)?;
        if let Some(i) = &req.instruction {
            self.say(&format!("Instruction: {i}"))?;
        }
        self.policy(req.policy.as_ref())?;
        self.variables("Inputs", &req.inputs, &[])?;
        let mut outputs = Variables::new();
        if req.outputs.is_empty() {
            self.say("The task declares no outputs.")?;
            if let Some(text) = self.optional("Result (JSON object or text; empty for none)")? {
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(m)) => outputs = m,
                    _ => {
                        outputs.insert("result".into(), Value::String(text));
                    }
                }
            }
        } else {
            self.say("Give each output as JSON (plain text is taken as a string):")?;
            for key in &req.outputs {
                let kind = req.output_kinds.get(key).copied();
                let prompt = match kind {
                    Some(k) => format!("  {key} ({})", k.described()),
                    None => format!("  {key}"),
                };
                let value = self.ask_until(id, &prompt, |line| {
                    if line.is_empty() {
                        return Err(format!("`{key}` needs a value"));
                    }
                    typed_entry(line, kind).map_err(|why| format!("`{key}` {why}"))
                })?;
                outputs.insert(key.clone(), value);
            }
        }
        let reason = self.optional("Reason (optional)")?;
        Ok(TaskAnswer {
            outputs,
            reason,
            decided_by: Decider::Human,
            raised: None,
        })
    }

    fn gateway(&mut self, req: &GatewayRequest) -> Result<GatewayAnswer, ReasonError> {
        let id = req.gateway_id.as_str();
        if req.flows.is_empty() {
            return Err(ReasonError::invalid(id, "no flow is offered"));
        }
        let mut title = format!("Gateway {id}");
        if let Some(n) = &req.name {
            title.push_str(&format!(" \"{n}\""));
        }
        self.header(&title)?;
        self.policy(req.policy.as_ref())?;
        if let Some(c) = &req.condition {
            self.say(&format!("Condition: `{c}`"))?;
        }
        let mut referenced: Vec<String> = Vec::new();
        let conditions = req
            .condition
            .iter()
            .chain(req.flows.iter().filter_map(|f| f.condition.as_ref()));
        for c in conditions {
            if let Ok(e) = crate::expr::parse(c) {
                for v in e.variables() {
                    let root = v.split('.').next().unwrap_or(&v).to_string();
                    if !referenced.contains(&root) {
                        referenced.push(root);
                    }
                }
            }
        }
        self.variables("Variables", &req.context.variables, &referenced)?;
        self.say("Flows:")?;
        let options: Vec<(String, String)> = req
            .flows
            .iter()
            .map(|f| {
                let mut label = format!("{} -> {}", f.id, node_label(&req.context, &f.target));
                let said = f.decision.as_ref().or(f.name.as_ref());
                if let Some(d) = said {
                    label.push_str(&format!(": {d}"));
                }
                if let Some(t) = req.evaluations.iter().find(|t| t.flow == f.id) {
                    label.push_str(&format!(" [`{}` is {}]", t.condition, t.truth.as_str()));
                }
                // Once: a flow named "default flow" is not "(default flow) (default)".
                if f.is_default && !said.is_some_and(|d| d.to_ascii_lowercase().contains("default"))
                {
                    label.push_str(" (default)");
                }
                (f.id.clone(), label)
            })
            .collect();
        // A flow may be typed by its label, its decision, or its target's id or name.
        let names: Vec<Vec<String>> = (req.flows.iter())
            .map(|f| {
                let target = req.context.model().nodes.iter().find(|n| n.id == f.target);
                [f.name.clone(), f.decision.clone(), Some(f.target.clone())]
                    .into_iter()
                    .chain(std::iter::once(target.and_then(|n| n.name.clone())))
                    .flatten()
                    .collect()
            })
            .collect();
        let picked = self.choose_named(id, "flow", &options, &names, req.multiple)?;
        let reason = self.optional("Reason (optional)")?;
        Ok(GatewayAnswer {
            flows: picked.into_iter().map(|i| options[i].0.clone()).collect(),
            reason,
            decided_by: Decider::Human,
        })
    }

    /// A guardrail: the person says who they are; one who is not an approver is not
    /// asked (the question goes on to the next answerer: the run parks for `runs answer`).
    fn approval(
        &mut self,
        req: &GatewayRequest,
        approvers: &[String],
        person: Option<&str>,
    ) -> Result<GatewayAnswer, ReasonError> {
        let id = req.gateway_id.as_str();
        let who = person.unwrap_or("nobody named");
        let allowed = if approvers.is_empty() {
            "anyone may decide".to_string()
        } else {
            format!("approvers: {}", approvers.join(", "))
        };
        self.say(&format!(
            "\nApproval at {id}: you answer as `{who}` (`start --by NAME`, else $USER); {allowed}"
        ))?;
        if let Some(why) = &req.escalation {
            self.say(why)?;
        }
        if !crate::app::guardrail::admits(approvers, person) {
            self.say(&format!(
                "  `{who}` is not an approver: the run waits for one \
                 (`cuga-flo runs answer <run> {id} approve|deny --by NAME`)"
            ))?;
            return Err(ReasonError::no_answer(
                id,
                format!("`{who}` at the terminal is not an approver ({allowed})"),
            ));
        }
        let mut answer = self.gateway(req)?;
        let by = format!("by {who}");
        answer.reason = Some(match answer.reason.take() {
            Some(r) => format!("{r} ({by})"),
            None => format!("decided {by} at the terminal"),
        });
        Ok(answer)
    }

    fn hook(&mut self, req: &HookRequest) -> Result<HookAnswer, ReasonError> {
        let id = req.hook_id.as_str();
        if req.permitted.is_empty() {
            return Err(ReasonError::invalid(id, "no action is permitted"));
        }
        let mut title = format!("Hook {id} on {}", req.flow_id);
        if let Some(n) = &req.name {
            title.push_str(&format!(" \"{n}\""));
        }
        self.header(&title)?;
        if let Some(i) = &req.instruction {
            self.say(&format!("Instruction: {i}"))?;
        }
        self.policy(req.policy.as_ref())?;
        self.variables("Variables", &req.context.variables, &[])?;
        self.say("Actions:")?;
        let options: Vec<(String, String)> = req
            .permitted
            .iter()
            .map(|a| (a.as_str().to_string(), a.as_str().to_string()))
            .collect();
        let action = req.permitted[self.choose(id, "action", &options, false)?[0]];
        let mut answer = HookAnswer::action(action, Decider::Human);
        match action {
            HookAction::SkipTo | HookAction::RemoveNode => {
                answer.target = Some(self.target(id, req, "target node")?);
            }
            HookAction::SwapNodes => {
                let a = self.target(id, req, "first node")?;
                let b = self.target(id, req, "second node")?;
                answer.swap = Some((a, b));
            }
            HookAction::AddNode => answer.add = Some(self.new_task(id, req)?),
            HookAction::Terminate => answer.message = self.optional("Message (optional)")?,
            HookAction::Continue | HookAction::SkipNode => {}
        }
        if !req.settable.is_empty() && action != HookAction::Terminate {
            self.say("State updates the policy may ask for (empty: leave as it is):")?;
            for s in &req.settable {
                let prompt = format!("  {} ({})", s.name, s.kind.described());
                let kind = Some(s.kind);
                let value = self.ask_until(id, &prompt, |line| {
                    if line.is_empty() {
                        return Ok(None);
                    }
                    typed_entry(line, kind)
                        .map(Some)
                        .map_err(|why| format!("`{}` {why}", s.name))
                })?;
                if let Some(value) = value {
                    answer.state_updates.insert(s.name.clone(), value);
                }
            }
        }
        answer.reason = self.optional("Reason (optional)")?;
        Ok(answer)
    }

    fn target(&mut self, id: &str, req: &HookRequest, what: &str) -> Result<String, ReasonError> {
        if req.allowed_targets.is_empty() {
            return self.ask_until(id, &format!("The {what} (a node id)"), |line| {
                if line.is_empty() {
                    Err("enter a node id".to_string())
                } else {
                    Ok(line.to_string())
                }
            });
        }
        self.say(&format!("The {what}:"))?;
        let options: Vec<(String, String)> = req
            .allowed_targets
            .iter()
            .map(|t| (t.clone(), node_label(&req.context, t)))
            .collect();
        let i = self.choose(id, "node", &options, false)?[0];
        Ok(options[i].0.clone())
    }

    fn new_task(&mut self, id: &str, req: &HookRequest) -> Result<AddTask, ReasonError> {
        if req.insertable_tasks.is_empty() {
            return Err(ReasonError::invalid(
                id,
                "the hook offers no task to insert",
            ));
        }
        self.say("The task to insert:")?;
        let options: Vec<(String, String)> = req
            .insertable_tasks
            .iter()
            .map(|t| {
                let mut label = t.id.clone();
                if let Some(n) = &t.name {
                    label.push_str(&format!(" \"{n}\""));
                }
                if let Some(i) = &t.instruction {
                    label.push_str(&format!(": {i}"));
                }
                (t.id.clone(), label)
            })
            .collect();
        let i = self.choose(id, "task", &options, false)?[0];
        Ok(AddTask::Insertable(options[i].0.clone()))
    }
}

/// A person's entry of another kind than its variable's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be {}; `{entry}` is not", .kind.described())]
struct WrongKind {
    kind: VarKind,
    entry: String,
}

/// A person's entry for a value of `kind`: JSON when it parses (plain text is a string),
/// refused when it is of another kind (`lots` for a number), null accepted only where any
/// value is.
fn typed_entry(line: &str, kind: Option<VarKind>) -> Result<Value, WrongKind> {
    let value =
        serde_json::from_str::<Value>(line).unwrap_or_else(|_| Value::String(line.to_string()));
    let Some(kind) = kind else {
        return Ok(value);
    };
    if kind.admits(&value) {
        return Ok(value);
    }
    // A string variable takes what was typed as it was typed (`42` stays the text "42").
    if kind == VarKind::String {
        return Ok(Value::String(line.to_string()));
    }
    Err(WrongKind {
        kind,
        entry: line.to_string(),
    })
}

/// `id "name"` when the model names the node.
fn node_label(ctx: &ControlPointContext, id: &str) -> String {
    match ctx
        .model()
        .nodes
        .iter()
        .find(|n| n.id == id)
        .and_then(|n| n.name.as_deref())
    {
        Some(name) => format!("{id} \"{name}\""),
        None => id.to_string(),
    }
}

/// A value on one line, cut to a readable length.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::GatewayKind;
    use crate::bridge::{FlowOption, NewTask};
    use serde_json::json;
    use std::io::Cursor;

    /// A writer whose contents the test can read.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn human(input: &str) -> (HumanReasoner, Shared) {
        let out = Shared::default();
        let r = HumanReasoner::with_io(Cursor::new(input.as_bytes().to_vec()), out.clone());
        (r, out)
    }

    fn flow(id: &str, target: &str) -> FlowOption {
        FlowOption {
            id: id.into(),
            target: target.into(),
            ..FlowOption::default()
        }
    }

    fn gateway_request(multiple: bool) -> GatewayRequest {
        GatewayRequest {
            gateway_id: "G".into(),
            name: Some("Credit sufficient?".into()),
            kind: GatewayKind::Exclusive,
            policy: Some(Policy {
                path: "p.md".into(),
                text: (1..=50).map(|i| format!("rule {i}\n")).collect(),
            }),
            condition: Some("${score} > 0.6".into()),
            condition_truth: None,
            flows: vec![flow("F1", "A"), flow("F2", "B"), flow("F3", "C")],
            evaluations: vec![],
            multiple,
            escalation: None,
            approvers: None,
            context: ControlPointContext {
                variables: Arc::new(
                    json!({"score": "n/a", "other": 1})
                        .as_object()
                        .unwrap()
                        .clone(),
                )
                .into(),
                ..ControlPointContext::default()
            },
            calls: Default::default(),
        }
    }

    #[tokio::test]
    async fn gateway_choice_reasks_after_garbage() {
        let (r, out) = human("garbage\n7\n2\nbecause\n");
        let a = r.gateway(gateway_request(false)).await.unwrap();
        assert_eq!(a.flows, vec!["F2".to_string()]);
        assert_eq!(a.reason.as_deref(), Some("because"));
        assert_eq!(a.decided_by, Decider::Human);
        let text = out.text();
        assert!(text.contains("`garbage` is not a choice"), "{text}");
        assert!(text.contains("rule 40"), "{text}");
        assert!(!text.contains("rule 41\n"), "{text}");
        assert!(text.contains("10 more lines"), "{text}");
        assert!(text.contains("score = \"n/a\""), "{text}");
        assert!(
            !text.contains("other = 1"),
            "only the referenced variables: {text}"
        );
    }

    #[tokio::test]
    async fn several_flows_by_number_or_id() {
        let (r, _) = human("1, F3\n\n");
        let a = r.gateway(gateway_request(true)).await.unwrap();
        assert_eq!(a.flows, vec!["F1".to_string(), "F3".to_string()]);
        assert_eq!(a.reason, None);
    }

    /// A flow may be typed by its label (its decision or name, in any case) or by its
    /// target's id; a name two flows share is not a choice. A default flow whose label
    /// says "default" is not marked "(default)" again.
    #[tokio::test]
    async fn a_flow_by_its_label_or_its_target() {
        let request = || {
            let mut req = gateway_request(false);
            req.flows[0].decision = Some("approve".into());
            req.flows[1].name = Some("Default flow".into());
            req.flows[1].is_default = true;
            req.flows[2].decision = Some("approve".into());
            req.flows[2].name = Some("refer".into());
            req
        };
        let (r, out) = human("Default FLOW\n\n");
        assert_eq!(r.gateway(request()).await.unwrap().flows, ["F2"]);
        let text = out.text();
        assert!(text.contains("F2 -> B: Default flow\n"), "{text}");
        let (r, _) = human("C\n\n");
        assert_eq!(r.gateway(request()).await.unwrap().flows, ["F3"]);
        let (r, out) = human("approve\n1\n\n");
        assert_eq!(r.gateway(request()).await.unwrap().flows, ["F1"]);
        assert!(
            out.text().contains("`approve` is not a choice"),
            "{}",
            out.text()
        );
    }

    #[tokio::test]
    async fn gives_up_after_the_bound_and_at_the_end_of_input() {
        let (r, _) = human("x\ny\nz\n");
        let err = r
            .with_attempts(2)
            .gateway(gateway_request(false))
            .await
            .unwrap_err();
        assert!(matches!(err, ReasonError::Invalid { .. }), "{err}");
        let (r, _) = human("");
        let err = r.gateway(gateway_request(false)).await.unwrap_err();
        assert!(matches!(err, ReasonError::NoAnswer { .. }), "{err}");
    }

    #[tokio::test]
    async fn task_asks_each_output() {
        let (r, out) = human("0.82\n\ngood\nstable income\n");
        let req = TaskRequest {
            raises: Vec::new(),
            task_id: "T".into(),
            name: Some("Check credit".into()),
            agent: Some("credit_checker".into()),
            instruction: Some("Score it".into()),
            policy: None,
            inputs: json!({"income": 55000}).as_object().unwrap().clone(),
            outputs: vec!["score".into(), "note".into()],
            output_kinds: Default::default(),
            context: ControlPointContext::default(),
            calls: Default::default(),
            tools: Default::default(),
        };
        let a = r.task(req).await.unwrap();
        assert_eq!(a.outputs["score"], json!(0.82));
        assert_eq!(a.outputs["note"], json!("good"));
        assert_eq!(a.reason.as_deref(), Some("stable income"));
        let text = out.text();
        assert!(text.contains("income = 55000"), "{text}");
        assert!(text.contains("`note` needs a value"), "{text}");
    }

    #[tokio::test]
    async fn hook_action_with_target_and_insertable_task() {
        let req = HookRequest {
            hook_id: "H".into(),
            flow_id: "F".into(),
            name: None,
            policy: None,
            instruction: None,
            permitted: vec![
                HookAction::Continue,
                HookAction::SkipTo,
                HookAction::AddNode,
            ],
            allowed_targets: vec!["A".into(), "B".into()],
            flow_target: None,
            settable: vec![],
            insertable_tasks: vec![NewTask {
                id: "N".into(),
                instruction: Some("review".into()),
                ..NewTask::default()
            }],
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
        };
        let (r, _) = human("skip_to\n2\nrestricted\n");
        let a = r.hook(req.clone()).await.unwrap();
        assert_eq!(a.action, HookAction::SkipTo);
        assert_eq!(a.target.as_deref(), Some("B"));
        assert_eq!(a.reason.as_deref(), Some("restricted"));
        let (r, _) = human("3\n1\n\n");
        let a = r.hook(req).await.unwrap();
        assert_eq!(a.action, HookAction::AddNode);
        assert_eq!(a.add, Some(AddTask::Insertable("N".into())));
    }

    #[tokio::test]
    async fn a_typed_output_is_asked_again_until_it_fits() {
        use crate::vocab::VarKind;
        let (r, out) = human("lots\n0.7\n42\n\n");
        let req = TaskRequest {
            raises: Vec::new(),
            task_id: "T".into(),
            name: None,
            agent: None,
            instruction: None,
            policy: None,
            inputs: Variables::new(),
            outputs: vec!["score".into(), "note".into()],
            output_kinds: [
                ("score".to_string(), VarKind::Number),
                ("note".to_string(), VarKind::String),
            ]
            .into(),
            context: ControlPointContext::default(),
            calls: Default::default(),
            tools: Default::default(),
        };
        let a = r.task(req).await.unwrap();
        assert_eq!(a.outputs["score"], json!(0.7));
        // A text output takes what was typed as text, digits included.
        assert_eq!(a.outputs["note"], json!("42"));
        let text = out.text();
        assert!(text.contains("score (a number)"), "{text}");
        assert!(
            text.contains("`score` must be a number; `lots` is not"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_person_answering_a_hook_may_set_what_its_policy_asks_for() {
        use crate::vocab::{Settable, VarKind};
        let req = HookRequest {
            hook_id: "H".into(),
            flow_id: "F".into(),
            name: None,
            policy: None,
            instruction: None,
            permitted: vec![HookAction::Continue, HookAction::Terminate],
            allowed_targets: vec![],
            flow_target: None,
            settable: vec![
                Settable {
                    name: "ticket_id".into(),
                    kind: VarKind::String,
                },
                Settable {
                    name: "priority".into(),
                    kind: VarKind::Number,
                },
            ],
            insertable_tasks: vec![],
            escalation: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
        };
        let (r, out) = human("continue\nT-17\nhigh\n\nduplicate of T-17\n");
        let a = r.hook(req).await.unwrap();
        assert_eq!(a.action, HookAction::Continue);
        assert_eq!(a.state_updates.get("ticket_id"), Some(&json!("T-17")));
        // Left empty after a wrong entry: not set.
        assert!(!a.state_updates.contains_key("priority"));
        assert_eq!(a.reason.as_deref(), Some("duplicate of T-17"));
        assert!(
            out.text().contains("`priority` must be a number"),
            "{}",
            out.text()
        );
    }
}
