//! What BPMN elements mean to every engine, with no engine in it: the live graph of a
//! run ([`topology`]), a message or signal catch's signature and correlation
//! ([`events`]), multi-instance expressions ([`instances`]), which elements each engine
//! would mis-run and refuses ([`support`]), and the model rewritten for the engines
//! cuga-flo pulls ([`rewrite`]), written in each one's BPMN dialect ([`dialect`]). The engines run with these; `validate` checks with them.

pub mod dialect;
pub mod events;
pub mod instances;
pub mod rewrite;
pub mod support;
pub(crate) mod topology;
