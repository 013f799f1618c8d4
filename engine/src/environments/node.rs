//! A skill's Node dependencies: what its `package.json` (`dependencies`) and
//! `package-lock.json` declare, checked so a build only ever reaches the npm registry, and the
//! environment `npm` installs them into — outside the sandbox, once per key, like a Python one
//! (`build::build_once`).
//!
//! The skill's folder stays read-only and is never installed into. Node looks a package up in
//! the `node_modules` of the importing file's folder and its parents, so a script runs through
//! a link directory made beside the environments ([`link_skill`]):
//! `<root>/links/<hash>/skill` is a symlink to the skill's folder and
//! `<root>/links/<hash>/node_modules` one to the environment's, and the script runs as
//! `node --preserve-symlinks --preserve-symlinks-main <root>/links/<hash>/skill/scripts/x.mjs`:
//! both `import` and `require` of a bare name walk up to that `node_modules`, relative imports
//! stay inside the skill's folder, and no loader thread is needed (a resolve hook would start
//! a second V8 isolate, which does not fit the sandbox's 1 GiB address space). The manifest
//! npm reads is rewritten to the registry `dependencies` alone and the lock file checked
//! (`node_manifest`); npm runs without the host's `HOME`, git or ssh credentials
//! (`build::isolated`). Packages are installed with `--ignore-scripts` (an install script
//! would run on the host, outside the sandbox) and `--omit=dev`; with a lock file by `npm ci` (exactly the locked versions), else
//! by `npm install --no-package-lock`.
//!
//! Not here: the Python side (`requirements`, `build`), running scripts (`files::scripts`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::build::{self, Built, MARKER, cache};
use super::error::{CacheStep, EnvironmentError};
use super::node_manifest::{check_lock, registry_manifest};
use super::requirements::{Requirements, SkillFolder, read_declaration};

/// The registry every package must come from (the lock file's `resolved` URLs are checked).
pub(crate) const NPM_REGISTRY: &str = "https://registry.npmjs.org/";

/// What a Node environment is built from: the dependencies (as `name@range` lines, for
/// messages), the manifest rewritten to them (`node_manifest`) and the checked lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePackage {
    /// `name@range`, sorted, with the files they came from.
    pub requirements: Requirements,
    manifest: String,
    lock: Option<String>,
}

impl NodePackage {
    /// The environment's key: `node-` and the SHA-256 of the node program and both files.
    pub fn key(&self, node: &Path) -> String {
        let mut hash = Sha256::new();
        hash.update(b"skillet-node-env-v1\n");
        hash.update(node.as_os_str().as_encoded_bytes());
        hash.update(b"\n");
        hash.update(self.manifest.as_bytes());
        hash.update(b"\n");
        hash.update(self.lock.as_deref().unwrap_or_default().as_bytes());
        let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        format!("node-{hex}")
    }
}

/// The Node dependencies `skill`'s folder declares. `Ok(None)`: none (no `package.json`, or
/// one without `dependencies`). `Err`: unreadable, or a dependency that would be fetched from
/// anywhere but the registry (the skill is then `Blocked` with the reason).
pub(super) fn declared(skill: &SkillFolder) -> Result<Option<NodePackage>, EnvironmentError> {
    let Some(dir) = skill.dir.as_deref() else {
        return Ok(None);
    };
    let Some(manifest) = read_declaration(dir, "package.json", 256 * 1024)? else {
        return Ok(None);
    };
    let manifest = registry_manifest(&manifest).map_err(|reason| EnvironmentError::Manifest {
        file: "package.json",
        reason,
    })?;
    if manifest.dependencies.is_empty() {
        return Ok(None);
    }
    let lines = manifest
        .dependencies
        .iter()
        .map(|(name, range)| format!("{name}@{range}"))
        .collect();
    let mut sources = vec!["package.json".to_owned()];
    let lock = read_declaration(dir, "package-lock.json", 16 * 1024 * 1024)?;
    if let Some(lock) = &lock {
        let doc: Value =
            serde_json::from_str(lock).map_err(|e| EnvironmentError::LockNotJson(e.into()))?;
        check_lock(&doc).map_err(|reason| EnvironmentError::Manifest {
            file: "package-lock.json",
            reason,
        })?;
        sources.push("package-lock.json".to_owned());
    }
    Ok(Some(NodePackage {
        requirements: Requirements { lines, sources },
        manifest: manifest.text,
        lock,
    }))
}

