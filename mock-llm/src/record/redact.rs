//! The secrets a recording must never contain, and their removal: credential header values and
//! `key=` query values seen on forwarded requests (learned as they pass), the values of the
//! environment variables named with `--redact-env` (read once at start), and the userinfo of
//! the upstream URL.
//!
//! Which headers are credentials: the well-known ones ([`CREDENTIAL_HEADERS`]), every header
//! whose name says it carries one ([`CREDENTIAL_NAME_PARTS`]: `x-auth-token`, `x-session-id`,
//! …), and the ones named with `--redact-header`. The name rule errs on the safe side: a value
//! wrongly taken for a secret only costs a `[REDACTED]` in a recording.
//!
//! Credentials are forwarded to the upstream unchanged; only what is *written* (to the file or
//! to a message) is redacted. Not here: the journal's header redaction (`journal`), which this
//! mirrors.

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

/// Parts of a header name that mark its value as a credential, whatever the rest of the name.
pub(crate) const CREDENTIAL_NAME_PARTS: [&str; 7] = [
    "auth", "token", "secret", "key", "password", "cookie", "session",
];

/// Values shorter than this are not treated as secrets: replacing every `a` or `1` in a
/// recording would corrupt it and protects nothing.
const MIN_SECRET_CHARS: usize = 6;

/// Known secret values, longest first so a secret containing another is replaced whole.
#[derive(Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
    /// Header names given with `--redact-header`, lowercase.
    headers: Vec<String>,
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

    /// Also treats the headers `names` (any case) as credentials.
    pub(crate) fn with_headers(mut self, names: &[String]) -> Redactor {
        self.headers
            .extend(names.iter().map(|n| n.trim().to_ascii_lowercase()));
        self
    }

    /// Learns the userinfo of `url` (`user:password@`), which the client sends upstream as
    /// basic credentials: the password, and the user when it is all there is (a token).
    pub(crate) fn learn_userinfo(&mut self, url: &str) {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            return;
        };
        let decode = percent_decode;
        match parsed.password() {
            Some(password) => {
                self.learn(&decode(password));
                self.learn(password);
            }
            None if !parsed.username().is_empty() => {
                self.learn(&decode(parsed.username()));
                self.learn(parsed.username());
            }
            None => {}
        }
    }

    /// Whether the header `name` (lowercase, as `http` gives it) carries a credential.
    fn is_credential(&self, name: &str) -> bool {
        CREDENTIAL_HEADERS.contains(&name)
            || CREDENTIAL_NAME_PARTS.iter().any(|part| name.contains(part))
            || self.headers.iter().any(|h| h == name)
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
        let values: Vec<String> = headers
            .iter()
            .filter(|(name, _)| self.is_credential(name.as_str()))
            .map(|(_, value)| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .collect();
        for value in values {
            if let Some((_, token)) = value.split_once(' ') {
                self.learn(token);
            }
            self.learn(&value);
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

/// `url` without its userinfo (`user:password@`), for every message that names it. Works on
/// text that is not a valid URL too (an `--upstream` refused at start is echoed this way).
pub(crate) fn without_userinfo(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    match scheme {
        Some(scheme) => format!("{scheme}://{host}{path}"),
        None => format!("{host}{path}"),
    }
}

/// `%XX` sequences decoded (userinfo is percent-encoded in a URL; the upstream sees it decoded).
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
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
    fn headers_named_as_credentials_or_with_redact_header_are_learned() {
        let mut r = Redactor::default().with_headers(&["X-Tenant-Pass".to_owned()]);
        let mut h = http::HeaderMap::new();
        h.insert("x-auth-token", "canary-auth-token-1".parse().unwrap());
        h.insert("x-tenant-pass", "canary-tenant-pass-2".parse().unwrap());
        h.insert("x-request-id", "not-a-secret-3".parse().unwrap());
        r.learn_request(&h, None);
        let out = r.apply("canary-auth-token-1 canary-tenant-pass-2 not-a-secret-3");
        assert_eq!(out, "[REDACTED] [REDACTED] not-a-secret-3");
    }

    #[test]
    fn userinfo_is_learned_and_stripped_from_urls() {
        let mut r = Redactor::default();
        r.learn_userinfo("http://alice:s%40cret-pass@127.0.0.1:9/v1");
        assert_eq!(
            r.apply("s@cret-pass and s%40cret-pass"),
            "[REDACTED] and [REDACTED]"
        );
        assert_eq!(
            without_userinfo("http://alice:s%40cret@127.0.0.1:9/v1?key=x"),
            "http://127.0.0.1:9/v1?key=x"
        );
        assert_eq!(without_userinfo("alice:pw@host:1/p@q"), "host:1/p@q");
        assert_eq!(without_userinfo("http://127.0.0.1:9"), "http://127.0.0.1:9");
    }

    #[test]
    fn short_values_are_not_secrets() {
        let mut r = Redactor::default();
        r.learn("abc");
        assert_eq!(r.apply("abc"), "abc");
    }
}
