//! [`EnvProvider`]: the provider the standard environment variables describe, for hosts that
//! take their model from the environment (the engine's `Skillet::builder().provider_from_env()`,
//! the CLI).
//!
//! | variable | meaning |
//! |---|---|
//! | `SKILLET_PROVIDER` | which kind (`openai`, `openai-compatible`, `ollama`, `anthropic`); needed only when several of the variables below are set |
//! | `SKILLET_MODEL` | the model; else the caller's default model |
//! | `OPENAI_API_KEY` | selects `openai` (or is the key of `openai-compatible`) |
//! | `OPENAI_BASE_URL` | selects `openai-compatible` at that URL (llama.cpp, vLLM, LM Studio, gateways); with `SKILLET_PROVIDER=openai`, OpenAI's API at that URL |
//! | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` | selects `anthropic` (the URL is optional) |
//! | `OLLAMA_HOST` | selects `ollama`, written as the Ollama CLI accepts it (below) |
//! | `GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL` | selects `gemini` (the URL is optional; the variable names are the `google-genai` SDK's) |
//!
//! Without `SKILLET_PROVIDER`, exactly one kind may be configured: `OPENAI_BASE_URL` (or else
//! `OPENAI_API_KEY`), `ANTHROPIC_API_KEY`, `GEMINI_API_KEY` and `OLLAMA_HOST` each name one, and two of them are
//! [`EnvError::Ambiguous`] rather than a silent choice of whichever bills. Empty values count as
//! unset.
//!
//! `OLLAMA_HOST` follows the Ollama CLI: `host`, `host:port`, `:port`, `[::1]:port` or an IP,
//! with an optional `http://`/`https://` scheme and path; without a scheme the scheme is `http`
//! and the default port 11434, with `http://` it is 80 and with `https://` 443. An empty or
//! unspecified host (`0.0.0.0`, `::`, a server's bind address) means this machine. Unlike the
//! CLI, an invalid port is an error, not a silent fallback to the default.
//!
//! A key is a [`SecretString`] from the moment it is read, and the spec records only the name of
//! the variable it came from ([`CredentialSource::Env`]); no error or `Debug` shows a key.
//! Everything here is a pure function of a lookup ([`EnvProvider::from_lookup`]), so it is tested
//! without touching the process environment; [`EnvProvider::from_env`] reads the real one.

#![warn(missing_docs)]

use std::fmt;
use std::net::IpAddr;

use secrecy::SecretString;

use crate::config_values::ConfigError;
use crate::kind::ProviderKind;
use crate::spec::{CredentialSource, ProviderSpec};

/// `SKILLET_PROVIDER`: the kind, when several are configured.
pub const SKILLET_PROVIDER: &str = "SKILLET_PROVIDER";
/// `SKILLET_MODEL`: the model.
pub const SKILLET_MODEL: &str = "SKILLET_MODEL";
/// `OPENAI_API_KEY`.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// `OPENAI_BASE_URL`.
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// `ANTHROPIC_API_KEY`.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// `ANTHROPIC_BASE_URL`.
pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// `OLLAMA_HOST`.
pub const OLLAMA_HOST: &str = "OLLAMA_HOST";
/// `GEMINI_API_KEY`.
pub const GEMINI_API_KEY: &str = "GEMINI_API_KEY";
/// `GOOGLE_GEMINI_BASE_URL` (as the `google-genai` SDK reads it).
pub const GOOGLE_GEMINI_BASE_URL: &str = "GOOGLE_GEMINI_BASE_URL";

/// The provider the environment names: kind, endpoint, key and (maybe) model. Turn it into a
/// spec with [`EnvProvider::spec`]. `Debug` shows the key's variable, never the key.
#[derive(Clone)]
pub struct EnvProvider {
    kind: ProviderKind,
    base_url: Option<String>,
    model: Option<String>,
    key: Option<(SecretString, &'static str)>,
}

impl fmt::Debug for EnvProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvProvider")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("key_from", &self.key.as_ref().map(|(_, var)| *var))
            .finish()
    }
}

