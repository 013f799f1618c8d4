//! The builder's default model: which of the ways to name one was chosen
//! ([`DefaultModel`]), and turning the environment's choice into a spec through
//! [`EnvProvider`] (the mapping itself lives in `skillet-providers`, where the CLI uses it too).

use std::sync::Arc;

use skillet_providers::{EnvError, EnvProvider, ProviderSpec};

use crate::run::ExecutorBuilder;

/// Reads one environment variable (`None`: unset).
pub(crate) type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How the builder was told to pick the default model (the last call wins).
#[derive(Clone)]
pub(crate) enum DefaultModel {
    /// No default: every skill must name its own provider.
    None,
    /// From the environment (the process's, or a given lookup).
    Env(Option<EnvLookup>),
    /// A ready spec.
    Spec(Box<ProviderSpec>),
    /// A provider registered by name.
    Registered(String),
}

impl DefaultModel {
    /// Applies the choice to `builder`; `fallback_model` is the model when `SKILLET_MODEL` is
    /// unset.
    pub(crate) fn apply(
        self,
        builder: ExecutorBuilder,
        fallback_model: Option<&str>,
    ) -> Result<ExecutorBuilder, EnvError> {
        Ok(match self {
            DefaultModel::None => builder,
            DefaultModel::Env(lookup) => {
                let provider = match lookup {
                    Some(lookup) => EnvProvider::from_lookup(|name| lookup(name))?,
                    None => EnvProvider::from_env()?,
                };
                builder.default_provider(provider.spec(fallback_model)?)
            }
            DefaultModel::Spec(spec) => builder.default_provider(*spec),
            DefaultModel::Registered(name) => builder.default_registered(name),
        })
    }
}
