//! Every secret a `skillet.toml` names, gathered for the process's one redaction set
//! (`skillet_engine::secrets`): the host registers them when it loads its configuration, before any
//! provider, toolkit, plugin or NATS connection can quote one back.

use secrecy::ExposeSecret;

use super::Config;
use super::extensions::{ToolConfig, ToolkitConfig};
use skillet_engine::secrets::Redactor;
use skillet_toolkits::mcp::{HeaderSource, McpTransport};

impl Config {
    /// The names of the environment variables whose values are secrets: each provider's
    /// `api_key_env`, `[llm_override] allowed_credential_envs`, the variables toolkit headers
    /// are read from and those a stdio toolkit passes to its child, `[nats] token_env` and `bearer_env`.
    pub fn secret_env_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .providers
            .values()
            .filter_map(|entry| entry.api_key_env.clone())
            .collect();
        if let Some(policy) = &self.llm_override {
            names.extend(policy.config().allowed_credential_envs.iter().cloned());
        }
        for toolkit in self.toolkits.values() {
            let ToolkitConfig::Mcp(mcp) = toolkit;
            match &mcp.transport {
                McpTransport::StreamableHttp(server) => {
                    for source in server.headers.values() {
                        if let HeaderSource::Env { var, .. } = source {
                            names.push(var.clone());
                        }
                    }
                }
                McpTransport::Stdio(server) => names.extend(
                    server
                        .env
                        .iter()
                        .filter(|name| !NOT_SECRET_ENV.contains(&name.as_str()))
                        .cloned(),
                ),
            }
        }
        names.extend(self.nats.token_env.iter().cloned());
        names.extend(self.nats.bearer_env.iter().cloned());
        names
    }

    /// Adds every secret this configuration names to `redactor`: the values of
    /// [`Self::secret_env_names`] and of the literal environment the sandboxed programs get
    /// (`sandbox.env.set` of `[tools.*]`, `[plugins.*]` and `[skills.scripts]`).
    pub fn register_secrets(&self, redactor: &Redactor) {
        for name in self.secret_env_names() {
            redactor.add_env(&name);
        }
        let tool_policies = self.tools.values().map(|tool| match tool {
            ToolConfig::Command(command) => &command.sandbox,
        });
        let plugin_policies = self.plugins.values().map(|plugin| &plugin.sandbox);
        let script_policy = std::iter::once(&self.skills.scripts.sandbox);
        for policy in tool_policies.chain(plugin_policies).chain(script_policy) {
            for value in policy.env.set.values() {
                redactor.add(value.expose_secret().to_owned().into());
            }
        }
    }
}

/// Variables a child is commonly given that hold no secret (redacting `PATH` would only
/// shred log lines).
const NOT_SECRET_ENV: &[&str] = &[
    "HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "PWD", "SHELL", "TERM", "TMPDIR", "TZ", "USER",
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn every_secret_source_of_the_file_is_named_and_plain_variables_are_not() {
        let config = Config::from_toml_str(
            r#"
[providers.main]
kind = "openai"
model = "m"
api_key_env = "MAIN_KEY"

[toolkits.remote]
kind = "mcp"
url = "https://mcp.example.com/mcp"
headers = { Authorization = { env = "TK_TOKEN", prefix = "Bearer " }, "X-Client" = "skillet" }

[toolkits.local]
kind = "mcp"
command = "server"
env = ["PATH", "GITHUB_TOKEN"]

[nats]
url = "nats://127.0.0.1:4222"
token_env = "NATS_TOKEN"
bearer_env = "NATS_BEARER"
"#,
            Path::new("/etc/skillet/skillet.toml"),
        )
        .unwrap();
        let mut names = config.secret_env_names();
        names.sort();
        assert_eq!(
            names,
            [
                "GITHUB_TOKEN",
                "MAIN_KEY",
                "NATS_BEARER",
                "NATS_TOKEN",
                "TK_TOKEN"
            ]
        );
    }

    #[test]
    fn sandbox_env_values_are_registered_as_secrets() {
        let config = Config::from_toml_str(
            "[skills.scripts]\nenabled = true\n[skills.scripts.sandbox.env]\nset = { API = \"script-secret-123\" }\n",
            Path::new("/etc/skillet/skillet.toml"),
        )
        .unwrap();
        let redactor = Redactor::default();
        config.register_secrets(&redactor);
        assert_eq!(redactor.redact("key script-secret-123"), "key [REDACTED]");
    }
}
