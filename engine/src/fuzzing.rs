//! The fuzz targets' entry points that are not part of the engine's surface: a skill's
//! `package.json` rewritten to the manifest npm reads (`fuzz/package_json`). Built only with the
//! `fuzzing` feature (the fuzz crate's); not an API.
//!
//! Not here: the parsers the engine offers anyway (`skill::load_skill_dir`, `template`,
//! `schema`, `environments::parse_requirement`), which the fuzz targets reach at their own paths.

pub use crate::environments::{ManifestError, RegistryManifest, registry_manifest};
