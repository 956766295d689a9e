//! Apache KIE (Kogito) as the workflow engine: the model rewritten for Kogito's code
//! generation ([`augment`]). The service built from it and the adapter that works its
//! user tasks over REST are being built (see `tests/kogito/README.md` for the contract).

pub mod augment;
pub mod project;
