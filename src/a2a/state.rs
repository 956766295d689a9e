//! A task's state, as A2A 1.0 and 0.3 name it (one place both the client, the server and
//! the 0.3 dialect read).

/// A task's state, as both versions name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    Submitted,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
    Unknown,
}

impl TaskState {
    /// `TASK_STATE_INPUT_REQUIRED` (1.0) or `input-required` (0.3).
    pub fn parse(s: &str) -> TaskState {
        let s = s.trim_start_matches("TASK_STATE_").to_ascii_lowercase();
        match s.replace('_', "-").as_str() {
            "submitted" => TaskState::Submitted,
            "working" => TaskState::Working,
            "input-required" => TaskState::InputRequired,
            "auth-required" => TaskState::AuthRequired,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "canceled" | "cancelled" => TaskState::Canceled,
            "rejected" => TaskState::Rejected,
            _ => TaskState::Unknown,
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::AuthRequired => "auth-required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::Rejected => "rejected",
            TaskState::Unknown => "unknown",
        }
    }
}
