use serde_json::json;

use super::*;
use crate::kind::ProviderKind;
use crate::shared_json::SharedJson;
use crate::types::{ChatMessage, ToolSpec};

fn request(tools: bool, phase: TurnPhase) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        tools: if tools {
            vec![ToolSpec {
                name: "calculator".into(),
                description: "math".into(),
                parameters: SharedJson::new(json!({"type": "object"})),
            }]
        } else {
            Vec::new()
        },
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: SharedJson::new(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                "required": ["a"], "additionalProperties": false}),
            ),
        }),
        phase,
        ..Default::default()
    }
}

fn modes(output: OutputMode, tools: ToolMode) -> Modes {
    Modes { output, tools }
}

fn no_union() -> Option<ResponseSchema> {
    None
}

#[test]
fn auto_starts_from_the_best_mode_of_each_kind() {
    let cell = |kind: ProviderKind| {
        ModeCell::new(kind.capabilities(), OutputMode::Auto, ToolMode::Auto).current(None)
    };
    assert_eq!(
        cell(ProviderKind::OpenaiCompatible).output,
        OutputMode::JsonSchema
    );
    assert_eq!(cell(ProviderKind::Ollama).output, OutputMode::JsonSchema);
    assert_eq!(cell(ProviderKind::Anthropic).output, OutputMode::Tool);
    assert_eq!(cell(ProviderKind::Openai).tools, ToolMode::Native);
}

#[test]
fn a_refused_mode_steps_down_the_ladder_and_is_remembered() {
    let cell = ModeCell::new(
        ProviderKind::OpenaiCompatible.capabilities(),
        OutputMode::Auto,
        ToolMode::Auto,
    );
    let first = cell.current(None);
    let second = cell
        .step_down(first, Feature::StructuredOutput, true)
        .unwrap();
    assert_eq!(second.output, OutputMode::JsonObject);
    assert_eq!(cell.current(None), second, "remembered");
    let third = cell.step_down(second, Feature::Tools, true).unwrap();
    assert_eq!(third, modes(OutputMode::JsonObject, ToolMode::Prompted));
    // With prompted tools the answer tool is skipped: json_object -> prompted.
    let fourth = cell
        .step_down(third, Feature::StructuredOutput, true)
        .unwrap();
    assert_eq!(fourth.output, OutputMode::Prompted);
    assert_eq!(
        cell.step_down(fourth, Feature::StructuredOutput, true),
        None,
        "nothing left"
    );
    assert_eq!(cell.step_down(fourth, Feature::Tools, true), None);
}

#[test]
fn a_mode_set_by_hand_is_never_changed_and_a_skill_hint_only_replaces_auto() {
    let fixed = ModeCell::new(
        ProviderKind::OpenaiCompatible.capabilities(),
        OutputMode::JsonSchema,
        ToolMode::Native,
    );
    let now = fixed.current(Some(OutputMode::Prompted));
    assert_eq!(now, modes(OutputMode::JsonSchema, ToolMode::Native));
    assert_eq!(fixed.step_down(now, Feature::StructuredOutput, true), None);
    assert_eq!(fixed.step_down(now, Feature::Tools, true), None);
    let auto = ModeCell::new(
        ProviderKind::OpenaiCompatible.capabilities(),
        OutputMode::Auto,
        ToolMode::Auto,
    );
    assert_eq!(
        auto.current(Some(OutputMode::Prompted)).output,
        OutputMode::Prompted
    );
}

#[test]
fn a_grammar_server_with_native_tools_enforces_the_schema_only_when_the_answer_is_due() {
    let kind = ProviderKind::OpenaiCompatible.capabilities();
    let m = modes(OutputMode::JsonSchema, ToolMode::Native);
    let open = TurnPlan::new(kind, m, &request(true, TurnPhase::Open), no_union);
    assert_eq!(open.output, OutputMode::None, "tools stay reachable");
    assert!(open.native_tools && open.schema.is_none());
    let answer = TurnPlan::new(kind, m, &request(true, TurnPhase::Answer), no_union);
    assert_eq!(answer.output, OutputMode::JsonSchema);
    let last = TurnPlan::new(kind, m, &request(true, TurnPhase::Final), no_union);
    assert_eq!(last.output, OutputMode::JsonSchema);
    let no_tools = TurnPlan::new(kind, m, &request(false, TurnPhase::Open), no_union);
    assert_eq!(no_tools.output, OutputMode::JsonSchema);
    assert!(!no_tools.strict, "strict only on OpenAI itself");
    // OpenAI itself keeps tools and the schema apart: enforced every turn, strict when it fits.
    let openai = TurnPlan::new(
        ProviderKind::Openai.capabilities(),
        m,
        &request(true, TurnPhase::Open),
        no_union,
    );
    assert_eq!(openai.output, OutputMode::JsonSchema);
    assert!(openai.strict);
}

