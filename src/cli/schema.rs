//! `cuga-flo schema config|scenario|answers`: the JSON Schemas (draft 2020-12) of the files
//! people write, for editors (the README shows the `yaml-language-server` modeline). They
//! are built from the decoders' own key lists and types, so they follow the decoders.

use clap::{Args, ValueEnum};

use super::{Outcome, UsageError};

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file's schema
    #[arg(value_enum)]
    pub kind: SchemaKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// A flow config (`config/<app>_config.yaml`)
    Config,
    /// A scenario (`scenarios/<name>.yaml`)
    Scenario,
    /// An answers file (`start --answers FILE`)
    Answers,
}

/// The schema of `kind`, as a JSON value.
pub fn schema(kind: SchemaKind) -> serde_json::Value {
    use crate::reason::scripted;
    match kind {
        SchemaKind::Config => crate::app::decode::schema::config_schema(),
        SchemaKind::Scenario => crate::app::scenario::schema(scripted::answers_schema()),
        SchemaKind::Answers => scripted::answers_file_schema(),
    }
}

pub fn run(args: &SchemaArgs) -> Result<Outcome, UsageError> {
    let text = serde_json::to_string_pretty(&schema(args.kind))
        .map_err(|e| UsageError::new(format!("cannot print the schema: {e}")))?;
    outln!("{text}");
    Ok(Outcome::Ok)
}
