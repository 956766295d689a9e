//! `cuga-flo graph query <app|run-id> 'SPARQL'`: a SPARQL query against graph mode's store
//! of an app or of one run, printed as a table (or SPARQL 1.1 JSON results with `--json`).
//! An endpoint is asked directly; the embedded store in memory lived only as long as its
//! run, so it is rebuilt from the journals (the source of truth) for the query.

use std::path::Path;
use std::sync::Arc;

use oxrdf::Term;
use serde_json::{Value, json};

use crate::app::{GraphBackend, LoadedApp, load_app};
use crate::graph::abox::{AboxWriter, GraphRun};
use crate::graph::store::{Answer, Embedded, GraphStore, open};
use crate::graph::vocab;
use crate::journal::{Event, Record};

use super::target::{Target, resolve};
use super::{Cli, Outcome, UsageError};
use crate::run::lookup::{find_run, read};

pub fn query(
    cli: &Cli,
    target: &str,
    sparql: &str,
    json: bool,
    run_dir: &Path,
) -> Result<Outcome, UsageError> {
    // An app, else a run.
    let (loaded, runs) = match resolve(target, &cli.apps_dir) {
        Ok(Target::App(app)) => {
            let loaded = load_app(&app);
            let runs = runs_of(run_dir, &loaded.name);
            (loaded, runs)
        }
        Ok(Target::Model(_)) => {
            return Err(UsageError::new(format!(
                "`{target}` is a BPMN file; `graph query` takes an app or a run id"
            )));
        }
        Err(not_app) => {
            let Ok(id) = find_run(run_dir, target) else {
                return Err(not_app);
            };
            let records = read(run_dir, &id)?;
            let loaded = crate::run::lookup::app_of(&cli.apps_dir, &records).ok_or_else(|| {
                UsageError::new(format!("the app of run `{id}` cannot be found"))
                    .with_help("pass the app's folder with --apps-dir")
            })?;
            (loaded, vec![(id, records)])
        }
    };
    let config = loaded.config.as_ref().and_then(|c| c.graph.as_ref());
    let store: Arc<dyn GraphStore> = match config {
        Some(g) if g.store == GraphBackend::Endpoint || g.path.is_some() => {
            let dir = (loaded.config_path.as_ref())
                .and_then(|p| p.parent())
                .unwrap_or(&loaded.dir);
            open(g, dir).map_err(|e| UsageError::new(format!("graph mode: {e}")))?
        }
        _ => rebuild(&loaded, &runs)?,
    };
    // The app's definitions and the ABox of each run asked about (all the app's runs).
    let mut graphs = vec![vocab::definitions_graph(&loaded.name)];
    graphs.extend(
        runs.iter()
            .map(|(id, _)| crate::graph::abox::run_graph(&loaded.name, id)),
    );
    let answer = store
        .query(sparql, Some(&graphs))
        .map_err(|e| UsageError::new(format!("{}: {e}", store.describe())))?;
    print(&answer, json, &loaded.name);
    Ok(Outcome::Ok)
}

/// The runs of app `name` under `base`, oldest first.
fn runs_of(base: &Path, name: &str) -> Vec<(String, Vec<Record>)> {
    crate::journal::store::run_ids(base)
        .into_iter()
        .filter_map(|id| {
            let records = read(base, &id).ok()?;
            match records.first().map(|r| &r.event) {
                Some(Event::RunStarted { app, .. }) if app == name => Some((id, records)),
                _ => None,
            }
        })
        .collect()
}

