//! TLS for `serve --http` (`[server.tls]`): a certificate chain and private key read from PEM
//! files, served with rustls on its ring provider, HTTP/2 and HTTP/1.1 offered by ALPN, and
//! the pair read again on request ([`TlsServer::reload`], which `serve` calls on SIGHUP).
//!
//! A reload swaps the pair new handshakes get; connections already open keep the one they
//! started with, so nothing is dropped. A pair that does not load (a missing or unreadable
//! file, no certificate, no key, a key that does not match the certificate) is refused as a
//! whole and the previous pair stays in service — the error says why and names the file,
//! never a byte of the key.
//!
//! Not here: accepting connections, the handshake timeout and the answer to a plain-HTTP
//! request on the TLS port (`super::listener`), reading `[server.tls]` (the `skillet` crate).

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// The ALPN protocols offered, preferred first.
pub(crate) const ALPN_PROTOCOLS: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Where the certificate chain and its private key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM file with the certificate chain, leaf first.
    pub cert: PathBuf,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// Why a certificate and key pair could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read or holds no PEM section of the kind needed.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What was wrong (never the file's content).
        reason: String,
    },
    /// The key does not match the certificate, or is of a kind rustls cannot sign with.
    #[error("the key in {} does not fit the certificate in {}: {reason}", key.display(), cert.display())]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        reason: String,
    },
}

/// The TLS side of one HTTP server: the current pair and the rustls configuration over it.
pub struct TlsServer {
    files: TlsFiles,
    resolver: Arc<CurrentPair>,
    config: Arc<ServerConfig>,
}

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsServer")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// The pair every new handshake gets; swapped by a reload.
#[derive(Debug)]
struct CurrentPair(RwLock<Arc<CertifiedKey>>);

impl ResolvesServerCert for CurrentPair {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.0.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl TlsServer {
    /// Loads `files`; fails when the pair does not load (see the module doc).
    pub fn new(files: TlsFiles) -> Result<TlsServer, TlsError> {
        let provider = provider();
        let pair = load(&files, &provider)?;
        let resolver = Arc::new(CurrentPair(RwLock::new(Arc::new(pair))));
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Pair {
                cert: files.cert.clone(),
                key: files.key.clone(),
                reason: e.to_string(),
            })?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
        Ok(TlsServer {
            files,
            resolver,
            config: Arc::new(config),
        })
    }

    /// The files the pair is read from.
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// Reads the files again; on success new handshakes get the new pair, on failure the
    /// current pair stays and the error says why.
    pub fn reload(&self) -> Result<(), TlsError> {
        let pair = load(&self.files, self.config.crypto_provider())?;
        *self
            .resolver
            .0
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(pair);
        Ok(())
    }

    /// An acceptor for one connection's handshake.
    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(Arc::clone(&self.config))
    }

    /// Reloads on every SIGHUP until the process ends, logging each outcome. Does nothing
    /// where there is no SIGHUP.
    pub fn reload_on_sighup(self: &Arc<Self>) {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut hangups = match signal(SignalKind::hangup()) {
                Ok(hangups) => hangups,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGHUP; the TLS certificate will not be reloaded");
                    return;
                }
            };
            let tls = Arc::clone(self);
            tokio::spawn(async move {
                while hangups.recv().await.is_some() {
                    match tls.reload() {
                        Ok(()) => tracing::info!(
                            cert = %tls.files.cert.display(),
                            "SIGHUP: TLS certificate reloaded; new connections get it"
                        ),
                        Err(e) => tracing::error!(
                            error = %e,
                            "SIGHUP: TLS certificate not reloaded; keeping the previous one"
                        ),
                    }
                }
            });
        }
    }
}

/// Reads and checks one pair.
fn load(files: &TlsFiles, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let bytes = |path: &Path| {
        std::fs::read(path).map_err(|e| TlsError::File {
            path: path.to_owned(),
            reason: format!("cannot read it: {e}"),
        })
    };
    let cert_pem = bytes(&files.cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::File {
            path: files.cert.clone(),
            reason: format!("not a PEM certificate chain: {e}"),
        })?;
    if chain.is_empty() {
        return Err(TlsError::File {
            path: files.cert.clone(),
            reason: "no CERTIFICATE section".to_owned(),
        });
    }
    let key_pem = bytes(&files.key)?;
    // The parser's own error could quote what it choked on; only its kind is reported.
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| TlsError::File {
        path: files.key.clone(),
        reason: match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no PRIVATE KEY section (PKCS#8, RSA or EC)".to_owned()
            }
            _ => "not a readable PEM private key".to_owned(),
        },
    })?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| TlsError::Pair {
        cert: files.cert.clone(),
        key: files.key.clone(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> TlsFiles {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.cert.pem()).unwrap();
        std::fs::write(&files.key, cert.signing_key.serialize_pem()).unwrap();
        files
    }

    fn current_leaf(tls: &TlsServer) -> Vec<u8> {
        tls.resolver.0.read().unwrap().cert[0].to_vec()
    }

    #[test]
    fn a_good_pair_loads_and_a_reload_swaps_it() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "a");
        let tls = TlsServer::new(files.clone()).unwrap();
        let first = current_leaf(&tls);
        let other = write_pair(dir.path(), "b");
        std::fs::copy(&other.cert, &files.cert).unwrap();
        std::fs::copy(&other.key, &files.key).unwrap();
        tls.reload().unwrap();
        assert_ne!(current_leaf(&tls), first, "the new certificate is served");
        assert_eq!(
            tls.config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }

    #[test]
    fn a_bad_reload_keeps_the_previous_pair_and_says_why_without_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "a");
        let tls = TlsServer::new(files.clone()).unwrap();
        let served = current_leaf(&tls);

        // A key of another certificate.
        let other = write_pair(dir.path(), "b");
        let good_key = std::fs::read(&files.key).unwrap();
        std::fs::copy(&other.key, &files.key).unwrap();
        let err = tls.reload().unwrap_err().to_string();
        assert!(err.contains("does not fit"), "{err}");
        assert_eq!(current_leaf(&tls), served);

        // Not a key at all, holding a canary.
        std::fs::write(&files.key, "sk-CANARY-tls not a key\n").unwrap();
        let err = tls.reload().unwrap_err().to_string();
        assert!(err.contains("no PRIVATE KEY section"), "{err}");
        assert!(!err.contains("CANARY"), "{err}");
        assert_eq!(current_leaf(&tls), served);

        // A missing certificate file.
        std::fs::write(&files.key, good_key).unwrap();
        std::fs::remove_file(&files.cert).unwrap();
        let err = tls.reload().unwrap_err().to_string();
        assert!(err.contains("cannot read it"), "{err}");
        assert_eq!(current_leaf(&tls), served);
    }

    #[test]
    fn a_pair_that_does_not_load_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles {
            cert: dir.path().join("none.crt"),
            key: dir.path().join("none.key"),
        };
        assert!(TlsServer::new(files).is_err());
    }
}
