//! The secrets a recording must never contain, and their removal: credential header values and
//! `key=` query values seen on forwarded requests (learned as they pass), and the values of the
//! environment variables named with `--redact-env` (read once at start).
//!
//! Credentials are forwarded to the upstream unchanged; only what is *written* is redacted.
//! Not here: the journal's header redaction (`journal`), which this mirrors.

use crate::journal::REDACTED;

/// Header names whose values are credentials (forwarded, never written).
pub(crate) const CREDENTIAL_HEADERS: [&str; 6] = [
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "proxy-authorization",
    "cookie",
];

/// Values shorter than this are not treated as secrets: replacing every `a` or `1` in a
/// recording would corrupt it and protects nothing.
const MIN_SECRET_CHARS: usize = 6;

/// Known secret values, longest first so a secret containing another is replaced whole.
#[derive(Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor knowing the values of these environment variables (unset or short ones are
    /// skipped, with a warning naming the variable, never the value).
    pub(crate) fn from_env(names: &[String]) -> Redactor {
        let mut r = Redactor::default();
        for name in names {
            match std::env::var(name) {
                Ok(value) if value.chars().count() >= MIN_SECRET_CHARS => r.learn(&value),
                Ok(_) => tracing::warn!(
                    variable = %name,
                    "mock-llm record: --redact-env value shorter than {MIN_SECRET_CHARS} characters, not redacted"
                ),
                Err(_) => {
                    tracing::warn!(variable = %name, "mock-llm record: --redact-env variable is not set")
                }
            }
        }
        r
    }

    /// Adds a secret value.
    pub(crate) fn learn(&mut self, value: &str) {
        let value = value.trim();
        if value.chars().count() < MIN_SECRET_CHARS || self.secrets.iter().any(|s| s == value) {
            return;
        }
        self.secrets.push(value.to_owned());
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// Learns the credentials of one request: credential header values (and the token after a
    /// scheme such as `Bearer`), and every `key=` query value.
    pub(crate) fn learn_request(&mut self, headers: &http::HeaderMap, query: Option<&str>) {
        for name in CREDENTIAL_HEADERS {
            for value in headers.get_all(name) {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                if let Some((_, token)) = value.split_once(' ') {
                    self.learn(token);
                }
                self.learn(&value);
            }
        }
        for pair in query.unwrap_or_default().split('&') {
            if let Some(value) = pair.strip_prefix("key=") {
                self.learn(value);
            }
        }
    }

    /// `text` with every known secret replaced by `[REDACTED]`.
    pub(crate) fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// Whether `text` still contains a known secret.
    pub(crate) fn leaks(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_and_query_keys_are_learned_and_replaced() {
        let mut r = Redactor::default();
        let mut h = http::HeaderMap::new();
        h.insert("authorization", "Bearer sk-canary-123".parse().unwrap());
        r.learn_request(&h, Some("alt=sse&key=AIzaCANARY9"));
        let out = r.apply("a sk-canary-123 b AIzaCANARY9 c");
        assert_eq!(out, "a [REDACTED] b [REDACTED] c");
        assert!(!r.leaks(&out));
        assert!(!format!("{r:?}").contains("canary"));
    }

    #[test]
    fn short_values_are_not_secrets() {
        let mut r = Redactor::default();
        r.learn("abc");
        assert_eq!(r.apply("abc"), "abc");
    }
}
