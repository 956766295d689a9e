//! (helper C writes this file)
use serde_json::Value;

use super::AnswerSchema;
use crate::reason::{
    GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, TaskAnswer, TaskRequest,
};

pub fn gateway_schema(_req: &GatewayRequest) -> AnswerSchema {
    unimplemented!()
}
pub fn hook_schema(_req: &HookRequest) -> AnswerSchema {
    unimplemented!()
}
pub fn task_schema(_req: &TaskRequest) -> AnswerSchema {
    unimplemented!()
}
pub fn parse_gateway(_req: &GatewayRequest, _text: &str) -> Result<GatewayAnswer, String> {
    unimplemented!()
}
pub fn parse_hook(_req: &HookRequest, _text: &str) -> Result<HookAnswer, String> {
    unimplemented!()
}
pub fn parse_task(_req: &TaskRequest, _text: &str) -> Result<TaskAnswer, String> {
    unimplemented!()
}
pub fn extract_json(_text: &str) -> Option<Value> {
    None
}