/// A fresh embedded store with the app's TBox and the ABox of each run, from its journal.
fn rebuild(
    loaded: &LoadedApp,
    runs: &[(String, Vec<Record>)],
) -> Result<Arc<dyn GraphStore>, UsageError> {
    let fail = |e: crate::graph::store::StoreError| UsageError::new(format!("graph mode: {e}"));
    let store: Arc<dyn GraphStore> = Arc::new(Embedded::memory().map_err(fail)?);
    let tbox = crate::graph::export(loaded)
        .map(|e| {
            (
                vocab::definitions_graph(&loaded.name),
                e.write(crate::graph::Format::Turtle),
            )
        })
        .ok();
    if let Some((graph, turtle)) = &tbox {
        store.put_graph(graph, turtle).map_err(fail)?;
    }
    for (id, records) in runs {
        let writer = AboxWriter::new(&loaded.name, id, loaded.process(), loaded.config.as_ref());
        let run = GraphRun::new(store.clone(), true, writer, None);
        run.replay(records);
        if let Some(e) = run.failed() {
            return Err(fail(e));
        }
    }
    Ok(store)
}

/// A term as a table shows it: IRIs shortened by the known prefixes, literals by value.
fn cell(term: &Term, app: &str) -> String {
    match term {
        Term::NamedNode(n) => {
            let s = n.as_str();
            let app_ns = vocab::app_namespace(app);
            let mut prefixes: Vec<(&str, String)> = vocab::PREFIXES
                .iter()
                .map(|(p, ns)| (*p, ns.to_string()))
                .collect();
            prefixes.push(("app", app_ns));
            for (p, ns) in &prefixes {
                if let Some(local) = s.strip_prefix(ns.as_str()) {
                    return format!("{p}:{local}");
                }
            }
            if let Some(rest) = s.strip_prefix("urn:cuga-flo:run:")
                && let Some((_, local)) = rest.split_once('#')
            {
                return format!("run:{local}");
            }
            format!("<{s}>")
        }
        Term::Literal(l) => l.value().to_string(),
        other => other.to_string(),
    }
}

fn json_term(term: &Term) -> Value {
    match term {
        Term::NamedNode(n) => json!({"type": "uri", "value": n.as_str()}),
        Term::BlankNode(b) => json!({"type": "bnode", "value": b.as_str()}),
        Term::Literal(l) => {
            let mut v = json!({"type": "literal", "value": l.value()});
            if let Some(lang) = l.language() {
                v["xml:lang"] = json!(lang);
            } else if l.datatype().as_str() != "http://www.w3.org/2001/XMLSchema#string" {
                v["datatype"] = json!(l.datatype().as_str());
            }
            v
        }
        #[allow(unreachable_patterns)]
        other => json!({"type": "triple", "value": other.to_string()}),
    }
}

fn print(answer: &Answer, json: bool, app: &str) {
    match answer {
        Answer::Boolean(b) if json => outln!("{}", json!({"head": {}, "boolean": b})),
        Answer::Boolean(b) => outln!("{b}"),
        Answer::Graph(triples) => {
            for t in triples {
                outln!("{t} .");
            }
        }
        Answer::Solutions { variables, rows } if json => {
            let bindings: Vec<Value> = rows
                .iter()
                .map(|row| {
                    let mut b = serde_json::Map::new();
                    for (var, term) in variables.iter().zip(row) {
                        if let Some(t) = term {
                            b.insert(var.clone(), json_term(t));
                        }
                    }
                    Value::Object(b)
                })
                .collect();
            outln!(
                "{}",
                json!({"head": {"vars": variables}, "results": {"bindings": bindings}})
            );
        }
        Answer::Solutions { variables, rows } => {
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|t| t.as_ref().map(|t| cell(t, app)).unwrap_or_default())
                        .collect()
                })
                .collect();
            let mut widths: Vec<usize> = variables.iter().map(|v| v.chars().count() + 1).collect();
            for row in &cells {
                for (w, c) in widths.iter_mut().zip(row) {
                    *w = (*w).max(c.chars().count());
                }
            }
            let line = |items: Vec<String>| {
                items
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c:<w$}"))
                    .collect::<Vec<_>>()
                    .join("  ")
                    .trim_end()
                    .to_string()
            };
            outln!(
                "{}",
                line(variables.iter().map(|v| format!("?{v}")).collect())
            );
            for row in cells {
                outln!("{}", line(row));
            }
            outln!(
                "({} {})",
                rows.len(),
                if rows.len() == 1 { "row" } else { "rows" }
            );
        }
    }
}
