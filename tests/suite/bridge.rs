//! The bridge is a real MCP surface: its tools are listed with schemas, and each can be
//! called by any MCP client (here rmcp's, over an in-memory stream).

use std::sync::Arc;

use cuga_flo::app::{load_app, registry::app_at};
use cuga_flo::bridge::ControlPoints;
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::harness::FlowAgent;
use cuga_flo::mcp::{BridgeServer, FlowLoader, InProcessBridge, RegisteredFlow, Registry};
use cuga_flo::reason::NoModel;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn receive_order() -> RegisteredFlow {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("applications/receive_order");
    let loaded = load_app(&app_at(&dir));
    let agent = FlowAgent::new(&loaded, Arc::new(NoModel)).unwrap();
    RegisteredFlow {
        process_key: agent.config().process_key().to_string(),
        process: Arc::new(loaded.process().unwrap().clone()),
        annotations: agent.annotations(),
        harness: Arc::new(agent) as Arc<dyn ControlPoints>,
    }
}

async fn bridge(loader: Option<FlowLoader>) -> InProcessBridge {
    let registry = Arc::new(Registry::default());
    registry.register(receive_order());
    InProcessBridge::start(BridgeServer::new(
        registry,
        Arc::new(NativeEngine::new()),
        loader,
    ))
    .await
    .unwrap()
}

async fn call(bridge: &InProcessBridge, tool: &'static str, args: Value) -> (bool, Value) {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let result = bridge
        .peer()
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
        .await
        .unwrap();
    let error = result.is_error == Some(true);
    let value = result
        .structured_content
        .unwrap_or_else(|| serde_json::to_value(&result.content).unwrap());
    (error, value)
}

#[tokio::test]
async fn every_bridge_tool_is_listed_with_its_schemas() {
    let bridge = bridge(None).await;
    let tools = bridge.peer().list_tools(None).await.unwrap().tools;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "deliver_message",
            "evaluate_hook",
            "execute_task",
            "get_bpmn_process",
            "get_flow_annotations",
            "register_flow",
            "route_gateway",
            "run_process",
            "send_signal"
        ]
    );
    for tool in &tools {
        assert!(
            tool.description.as_ref().is_some_and(|d| !d.is_empty()),
            "{} has a description",
            tool.name
        );
        assert!(
            tool.output_schema.is_some(),
            "{} has an output schema",
            tool.name
        );
    }
    let execute = tools.iter().find(|t| t.name == "execute_task").unwrap();
    let schema = serde_json::to_string(&execute.input_schema).unwrap();
    assert!(
        schema.contains("task_id") && schema.contains("ctx"),
        "{schema}"
    );
    bridge.shutdown().await;
}

#[tokio::test]
async fn registry_tools_describe_the_registered_flow() {
    let bridge = bridge(None).await;
    let (error, process) = call(
        &bridge,
        "get_bpmn_process",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error);
    let nodes = process["process"]["nodes"].as_array().unwrap();
    assert!(nodes.iter().any(|n| n["id"] == "Gateway_09ad5fc"));
    let (error, annotations) = call(
        &bridge,
        "get_flow_annotations",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error);
    assert_eq!(annotations["hooks"]["Flow_1ji6b0i"], "post_receival_check");
    assert_eq!(annotations["step_budget"], 10_000);
    bridge.shutdown().await;
}

#[tokio::test]
async fn an_unknown_process_key_is_a_tool_error_naming_the_known_ones() {
    let bridge = bridge(None).await;
    let (error, content) = call(
        &bridge,
        "get_flow_annotations",
        json!({"process_key": "nope"}),
    )
    .await;
    assert!(error);
    let text = content.to_string();
    assert!(
        text.contains("unknown process key `nope`") && text.contains("receive_order_v1"),
        "{text}"
    );
    bridge.shutdown().await;
}

