//! The command line, as clap types. Parsing only: what each command does is in its own module.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::help;

/// Skillet runs SKILL.md skills: from the terminal, or for agent hosts over stdio and HTTP.
#[derive(Debug, Parser)]
#[command(
    name = "skillet",
    version,
    about = help::ABOUT,
    long_about = help::LONG_ABOUT,
    after_help = help::ROOT_AFTER,
    propagate_version = true
)]
pub struct Cli {
    /// Global options.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// A directory of skill folders (repeatable). Default: the config's `skills_dirs`, else
    /// ./skills, else $XDG_DATA_HOME/skillet/skills.
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<PathBuf>,
    /// The configuration file. Default: ./skillet.toml, else
    /// $XDG_CONFIG_HOME/skillet/skillet.toml, else built-in defaults.
    #[arg(long, value_name = "FILE", env = "SKILLET_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// A configured provider's name, or a kind: openai, openai-compatible, ollama, anthropic,
    /// gemini, mock.
    #[arg(long, value_name = "NAME", env = "SKILLET_PROVIDER", global = true,
          value_parser = ProviderName, hide_possible_values = true)]
    pub provider: Option<String>,
    /// The model (overrides the provider's); `eval` takes it more than once.
    #[arg(
        long = "model",
        value_name = "MODEL",
        env = "SKILLET_MODEL",
        global = true
    )]
    pub models: Vec<String>,
    /// The provider's base URL (overrides the provider's).
    #[arg(
        long = "base-url",
        value_name = "URL",
        env = "SKILLET_BASE_URL",
        global = true
    )]
    pub base_url: Option<String>,
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Less output on stderr (-q: no progress or notices, -qq: no logs either).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "verbose")]
    pub quiet: u8,

    /// Log line format on stderr: text, or one JSON object per line for log shippers.
    #[arg(
        long = "log-format",
        value_name = "FORMAT",
        value_enum,
        default_value_t,
        env = "SKILLET_LOG_FORMAT",
        global = true
    )]
    pub log_format: crate::telemetry::LogFormat,
}

impl GlobalArgs {
    /// The one `--model` of a command other than `eval` (the last, when given twice: the
    /// dispatcher refuses that first).
    pub fn model(&self) -> Option<String> {
        self.models.last().cloned()
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one skill and print its result.
    #[command(after_help = help::RUN_AFTER)]
    Run(RunArgs),
    /// List the skills (filtered by tag and category).
    #[command(after_help = help::DISCOVER_AFTER)]
    Discover(DiscoverArgs),
    /// Check skill folders and print every problem as file:location: reason.
    #[command(after_help = help::VALIDATE_AFTER)]
    Validate(ValidateArgs),
    /// Serve skills to agent hosts: A2E or MCP over stdio, A2E + MCP + A2A over HTTP, or work a
    /// NATS JetStream queue.
    #[command(after_help = help::SERVE_AFTER)]
    Serve(ServeArgs),
    /// Run one skill on `serve --nats` workers and print its result.
    #[command(after_help = help::CALL_AFTER)]
    Call(CallArgs),
    /// Print the A2A Agent Card of the skills.
    #[command(after_help = help::CARD_AFTER)]
    Card(CardArgs),
    /// List the configured toolkits (status, tools) and the tools the host provides.
    #[command(after_help = help::TOOLKITS_AFTER)]
    Toolkits(ToolkitsArgs),
    /// Run a skill's eval cases (evals/evals.json) on one or more models and report how well
    /// it does: a table per model, JSON and JUnit XML.
    #[command(after_help = help::EVAL_AFTER)]
    Eval(EvalArgs),
    /// Create a new skill folder that validates, runs on the embedded mock and passes its eval.
    #[command(after_help = help::INIT_AFTER)]
    Init(InitArgs),
    /// Print a shell completion script on stdout.
    #[command(after_help = help::COMPLETIONS_AFTER)]
    Completions(CompletionsArgs),
}

/// `skillet init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The new skill's name: lowercase letters, digits and single hyphens (e.g. `greet`).
    pub name: String,
    /// The directory to create the skill folder in (default: the first --skills-dir, else
    /// ./skills; created when missing).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `skillet completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `skillet eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The skill's name, or the path of a skill folder.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::completions::skill_names))]
    pub skill: String,
    /// Runs of each case per model.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = at_least_one())]
    pub repeat: u32,
    /// Runs in flight at once, over all models.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = at_least_one())]
    pub concurrency: u32,
    /// Run only this case (its name or id; repeatable).
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
    /// Write the JSON report to FILE.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Save the report in the console's history database ([console] history_db), where the
    /// console's skill view shows its models side by side.
    #[arg(long)]
    pub save: bool,
    /// Each call's wall-clock limit in seconds (default: the skill's and the host cap).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// The model that grades the cases' natural-language expectations ([eval] judge_model;
    /// default: each run's own model).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// The provider the judge runs on: a [providers.NAME] or a kind ([eval] judge_provider;
    /// default: the run's).
    #[arg(long, value_name = "NAME")]
    pub judge_provider: Option<String>,
    /// Grade no expectation: they are listed ungraded and do not count.
    #[arg(long, conflicts_with_all = ["judge_model", "judge_provider"])]
    pub no_judge: bool,
    /// Also run each case without the skill's instructions (the bare request, same model and
    /// tools) and report both and the delta (benchmark.json in skill-creator's shape).
    #[arg(long)]
    pub baseline: bool,
    /// Write skill-creator's files into DIR: eval-CASE/with_skill/run-N/grading.json (and
    /// without_skill with --baseline), and benchmark.json with --baseline.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Also run the skill's trigger set (evals/trigger.json): does a model offered the host's
    /// skills as tools pick this one for each query?
    #[arg(long)]
    pub trigger: bool,
}