/// The `npm` beside `node` (Debian, nvm and the official tarballs keep them together), else
/// the one on `PATH`.
pub(crate) fn npm_for(node: &Path) -> Result<PathBuf, EnvironmentError> {
    let beside = node.parent().map(|dir| dir.join("npm"));
    if let Some(npm) = beside.filter(|p| p.is_file()) {
        return Ok(npm);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("npm"))
        .find(|p| p.is_file())
        .ok_or(EnvironmentError::NpmMissing)
}

/// The flags `node` runs a skill's script with (see the module doc).
pub const NODE_FLAGS: [&str; 2] = ["--preserve-symlinks", "--preserve-symlinks-main"];

/// The link directory through which `skill_dir`'s scripts find the environment `env_dir`'s
/// packages, made under `root` if it is not there yet; returns the skill's path inside it
/// (`<root>/links/<hash>/skill`). Blocking, small: two symlinks.
pub(crate) fn link_skill(
    root: &Path,
    env_dir: &Path,
    skill_dir: &Path,
) -> Result<PathBuf, EnvironmentError> {
    let mut hash = Sha256::new();
    hash.update(skill_dir.as_os_str().as_encoded_bytes());
    hash.update(b"\n");
    hash.update(env_dir.as_os_str().as_encoded_bytes());
    let hex: String = hash
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let links = root.join("links");
    let dir = links.join(&hex);
    let skill = dir.join("skill");
    let points_at =
        |link: &Path, target: &Path| std::fs::read_link(link).is_ok_and(|t| t == target);
    if points_at(&skill, skill_dir)
        && points_at(&dir.join("node_modules"), &env_dir.join("node_modules"))
    {
        return Ok(skill);
    }
    let fail = |e: std::io::Error| EnvironmentError::NodeLink {
        links: links.clone(),
        source: e.into(),
    };
    std::fs::create_dir_all(&links).map_err(fail)?;
    let staging = links.join(format!(".{hex}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir(&staging).map_err(fail)?;
    std::os::unix::fs::symlink(skill_dir, staging.join("skill")).map_err(fail)?;
    std::os::unix::fs::symlink(env_dir.join("node_modules"), staging.join("node_modules"))
        .map_err(fail)?;
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::rename(&staging, &dir) {
        let _ = std::fs::remove_dir_all(&staging);
        // Another process linked it meanwhile.
        if !points_at(&skill, skill_dir) {
            return Err(fail(e));
        }
    }
    Ok(skill)
}

/// Builds the Node environment `key` of `package` under `root` unless it exists (blocking).
pub(crate) fn build(
    root: &Path,
    key: &str,
    package: &NodePackage,
    npm: &Path,
) -> Result<Built, EnvironmentError> {
    build::build_once(root, key, |staging| {
        std::fs::create_dir_all(staging).map_err(cache(CacheStep::Create, staging))?;
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(cache(CacheStep::Write, path))
        };
        for empty in [".npmrc-user", ".npmrc-global"] {
            write(&root.join(empty), "")?;
        }
        write(&staging.join("package.json"), &package.manifest)?;
        if let Some(lock) = &package.lock {
            write(&staging.join("package-lock.json"), lock)?;
        }
        let mut npm = build::isolated(npm, root)?;
        // Node trusts only its own roots: a machine that names its CA bundle the OpenSSL way
        // (a TLS-inspecting proxy's CA in it) is trusted the same way by npm.
        if std::env::var_os("NODE_EXTRA_CA_CERTS").is_none()
            && let Some(bundle) = std::env::var_os("SSL_CERT_FILE")
        {
            npm.env("NODE_EXTRA_CA_CERTS", bundle);
        }
        npm.current_dir(staging)
            .env("npm_config_cache", root.join(".npm-cache"))
            // No user's or machine's npmrc decides where packages come from (two distinct
            // empty files: npm refuses to load one file twice).
            .env("npm_config_userconfig", root.join(".npmrc-user"))
            .env("npm_config_globalconfig", root.join(".npmrc-global"))
            .env("npm_config_update_notifier", "false");
        match package.lock {
            Some(_) => npm.arg("ci"),
            None => npm.args(["install", "--no-package-lock"]),
        };
        npm.args([
            "--omit=dev",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--registry",
            NPM_REGISTRY,
        ]);
        build::run(npm, "npm install")?;
        let marker = serde_json::json!({
            "kind": "node",
            "requirements": package.requirements.lines,
            "sources": package.requirements.sources,
            "registry": NPM_REGISTRY,
        });
        write(&staging.join(MARKER), &format!("{marker:#}\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_with(files: &[(&str, &str)]) -> (tempfile::TempDir, SkillFolder) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let folder = SkillFolder {
            name: "s".into(),
            dir: Some(dir.path().to_owned()),
            declared: Vec::new(),
        };
        (dir, folder)
    }

    #[test]
    fn dependencies_are_read_sorted_and_keyed_by_both_files() {
        let manifest = r#"{"name":"s","dependencies":{"yaml":"^2.4.0","@scope/x-y":"1.2.3"}}"#;
        let (_dir, folder) = folder_with(&[("package.json", manifest)]);
        let package = declared(&folder).unwrap().unwrap();
        assert_eq!(
            package.requirements.lines,
            ["@scope/x-y@1.2.3", "yaml@^2.4.0"]
        );
        assert_eq!(package.requirements.sources, ["package.json"]);
        let lock = r#"{"packages":{"node_modules/yaml":{"resolved":"https://registry.npmjs.org/yaml/-/yaml-2.4.0.tgz"}}}"#;
        let (_locked, locked) =
            folder_with(&[("package.json", manifest), ("package-lock.json", lock)]);
        let locked = declared(&locked).unwrap().unwrap();
        assert_eq!(
            locked.requirements.sources,
            ["package.json", "package-lock.json"]
        );
        let node = Path::new("/usr/bin/node");
        assert_ne!(package.key(node), locked.key(node));
        assert_ne!(package.key(node), package.key(Path::new("/opt/node")));
        assert!(package.key(node).starts_with("node-"));
    }

    #[test]
    fn a_folder_without_dependencies_needs_no_environment() {
        let (_a, none) = folder_with(&[]);
        assert_eq!(declared(&none).unwrap(), None);
        let (_b, empty) = folder_with(&[("package.json", r#"{"type":"module"}"#)]);
        assert_eq!(declared(&empty).unwrap(), None);
    }

    #[test]
    fn what_would_leave_the_registry_is_refused_with_the_reason() {
        for range in [
            "git+https://github.com/a/b.git",
            "github:a/b",
            "a/b",
            "file:../x",
            "npm:other@1",
            "https://example.com/x.tgz",
        ] {
            let manifest = format!(r#"{{"dependencies":{{"x":"{range}"}}}}"#);
            let (_dir, folder) = folder_with(&[("package.json", &manifest)]);
            let why = declared(&folder).unwrap_err().to_string();
            assert!(why.contains("only registry versions"), "{range}: {why}");
        }
        let (_n, bad_name) = folder_with(&[("package.json", r#"{"dependencies":{"../x":"1"}}"#)]);
        assert!(
            declared(&bad_name)
                .unwrap_err()
                .to_string()
                .contains("not a registry package name")
        );
        let lock = r#"{"packages":{"node_modules/x":{"resolved":"https://evil.example/x.tgz"}}}"#;
        let (_l, bad_lock) = folder_with(&[
            ("package.json", r#"{"dependencies":{"x":"1"}}"#),
            ("package-lock.json", lock),
        ]);
        assert!(
            declared(&bad_lock)
                .unwrap_err()
                .to_string()
                .contains("evil.example")
        );
        let (_j, bad_json) = folder_with(&[("package.json", "{")]);
        assert!(
            declared(&bad_json)
                .unwrap_err()
                .to_string()
                .starts_with("package.json:")
        );
    }
}
