//! Compiles A2A's `a2a.proto` (vendored in `src/a2a/grpc/proto/`) into a protobuf descriptor
//! set in `OUT_DIR`, which the gRPC binding (`a2a::grpc::schema`) decodes messages with. The
//! compiler is `protox`, pure Rust: a fresh machine builds without `protoc`.

use std::path::PathBuf;

const PROTO_DIR: &str = "src/a2a/grpc/proto";

fn main() {
    println!("cargo:rerun-if-changed={PROTO_DIR}");
    let descriptors = match protox::Compiler::new([PROTO_DIR]).and_then(|mut compiler| {
        compiler.include_imports(true).open_file("a2a.proto")?;
        Ok(compiler.encode_file_descriptor_set())
    }) {
        Ok(bytes) => bytes,
        Err(e) => panic!("{PROTO_DIR}/a2a.proto does not compile: {e:?}"),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let path = out.join("a2a_descriptors.binpb");
    if let Err(e) = std::fs::write(&path, descriptors) {
        panic!("cannot write {}: {e}", path.display());
    }
}
