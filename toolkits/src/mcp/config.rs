//! [`McpToolkitConfig`]: how the host describes one MCP server in `skillet.toml`
//! (`[toolkits.NAME]`), parsed once into typed, validated values.
//!
//! The TOML keys are flat; whether the server is launched over stdio or reached over
//! streamable HTTP follows from which of `command` or `url` is present. Secret header values are
//! never written into the file: they name an environment variable that is read when the
//! toolkit connects, and live in [`SecretString`]s from then on.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;

/// Default per-call timeout of an MCP tool.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Default limit on launching a server and completing the MCP handshake.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Headers the MCP transport manages itself; a configured value would break the session.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// One MCP server configured as a toolkit.
///
/// Deserializes from the `[toolkits.NAME]` table (an optional `kind = "mcp"` key is accepted so
/// the host may hand over the whole table); every rule is checked while parsing, so a value of
/// this type is always usable.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawMcpToolkitConfig")]
pub struct McpToolkitConfig {
    /// How to reach the server.
    pub transport: McpTransport,
    /// When set, only these MCP tool names are offered; others are never listed or called.
    pub available_tools: Option<Vec<String>>,
    /// Limit on one tool call (the call's own deadline may end it sooner).
    pub call_timeout: Duration,
    /// Limit on launching the server and completing the handshake.
    pub startup_timeout: Duration,
    /// When the server is started.
    pub connect: ConnectMode,
}

/// How an MCP server is reached.
#[derive(Debug, Clone)]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin/stdout.
    Stdio(StdioServer),
    /// A server speaking MCP's streamable HTTP transport.
    StreamableHttp(HttpServer),
}

/// A server launched as a child process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    /// The program (looked up on `PATH` when it has no `/`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Names of the host's environment variables passed to the child. The child's environment
    /// is otherwise empty except for `PATH`, so no host secret leaks by default.
    pub env: Vec<String>,
    /// Working directory of the child; the host's when unset.
    pub cwd: Option<PathBuf>,
}

/// A server reached over streamable HTTP.
#[derive(Debug, Clone)]
pub struct HttpServer {
    /// The MCP endpoint, `http://` or `https://`.
    pub url: String,
    /// Headers sent with every request, by lower-case name.
    pub headers: BTreeMap<String, HeaderSource>,
}

/// Where a header's value comes from.
#[derive(Debug, Clone)]
pub enum HeaderSource {
    /// A value written in the configuration (for non-secret headers).
    Literal(SecretString),
    /// The value of an environment variable of the host, read when the toolkit connects, with
    /// an optional prefix (e.g. `"Bearer "`).
    Env {
        /// The variable's name.
        var: String,
        /// Text put before the variable's value.
        prefix: String,
    },
}

/// When an MCP server is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectMode {
    /// When the host starts (`ToolRegistry::start_toolkits`), so discover shows its status.
    #[default]
    Boot,
    /// On the first run of a skill that declares the toolkit.
    FirstUse,
}

