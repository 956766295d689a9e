//! The terminal a run shares with a person: the questions being asked there right now.
//! A person's prompt ([`crate::reason::human`]) holds an [`Asking`] while it waits; the
//! view's spinner steps aside meanwhile, and a run interrupted at a prompt parks the
//! questions (`runs answer` answers them later). A leaf: both sides only read or mark.

use std::sync::Mutex;

use crate::vocab::Question;

/// The questions being asked at the terminal now (what Ctrl-C at a prompt parks).
static ASKING: Mutex<Vec<Question>> = Mutex::new(Vec::new());

/// The questions a person is being asked at the terminal right now: a run interrupted
/// at a prompt parks them, so that `runs answer` can answer them later.
pub fn asking() -> Vec<Question> {
    ASKING.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Marks a question as being asked until dropped.
pub struct Asking(String);

impl Asking {
    pub fn start(question: Question) -> Asking {
        let key = question.key.clone();
        ASKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(question);
        Asking(key)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        ASKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|q| q.key != self.0);
    }
}
