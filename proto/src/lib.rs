//! Generated code for the `fsindex.v1` gRPC API, and nothing else.
//!
//! The daemon implements [`v1::index_server::Index`]; clients use
//! [`v1::index_client::IndexClient`].

/// The `fsindex.v1` package.
#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("fsindex.v1");

    /// Encoded file descriptor set, for the gRPC reflection service.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("fsindex_descriptor");
}
