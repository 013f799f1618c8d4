//! [`ProviderRegistry`]: providers the host registered by name — its own [`Provider`]
//! implementations, or ready providers it built itself — which the run loop resolves before it
//! builds one from a spec.
//!
//! A name in the registry is looked up wherever an `LLMConfig.provider_name` is read:
//! - the **host default** ([`HostDefault::Registered`](super::HostDefault::Registered));
//! - a **skill's** `a2e-provider`: the host registered the provider, so its endpoint and
//!   credentials are the host's own and a skill choosing it chooses no endpoint. The skill may
//!   not reconfigure it: a `provider_config` with anything but the provider's own `model` is the
//!   skill's `Blocked` reason;
//! - a request's **`llm_override`**: only for names the host marked with
//!   [`ProviderRegistry::allow_override`] (deny by default, like [`OverridePolicy`]); the same
//!   rule about `provider_config` applies, and credentials in the override are refused.
//!
//! A registered name may not be a built-in kind's (`ollama`, `openai`, ...): those keep meaning a
//! spec, so registering a provider never changes what an existing config does.
//!
//! [`OverridePolicy`]: skillet_providers::OverridePolicy

#![warn(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value};
use skillet_providers::{Provider, ProviderKind};

/// Why a provider could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderRegistryError {
    /// The name is taken.
    #[error("provider {0:?} is already registered")]
    Duplicate(String),
    /// The name is a built-in provider kind's, which always means a spec.
    #[error("provider name {0:?} is a built-in provider kind; register it under another name")]
    BuiltInName(String),
    /// The name is empty or has leading/trailing whitespace.
    #[error("provider name {0:?} is not usable: it must be non-empty, without surrounding spaces")]
    InvalidName(String),
}

/// Why a `provider_config` cannot go with a registered provider's name (a registered provider
/// is used as it is: at most its own `model` may be named).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisteredConfigError {
    /// The config names a model the provider does not serve.
    #[error("provider `{name}` serves model {serves:?}, not {asked}")]
    OtherModel {
        /// The registered name.
        name: String,
        /// The model the provider serves.
        serves: String,
        /// The `model` value the config gave.
        asked: Value,
    },
    /// The config sets something else.
    #[error("provider `{name}` is registered by the host and takes no provider_config.{key}")]
    Setting {
        /// The registered name.
        name: String,
        /// The key it may not set.
        key: String,
    },
}

/// Providers registered by name; see the module docs. Cheap to clone.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    providers: BTreeMap<String, Arc<dyn Provider>>,
    overridable: BTreeSet<String>,
}

impl std::fmt::Debug for ProviderRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderRegistry")
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .field("overridable", &self.overridable)
            .finish()
    }
}

impl ProviderRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ProviderRegistry::default()
    }

    /// Registers `provider` as `name`.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        provider: Arc<dyn Provider>,
    ) -> Result<(), ProviderRegistryError> {
        let name = name.into();
        if name.is_empty() || name.trim() != name {
            return Err(ProviderRegistryError::InvalidName(name));
        }
        if ProviderKind::parse(&name).is_some() {
            return Err(ProviderRegistryError::BuiltInName(name));
        }
        if self.providers.contains_key(&name) {
            return Err(ProviderRegistryError::Duplicate(name));
        }
        self.providers.insert(name, provider);
        Ok(())
    }

    /// Lets a request's `llm_override` choose the provider registered as `name` (whether or not
    /// it is registered yet).
    pub(crate) fn allow_override(&mut self, name: impl Into<String>) {
        self.overridable.insert(name.into());
    }

    /// The provider registered as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.get(name)
    }

    /// Whether an `llm_override` may choose `name`.
    pub(crate) fn is_overridable(&self, name: &str) -> bool {
        self.overridable.contains(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.providers.keys().map(String::as_str)
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// Checks a `provider_config` given with a registered provider's name: at most its own
    /// `model` (and the loader's `provider` key) — a registered provider is used as it is.
    pub(crate) fn check_config(
        name: &str,
        provider: &dyn Provider,
        config: Option<&Map<String, Value>>,
    ) -> Result<(), RegisteredConfigError> {
        for (key, value) in config.into_iter().flatten() {
            match key.as_str() {
                "provider" => {}
                "model" if value.as_str() == Some(provider.model()) => {}
                "model" => {
                    return Err(RegisteredConfigError::OtherModel {
                        name: name.to_owned(),
                        serves: provider.model().to_owned(),
                        asked: value.clone(),
                    });
                }
                other => {
                    return Err(RegisteredConfigError::Setting {
                        name: name.to_owned(),
                        key: other.to_owned(),
                    });
                }
            }
        }
        Ok(())
    }
}
