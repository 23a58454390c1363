//! Compiles `proto/fsindex/v1/*.proto` with protox (pure Rust, so no system
//! `protoc` is needed) and generates tonic/prost code from the descriptors.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = ["proto/fsindex/v1/fsindex.proto"];
    let descriptors = protox::compile(files, ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptor_path = out.join("fsindex_descriptor.bin");
    std::fs::write(
        &descriptor_path,
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure()
        .file_descriptor_set_path(&descriptor_path)
        .skip_protoc_run()
        .compile_fds(descriptors)?;
    Ok(())
}
