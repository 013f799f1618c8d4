//! Deciding the answer to one chat request: queued faults first, then scenario rules in order,
//! then the default (scenario `default`, else schema synthesis, else echo). Owns the mutable
//! per-server state that makes scripts progress: rule use counters, fault firings, id counters
//! and the seeded generator.
//!
//! Wire formats are not known here; the result is a neutral [`Decision`].

use serde_json::{Value, json};

use crate::faults::{Fault, FaultKind, SeededRng, ToolCallProblem};
use crate::reply::{Arguments, Finish, Reply, ToolCall, Usage};
use crate::request::{ChatRequest, Endpoint, OutputShape, estimate_tokens};
use crate::scenario::{ReplySpec, Scenario, Timing};
use crate::synth::synthesize;

/// The answer chosen for a request.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    pub reply: Reply,
    pub fault: Option<Fault>,
    /// Rule timing if the rule set one, else the server's.
    pub timing: Timing,
    /// `matched_rule` for the journal.
    pub rule: String,
}

/// The rule (or default) that answers, before its reply is resolved.
struct Chosen {
    rule: String,
    spec: Option<ReplySpec>,
    fault: Option<Fault>,
    timing: Option<Timing>,
}

/// Mutable scripting state of one server.
#[derive(Debug)]
pub(crate) struct Script {
    scenario: Scenario,
    rule_uses: Vec<u32>,
    rule_fault_fires: Vec<u32>,
    default_fault_fires: u32,
    queued: Vec<(Fault, u32)>,
    rng: SeededRng,
    config_seed: u64,
    next_response: u64,
    next_call: u64,
}

impl Script {
    pub(crate) fn new(scenario: Scenario, config_seed: u64) -> Self {
        let seed = scenario.seed.unwrap_or(config_seed);
        let rules = scenario.rules.len();
        Script {
            scenario,
            rule_uses: vec![0; rules],
            rule_fault_fires: vec![0; rules],
            default_fault_fires: 0,
            queued: Vec::new(),
            rng: SeededRng::new(seed),
            config_seed,
            next_response: 0,
            next_call: 0,
        }
    }

    pub(crate) fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Back to the state right after start: counters, queue and generator reset.
    pub(crate) fn reset(&mut self) {
        let scenario = std::mem::take(&mut self.scenario);
        *self = Script::new(scenario, self.config_seed);
    }

    /// Replaces the scenario and resets.
    pub(crate) fn replace(&mut self, scenario: Scenario) {
        *self = Script::new(scenario, self.config_seed);
    }

    pub(crate) fn push_fault(&mut self, fault: Fault) {
        self.queued.push((fault, 0));
    }

    /// Picks the answer for `req`, advancing counters.
    pub(crate) fn decide(
        &mut self,
        req: &ChatRequest,
        created: u64,
        server_timing: Timing,
    ) -> Decision {
        let queued = self.take_queued_fault(req);
        let mut chosen: Option<Chosen> = None;
        for (i, rule) in self.scenario.rules.iter().enumerate() {
            if rule.limit().is_some_and(|l| self.rule_uses[i] >= l) || !rule.when.matches(req) {
                continue;
            }
            let rule_fault = if queued.is_none() {
                fire(&rule.fault, &mut self.rule_fault_fires[i], &mut self.rng)
            } else {
                None
            };
            if rule_fault.is_none() && rule.replies.is_empty() {
                continue;
            }
            self.rule_uses[i] += 1;
            let nth = usize::try_from(self.rule_uses[i] - 1).unwrap_or(usize::MAX);
            let reply = rule
                .replies
                .get(nth.min(rule.replies.len().saturating_sub(1)))
                .cloned();
            let name = rule.name.clone().unwrap_or_else(|| format!("rule[{i}]"));
            chosen = Some(Chosen {
                rule: name,
                spec: reply,
                fault: rule_fault,
                timing: rule.timing,
            });
            break;
        }
        let Chosen {
            rule,
            spec,
            fault: rule_fault,
            timing,
        } = match chosen {
            Some(c) => c,
            None => {
                let default = self.scenario.default.clone().unwrap_or_default();
                let fault = if queued.is_none() {
                    fire(&default.fault, &mut self.default_fault_fires, &mut self.rng)
                } else {
                    None
                };
                Chosen {
                    rule: "default".to_owned(),
                    spec: default.replies.first().cloned(),
                    fault,
                    timing: default.timing,
                }
            }
        };
        let fault = queued.or(rule_fault);
        let mut reply = self.resolve(spec.unwrap_or_default(), req, created);
        if let Some(Fault {
            kind: FaultKind::InvalidToolCall(problem),
            ..
        }) = &fault
        {
            self.break_tool_call(&mut reply, *problem, req);
        }
        Decision {
            reply,
            fault,
            timing: timing.unwrap_or(server_timing),
            rule,
        }
    }

    fn take_queued_fault(&mut self, req: &ChatRequest) -> Option<Fault> {
        let idx = self.queued.iter().position(|(f, fired)| {
            f.when.as_ref().is_none_or(|w| w.matches(req)) && *fired < f.times.unwrap_or(1)
        })?;
        // A queued fault that loses its draw stays queued for the next request.
        if !self.rng.chance(self.queued[idx].0.probability) {
            return None;
        }
        let (fault, fired) = &mut self.queued[idx];
        *fired += 1;
        let fault = fault.clone();
        if *fired >= fault.times.unwrap_or(1) {
            self.queued.remove(idx);
        }
        Some(fault)
    }

