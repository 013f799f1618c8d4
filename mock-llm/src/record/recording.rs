//! The recording: the exchanges captured so far and the scenario file they become — one rule
//! per distinct request key (endpoint, model, turn, exact last user text, tool results), whose
//! replies are the answers that key got, in order.
//!
//! The key is exactly what scenario matching can test, so replaying the file with
//! `mock-llm --scenario FILE` gives each request of the recorded session the answer it got then.
//! The file is rewritten whole after every exchange (temporary file + rename), so a failed or
//! interrupted exchange never leaves it half-written, and it is parsed back before it is
//! renamed into place. Not here: forwarding (`proxy`), reading answers (`capture`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::capture::Captured;
use super::redact::Redactor;
use crate::reply::{Finish, Usage};
use crate::request::{ChatRequest, Endpoint};
use crate::scenario::Scenario;

/// What a recorded request is recognised by on replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Key {
    endpoint: &'static str,
    /// A glob matching exactly the model name.
    model: String,
    turn: u32,
    /// `\A<escaped last user text>\z`.
    user_regex: String,
    tool_results: bool,
    /// The last tool result, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_result_contains: Option<String>,
}

impl Key {
    /// The key of `req`, secrets redacted.
    pub(crate) fn of(req: &ChatRequest, redactor: &Redactor) -> Key {
        let last_result = req.tool_results().last().filter(|r| !r.is_empty());
        Key {
            endpoint: req.endpoint.as_str(),
            model: globset::escape(&redactor.apply(&req.model)),
            turn: req.turn(),
            user_regex: format!(
                "\\A{}\\z",
                regex::escape(&redactor.apply(req.last_user_text()))
            ),
            tool_results: req.tool_results().next().is_some(),
            tool_result_contains: last_result.map(|r| redactor.apply(r)),
        }
    }
}

/// One tool call as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct CallOut {
    name: String,
    /// An object when the server's text is its compact JSON form, else that text verbatim.
    arguments: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

/// One reply as written (the scenario's `reply` fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ReplyOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish: Option<Finish>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<String>,
}

/// A refusal as written: a scenario `status` fault that fires whenever its rule applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RefusalOut {
    kind: &'static str,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl RefusalOut {
    /// A refusal with the upstream's status and its error's message and code, when the body
    /// is one of the APIs' error shapes (`{"error": {"message", "code"|"type"}}` or
    /// `{"error": "text"}`); else its text.
    pub(crate) fn from_answer(status: u16, body: &[u8], redactor: &Redactor) -> RefusalOut {
        let text = String::from_utf8_lossy(body);
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let error = value.get("error").unwrap_or(&Value::Null);
        let message = error
            .as_str()
            .or_else(|| error.get("message").and_then(Value::as_str))
            .map_or_else(|| text.trim().to_owned(), str::to_owned);
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .or_else(|| error.get("type").and_then(Value::as_str))
            .map(|c| redactor.apply(c));
        RefusalOut {
            kind: "status",
            status,
            code,
            message: (!message.is_empty()).then(|| redactor.apply(&message)),
        }
    }
}

/// What one recorded request got.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// A completed answer.
    Reply(ReplyOut),
    /// A client error the server will give again for the same request (a refused parameter,
    /// an unknown model): replayed as a fault.
    Refusal(RefusalOut),
}

#[derive(Serialize)]
struct RuleOut<'a> {
    name: String,
    when: &'a Key,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply: Option<&'a ReplyOut>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    replies: &'a [ReplyOut],
    #[serde(skip_serializing_if = "Option::is_none")]
    fault: Option<&'a RefusalOut>,
}

#[derive(Serialize)]
struct ScenarioOut<'a> {
    rules: Vec<RuleOut<'a>>,
}

fn arguments(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if !v.is_string() && serde_json::to_string(&v).is_ok_and(|s| s == text) => v,
        _ => Value::String(text.to_owned()),
    }
}

pub(crate) fn reply_out(c: &Captured, redactor: &Redactor) -> ReplyOut {
    let tool_calls: Vec<CallOut> = c
        .tool_calls
        .iter()
        .map(|call| CallOut {
            name: redactor.apply(&call.name),
            arguments: arguments(&redactor.apply(&call.arguments)),
            id: call.id.as_deref().map(|id| redactor.apply(id)),
        })
        .collect();
    // An empty text with no tool call must stay written: an empty reply means "synthesize".
    let text = (!c.text.is_empty() || tool_calls.is_empty()).then(|| redactor.apply(&c.text));
    // The stop reasons the mock derives by itself are left out (Ollama reports `stop` for
    // tool calls, which would otherwise be replayed as a plain stop on the other APIs).
    let finish = c
        .finish
        .filter(|f| matches!(f, Finish::Length | Finish::ContentFilter));
    ReplyOut {
        text,
        tool_calls,
        finish,
        usage: c.usage,
        thinking: (!c.thinking.is_empty()).then(|| redactor.apply(&c.thinking)),
    }
}