/// A count that must be 1 or more.
fn at_least_one() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..)
}

/// `skillet toolkits`.
#[derive(Debug, Args)]
pub struct ToolkitsArgs {
    /// Print JSON instead of a listing.
    #[arg(long)]
    pub json: bool,
}

/// `skillet run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The skill's name, or the path of a skill folder.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::completions::skill_names))]
    pub skill: String,
    /// The request, for a skill that takes a prompt (a plain Agent Skill, or one whose input
    /// has a `prompt` property); `-` reads it from stdin.
    #[arg(value_name = "PROMPT", conflicts_with = "prompt")]
    pub prompt_text: Option<String>,
    /// The request, as with the PROMPT argument.
    #[arg(long = "prompt", value_name = "TEXT")]
    pub prompt: Option<String>,
    /// The arguments: a JSON object, or @FILE to read it from a file (@- for stdin).
    #[arg(long, value_name = "JSON|@FILE")]
    pub args: Option<String>,
    /// An input file for the skill (repeatable): sent with its name, as text when it is UTF-8,
    /// else as base64 (the host's workspace limits apply).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Where the files the skill produced are written (each path is printed on stderr).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Overwrite produced files that already exist in --out.
    #[arg(long)]
    pub force: bool,
    /// Print what the run sent to the model and what it answered, turn by turn, after the
    /// result (on stderr; with --json, in the response's data.transcript).
    #[arg(long)]
    pub transcript: bool,
    /// Print the final skill/call/resp message as JSON on stdout (one line).
    #[arg(long)]
    pub json: bool,
    /// Wall-clock limit in seconds (default: the skill's timeout_seconds and the host cap).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

/// `skillet discover`.
#[derive(Debug, Args)]
pub struct DiscoverArgs {
    /// Keep skills having this tag (repeatable; any tag matches).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Keep skills in this category (repeatable).
    #[arg(long = "category", value_name = "CATEGORY")]
    pub categories: Vec<String>,
    /// Print the skill/discover/resp message as JSON.
    #[arg(long)]
    pub json: bool,
    /// Ask the `serve --nats` workers at URL instead of loading skills here.
    #[arg(long, value_name = "URL")]
    pub nats: Option<String>,
}

/// `skillet call --nats URL`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The skill's name.
    pub skill: String,
    /// The NATS server the workers pull from (default: the config's nats.url).
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub nats: Option<String>,
    /// The arguments: a JSON object, or @FILE to read it from a file (@- for stdin).
    #[arg(long, value_name = "JSON|@FILE", default_value = "{}")]
    pub args: String,
    /// Print the final skill/call/resp message as JSON on stdout (one line).
    #[arg(long)]
    pub json: bool,
    /// The call's id (default: a fresh UUID). Resubmitting an id returns its stored answer.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Seconds to wait for the answer (also the call's own limit when set).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

/// `skillet validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Skill folders, or directories of skill folders.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,
    /// Build the Python environment of every skill that declares requirements (with uv, the only
    /// step that uses the network), and report it.
    #[arg(long)]
    pub prepare: bool,
    /// Report the interpreter each script extension resolves to, and whether the sandbox can
    /// run it.
    #[arg(long)]
    pub scripts: bool,
}

/// `skillet serve`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["stdio", "mcp", "http", "nats"])))]
pub struct ServeArgs {
    /// A2E as JSON Lines on stdin/stdout (logs on stderr).
    #[arg(long)]
    pub stdio: bool,
    /// MCP on stdin/stdout: every published skill is a tool (logs on stderr).
    #[arg(long)]
    pub mcp: bool,
    /// HTTP on ADDR: A2E at /a2e, MCP (streamable HTTP) at /mcp, A2A JSON-RPC at /a2a, the Agent
    /// Card, /healthz and /metrics (default: the config's server.http_listen, 127.0.0.1:8080).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub http: Option<String>,
    /// Work the NATS JetStream call queue at URL (default: the config's nats.url).
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub nats: Option<String>,
    /// Serve --http on a non-loopback address without an [auth] section (anyone who can reach
    /// the port runs skills on this host's credentials). Refused without this flag.
    #[arg(long)]
    pub allow_unauthenticated: bool,
    /// Watch the skills directories and reload a skill when its folder changes (added, edited,
    /// removed), without a restart; every protocol's clients are told (also `[skills] watch`).
    #[arg(long)]
    pub watch: bool,
}

impl ServeArgs {
    /// The HTTP address asked for: `Some(None)` means "the configured default".
    pub fn http_addr(&self) -> Result<Option<Option<SocketAddr>>, String> {
        match self.http.as_deref() {
            None => Ok(None),
            Some("") => Ok(Some(None)),
            Some(text) => text.parse().map(|addr| Some(Some(addr))).map_err(|e| {
                format!("--http {text:?}: expected HOST:PORT such as 127.0.0.1:8080 ({e})")
            }),
        }
    }
}

/// `skillet card`.
#[derive(Debug, Args)]
pub struct CardArgs {
    /// The A2E endpoint URL to put in the card (default: the config's card.url).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
}

/// `--provider`'s values: any name (a configured provider's), with the kinds offered to shell
/// completion (`skillet --provider <TAB>`).
#[derive(Debug, Clone, Copy)]
struct ProviderName;

impl clap::builder::TypedValueParser for ProviderName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let kinds = skillet_providers::ProviderKind::ALL
            .iter()
            .map(|kind| kind.as_str())
            .chain(["mock"]);
        Some(Box::new(kinds.map(clap::builder::PossibleValue::new)))
    }
}
