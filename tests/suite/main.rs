//! The test suite: one binary, so a change to the library links one test executable,
//! not one per subject. Each subject is a module (`cargo test --test suite <subject>::`);
//! their shared helpers (apps written into temporary folders, the servers the tests start:
//! chat-completions, Flowable, Kogito, Fuseki, the Python and TypeScript SDK peers) are in
//! [`support`], each server started once for the whole binary where it can be shared.

#[path = "../../benches/support/mod.rs"]
mod bench_support;
mod support;

mod a2a;
mod a2a_client;
mod a2a_serve;
mod a2a_serve_consult;
mod a2a_serve_flows;
mod a2a_serve_remote;
mod a2a_stream;
mod bad_input;
mod bench_peers;
mod bpmn_corpus;
mod bridge;
mod call_activity;
mod check_rules;
mod cli;
mod cli_ux;
mod command_agent;
mod config_props;
mod conformance;
mod console;
mod crash;
mod describe;
mod durable;
mod engine_native;
mod expr_props;
mod external_engine;
mod fleet;
mod flowable;
mod graph;
mod graph_off;
mod graphstore;
mod guardrail;
mod harness;
mod init;
mod injection;
mod interop;
mod journal;
mod kogito;
mod layering;
mod llm_client;
mod llm_run;
mod local_model;
mod messages;
mod multi_instance;
mod policies_doc;
mod provenance;
mod pty;
mod replay;
mod report;
mod scenarios;
mod schema;
mod serve;
mod server_help;
mod shacl;
mod store;
mod telemetry;
mod tools;
mod verify;
