//! (helper C writes this file)
use crate::reason::{GatewayRequest, HookRequest, TaskRequest};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub system: String,
    pub user: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct PromptError {
    pub path: String,
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Templates;

impl Templates {
    pub fn builtin() -> Templates {
        Templates
    }
    pub fn task(&self, _req: &TaskRequest) -> Result<Prompt, PromptError> {
        unimplemented!()
    }
    pub fn gateway(&self, _req: &GatewayRequest) -> Result<Prompt, PromptError> {
        unimplemented!()
    }
    pub fn hook(&self, _req: &HookRequest) -> Result<Prompt, PromptError> {
        unimplemented!()
    }
}

pub fn reask(problem: &str) -> String {
    problem.to_string()
}
