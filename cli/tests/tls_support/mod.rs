//! What the TLS tests share: a test certificate authority made with `rcgen` and a leaf for
//! `localhost` / `127.0.0.1` it signs, written as the PEM files `[server.tls]` names; a
//! reqwest client that trusts only that CA; and a `skillet serve --http` with `[server.tls]`.
//!
//! It holds no assertions about the server.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::cli_support::{SKILLET, write_skill};
use crate::serve_support::{HttpServer, ServeHttp};

/// A certificate authority of the test's own.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        TestCa { issuer }
    }

    /// The CA certificate (PEM), what a client trusts.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A leaf for `localhost` and `127.0.0.1`: (certificate PEM, key PEM).
    pub fn leaf(&self) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// Writes a fresh leaf to `dir/server.crt` and `dir/server.key`.
    pub fn write_leaf(&self, dir: &Path) {
        let (cert, key) = self.leaf();
        std::fs::write(dir.join("server.crt"), cert).unwrap();
        std::fs::write(dir.join("server.key"), key).unwrap();
    }

    /// Writes the CA certificate to `dir/NAME` and returns its path (for Python clients).
    pub fn write_pem(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, self.pem()).unwrap();
        path
    }
}

/// A client trusting only `ca` (not the system's roots).
pub fn client_trusting(ca: &TestCa) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap()])
}

/// A `skillet serve --http` with `[server.tls]` over `ca`'s leaf, the skill `echo-a` and the
/// embedded mock; `extra` is appended to `skillet.toml`.
pub struct TlsServer {
    pub server: HttpServer,
    pub cwd: tempfile::TempDir,
    _skills: tempfile::TempDir,
}

impl TlsServer {
    pub async fn start(ca: &TestCa, extra: &str) -> TlsServer {
        let skills = tempfile::tempdir().unwrap();
        write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
        let cwd = tempfile::tempdir().unwrap();
        ca.write_leaf(cwd.path());
        std::fs::write(
            cwd.path().join("skillet.toml"),
            format!("[server.tls]\ncert = \"server.crt\"\nkey = \"server.key\"\n{extra}"),
        )
        .unwrap();
        let server = ServeHttp::new(SKILLET)
            .cwd(cwd.path())
            .env("RUST_LOG", "info")
            .skills_dir(skills.path())
            .spawn()
            .await;
        TlsServer {
            server,
            cwd,
            _skills: skills,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base)
    }

    /// Every stderr line after startup so far.
    pub fn later(&self) -> String {
        self.server.later_lines.lock().unwrap().join("\n")
    }

    /// Waits (up to 20 s) until stderr after startup has `needle` `count` times.
    pub async fn wait_for_log(&self, needle: &str, count: usize) {
        for _ in 0..400 {
            if self.later().matches(needle).count() >= count {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("never logged {needle:?} {count} times:\n{}", self.later());
    }

    /// Sends SIGHUP to the server.
    pub fn hang_up(&self) {
        let pid = self.server.child.id().expect("running");
        let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    }
}
