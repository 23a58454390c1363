//! The extraction child as a program of its own, for tests, the throughput
//! example and debugging (`fsindexd --extract` is the same call).

fn main() {
    fsindex_extract::child_main()
}
