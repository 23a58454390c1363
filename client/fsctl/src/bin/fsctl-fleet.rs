//! `fsctl-fleet`: runs `fsctl fleet ...`, which `fsctl` hands over to it
//! whole (the command line is `fsctl`'s; see the library's doc). Run by
//! hand, it takes `fsctl`'s command line too.

fn main() -> std::process::ExitCode {
    fsctl::main(fsctl::fleet_here)
}
