//! The process's one set of known secrets ([`REDACTOR`]) and their redaction from any text that
//! leaves the process: log lines, `log` events (live and in `data.events`), toolkit statuses
//! and errors.
//!
//! Every secret the configuration names goes in: the values of the environment variables it
//! names (each provider's `api_key_env`, `[llm_override] allowed_credential_envs`, toolkit
//! header secrets `headers = { X = { env = "..", prefix = ".." } }` and the variables a stdio
//! toolkit passes to its child, `[nats] token_env`) and the literal secrets it hands to
//! sandboxed programs. `Config::register_secrets` adds them when the host loads its
//! configuration; a toolkit also adds its header values itself when it reads them to connect,
//! so an embedding that never loads a `skillet.toml` is covered too.
//!
//! Why one set rather than one redactor per source: an upstream error can quote any secret the
//! host sent anywhere (an MCP server's 401 body quotes the request's headers), and the place
//! that prints it (rmcp's own log line, a status in `skillet toolkits`, a first-use failure sent
//! to a remote caller) does not know where the text came from.
//!
//! Not here: the provider crate's redaction of its own error messages (`skillet-providers`),
//! the caps on third-party log targets (`host/cli/logging`).

use std::sync::{LazyLock, RwLock};

use secrecy::{ExposeSecret, SecretString};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Secrets shorter than this are not redacted (a 1-character "secret" would shred every line;
/// no real key is this short).
pub const MIN_SECRET_LEN: usize = 6;

/// A set of known secrets, redacted from text.
#[derive(Default)]
pub struct Redactor {
    secrets: RwLock<Vec<SecretString>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.secrets.read().map_or(0, |s| s.len());
        f.debug_struct("Redactor").field("secrets", &count).finish()
    }
}

/// The process's redactor (log output and events are process-wide too).
pub static REDACTOR: LazyLock<Redactor> = LazyLock::new(Redactor::default);

impl Redactor {
    /// Adds a secret (ignored when too short to be a key, or already known).
    pub fn add(&self, secret: SecretString) {
        if secret.expose_secret().len() < MIN_SECRET_LEN {
            return;
        }
        let mut secrets = self.secrets.write().unwrap_or_else(|p| p.into_inner());
        if !secrets
            .iter()
            .any(|s| s.expose_secret() == secret.expose_secret())
        {
            secrets.push(secret);
            // Longest first: a secret that contains another is replaced whole.
            secrets.sort_by_key(|s| std::cmp::Reverse(s.expose_secret().len()));
        }
    }

    /// Adds the value of the environment variable `name`, when it is set.
    pub fn add_env(&self, name: &str) {
        if let Ok(value) = std::env::var(name.trim()) {
            self.add(SecretString::from(value));
        }
    }

    /// `text` with every known secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        self.redact_owned(text.to_owned())
    }

    /// [`Self::redact`] for an owned text (returned as it is when it quotes no secret).
    pub fn redact_owned(&self, mut text: String) -> String {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        for secret in secrets.iter() {
            let secret = secret.expose_secret();
            if text.contains(secret) {
                text = text.replace(secret, REDACTED);
            }
        }
        text
    }
}

/// `text` with every secret the process knows replaced (see [`REDACTOR`]).
pub fn redact(text: &str) -> String {
    REDACTOR.redact(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_are_redacted_and_short_ones_ignored() {
        let redactor = Redactor::default();
        redactor.add(SecretString::from("sk-live-123456"));
        redactor.add(SecretString::from("abc"));
        assert_eq!(
            redactor.redact("key sk-live-123456 twice sk-live-123456 abc"),
            "key [REDACTED] twice [REDACTED] abc"
        );
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let redactor = Redactor::default();
        redactor.add(SecretString::from("token-1234"));
        redactor.add(SecretString::from("Bearer token-1234"));
        assert_eq!(redactor.redact("got Bearer token-1234"), "got [REDACTED]");
        assert!(!format!("{redactor:?}").contains("token"));
    }
}