#[test]
fn prompted_tools_constrain_the_turn_to_the_union_where_the_server_has_a_json_mode() {
    let kind = ProviderKind::OpenaiCompatible.capabilities();
    let union = || {
        Some(ResponseSchema {
            name: "u".into(),
            schema: SharedJson::new(json!({"oneOf": []})),
        })
    };
    let json_object = modes(OutputMode::JsonObject, ToolMode::Prompted);
    let plan = TurnPlan::new(kind, json_object, &request(true, TurnPhase::Open), union);
    assert!(plan.prompted_tools && !plan.native_tools);
    assert_eq!(plan.output, OutputMode::JsonObject);
    assert_eq!(plan.schema.unwrap().name, "u");
    let prompted = modes(OutputMode::Prompted, ToolMode::Prompted);
    let plan = TurnPlan::new(kind, prompted, &request(true, TurnPhase::Open), union);
    assert_eq!(plan.output, OutputMode::None);
    // The answer tool needs native tools: with prompted tools it is not used.
    let tool = modes(OutputMode::Tool, ToolMode::Prompted);
    let plan = TurnPlan::new(kind, tool, &request(true, TurnPhase::Open), union);
    assert_eq!(plan.output, OutputMode::None);
}

#[test]
fn kinds_without_a_mechanism_fall_back_to_the_nearest() {
    let m = modes(OutputMode::JsonSchema, ToolMode::Native);
    let anthropic = TurnPlan::new(
        ProviderKind::Anthropic.capabilities(),
        m,
        &request(true, TurnPhase::Open),
        no_union,
    );
    assert_eq!(anthropic.output, OutputMode::Tool);
    let tool = modes(OutputMode::Tool, ToolMode::Native);
    let ollama = TurnPlan::new(
        ProviderKind::Ollama.capabilities(),
        tool,
        &request(false, TurnPhase::Open),
        no_union,
    );
    assert_eq!(ollama.output, OutputMode::None);
}

#[test]
fn every_turn_carries_the_schema_read_by_the_model_or_held_by_a_grammar_or_not_at_all() {
    let carried = |kind: ProviderKind, output: OutputMode, tools: ToolMode, with_tools: bool| {
        TurnPlan::schema_every_turn(kind.capabilities(), modes(output, tools), with_tools)
    };
    use OutputMode::{JsonObject, JsonSchema, Prompted, Tool};
    use ProviderKind::{Anthropic, Gemini, Ollama, Openai, OpenaiCompatible};
    use SchemaDelivery::{NotEveryTurn, Read, Shape};
    // The model reads `json_schema` on OpenAI, and an answer tool anywhere.
    assert_eq!(carried(Openai, JsonSchema, ToolMode::Native, true), Read);
    assert_eq!(carried(Anthropic, Tool, ToolMode::Native, true), Read);
    assert_eq!(
        carried(OpenaiCompatible, Tool, ToolMode::Native, true),
        Read
    );
    // A grammar holds the shape on every turn only without native tools (Gemini alike).
    assert_eq!(
        carried(OpenaiCompatible, JsonSchema, ToolMode::Native, false),
        Shape
    );
    assert_eq!(carried(Gemini, JsonSchema, ToolMode::Native, false), Shape);
    assert_eq!(
        carried(Ollama, JsonSchema, ToolMode::Native, true),
        NotEveryTurn
    );
    // json_object and prompted modes carry no schema the model reads.
    assert_eq!(
        carried(Openai, JsonObject, ToolMode::Native, false),
        NotEveryTurn
    );
    assert_eq!(
        carried(Openai, Prompted, ToolMode::Native, false),
        NotEveryTurn
    );
    // Prompted tools describe the calls in the instructions: the answer's format goes there too.
    assert_eq!(
        carried(Openai, JsonSchema, ToolMode::Prompted, true),
        NotEveryTurn
    );
    assert_eq!(carried(Openai, JsonSchema, ToolMode::Prompted, false), Read);
}