/// The file format, from the output path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Yaml,
    Json,
}

/// The exchanges of one session and where they go.
#[derive(Debug)]
pub(crate) struct Recording {
    out: PathBuf,
    format: Format,
    /// `(arrival number, key, answer)`, kept in arrival order.
    exchanges: Vec<(u64, Key, Answer)>,
}

/// Why the file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Writing or renaming failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The scenario did not serialize or did not parse back (a bug; the old file is kept).
    #[error("recording {path} would not replay: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

impl Recording {
    pub(crate) fn new(out: PathBuf) -> Recording {
        let format = if out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Format::Json
        } else {
            Format::Yaml
        };
        Recording {
            out,
            format,
            exchanges: Vec::new(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.out
    }

    /// Exchanges recorded so far.
    pub(crate) fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// Adds one answered request.
    pub(crate) fn add(&mut self, arrival: u64, key: Key, answer: Answer) {
        let at = self.exchanges.partition_point(|(n, _, _)| *n < arrival);
        self.exchanges.insert(at, (arrival, key, answer));
    }

    /// The scenario text: rules in first-arrival order of their keys, except that a rule whose
    /// `tool_result_contains` is longer goes first (a shorter one could be a substring of it).
    pub(crate) fn render(&self, redactor: &Redactor) -> Result<String, WriteError> {
        // One group per key: its refusal (the first one; the server gives it every time), or
        // its replies in order.
        let mut groups: Vec<(&Key, Option<&RefusalOut>, Vec<ReplyOut>)> = Vec::new();
        for (_, key, answer) in &self.exchanges {
            let at = match groups.iter().position(|(k, _, _)| *k == key) {
                Some(at) => at,
                None => {
                    groups.push((key, None, Vec::new()));
                    groups.len() - 1
                }
            };
            match answer {
                Answer::Reply(reply) => groups[at].2.push(reply.clone()),
                Answer::Refusal(refusal) => {
                    groups[at].1.get_or_insert(refusal);
                }
            }
        }
        groups.sort_by_key(|(k, _, _)| {
            std::cmp::Reverse(k.tool_result_contains.as_ref().map_or(0, String::len))
        });
        let rules = groups
            .iter()
            .enumerate()
            .map(|(i, (key, refusal, replies))| {
                let same = !replies.is_empty() && replies.windows(2).all(|w| w[0] == w[1]);
                RuleOut {
                    name: format!("recorded[{i}] turn {} {}", key.turn, key.endpoint),
                    when: key,
                    reply: refusal
                        .is_none()
                        .then(|| replies.first())
                        .flatten()
                        .filter(|_| same),
                    replies: if same || refusal.is_some() {
                        &[]
                    } else {
                        replies.as_slice()
                    },
                    fault: *refusal,
                }
            })
            .collect();
        let scenario = ScenarioOut { rules };
        let invalid = |message: String| WriteError::Invalid {
            path: self.out.display().to_string(),
            message,
        };
        let text = match self.format {
            Format::Json => {
                serde_json::to_string_pretty(&scenario).map_err(|e| invalid(e.to_string()))?
            }
            Format::Yaml => {
                serde_saphyr::to_string(&scenario).map_err(|e| invalid(e.to_string()))?
            }
        };
        // Belt and braces: every string was redacted as it was captured; a secret learned later
        // (a new key on a later request) is caught here.
        let text = if redactor.leaks(&text) {
            redactor.apply(&text)
        } else {
            text
        };
        let parsed = match self.format {
            Format::Json => Scenario::from_json_str(&text),
            Format::Yaml => Scenario::from_yaml_str(&text),
        };
        parsed.map_err(|e| invalid(e.to_string()))?;
        Ok(text)
    }

    /// Writes the scenario: a temporary file beside the target, then a rename.
    pub(crate) async fn write(&self, redactor: &Redactor) -> Result<(), WriteError> {
        let text = self.render(redactor)?;
        let io = |source| WriteError::Io {
            path: self.out.display().to_string(),
            source,
        };
        let mut tmp = self.out.clone().into_os_string();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        tokio::fs::write(&tmp, text).await.map_err(io)?;
        tokio::fs::rename(&tmp, &self.out).await.map_err(io)
    }
}

/// The endpoint a request path is recorded as; other paths are forwarded unrecorded.
pub(crate) fn endpoint_of(path: &str) -> Option<Endpoint> {
    match path {
        "/v1/chat/completions" | "/chat/completions" => Some(Endpoint::OpenAiChat),
        "/v1/messages" => Some(Endpoint::AnthropicMessages),
        "/api/chat" => Some(Endpoint::OllamaChat),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::capture::CapturedCall;
    use crate::request::{Message, OutputShape, Role};

    fn request(user: &str, results: &[&str]) -> ChatRequest {
        let mut messages = vec![Message {
            role: Role::User,
            text: user.to_owned(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
        }];
        for r in results {
            messages.push(Message {
                role: Role::Assistant,
                text: String::new(),
                tool_calls: vec!["t".into()],
                tool_results: Vec::new(),
            });
            messages.push(Message {
                role: Role::Tool,
                text: String::new(),
                tool_calls: Vec::new(),
                tool_results: vec![(*r).to_owned()],
            });
        }
        ChatRequest {
            endpoint: Endpoint::OpenAiChat,
            model: "gpt-4o*[x]".into(),
            system: String::new(),
            messages,
            tools: Vec::new(),
            output: OutputShape::Text,
            stream: false,
            include_usage: false,
            headers: Vec::new(),
        }
    }

    #[test]
    fn recorded_file_parses_and_matches_only_its_request() {
        let r = Redactor::default();
        let mut rec = Recording::new("x.yaml".into());
        let call = Captured {
            tool_calls: vec![CapturedCall {
                id: Some("c1".into()),
                name: "t".into(),
                arguments: r#"{"a": 1}"#.into(),
            }],
            ..Captured::default()
        };
        rec.add(
            1,
            Key::of(&request("What is 1+1? (no)", &[]), &r),
            Answer::Reply(reply_out(&call, &r)),
        );
        let text = Captured {
            text: "no".into(),
            ..Captured::default()
        };
        rec.add(
            2,
            Key::of(&request("What is 1+1? (no)", &["2"]), &r),
            Answer::Reply(reply_out(&text, &r)),
        );
        let yaml = rec.render(&r).unwrap();
        let s = Scenario::from_yaml_str(&yaml).unwrap();
        assert_eq!(s.rules.len(), 2, "{yaml}");
        // The rule with a tool result goes first (its key is the more specific).
        let (answer, plan) = (&s.rules[0], &s.rules[1]);
        assert!(plan.when.matches(&request("What is 1+1? (no)", &[])));
        assert!(!plan.when.matches(&request("What is 1+1? (no) ", &[])));
        assert!(!answer.when.matches(&request("What is 1+1? (no)", &[])));
        assert!(answer.when.matches(&request("What is 1+1? (no)", &["2"])));
        // Arguments that are not the compact form stay the server's text verbatim.
        assert_eq!(
            plan.replies[0].tool_calls[0].arguments,
            Some(Value::String(r#"{"a": 1}"#.into()))
        );
        assert_eq!(answer.replies[0].text.as_deref(), Some("no"));
    }

    #[test]
    fn multi_line_and_long_texts_survive_the_yaml_round_trip() {
        let r = Redactor::default();
        let user = format!(
            "Tool `calculator` returned:\n{{\"expression\":\"42.5 + 180\",\"result\":222.5}}\n\n  indented {}",
            "long ".repeat(40)
        );
        let mut rec = Recording::new("x.yaml".into());
        let c = Captured {
            text: "line one\nline two: yes\n".into(),
            ..Captured::default()
        };
        rec.add(
            1,
            Key::of(&request(&user, &[]), &r),
            Answer::Reply(reply_out(&c, &r)),
        );
        let yaml = rec.render(&r).unwrap();
        let s = Scenario::from_yaml_str(&yaml).unwrap();
        assert!(s.rules[0].when.matches(&request(&user, &[])), "{yaml}");
        assert_eq!(
            s.rules[0].replies[0].text.as_deref(),
            Some("line one\nline two: yes\n"),
            "{yaml}"
        );
    }

    #[test]
    fn the_same_request_answered_differently_becomes_a_sequence() {
        let r = Redactor::default();
        let mut rec = Recording::new("x.json".into());
        for (n, t) in [(1, "a"), (2, "b")] {
            let c = Captured {
                text: t.into(),
                ..Captured::default()
            };
            rec.add(
                n,
                Key::of(&request("hi", &[]), &r),
                Answer::Reply(reply_out(&c, &r)),
            );
        }
        let s = Scenario::from_json_str(&rec.render(&r).unwrap()).unwrap();
        assert_eq!(s.rules.len(), 1);
        assert_eq!(s.rules[0].replies.len(), 2);
    }

    #[test]
    fn a_refusal_becomes_a_status_fault_with_the_servers_message() {
        let r = Redactor::default();
        let mut rec = Recording::new("x.yaml".into());
        let body = br#"{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}"#;
        let refusal = RefusalOut::from_answer(400, body, &r);
        rec.add(
            1,
            Key::of(&request("hi", &[]), &r),
            Answer::Refusal(refusal),
        );
        let s = Scenario::from_yaml_str(&rec.render(&r).unwrap()).unwrap();
        let fault = s.rules[0].fault.as_ref().expect("a fault");
        assert!(
            format!("{fault:?}").contains("requires --jinja"),
            "{fault:?}"
        );
        assert!(s.rules[0].replies.is_empty());
    }
}
