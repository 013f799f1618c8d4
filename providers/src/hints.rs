//! What a provider error adds so a person can act on it without a debugger: where Skillet
//! looked when nothing answered (the base URL, never its credentials, and the variable that sets
//! it), and where the key a server refused came from (the variable, the config, or none set).
//!
//! Not here: classifying the error (`error`), the request that failed (`http_provider`).

use crate::from_env::{base_url_var, key_var};
use crate::spec::{CredentialSource, ProviderSpec};

/// The words added to an `Unreachable` error of a provider built from `spec`.
pub(crate) fn unreachable(spec: &ProviderSpec) -> String {
    format!(
        " (nothing answered at {}: is the server running? `{}` or the provider's `base_url` \
         sets where Skillet looks)",
        without_userinfo(&spec.base_url),
        base_url_var(spec.kind)
    )
}

/// The words added to an `Auth` error (401/403) of a provider built from `spec`.
pub(crate) fn refused_key(spec: &ProviderSpec) -> String {
    match &spec.credential_source {
        CredentialSource::Env { var } => format!(" (the key came from `{var}`)"),
        CredentialSource::Inline => {
            " (the key came from the provider's `api_key` in the config)".to_owned()
        }
        CredentialSource::None => match key_var(spec.kind) {
            Some(var) => format!(" (no key was configured: set `{var}`)"),
            None => " (no key was configured)".to_owned(),
        },
    }
}

/// `url` without the `user:password@` a base URL may carry.
fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        assert_eq!(
            without_userinfo("http://user:pw@127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080/v1"
        );
        assert_eq!(
            without_userinfo("https://api.example/v1/a@b"),
            "https://api.example/v1/a@b"
        );
        assert_eq!(without_userinfo("localhost:11434"), "localhost:11434");
    }
}
