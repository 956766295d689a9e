//! The `cuga-flo` binary: parse arguments, run the command, map the outcome to an exit
//! code (0 ok, 1 a check or run failed, 2 bad input or usage).

use std::process::ExitCode;

/// mimalloc instead of the system allocator: the CLI allocates many small values (a
/// large config and model make hundreds of thousands), where glibc's malloc and free took
/// a fifth of `validate`'s instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cuga_flo::cli::main()
}