/// The TOML shape, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcpToolkitConfig {
    kind: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<Vec<String>>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    headers: Option<BTreeMap<String, RawHeader>>,
    available_tools: Option<Vec<String>>,
    timeout_seconds: Option<f64>,
    startup_timeout_seconds: Option<f64>,
    #[serde(default)]
    connect: ConnectMode,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawHeader {
    Literal(String),
    Env(RawEnvHeader),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnvHeader {
    env: String,
    #[serde(default)]
    prefix: String,
}

impl TryFrom<RawMcpToolkitConfig> for McpToolkitConfig {
    type Error = String;

    fn try_from(raw: RawMcpToolkitConfig) -> Result<Self, String> {
        if let Some(kind) = &raw.kind
            && kind != "mcp"
        {
            return Err(format!("kind is {kind:?}, expected \"mcp\""));
        }
        let transport = match (raw.command, raw.url) {
            (Some(_), Some(_)) => {
                return Err(
                    "set either `command` (stdio) or `url` (streamable HTTP), not both".into(),
                );
            }
            (None, None) => {
                return Err(
                    "set `command` (stdio server) or `url` (streamable HTTP server)".into(),
                );
            }
            (Some(command), None) => {
                if raw.headers.is_some() {
                    return Err("`headers` only apply to a `url` server".into());
                }
                McpTransport::Stdio(stdio_server(command, raw.args, raw.env, raw.cwd)?)
            }
            (None, Some(url)) => {
                if raw.args.is_some() || raw.env.is_some() || raw.cwd.is_some() {
                    return Err("`args`, `env` and `cwd` only apply to a `command` server".into());
                }
                McpTransport::StreamableHttp(http_server(url, raw.headers.unwrap_or_default())?)
            }
        };
        if let Some(tools) = &raw.available_tools
            && let Some(bad) = tools.iter().find(|t| t.trim().is_empty())
        {
            return Err(format!("available_tools has an empty name: {bad:?}"));
        }
        Ok(McpToolkitConfig {
            transport,
            available_tools: raw.available_tools,
            call_timeout: seconds("timeout_seconds", raw.timeout_seconds, DEFAULT_CALL_TIMEOUT)?,
            startup_timeout: seconds(
                "startup_timeout_seconds",
                raw.startup_timeout_seconds,
                DEFAULT_STARTUP_TIMEOUT,
            )?,
            connect: raw.connect,
        })
    }
}

fn stdio_server(
    command: String,
    args: Option<Vec<String>>,
    env: Option<Vec<String>>,
    cwd: Option<PathBuf>,
) -> Result<StdioServer, String> {
    if command.trim().is_empty() {
        return Err("`command` is empty".into());
    }
    let env = env.unwrap_or_default();
    if let Some(bad) = env.iter().find(|name| !is_env_name(name)) {
        return Err(format!("env: {bad:?} is not an environment variable name"));
    }
    Ok(StdioServer {
        command,
        args: args.unwrap_or_default(),
        env,
        cwd,
    })
}

fn http_server(
    url: String,
    raw_headers: BTreeMap<String, RawHeader>,
) -> Result<HttpServer, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("url {url:?} is not a valid URL: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(format!(
            "url {url:?} must be an http:// or https:// URL with a host"
        ));
    }
    let mut headers = BTreeMap::new();
    for (name, raw) in raw_headers {
        let lower = name.to_ascii_lowercase();
        if http::HeaderName::from_bytes(lower.as_bytes()).is_err() {
            return Err(format!("headers: {name:?} is not a valid header name"));
        }
        if RESERVED_HEADERS.contains(&lower.as_str()) {
            return Err(format!("headers: {name:?} is managed by the MCP transport"));
        }
        let source = match raw {
            RawHeader::Literal(value) => {
                if http::HeaderValue::from_str(&value).is_err() {
                    // The value itself is not echoed: it may be a secret put in the wrong place.
                    return Err(format!(
                        "headers: the value of {name:?} is not a valid header value"
                    ));
                }
                HeaderSource::Literal(SecretString::from(value))
            }
            RawHeader::Env(RawEnvHeader { env, prefix }) => {
                if !is_env_name(&env) {
                    return Err(format!(
                        "headers: {name:?} names {env:?}, which is not an environment variable name"
                    ));
                }
                HeaderSource::Env { var: env, prefix }
            }
        };
        if headers.insert(lower, source).is_some() {
            return Err(format!(
                "headers: {name:?} is given twice (names ignore case)"
            ));
        }
    }
    Ok(HttpServer { url, headers })
}

fn seconds(key: &str, value: Option<f64>, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(s) if s > 0.0 => {
            Duration::try_from_secs_f64(s).map_err(|_| format!("{key} = {s} is out of range"))
        }
        Some(s) => Err(format!("{key} must be positive, got {s}")),
    }
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

impl McpToolkitConfig {
    /// A stdio server with default settings (used by tests and embedding hosts).
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        McpToolkitConfig {
            transport: McpTransport::Stdio(StdioServer {
                command: command.into(),
                args,
                env: Vec::new(),
                cwd: None,
            }),
            available_tools: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            connect: ConnectMode::Boot,
        }
    }

    /// Whether the MCP tool `name` may be offered.
    pub fn allows(&self, name: &str) -> bool {
        self.available_tools
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|a| a == name))
    }

    /// A one-line description of where the server is, without secrets (for `skillet toolkits`).
    pub fn describe(&self) -> String {
        match &self.transport {
            McpTransport::Stdio(s) if s.args.is_empty() => format!("stdio: {}", s.command),
            McpTransport::Stdio(s) => format!("stdio: {} {}", s.command, s.args.join(" ")),
            McpTransport::StreamableHttp(h) => format!("http: {}", h.url),
        }
    }
}

#[cfg(test)]
mod tests {
    use secrecy::ExposeSecret;

    use super::*;

