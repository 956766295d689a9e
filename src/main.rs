//! The `cuga-flo` binary: parse arguments, run the command, map the outcome to an exit
//! code (0 ok, 1 a check or run failed, 2 bad input or usage).

use std::process::ExitCode;

fn main() -> ExitCode {
    cuga_flo::cli::main()
}
