//! The `baton` binary: parse, run, exit.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
