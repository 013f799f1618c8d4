//! The request journal: what each client sent (credentials redacted) and how the server chose to
//! answer, for tests to assert on and for `GET /_mock/requests`.

use serde::Serialize;
use serde_json::Value;

/// Header names whose values never reach the journal.
const CREDENTIAL_HEADERS: [&str; 6] = [
    "authorization",
    "x-api-key",
    "api-key",
    "proxy-authorization",
    "cookie",
    "x-goog-api-key",
];

/// What is shown instead of a credential.
pub const REDACTED: &str = "[REDACTED]";

/// One request as received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JournalEntry {
    /// Arrival order, from 1.
    pub seq: u64,
    /// `openai.chat`, `openai.models`, `ollama.chat`, `ollama.tags`, `ollama.version`,
    /// `anthropic.messages`.
    pub endpoint: String,
    /// HTTP method.
    pub method: String,
    /// The protocol the request came over: `HTTP/1.1`, or `HTTP/2.0` (prior knowledge, `h2c`).
    pub http_version: String,
    /// Request path.
    pub path: String,
    /// Headers (lowercase names, arrival order), credentials replaced by `[REDACTED]`.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when there was none; the raw text as a string when it was not JSON).
    pub body: Value,
    /// Name of the scenario rule that answered (`default` for the default answer; `None` for
    /// requests that were rejected or need no rule).
    pub matched_rule: Option<String>,
    /// Label of the fault that fired, if any.
    pub fault: Option<String>,
}

/// Headers with credential values replaced.
pub(crate) fn redact(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let hidden = CREDENTIAL_HEADERS.contains(&name.as_str());
            (
                name.clone(),
                if hidden {
                    REDACTED.to_owned()
                } else {
                    value.clone()
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_and_other_headers_kept() {
        let h = vec![
            ("authorization".to_owned(), "Bearer sk-secret".to_owned()),
            ("x-api-key".to_owned(), "sk-ant".to_owned()),
            ("anthropic-version".to_owned(), "2023-06-01".to_owned()),
        ];
        let r = redact(&h);
        assert_eq!(r[0].1, REDACTED);
        assert_eq!(r[1].1, REDACTED);
        assert_eq!(r[2].1, "2023-06-01");
        assert!(!format!("{r:?}").contains("sk-"));
    }
}
