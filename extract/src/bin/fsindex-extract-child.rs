//! The extraction child: the daemon starts it (from beside its own
//! executable) to read documents, archives, mail and media headers under
//! the sandbox's limits, serving requests on stdin until it closes. A
//! program of its own, so those readers are never mapped into the daemon.

fn main() {
    fsindex_extract::child_main()
}
