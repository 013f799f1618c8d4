//! One test binary: the commands a person types: run, eval, validate, init, completions, providers,
//! telemetry, scripts, redaction, each file a module driving the `skillet` binary. The `*_support`
//! modules are shared by every binary (`cli/tests/*_support/`).

#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../mcp_support/mod.rs"]
mod mcp_support;
#[path = "../scripts_support/mod.rs"]
mod scripts_support;
#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../telemetry_support/mod.rs"]
mod telemetry_support;

mod approvals;
mod author_loop;
mod cli_commands;
mod cli_conventions;
mod cli_document_scripts;
mod cli_eval;
mod cli_node_environments;
mod cli_script_environments;
mod cli_toolkits;
mod cli_validate_corpus;
mod eval_judged;
mod log_redaction;
mod mock_record;
mod produced_files;
mod provider_env;
mod provider_fallback;
mod provider_server_quirks;
mod real_llama_record;
mod security_environments;
mod security_regressions;
mod telemetry_export;
mod telemetry_opt_in;
mod telemetry_usage;
mod toolkit_secret_redaction;
