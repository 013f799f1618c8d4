//! The prose of `skillet --help` and `skillet COMMAND --help`: what Skillet does for the user,
//! where it looks for its files, the environment it reads, and examples for each command.
//! Kept apart from `args` (the clap types) so the option list stays readable there; each
//! option's own environment variable is shown by clap next to the option (`[env: …]`).

/// The first line of `skillet --help`.
pub const ABOUT: &str = "Skillet runs your skills — folders with a SKILL.md and JSON Schemas — as \
                         bounded, validated LLM calls: from the terminal, or served to agent \
                         hosts over A2E, MCP and A2A.";

/// The paragraph under it in `skillet --help` (not in `-h`).
pub const LONG_ABOUT: &str = "Skillet runs your skills — folders with a SKILL.md and JSON \
Schemas — as bounded, validated LLM calls: from the terminal, or served to agent hosts over \
A2E, MCP and A2A.

Write a skill once (instructions, an input schema, an output schema); Skillet checks the \
arguments, runs the multi-turn loop against your model with the tools the skill declared, \
repairs or refuses answers that do not match the output schema, and streams progress while it \
works. With no provider configured it answers from an embedded mock LLM, so a new skill runs \
and is tested before any model is set up.";

/// Below the options of `skillet --help`.
pub const ROOT_AFTER: &str = "\
Examples:
  skillet init greet                          # scaffold skills/greet
  skillet run greet --args @skills/greet/examples/basic.json
  skillet eval greet                          # its eval cases, on the embedded mock
  skillet --provider ollama --model llama3.2 run summarize --args '{\"text\":\"...\"}'
  skillet serve --http 127.0.0.1:8080         # A2E, MCP and A2A for agent hosts

Files:
  config   --config FILE, else ./skillet.toml, else $XDG_CONFIG_HOME/skillet/skillet.toml
           (~/.config/skillet/skillet.toml when XDG_CONFIG_HOME is unset), else built-in
           defaults; -v logs which one is used, `skillet validate` names it
  skills   --skills-dir DIR, else the config's skills_dirs, else ./skills, else
           $XDG_DATA_HOME/skillet/skills (~/.local/share/skillet/skills)

Environment (besides each option's own, shown beside it):
  NO_COLOR                      no ANSI colour anywhere (colour is also off when stderr is
                                not a terminal); CLICOLOR_FORCE / FORCE_COLOR force it on
  RUST_LOG                      log filter, wins over -v/-q
  XDG_CONFIG_HOME, XDG_DATA_HOME, HOME
                                where the per-user config and skills are
  OTEL_EXPORTER_OTLP_ENDPOINT   export traces (see [telemetry] in skillet.toml)
  TOKIO_WORKER_THREADS          the runtime's worker count

Exit codes: 0 success, 1 the skill (or a check) failed, 2 usage, 3 rejected (unknown skill,
invalid arguments), 4 timed out, 5 configuration or setup, 130 interrupted.";

/// `skillet run --help`.
pub const RUN_AFTER: &str = "\
Examples:
  skillet run summarize --args '{\"text\":\"Rust 1.0 shipped in May 2015.\"}'
  skillet run summarize --args @skills/summarize/examples/basic.json --json
  echo '{\"text\":\"...\"}' | skillet run summarize --args @-
  skillet run ./my-skill --timeout 30          # a skill folder by path

An unknown name is refused with the closest names before any model starts (exit 3).";

/// `skillet discover --help`.
pub const DISCOVER_AFTER: &str = "\
Examples:
  skillet discover
  skillet discover --tag finance --json
  skillet discover --nats nats://127.0.0.1:4222";

/// `skillet validate --help`.
pub const VALIDATE_AFTER: &str = "\
Examples:
  skillet validate skills/
  skillet validate skills/greet --strict        # warnings fail too (CI)

The summary line on stderr names the configuration file that was used (its [skill_provider]
policy is checked).";

/// `skillet serve --help`.
pub const SERVE_AFTER: &str = "\
Examples:
  skillet serve --stdio                         # A2E as JSON Lines
  skillet serve --mcp                           # an MCP server for Claude Desktop, Cursor, ...
  skillet serve --http 0.0.0.0:8080
  skillet serve --nats nats://127.0.0.1:4222";

/// `skillet call --help`.
pub const CALL_AFTER: &str = "\
Examples:
  skillet call summarize --nats nats://127.0.0.1:4222 --args @examples/basic.json
  skillet call summarize --nats --id order-42 --json";

/// `skillet card --help`.
pub const CARD_AFTER: &str = "\
Examples:
  skillet card
  skillet card --url https://skills.example.com/a2e";

/// `skillet toolkits --help`.
pub const TOOLKITS_AFTER: &str = "\
Examples:
  skillet toolkits
  skillet toolkits --json";

/// `skillet eval --help`.
pub const EVAL_AFTER: &str = "\
Examples:
  skillet eval summarize
  skillet eval expense-report --provider ollama --model llama3.2 --model qwen2.5:3b --repeat 10
  skillet eval skills/code-review --json-out eval.json --junit eval.xml

An unknown name is refused with the closest names before any model starts (exit 3).";

/// `skillet init --help`.
pub const INIT_AFTER: &str = "\
Examples:
  skillet init greet                            # creates skills/greet
  skillet init greet --dir ~/.local/share/skillet/skills
  skillet validate skills/greet --strict && skillet run greet --args @skills/greet/examples/basic.json

The skill runs and passes its eval on the embedded mock as created; edit SKILL.md, the
schemas, mock-scenario.yaml and evals/evals.json from there.";

/// `skillet completions --help`.
pub const COMPLETIONS_AFTER: &str = "\
Examples:
  skillet completions bash > ~/.local/share/bash-completion/completions/skillet
  skillet completions zsh > \"${fpath[1]}/_skillet\"
  skillet completions fish > ~/.config/fish/completions/skillet.fish
  skillet completions powershell >> $PROFILE";
