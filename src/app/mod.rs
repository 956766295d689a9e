//! The app as authored: discovery of app folders ([`registry`]), the flow config model
//! ([`config`]) decoded from a located YAML tree ([`yaml`], [`decode`]), and loading an app
//! with its BPMN model ([`load`]).

pub mod called;
pub mod config;
pub mod decode;
pub mod guardrail;
pub mod init;
pub mod load;
pub mod prompt;
pub mod recipe;
pub mod registry;
pub mod rules;
pub mod scenario;
pub mod yaml;
mod yaml_fast;

pub use config::*;
pub use load::{LoadedApp, load_app};
pub use registry::{AppRef, discover};
