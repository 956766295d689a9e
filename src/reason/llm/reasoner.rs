//! (written by the lead)
pub struct LlmReasoner;
