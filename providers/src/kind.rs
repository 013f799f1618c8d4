//! [`ProviderKind`]: which wire API a provider speaks, declared from one table whose rows name
//! each kind's wire type, so its spellings, default base URL and credential rules come from the
//! wire ([`KindInfo`]).
//!
//! What is not here: a provider's settings (`spec.rs`), building a provider of a kind from the
//! same table (`http_provider.rs`), any wire's request or response shape.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::wire::{KindInfo, Wire};

/// Declares [`ProviderKind`] from the table's rows: the enum, its `provider_name` spellings,
/// defaults and credential rules (read from each wire's [`KindInfo`]).
macro_rules! define_provider_kind {
    ($($(#[$doc:meta])* $variant:ident => $wire:ty,)*) => {
        /// Which wire API a provider speaks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum ProviderKind {
            $($(#[$doc])* $variant,)*
        }

        impl ProviderKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ProviderKind] = &[$(ProviderKind::$variant,)*];

            fn info(self) -> &'static KindInfo {
                match self {
                    $(ProviderKind::$variant => &<$wire as Wire>::INFO,)*
                }
            }
        }
    };
}

/// The one table of provider kinds, `Variant => WireType` rows, handed to `$callback!`: this
/// module declares the enum from it, `http_provider.rs` the constructor dispatch. Adding a
/// provider is one wire folder plus one row here.
macro_rules! with_provider_kinds {
    ($callback:ident) => {
        $callback! {
        /// OpenAI itself (`https://api.openai.com/v1`), Chat Completions.
        Openai => crate::openai::OpenAi,
        /// Any server speaking OpenAI Chat Completions (vLLM, llama.cpp, LM Studio, OpenRouter,
        /// Ollama `/v1`). Needs a `base_url`.
        OpenaiCompatible => crate::openai::OpenAiCompatible,
        /// Ollama's native `/api/chat` (NDJSON).
        Ollama => crate::ollama::Ollama,
        /// Anthropic Messages `/v1/messages` (SSE).
        Anthropic => crate::anthropic::Anthropic,
        /// Google Gemini `generateContent` / `streamGenerateContent` (SSE).
        Gemini => crate::gemini::Gemini,

        }
    };
}
pub(crate) use with_provider_kinds;

with_provider_kinds!(define_provider_kind);

impl ProviderKind {
    /// The `provider_name` spelling.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// Parses a `provider_name` (case-insensitive; `_` accepted for `-`).
    pub fn parse(name: &str) -> Option<Self> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.iter().copied().find(|k| k.as_str() == wanted)
    }

    /// What the kind's API can do about structured output (for the negotiation).
    pub(crate) fn capabilities(self) -> &'static crate::modes::Capabilities {
        &self.info().modes
    }

    /// The base URL used when the config names none (`None`: the kind needs one).
    pub(crate) fn default_base_url(self) -> Option<&'static str> {
        self.info().default_base_url
    }

    /// Whether a spec of this kind needs an API key.
    pub(crate) fn requires_credential(self) -> bool {
        self.info().requires_key
    }

    /// The environment variable an ad-hoc provider of this kind conventionally reads its key
    /// from (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), if any.
    pub fn conventional_key_env(self) -> Option<&'static str> {
        self.info().conventional_key_env
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
