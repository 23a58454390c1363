//! fsctl is linked as a position-dependent executable on Linux.
//!
//! A PIE fsctl carries about 24,000 relative relocations, which the dynamic
//! loader applies at every start, dirtying the pages they sit on: 0.5-0.7 ms
//! of a 2.7 ms `fsctl search` that finds nothing (`hyperfine -N`, see
//! benches/README.md), as much as plocate's whole run. fsctl is a
//! short-lived client, so address-space randomisation of its own image buys
//! little; the daemon, which serves other users, stays PIE.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
