//! `runs message` and `runs signal`: deliver a message to one waiting run (by id, or by a
//! variable's value with `--correlate`) or a signal to every run waiting for it.
//! The delivery is journalled under the run's lock before the run resumes
//! ([`crate::journal::mailbox`]); a run that does not wait for it is refused and nothing
//! is written.

use clap::Args;
use serde_json::{Map, Value};

use crate::journal::event::CatchKind;
use crate::journal::mailbox::{self, Delivery};
use crate::run::parked::{Delivered, deliver};

use super::durable::{ResumeOptions, resume_open, worse};
use super::{Cli, Outcome, Style, UsageError};
use crate::run::lookup::find_run;

#[derive(Debug, Args)]
pub struct MessageArgs {
    /// The run's id (or a unique prefix or suffix of it), then the message's name; with
    /// --correlate or --key, the message's name alone
    #[arg(value_name = "RUN_ID|MESSAGE", num_args = 1..=2, required = true)]
    pub targets: Vec<String>,
    /// Find the run by a variable's value instead of its id (exactly one waiting run must
    /// hold it)
    #[arg(long, value_name = "NAME=VALUE", conflicts_with = "key")]
    pub correlate: Option<String>,
    /// The message's correlation key value (the model's, e.g. Camunda 8's `<zeebe:subscription
    /// correlationKey>`): with the message's name alone, every waiting run with a wait for
    /// it under that key receives it; with a run id, only that run's wait under that key
    #[arg(long, value_name = "VALUE")]
    pub key: Option<String>,
    /// A variable the message sets in the run (repeatable; VALUE: JSON, else a string)
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Only record the delivery; `runs resume` (or the worker) applies it later
    #[arg(long)]
    pub no_resume: bool,
    #[command(flatten)]
    pub common: ResumeOptions,
}

#[derive(Debug, Args)]
pub struct SignalArgs {
    /// The signal's name
    pub name: String,
    /// A variable the signal sets in each run (repeatable; VALUE: JSON, else a string)
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Only record the deliveries; `runs resume` (or the worker) applies them later
    #[arg(long)]
    pub no_resume: bool,
    #[command(flatten)]
    pub common: ResumeOptions,
}

/// `runs message`.
pub fn message(cli: &Cli, args: &MessageArgs, style: Style) -> Result<Outcome, UsageError> {
    let base = &args.common.journal.run_dir;
    if let (Some(key), [name]) = (&args.key, args.targets.as_slice()) {
        return by_key(cli, args, name, key, style);
    }
    let (id, name) = match (&args.correlate, args.targets.as_slice()) {
        (None, [run, name]) => (find_run(base, run)?, name.clone()),
        (None, [_]) => {
            return Err(UsageError::new("runs message: give the run and the message's name")
                .with_help("`cuga-flo runs message <run-id> <message>`, or `--correlate NAME=VALUE <message>`"));
        }
        (Some(correlate), [name]) => (correlated(base, correlate)?, name.clone()),
        (Some(_), _) => {
            return Err(UsageError::new(
                "runs message --correlate: give the message's name alone (the correlation finds the run)",
            ));
        }
        (None, _) => unreachable!("clap takes one or two values"),
    };
    let variables = parse_vars(&args.vars)?;
    let delivery = Delivery {
        id: None,
        kind: CatchKind::Message,
        name,
        variables,
        source: "from `runs message`".to_string(),
        correlation: args.key.clone(),
    };
    deliver_and_resume(cli, &args.common, id, &delivery, args.no_resume, style)
}

/// `runs message --key VALUE <message>`: every waiting run with a wait for the message
/// under that correlation key, one after the other.
fn by_key(
    cli: &Cli,
    args: &MessageArgs,
    name: &str,
    key: &str,
    style: Style,
) -> Result<Outcome, UsageError> {
    let base = &args.common.journal.run_dir;
    let variables = parse_vars(&args.vars)?;
    let delivery = Delivery {
        id: None,
        kind: CatchKind::Message,
        name: name.to_string(),
        variables,
        source: "from `runs message`".to_string(),
        correlation: Some(key.to_string()),
    };
    let runs = mailbox::waiting_runs(base, &delivery);
    if runs.is_empty() {
        return Err(UsageError::new(format!(
            "no waiting run under {} waits for message `{name}` with correlation key {key:?}",
            base.join("runs").display(),
        ))
        .with_help("`cuga-flo runs pending` shows what the waiting runs wait for"));
    }
    deliver_to_each(cli, &args.common, runs, &delivery, args.no_resume, style)
}

