//! Typed tools: the generated schema is what the model is offered, the closure gets decoded
//! arguments, and arguments that do not fit are answered to the model as tool errors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use skillet_engine::deadline::Deadline;
use skillet_engine::events::EventEmitter;
use skillet_engine::tools::{Tool, ToolContext, ToolError};
use skillet_engine::{Skillet, input_schema_for, tool_fn};
use tokio_util::sync::CancellationToken;

use crate::common::*;

/// A forecast request.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// How many days ahead.
    days: u8,
    /// Celsius or Fahrenheit.
    #[serde(default)]
    unit: Option<Unit>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize)]
struct Weather {
    sky: &'static str,
    high: i32,
}

type Seen = Arc<Mutex<Vec<Forecast>>>;

fn forecast_tool(seen: &Seen) -> Arc<skillet_engine::tools::FnTool> {
    let seen = seen.clone();
    tool_fn(
        "forecast",
        "The weather ahead in a city",
        move |args: Forecast| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args);
                Ok(Weather {
                    sky: "sunny",
                    high: 24,
                })
            }
        },
    )
}

const SKILL: &str = "---\nname: trip\ndescription: Plans a trip.\nmetadata:\n  a2e-template: literal\n  a2e-tools: '[\"forecast\"]'\n---\nYou plan trips. Check the forecast.\n";

fn scenario(arguments: &str) -> String {
    format!(
        r#"
rules:
  - when: {{ system_contains: "You plan trips", tool_results: false }}
    reply:
      tool_calls:
        - name: forecast
          arguments: {arguments}
  - when: {{ system_contains: "You plan trips", tool_results: true }}
    reply: {{ text: "Pack sunglasses." }}
"#
    )
}

#[test]
fn the_schema_is_generated_from_the_argument_type() {
    let schema = input_schema_for::<Forecast>();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["city", "days"]));
    assert_eq!(schema["properties"]["city"]["type"], "string");
    assert_eq!(schema["properties"]["city"]["description"], "The city.");
    assert_eq!(schema["properties"]["days"]["maximum"], 255, "u8's range");
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    assert!(
        schema.get("$defs").is_none(),
        "subschemas are inlined: {schema}"
    );
}

#[tokio::test]
async fn the_model_is_offered_the_generated_schema_and_the_tool_gets_decoded_arguments() {
    let server = start_mock(&scenario(r#"{ city: "Lisbon", days: 3, unit: celsius }"#)).await;
    let seen = Seen::default();
    let dir = skills(&[("trip", SKILL)]);
    let skillet = Skillet::builder()
        .skills_dir(dir.path())
        .default_spec(mock_spec(&server))
        .tool(forecast_tool(&seen))
        .build()
        .unwrap();

    let output = skillet
        .run("trip", json!({"prompt": "Lisbon in 3 days?"}))
        .await
        .unwrap();

    assert_eq!(output.data, json!("Pack sunglasses."));
    assert_eq!(output.turns, 2);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Forecast {
            city: "Lisbon".into(),
            days: 3,
            unit: Some(Unit::Celsius)
        }]
    );
    let bodies = chat_bodies(&server);
    let offered = &bodies[0]["tools"][0]["function"];
    assert_eq!(offered["name"], "forecast");
    assert_eq!(offered["parameters"], input_schema_for::<Forecast>());
    assert_eq!(
        tool_results_in(&bodies[1]),
        vec![r#"{"sky":"sunny","high":24}"#.to_owned()],
        "the output went back serialized"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_a_tool_error_and_the_tool_does_not_run() {
    let server = start_mock(&scenario(r#"{ city: 5, days: 300 }"#)).await;
    let seen = Seen::default();
    let dir = skills(&[("trip", SKILL)]);
    let skillet = Skillet::builder()
        .skills_dir(dir.path())
        .default_spec(mock_spec(&server))
        .tool(forecast_tool(&seen))
        .build()
        .unwrap();

    let output = skillet.run("trip", json!({"prompt": "x"})).await.unwrap();

    assert_eq!(output.data, json!("Pack sunglasses."), "the run went on");
    assert!(seen.lock().unwrap().is_empty());
    let results = tool_results_in(&chat_bodies(&server)[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("invalid arguments for `forecast`"),
        "{results:?}"
    );
    assert!(
        results[0].contains("/city") && results[0].contains("/days"),
        "{results:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_decode_failure_past_the_schema_is_a_tool_error_naming_the_tool() {
    let seen = Seen::default();
    let tool = forecast_tool(&seen);
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        deadline: Deadline::after(Duration::from_secs(5)),
        events: EventEmitter::new("req", None, 10),
        call_id: "call-1".into(),
    };
    let error = tool
        .call(json!({"city": "Lisbon", "days": "three"}), ctx)
        .await
        .unwrap_err();
    match error {
        ToolError::Failed(message) => {
            assert!(
                message.starts_with("invalid arguments for `forecast`"),
                "{message}"
            );
            assert!(
                message.contains("days") || message.contains("string"),
                "{message}"
            );
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(seen.lock().unwrap().is_empty());
}