/// Why the environment names no usable provider. Messages name variables and kinds, never a
/// key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// None of the variables is set.
    #[error(
        "no provider in the environment: set OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, \
         GEMINI_API_KEY or OLLAMA_HOST (and SKILLET_MODEL)"
    )]
    NotConfigured,
    /// `SKILLET_PROVIDER` names no kind we speak.
    #[error("SKILLET_PROVIDER={0:?} is not a provider: expected one of {known}", known = known_kinds())]
    UnknownProvider(String),
    /// Several kinds are configured and `SKILLET_PROVIDER` does not choose.
    #[error("several providers are configured ({}): choose one with SKILLET_PROVIDER", .0.join(", "))]
    Ambiguous(Vec<&'static str>),
    /// The chosen kind needs a variable that is not set.
    #[error("provider {kind} needs {var}")]
    Missing {
        /// The provider kind that was chosen (by `SKILLET_PROVIDER` or by the one variable set).
        kind: ProviderKind,
        /// The environment variable it needs, e.g. `ANTHROPIC_API_KEY`.
        var: &'static str,
    },
    /// `SKILLET_MODEL` is unset and the caller gave no default model.
    #[error("no model for provider {0}: set SKILLET_MODEL")]
    MissingModel(ProviderKind),
    /// A variable's value is unusable (the value is shown only for non-secret variables).
    #[error("{var}: {reason}")]
    Invalid {
        /// The environment variable whose value is unusable.
        var: &'static str,
        /// What is wrong with it (e.g. not a URL); quotes the value only when it is not secret.
        reason: String,
    },
}

fn known_kinds() -> String {
    let names: Vec<&str> = ProviderKind::ALL.iter().map(|k| k.as_str()).collect();
    names.join(", ")
}

impl EnvProvider {
    /// Reads the process environment (see the module docs).
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (a pure function of it; `None` or an empty value is
    /// unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let kind = match get(SKILLET_PROVIDER) {
            Some(name) => ProviderKind::parse(&name).ok_or(EnvError::UnknownProvider(name))?,
            None => detect_kind(&get)?,
        };
        let key_var = key_var(kind);
        let key = key_var.and_then(|var| get(var).map(|v| (SecretString::from(v), var)));
        if key.is_none()
            && kind.requires_credential()
            && let Some(var) = key_var
        {
            return Err(EnvError::Missing { kind, var });
        }
        let base_url = base_url_from_lookup(kind, &get)?;
        if base_url.is_none() && kind.default_base_url().is_none() {
            return Err(EnvError::Missing {
                kind,
                var: OPENAI_BASE_URL,
            });
        }
        Ok(EnvProvider {
            kind,
            base_url,
            model: get(SKILLET_MODEL).map(|m| m.trim().to_owned()),
            key,
        })
    }

    /// Which API the environment chose (OpenAI-compatible, Ollama or Anthropic).
    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    /// The base URL the environment gave (`None`: the kind's default).
    pub fn base_url(&self) -> Option<&str> {
        self.base_url.as_deref()
    }

    /// `SKILLET_MODEL`, when set.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The variable the key was read from, when there is a key.
    pub fn key_var(&self) -> Option<&'static str> {
        self.key.as_ref().map(|(_, var)| *var)
    }

    /// The spec: `SKILLET_MODEL`, else `default_model`; the key marked as read from its
    /// variable.
    pub fn spec(&self, default_model: Option<&str>) -> Result<ProviderSpec, EnvError> {
        let model = self
            .model
            .as_deref()
            .or(default_model)
            .ok_or(EnvError::MissingModel(self.kind))?;
        let url_var = base_url_var(self.kind);
        let mut spec =
            ProviderSpec::new(self.kind, model, self.base_url.as_deref()).map_err(|e| match e {
                ConfigError::Missing("model") => EnvError::MissingModel(self.kind),
                other => EnvError::Invalid {
                    var: url_var,
                    reason: other.to_string(),
                },
            })?;
        if let Some((key, var)) = &self.key {
            spec.api_key = Some(key.clone());
            spec.credential_source = CredentialSource::Env {
                var: (*var).to_owned(),
            };
        }
        Ok(spec)
    }
}

/// The variable a key of `kind` is read from in the standard environment (`OPENAI_API_KEY` for
/// both OpenAI kinds, as the OpenAI SDKs read it; `ANTHROPIC_API_KEY`; `GEMINI_API_KEY`; none
/// for Ollama).
pub fn key_var(kind: ProviderKind) -> Option<&'static str> {
    match kind {
        ProviderKind::Anthropic => Some(ANTHROPIC_API_KEY),
        ProviderKind::Gemini => Some(GEMINI_API_KEY),
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => Some(OPENAI_API_KEY),
        ProviderKind::Ollama => None,
    }
}

