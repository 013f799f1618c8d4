//! What sits in front of `serve --http`'s routes: `[server.tls]` (the certificate and key files
//! of HTTPS) and `[server] trusted_proxies` (the peers whose `X-Forwarded-*` headers are
//! believed), turned into the host's [`skillet_host::http::Edge`].
//!
//! `trusted_proxies` itself is a plain list in [`super::ServerConfig`], checked at load by
//! [`skillet_host::TrustedProxies::parse`].
//!
//! Not here: loading the certificate ([`skillet_host::TlsServer`]), reading the forwarded headers
//! ([`skillet_host::TrustedProxies`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[server.tls]`: serve HTTPS with this certificate chain and key (PEM files, read again on
/// SIGHUP).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The certificate chain, leaf first (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, RSA or EC).
    pub key: PathBuf,
}

impl TlsConfig {
    /// Resolves relative paths against `base` (the config file's directory).
    pub fn anchor_paths(&mut self, base: &Path) {
        for path in [&mut self.cert, &mut self.key] {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
    }

    /// The host's view of the files.
    pub fn files(&self) -> skillet_host::TlsFiles {
        skillet_host::TlsFiles {
            cert: self.cert.clone(),
            key: self.key.clone(),
        }
    }
}
