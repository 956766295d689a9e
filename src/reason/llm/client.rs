//! (helper A writes this file)
use super::{CallError, ChatRequest, ChatResponse, LlmSettings};

/// An OpenAI-compatible chat-completions client.
#[derive(Debug)]
pub struct ChatClient {
    settings: LlmSettings,
}

impl ChatClient {
    pub fn new(settings: LlmSettings) -> Result<ChatClient, CallError> {
        Ok(ChatClient { settings })
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    pub async fn complete(&self, _req: &ChatRequest) -> Result<ChatResponse, CallError> {
        Err(CallError::Cancelled { attempts: 0 })
    }
}