/// The variable the standard environment names `kind`'s endpoint with.
pub fn base_url_var(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => ANTHROPIC_BASE_URL,
        ProviderKind::Gemini => GOOGLE_GEMINI_BASE_URL,
        ProviderKind::Ollama => OLLAMA_HOST,
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => OPENAI_BASE_URL,
    }
}

/// The base URL the standard environment gives `kind` (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
/// or `OLLAMA_HOST` read as the Ollama CLI reads it); `None` when the variable is unset or
/// empty. The same rule [`EnvProvider`] applies, for callers that chose the kind themselves (the
/// CLI's `--provider KIND`).
pub fn base_url_from_lookup(
    kind: ProviderKind,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, EnvError> {
    let var = base_url_var(kind);
    let Some(value) = lookup(var).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    match kind {
        ProviderKind::Ollama => ollama_base_url(&value).map(Some),
        _ => Ok(Some(value.trim().to_owned())),
    }
}

/// The one kind the variables configure when `SKILLET_PROVIDER` does not say.
fn detect_kind(get: &dyn Fn(&str) -> Option<String>) -> Result<ProviderKind, EnvError> {
    let openai = if get(OPENAI_BASE_URL).is_some() {
        Some((OPENAI_BASE_URL, ProviderKind::OpenaiCompatible))
    } else if get(OPENAI_API_KEY).is_some() {
        Some((OPENAI_API_KEY, ProviderKind::Openai))
    } else {
        None
    };
    let found: Vec<(&'static str, ProviderKind)> = [
        openai,
        get(ANTHROPIC_API_KEY).map(|_| (ANTHROPIC_API_KEY, ProviderKind::Anthropic)),
        get(GEMINI_API_KEY).map(|_| (GEMINI_API_KEY, ProviderKind::Gemini)),
        get(OLLAMA_HOST).map(|_| (OLLAMA_HOST, ProviderKind::Ollama)),
    ]
    .into_iter()
    .flatten()
    .collect();
    match found.as_slice() {
        [] => Err(EnvError::NotConfigured),
        [(_, kind)] => Ok(*kind),
        several => Err(EnvError::Ambiguous(
            several.iter().map(|(var, _)| *var).collect(),
        )),
    }
}

/// `OLLAMA_HOST` as the Ollama CLI reads it, as a base URL (see the module docs).
pub fn ollama_base_url(value: &str) -> Result<String, EnvError> {
    let invalid = |reason: String| EnvError::Invalid {
        var: OLLAMA_HOST,
        reason: format!("{value:?} is not a usable Ollama host: {reason}"),
    };
    let value = value.trim();
    let (scheme, rest, default_port) = match value.split_once("://") {
        None => ("http", value, 11434),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => ("http", rest, 80),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => ("https", rest, 443),
        Some((scheme, _)) => {
            return Err(invalid(format!("scheme {scheme:?} is not http or https")));
        }
    };
    let (host_port, path) = match rest.split_once('/') {
        Some((host_port, path)) => (host_port, path.trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = match split_host_port(host_port) {
        Some((host, port)) => {
            let port: u16 = port
                .parse()
                .map_err(|_| invalid(format!("port {port:?} is not a number from 0 to 65535")))?;
            (host, port)
        }
        None => (
            host_port.trim_start_matches('[').trim_end_matches(']'),
            default_port,
        ),
    };
    let host = match host.parse::<IpAddr>() {
        Ok(ip) if ip.is_unspecified() && ip.is_ipv6() => "[::1]".to_owned(),
        Ok(ip) if ip.is_unspecified() => "127.0.0.1".to_owned(),
        Ok(IpAddr::V6(ip)) => format!("[{ip}]"),
        Ok(IpAddr::V4(ip)) => ip.to_string(),
        Err(_) if host.is_empty() => "127.0.0.1".to_owned(),
        Err(_) => host.to_owned(),
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    Ok(format!("{scheme}://{host}:{port}{path}"))
}

/// `host:port` or `[host]:port` split as Go's `net.SplitHostPort` does; `None` when there is no
/// port (`host`, `[::1]`, a bare IPv6 address).
fn split_host_port(host_port: &str) -> Option<(&str, &str)> {
    if let Some(bracketed) = host_port.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        return after.strip_prefix(':').map(|port| (host, port));
    }
    let (host, port) = host_port.rsplit_once(':')?;
    (!host.contains(':')).then_some((host, port))
}

#[cfg(test)]
#[path = "from_env_tests.rs"]
mod tests;
