//! `fsctl`: the command-line client of fsindex (see the library's doc).
//! `fsctl fleet` runs in `fsctl-fleet`, so that this binary does not link
//! the fleet's TLS.

fn main() -> std::process::ExitCode {
    fsctl::main(fsctl::fleet_elsewhere)
}
