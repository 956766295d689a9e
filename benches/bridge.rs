//! One control point through the bridge, in-process versus over streamable HTTP: the cost
//! an external engine pays per call. The control point is `route_gateway` on the
//! `receive_order` demo app's parallel gateway (decided without a reasoner), so the numbers
//! are the transport's and the harness's own.
//!
//! - `in_process`: an rmcp client and the bridge server over an in-memory duplex (what
//!   `cuga-flo start` uses);
//! - `http`: an rmcp streamable-HTTP client against `cuga-flo serve --http 127.0.0.1:0`
//!   running as its own process (what a third-party engine uses).
//!
//! Run with `cargo bench --bench bridge` (the HTTP case spawns the binary Cargo builds for
//! the bench profile).

/// The binary's allocator (src/main.rs), as in the other benchmarks (benches/support).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use cuga_flo::app::load_app;
use cuga_flo::app::registry::app_at;
use cuga_flo::bridge::{ControlPointContext, ControlPoints, FlowOption};
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::harness::FlowAgent;
use cuga_flo::mcp::{BridgeServer, InProcessBridge, RegisteredFlow, Registry};
use cuga_flo::reason::NoModel;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};

const APP: &str = "applications/receive_order";

fn main() {
    divan::main();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The arguments of the measured call: route the app's first gateway.
fn gateway_call() -> (String, ControlPointContext) {
    let loaded = load_app(&app_at(&root().join(APP)));
    let process = loaded.process().unwrap().clone();
    let gateway = process
        .nodes
        .iter()
        .find(|n| n.kind.is_gateway())
        .expect("the app has a gateway");
    let flows: Vec<FlowOption> = process
        .flows
        .iter()
        .filter(|f| f.source == gateway.id)
        .map(|f| FlowOption {
            id: f.id.clone(),
            target: f.target.clone(),
            name: f.name.clone(),
            condition: None,
            decision: None,
            is_default: false,
        })
        .collect();
    let config = loaded.config.as_ref().unwrap();
    let ctx = ControlPointContext {
        run_id: "bench".into(),
        process_key: config.process_key().to_string(),
        element_id: gateway.id.clone(),
        flows,
        ..Default::default()
    };
    (gateway.id.clone(), ctx)
}

#[divan::bench]
fn in_process(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let loaded = load_app(&app_at(&root().join(APP)));
    let harness = FlowAgent::new(&loaded, Arc::new(NoModel)).unwrap();
    let registry = Arc::new(Registry::default());
    registry.register(RegisteredFlow {
        process_key: harness.config().process_key().to_string(),
        process: Arc::new(loaded.process().unwrap().clone()),
        annotations: harness.annotations(),
        harness: Arc::new(harness),
    });
    let bridge = rt
        .block_on(InProcessBridge::start(BridgeServer::new(
            registry,
            Arc::new(NativeEngine::new()),
            None,
        )))
        .unwrap();
    let client = bridge.client();
    let (gateway, ctx) = gateway_call();
    bencher.bench_local(|| {
        rt.block_on(client.route_gateway(&gateway, ctx.clone()))
            .unwrap()
    });
    rt.block_on(bridge.shutdown());
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `cuga-flo serve <app> --http 127.0.0.1:0`, and its URL.
fn serve() -> (Server, String) {
    // Cargo builds the binary for benches and says where.
    let exe = Path::new(env!("CARGO_BIN_EXE_cuga-flo"));
    let mut child = Command::new(exe)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(["serve", APP, "--no-model", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected first line from serve: {line}"))
        .to_string();
    (Server(child), url)
}

#[divan::bench]
fn http(bencher: divan::Bencher) {
    cuga_flo::tls::install_provider();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (_server, url) = serve();
    // The transport spawns its worker on the runtime: build it inside.
    let client = rt
        .block_on(async { ().serve(StreamableHttpClientTransport::from_uri(url)).await })
        .unwrap();
    let (gateway, ctx) = gateway_call();
    let mut args = Map::new();
    args.insert("gateway_id".into(), json!(gateway));
    args.insert("ctx".into(), serde_json::to_value(&ctx).unwrap());
    bencher.bench_local(|| {
        let result = rt
            .block_on(client.call_tool(
                CallToolRequestParams::new("route_gateway").with_arguments(args.clone()),
            ))
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        result.structured_content.unwrap_or(Value::Null)
    });
    let _ = rt.block_on(client.cancel());
}