    fn call_id(&mut self, endpoint: Endpoint) -> String {
        self.next_call += 1;
        match endpoint {
            Endpoint::AnthropicMessages => format!("toolu_mock_{:04}", self.next_call),
            _ => format!("call_mock_{:04}", self.next_call),
        }
    }

    fn resolve(&mut self, spec: ReplySpec, req: &ChatRequest, created: u64) -> Reply {
        self.next_response += 1;
        let mut reply = Reply {
            seq: self.next_response,
            model: req.model.clone(),
            text: String::new(),
            tool_calls: Vec::new(),
            finish: Finish::Stop,
            usage: Usage {
                input: req.prompt_tokens(),
                output: 0,
                cached: None,
                cache_write: None,
                reasoning: None,
            },
            created,
            report_usage: true,
            tool_calls_at_index_zero: false,
            thinking: spec.thinking.clone(),
        };
        if spec.is_default() {
            self.default_answer(&mut reply, req);
        } else {
            reply.text = match (&spec.text, &spec.json) {
                (Some(t), _) => t.clone(),
                (None, Some(j)) => j.to_string(),
                (None, None) => String::new(),
            };
            for call in &spec.tool_calls {
                let arguments = match &call.arguments {
                    Some(Value::String(raw)) => Arguments::Raw(raw.clone()),
                    Some(v) => Arguments::Json(v.clone()),
                    None => Arguments::Json(tool_arguments(req, &call.name)),
                };
                let id = match &call.id {
                    Some(id) => id.clone(),
                    None => self.call_id(req.endpoint),
                };
                reply.tool_calls.push(ToolCall {
                    id,
                    name: call.name.clone(),
                    arguments,
                });
            }
        }
        if !reply.tool_calls.is_empty() {
            reply.finish = Finish::ToolCalls;
        }
        if let Some(f) = spec.finish {
            reply.finish = f;
        }
        let out_chars = reply.text.chars().count()
            + reply
                .tool_calls
                .iter()
                .map(|c| c.arguments.to_wire_string().len())
                .sum::<usize>();
        reply.usage.output = estimate_tokens(out_chars);
        if let Some(u) = spec.usage {
            reply.usage = u;
        }
        reply
    }

    /// The built-in answer: schema instance, forced tool call, JSON object, or echo text.
    fn default_answer(&mut self, reply: &mut Reply, req: &ChatRequest) {
        match &req.output {
            OutputShape::Schema(schema) => reply.text = synthesize(schema).to_string(),
            OutputShape::Json => reply.text = json!({ "reply": echo(req) }).to_string(),
            OutputShape::ForcedTool(name) => {
                let id = self.call_id(req.endpoint);
                let arguments = Arguments::Json(tool_arguments(req, name));
                reply.tool_calls.push(ToolCall {
                    id,
                    name: name.clone(),
                    arguments,
                });
            }
            OutputShape::Text => reply.text = echo(req),
        }
    }

    fn break_tool_call(&mut self, reply: &mut Reply, problem: ToolCallProblem, req: &ChatRequest) {
        let target = reply
            .tool_calls
            .first()
            .map(|c| c.name.clone())
            .or_else(|| req.tools.first().map(|t| t.name.clone()))
            .unwrap_or_else(|| "no_such_tool".to_owned());
        let (name, arguments) = match problem {
            ToolCallProblem::UnknownTool => ("no_such_tool".to_owned(), Arguments::Json(json!({}))),
            ToolCallProblem::NotJson => (target, Arguments::Raw("{\"unterminated\": ".to_owned())),
            ToolCallProblem::SchemaViolation => {
                let schema = req
                    .tool(&target)
                    .map(|t| t.parameters.clone())
                    .unwrap_or(Value::Null);
                (target, Arguments::Json(violating_arguments(&schema)))
            }
        };
        let id = self.call_id(req.endpoint);
        reply.text.clear();
        reply.tool_calls = vec![ToolCall {
            id,
            name,
            arguments,
        }];
        reply.finish = Finish::ToolCalls;
    }
}

/// Whether `fault` fires now; counts the firing.
fn fire(fault: &Option<Fault>, fired: &mut u32, rng: &mut SeededRng) -> Option<Fault> {
    let f = fault.as_ref()?;
    if f.times.is_some_and(|t| *fired >= t) || !rng.chance(f.probability) {
        return None;
    }
    *fired += 1;
    Some(f.clone())
}

/// Synthesized arguments for an offered tool; `{}` for a tool the request did not offer.
fn tool_arguments(req: &ChatRequest, name: &str) -> Value {
    req.tool(name)
        .map_or_else(|| json!({}), |t| synthesize(&t.parameters))
}

/// Deterministic text derived from the request.
fn echo(req: &ChatRequest) -> String {
    let user = req.last_user_text();
    if user.is_empty() {
        return "This is a mock reply.".to_owned();
    }
    let short: String = user.chars().take(80).collect();
    let ellipsis = if user.chars().count() > 80 { "…" } else { "" };
    format!("This is a mock reply to: {short}{ellipsis}")
}

/// Arguments that break `schema`: drop the required properties, or give the first property the
/// wrong type, or (with no properties) send an array instead of an object.
fn violating_arguments(schema: &Value) -> Value {
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if required {
        return json!({});
    }
    let first = schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.iter().next());
    match first {
        Some((name, prop)) => {
            let wrong = if prop.get("type").and_then(Value::as_str) == Some("string") {
                json!(12345)
            } else {
                json!("not-the-right-type")
            };
            json!({ name.clone(): wrong })
        }
        None => json!(["not", "an", "object"]),
    }
}