/// The one waiting run whose variable holds the value `NAME=VALUE` names.
fn correlated(base: &std::path::Path, correlate: &str) -> Result<String, UsageError> {
    let (variable, value) = correlate
        .split_once('=')
        .filter(|(n, _)| !n.trim().is_empty())
        .ok_or_else(|| UsageError::new(format!("--correlate {correlate}: expected NAME=VALUE")))?;
    let runs = mailbox::correlated(base, variable.trim(), value);
    match runs.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(UsageError::new(format!(
            "no waiting run under {} has `{}` = {value}",
            base.join("runs").display(),
            variable.trim()
        ))
        .with_help("`cuga-flo runs list` shows the runs and their status")),
        many => Err(UsageError::new(format!(
            "{} waiting runs have `{}` = {value}: {}",
            many.len(),
            variable.trim(),
            many.join(", ")
        ))
        .with_help("name the run by its id instead")),
    }
}

/// `runs signal`: every waiting run waiting for the signal, one after the other.
pub fn signal(cli: &Cli, args: &SignalArgs, style: Style) -> Result<Outcome, UsageError> {
    let base = &args.common.journal.run_dir;
    let variables = parse_vars(&args.vars)?;
    let delivery = Delivery {
        id: None,
        kind: CatchKind::Signal,
        name: args.name.clone(),
        variables,
        source: "from `runs signal`".to_string(),
        correlation: None,
    };
    let runs = mailbox::waiting_runs(base, &delivery);
    if runs.is_empty() {
        return Err(UsageError::new(format!(
            "no waiting run under {} waits for signal `{}`",
            base.join("runs").display(),
            args.name
        )));
    }
    deliver_to_each(cli, &args.common, runs, &delivery, args.no_resume, style)
}

/// [`deliver_and_resume`] to each of `runs`, one after the other: the worst outcome.
fn deliver_to_each(
    cli: &Cli,
    opts: &ResumeOptions,
    runs: Vec<String>,
    delivery: &Delivery,
    no_resume: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    let mut worst = Outcome::Ok;
    for id in runs {
        let outcome = deliver_and_resume(cli, opts, id, delivery, no_resume, style)?;
        worst = worse(worst, outcome);
    }
    Ok(worst)
}

/// Journal `delivery` to run `id` under its lock, then resume it (unless `no_resume`); or
/// post it to the server holding the run, which resumes it.
fn deliver_and_resume(
    cli: &Cli,
    opts: &ResumeOptions,
    id: String,
    delivery: &Delivery,
    no_resume: bool,
    style: Style,
) -> Result<Outcome, UsageError> {
    let run_dir = &opts.journal.run_dir;
    let kind = delivery.kind.as_str();
    match deliver(run_dir, &id, delivery, opts.journal.durability)? {
        Delivered::Held { pid, at } => {
            if opts.json {
                outln!(
                    "{}",
                    serde_json::json!({"run_id": id, "delivered": kind,
                        "name": delivery.name, "nodes": at, "held_by": pid})
                );
            } else {
                outln!(
                    "{} {kind} `{}` delivered to run {id} at {}; the server holding it (pid {pid}) resumes it",
                    style.green("✓"),
                    delivery.name,
                    at.join(", ")
                );
            }
            Ok(Outcome::Ok)
        }
        Delivered::Here {
            journal,
            records,
            repaired,
            at,
        } => {
            if !opts.json {
                outln!(
                    "{} {kind} `{}` delivered to run {id} at {}",
                    style.green("✓"),
                    delivery.name,
                    at.join(", ")
                );
            }
            if no_resume {
                return Ok(Outcome::Ok);
            }
            resume_open(cli, opts, id, *journal, records, repaired, style)
        }
    }
}

/// `--var NAME=VALUE` pairs as variables: the value as JSON, else as a string.
fn parse_vars(assignments: &[String]) -> Result<Map<String, Value>, UsageError> {
    let mut out = Map::new();
    for assignment in assignments {
        let (name, raw) = assignment
            .split_once('=')
            .filter(|(n, _)| !n.trim().is_empty())
            .ok_or_else(|| UsageError::new(format!("--var {assignment}: expected NAME=VALUE")))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        out.insert(name.trim().to_string(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn vars_are_json_else_text() {
        let vars = parse_vars(&["n=3".into(), "who=Ann".into(), "ok=true".into()]).unwrap();
        assert_eq!(
            Value::Object(vars),
            json!({"n": 3, "who": "Ann", "ok": true})
        );
        assert!(parse_vars(&["=3".into()]).is_err());
        assert!(parse_vars(&["novalue".into()]).is_err());
    }
}