#[tokio::test]
async fn harness_tools_answer_a_control_point() {
    let bridge = bridge(None).await;
    // The join gateway of receive_order is not configured: a native pass-through.
    let ctx = json!({"run_id": "r1", "process_key": "receive_order_v1", "element_id": "Gateway_15y9k7z",
        "element_name": null, "variables": {}, "history": [], "model": {"process_id": "", "process_name": null, "nodes": [], "flows": []},
        "instruction": null});
    let (error, decision) = call(
        &bridge,
        "route_gateway",
        json!({"gateway_id": "Gateway_15y9k7z", "ctx": ctx}),
    )
    .await;
    assert!(!error, "{decision}");
    assert_eq!(decision["flows"], json!(["Flow_0g1hmhe"]));
    // A task agent with no reasoner: a tool error that says how to get answers.
    let mut ctx = ctx;
    ctx["element_id"] = json!("Activity_0oydey5");
    let (error, content) = call(
        &bridge,
        "execute_task",
        json!({"task_id": "Activity_0oydey5", "ctx": ctx}),
    )
    .await;
    assert!(error);
    assert!(content.to_string().contains("--scenario"), "{content}");
    bridge.shutdown().await;
}

#[tokio::test]
async fn malformed_arguments_are_tool_errors_not_crashes() {
    let bridge = bridge(None).await;
    let (error, content) = call(&bridge, "execute_task", json!({"task_id": 5})).await;
    assert!(error, "{content}");
    // The server is still serving.
    let (error, _) = call(
        &bridge,
        "get_flow_annotations",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error);
    bridge.shutdown().await;
}

#[tokio::test]
async fn register_flow_loads_an_app_by_path() {
    let loader: FlowLoader = Arc::new(|path: &str| {
        let loaded = load_app(&app_at(std::path::Path::new(path)));
        let agent = FlowAgent::new(&loaded, Arc::new(NoModel)).map_err(|e| e.to_string())?;
        Ok(RegisteredFlow {
            process_key: agent.config().process_key().to_string(),
            process: Arc::new(loaded.process().ok_or("no process")?.clone()),
            annotations: agent.annotations(),
            harness: Arc::new(agent),
        })
    });
    let bridge = bridge(Some(loader)).await;
    let path = format!("{}/applications/trip_planner", env!("CARGO_MANIFEST_DIR"));
    let (error, registered) =
        call(&bridge, "register_flow", json!({"flow_config_path": path})).await;
    assert!(!error, "{registered}");
    assert_eq!(registered["process_key"], "trip_planner_v1");
    let (error, _) = call(
        &bridge,
        "get_bpmn_process",
        json!({"process_key": "trip_planner_v1"}),
    )
    .await;
    assert!(!error);
    bridge.shutdown().await;
}

/// Over MCP a control point's context carries a bounded window of the history plus the
/// count of every node entered: its cost does not grow with the run's length.
#[tokio::test]
async fn a_long_history_crosses_the_bridge_as_a_window_and_a_count() {
    use cuga_flo::bridge::Answer;
    use cuga_flo::bridge::{BoxFuture, ControlPointContext, ControlPointError, HISTORY_WINDOW};
    use cuga_flo::vocab::ControlPointKind;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Seen(Mutex<Vec<ControlPointContext>>);
    impl ControlPoints for Seen {
        fn answer(
            &self,
            kind: ControlPointKind,
            _: &str,
            ctx: ControlPointContext,
        ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
            if kind == ControlPointKind::Task {
                self.0.lock().unwrap().push(ctx);
            }
            Box::pin(async { Err(ControlPointError::default()) })
        }
    }

    let seen = Arc::new(Seen::default());
    let mut flow = receive_order();
    flow.harness = seen.clone();
    let key = flow.process_key.clone();
    let registry = Arc::new(Registry::default());
    registry.register(flow);
    let bridge = InProcessBridge::start(BridgeServer::new(
        registry,
        Arc::new(NativeEngine::new()),
        None,
    ))
    .await
    .unwrap();
    let client = bridge.client();
    for n in [10usize, 10_000] {
        let ctx = ControlPointContext {
            run_id: "r".into(),
            process_key: key.clone(),
            element_id: "Activity_0oydey5".into(),
            history: (0..n)
                .map(|i| format!("node{i}"))
                .collect::<Vec<_>>()
                .into(),
            ..ControlPointContext::default()
        };
        let _ = client.execute_task("Activity_0oydey5", ctx).await;
        let got = seen.0.lock().unwrap().pop().expect("the call arrived");
        assert_eq!(got.history_total(), n as u64);
        assert_eq!(got.history.len(), n.min(HISTORY_WINDOW));
        assert_eq!(got.history.last().unwrap(), format!("node{}", n - 1));
    }
}