    fn parse(text: &str) -> Result<McpToolkitConfig, String> {
        toml::from_str::<McpToolkitConfig>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn stdio_table_parses_with_defaults() {
        let config = parse(
            r#"
            kind = "mcp"
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
            env = ["HOME"]
            "#,
        )
        .unwrap();
        let McpTransport::Stdio(stdio) = &config.transport else {
            panic!("expected stdio");
        };
        assert_eq!(stdio.command, "npx");
        assert_eq!(stdio.args.len(), 3);
        assert_eq!(stdio.env, vec!["HOME"]);
        assert_eq!(config.call_timeout, DEFAULT_CALL_TIMEOUT);
        assert_eq!(config.connect, ConnectMode::Boot);
        assert!(config.allows("anything"));
    }

    #[test]
    fn http_table_reads_secret_headers_from_env_names() {
        let config = parse(
            r#"
            url = "https://mcp.example.com/mcp"
            headers = { Authorization = { env = "SEARCH_TOKEN", prefix = "Bearer " }, "X-Client" = "skillet" }
            available_tools = ["search"]
            timeout_seconds = 2.5
            connect = "first-use"
            "#,
        )
        .unwrap();
        let McpTransport::StreamableHttp(http) = &config.transport else {
            panic!("expected http");
        };
        assert!(matches!(
            http.headers.get("authorization"),
            Some(HeaderSource::Env { var, prefix }) if var == "SEARCH_TOKEN" && prefix == "Bearer "
        ));
        match http.headers.get("x-client") {
            Some(HeaderSource::Literal(v)) => assert_eq!(v.expose_secret(), "skillet"),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(config.call_timeout, Duration::from_millis(2500));
        assert_eq!(config.connect, ConnectMode::FirstUse);
        assert!(config.allows("search"));
        assert!(!config.allows("delete"));
    }

    #[test]
    fn literal_header_values_never_appear_in_debug_output() {
        let config = parse(
            r#"
            url = "http://127.0.0.1:9/mcp"
            headers = { "X-Api-Key" = "hunter2-secret" }
            "#,
        )
        .unwrap();
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn bad_tables_are_rejected_with_a_reason() {
        let cases = [
            (r#"args = ["x"]"#, "set `command`"),
            (
                r#"command = "a"
                url = "http://x/mcp""#,
                "not both",
            ),
            (r#"command = """#, "empty"),
            (
                r#"command = "a"
                headers = { A = "b" }"#,
                "only apply to a `url`",
            ),
            (
                r#"url = "http://x/mcp"
                env = ["HOME"]"#,
                "only apply to a `command`",
            ),
            (r#"url = "ftp://x/mcp""#, "http:// or https://"),
            (
                r#"url = "http://x/mcp"
                headers = { Accept = "x" }"#,
                "managed by the MCP transport",
            ),
            (
                r#"url = "http://x/mcp"
                headers = { "bad name" = "x" }"#,
                "not a valid header name",
            ),
            (
                r#"command = "a"
                timeout_seconds = 0"#,
                "must be positive",
            ),
            (
                r#"command = "a"
                connect = "sometimes""#,
                "unknown variant",
            ),
            (
                r#"command = "a"
                comand = "typo""#,
                "unknown field",
            ),
            (
                r#"kind = "python"
                command = "a""#,
                "expected \"mcp\"",
            ),
            (
                r#"command = "a"
                available_tools = [""]"#,
                "empty name",
            ),
            (
                r#"command = "a"
                env = ["A=B"]"#,
                "not an environment variable name",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).expect_err(text);
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn describe_names_the_server_without_secrets() {
        let config = parse(
            r#"
            url = "http://127.0.0.1:9/mcp"
            headers = { Authorization = { env = "TOKEN" } }
            "#,
        )
        .unwrap();
        assert_eq!(config.describe(), "http: http://127.0.0.1:9/mcp");
        let stdio = McpToolkitConfig::stdio("server", vec!["--x".into()]);
        assert_eq!(stdio.describe(), "stdio: server --x");
    }

    /// The host may parse `[toolkits.NAME]` as an internally tagged enum on `kind`.
    #[test]
    fn works_inside_an_enum_tagged_by_kind() {
        #[derive(Deserialize)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        enum ToolkitConfig {
            Mcp(McpToolkitConfig),
        }
        let parsed: ToolkitConfig = toml::from_str(
            r#"
            kind = "mcp"
            command = "srv"
            "#,
        )
        .unwrap();
        let ToolkitConfig::Mcp(config) = parsed;
        assert_eq!(config.describe(), "stdio: srv");
    }
}
