//! `skillet run SKILL [PROMPT] [--args JSON|@FILE] [--file PATH]... [--out DIR]`: one call,
//! live progress on stderr, the result on stdout (the `data` as pretty JSON, or with `--json`
//! the whole `skill/call/resp` on one line), the files it produced written to `--out`, and an
//! exit code per outcome (see `exit`).
//!
//! Not here: how the prompt, `--args` and `--file` become the call's arguments (`run_input`),
//! writing produced files (`run_files`).

use std::io::{Read, Write};
use std::path::Path;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::args::{GlobalArgs, RunArgs};
use super::exit::{Failure, Outcome};
use super::progress::{DisplayMode, Progress};
use super::run_files as files;
use super::run_input::{add_input_files, compose_arguments, read_input_files, read_prompt};
use super::setup::{self, Console};
use super::shutdown_signal;
use super::suggest;
use crate::embedded;
use skillet_engine::service::SkillService;
use skillet_engine::skill::{self, CompiledSkill};
use skillet_engine::template::json_kind;
use skillet_protocol::{ErrorCode, Message, ProtocolError, SkillCallRequest, SkillCallResponse};

/// Runs the command.
pub async fn run(
    global: &GlobalArgs,
    args: &RunArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let given = args.args.as_deref().map(parse_arguments).transpose()?;
    let prompt = read_prompt(args)?;
    let input_files = read_input_files(&args.files)?;
    let extra = skill_folder(&args.skill)?;
    let name = skill_name(&args.skill, extra.as_ref());
    let parts = setup::load_parts(global, console, extra).await?;
    let skill = match suggest::loaded_skill(&parts, &name).await {
        Ok(skill) => skill,
        Err(refused) => {
            if args.json {
                // `--json` still prints the one `skill/call/resp` a script parses.
                let error = ProtocolError::new(ErrorCode::UnknownSkill, refused.message.clone());
                let response =
                    SkillCallResponse::rejected(skillet_protocol::new_id(), &name, error);
                print_response(&response, true, console);
            }
            return Err(refused);
        }
    };
    // A skill that cannot run here is refused by the executor with its reason, whatever its input.
    let composed = match skill.is_runnable() {
        true => compose_arguments(&skill.compiled, given, prompt),
        false => Ok(given.unwrap_or_default()),
    };
    let mut arguments = match composed {
        Ok(arguments) => arguments,
        Err(reason) => {
            if args.json {
                let error = ProtocolError::new(ErrorCode::SchemaViolation, reason.clone());
                let response =
                    SkillCallResponse::rejected(skillet_protocol::new_id(), &name, error);
                print_response(&response, true, console);
            }
            return Err(Failure {
                outcome: Outcome::Rejected,
                message: format!("schema_violation: {reason}"),
            });
        }
    };
    if !input_files.is_empty() {
        add_input_files(&mut arguments, input_files);
    }
    let scenario = skill
        .compiled
        .dir
        .as_deref()
        .and_then(embedded::scenario_in);
    let (default, mock) = setup::start_model(&parts, scenario.into_iter().collect()).await?;
    if let Some(mock) = &mock {
        console.notice(mock.notice());
    }
    let executor = setup::build_executor(&parts, Some(default), parts.config.card.identity(None))?;

    let mut request = SkillCallRequest::new(&name, arguments);
    // 0 = no limit of the request's own: the skill's timeout_seconds and the host cap apply.
    request.timeout = args.timeout.unwrap_or(0);
    request.streaming = true;
    if args.transcript {
        request.metadata.insert(
            skillet_protocol::TRANSCRIPT_METADATA.to_owned(),
            Value::Bool(true),
        );
    }

    let progress = Progress::start(
        DisplayMode::detect(console.quiet > 0),
        &name,
        console.verbose,
    );
    let cancel = CancellationToken::new();
    let interrupted = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        let interrupted = interrupted.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            interrupted.cancel();
            cancel.cancel();
        })
    };
    let response = executor.call(request, Some(progress.sink()), cancel).await;
    watcher.abort();
    progress.finish();
    parts.tools.shutdown_toolkits().await;
    drop(mock);

    let cancelled = interrupted.is_cancelled();
    if cancelled && !args.json {
        // The person stopped it: say so, not that the skill failed.
        let took = response.data.as_ref().map_or(0, |r| r.duration_ms);
        console.notice(format!("{name} cancelled (interrupted) after {took} ms"));
    } else {
        print_response(&response, args.json, console);
    }
    if let Some(result) = &response.data {
        if !args.json
            && let Some(transcript) = &result.transcript
        {
            eprint!("{}", super::transcript_view::render(transcript));
        }
        files::write_produced(&result.events, &args.out, args.force, console);
    }
    if cancelled {
        return Ok(Outcome::Interrupted);
    }
    Ok(Outcome::of_response(&response))
}

/// SKILL on the command line: the path of a skill folder loads that folder (`Some`, which
/// replaces the skill roots); anything else is a skill's name in the roots (`None`).
pub(super) fn skill_folder(skill: &str) -> Result<Option<CompiledSkill>, Failure> {
    let as_dir = Path::new(skill);
    let folder = (skill.contains(std::path::MAIN_SEPARATOR) || as_dir.join("SKILL.md").is_file())
        && as_dir.is_dir();
    if !folder {
        return Ok(None);
    }
    skill::load_skill_dir(as_dir, skill::SkillSource::Project)
        .map(Some)
        .map_err(|problems| {
            let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
            Failure::setup(format!(
                "cannot load {}:\n{}",
                as_dir.display(),
                lines.join("\n")
            ))
        })
}

/// The name of the skill SKILL names: the loaded folder's, else SKILL itself.
pub(super) fn skill_name(skill: &str, folder: Option<&CompiledSkill>) -> String {
    folder.map_or_else(|| skill.to_owned(), |compiled| compiled.name().to_owned())
}

/// `--args`: inline JSON, `@FILE`, or `@-` (stdin); must be a JSON object.
pub(super) fn parse_arguments(text: &str) -> Result<Map<String, Value>, Failure> {
    let (origin, body) = match text.strip_prefix('@') {
        Some("-") => {
            let mut body = String::new();
            std::io::stdin()
                .read_to_string(&mut body)
                .map_err(|e| Failure::usage(format!("--args @-: cannot read stdin: {e}")))?;
            ("stdin".to_owned(), body)
        }
        Some(path) => {
            let body = std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("--args @{path}: {e}")))?;
            (path.to_owned(), body)
        }
        None => ("--args".to_owned(), text.to_owned()),
    };
    match serde_json::from_str::<Value>(&body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(Failure::usage(format!(
            "{origin}: the arguments must be a JSON object, got {}",
            json_kind(&other)
        ))),
        Err(e) => Err(Failure::usage(format!("{origin}: not valid JSON: {e}"))),
    }
}

pub(super) fn print_response(response: &SkillCallResponse, json: bool, console: Console) {
    let mut stdout = std::io::stdout().lock();
    if json {
        let line = skillet_protocol::encode(&Message::CallResponse(response.clone()));
        let _ = writeln!(stdout, "{line}");
        return;
    }
    let name = &response.name;
    if let Some(error) = &response.error {
        console.error(format!(
            "{name} rejected ({}): {}",
            error.code, error.message
        ));
        return;
    }
    let Some(result) = &response.data else {
        return;
    };
    if let Some(data) = &result.data {
        let text = match data {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
        };
        let _ = writeln!(stdout, "{text}");
    }
    let summary = result
        .summary
        .as_ref()
        .map(|s| match s {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    if result.success {
        console.notice(format!(
            "{name} succeeded in {} ms: {summary}",
            result.duration_ms
        ));
    } else {
        let code = result
            .error_code
            .map(|c| c.to_string())
            .unwrap_or_else(|| "error".into());
        let error = result.error.clone().unwrap_or_default();
        console.error(format!(
            "{name} failed ({code}) after {} ms: {error}",
            result.duration_ms
        ));
    }
    if let Some(usage) = &result.usage {
        console.notice(usage_line(usage));
    }
}

/// `tokens: 120 in + 45 out over 3 turns (≈ 0.000412 USD)` for the terminal.
fn usage_line(usage: &skillet_protocol::TokenUsage) -> String {
    let turns = usage.turns.len();
    let plural = if turns == 1 { "" } else { "s" };
    let mut line = match (usage.input_tokens, usage.output_tokens) {
        (Some(input), Some(output)) => {
            format!("tokens: {input} in + {output} out over {turns} turn{plural}")
        }
        _ => format!("tokens: unknown (not reported by the server) over {turns} turn{plural}"),
    };
    if let Some(cached) = usage.cached_input_tokens {
        line.push_str(&format!(", {cached} cached"));
    }
    if let Some(written) = usage.cache_creation_input_tokens {
        line.push_str(&format!(", {written} written to the cache"));
    }
    if let Some(reasoning) = usage.reasoning_tokens {
        line.push_str(&format!(", {reasoning} reasoning"));
    }
    if let Some(cost) = &usage.cost {
        line.push_str(&format!(" (≈ {:.6} {})", cost.amount, cost.currency));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_line_shows_totals_turns_and_cost() {
        let usage = skillet_protocol::TokenUsage {
            input_tokens: Some(120),
            output_tokens: Some(45),
            turns: vec![Default::default(), Default::default()],
            cost: Some(skillet_protocol::CostEstimate {
                amount: 0.000412,
                currency: "USD".into(),
            }),
            ..Default::default()
        };
        assert_eq!(
            usage_line(&usage),
            "tokens: 120 in + 45 out over 2 turns (≈ 0.000412 USD)"
        );
        let unknown = skillet_protocol::TokenUsage {
            turns: vec![Default::default()],
            ..Default::default()
        };
        assert_eq!(
            usage_line(&unknown),
            "tokens: unknown (not reported by the server) over 1 turn"
        );
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        assert!(parse_arguments(r#"{"text":"hi"}"#).is_ok());
        let err = parse_arguments("[1]").unwrap_err();
        assert_eq!(err.outcome, Outcome::Usage);
        assert!(err.message.contains("an array"), "{}", err.message);
        assert_eq!(parse_arguments("{").unwrap_err().outcome, Outcome::Usage);
        assert_eq!(
            parse_arguments("@/no/such/file").unwrap_err().outcome,
            Outcome::Usage
        );
    }
}
