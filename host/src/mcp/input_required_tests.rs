//! Tests of `input_required`: the round trips of one fake run through `PendingApprovals`.

use super::*;
use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use skillet_protocol::SkillResult;

fn call(arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new("gated").with_arguments(arguments)
}

fn retry(handle: &str, arguments: Value, reply: Option<Value>) -> CallToolRequestParams {
    let mut request = call(arguments);
    request.request_state = Some(handle.to_owned());
    request.input_responses = reply.map(|r| [(INPUT_KEY.to_owned(), r)].into());
    request
}

/// A fake run: asks once, then answers with the decision it got as its result's `echo`.
fn started() -> (Steps, CancellationToken) {
    let RoundTrips {
        approver,
        answered: done,
        steps,
        ..
    } = run(no_events());
    tokio::spawn(async move {
        let decision = approver
            .decide(ApprovalRequest {
                skill: "gated".into(),
                tool: "calculator".into(),
                call_id: "c1".into(),
                arguments: json!({"expression": "6*7"}),
            })
            .await;
        let echo = format!("{decision:?}");
        let data = Some(json!({ "echo": echo }));
        done(SkillCallResponse::result(
            "r",
            "gated",
            SkillResult::success(data, None, 1),
        ));
    });
    (steps, CancellationToken::new())
}

fn no_events() -> Arc<dyn EventSink> {
    Arc::new(Relay::default())
}

fn handle_of(response: &CallToolResponse) -> String {
    let CallToolResponse::InputRequired(asked) = response else {
        panic!("not input-required: {response:?}")
    };
    let question = serde_json::to_value(&asked.input_requests).unwrap();
    assert_eq!(question[INPUT_KEY]["method"], "elicitation/create");
    assert_eq!(question[INPUT_KEY]["params"]["mode"], "form");
    asked.request_state.clone().expect("a handle")
}

fn echo(response: &CallToolResponse) -> String {
    let CallToolResponse::Complete(result) = response else {
        panic!("not complete: {response:?}")
    };
    let content = result.structured_content.clone().unwrap_or_default();
    content["echo"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_question_is_asked_by_result_and_its_answer_resumes_the_same_run() {
    let pending = PendingApprovals::default();
    let stop = CancellationToken::new();
    let args = json!({"text": "6*7"});
    let (steps, run_token) = started();
    let binding = Binding::of(Some("alice"), &call(args.clone()));
    let first = pending
        .drive(steps, binding, run_token.clone(), &stop)
        .await
        .unwrap();
    let handle = handle_of(&first);
    assert!(!run_token.is_cancelled(), "the run waits, not cancelled");

    // No answer in the retry: the same question under the same handle.
    let again = pending
        .resume(
            Some("alice"),
            no_events(),
            retry(&handle, args.clone(), None),
            &stop,
        )
        .await
        .unwrap();
    assert_eq!(handle_of(&again), handle);

    let reply = json!({"action": "accept", "content": {"approve": false, "reason": "no"}});
    let done = pending
        .resume(
            Some("alice"),
            no_events(),
            retry(&handle, args.clone(), Some(reply)),
            &stop,
        )
        .await
        .unwrap();
    assert_eq!(echo(&done), r#"Denied { reason: Some("no") }"#);
    assert_eq!(pending.len(), 0, "a handle is used once");
}

#[tokio::test]
async fn a_handle_of_another_identity_or_call_or_none_is_invalid_params_and_the_question_waits() {
    let pending = PendingApprovals::default();
    let stop = CancellationToken::new();
    let args = json!({"text": "6*7"});
    let (steps, run_token) = started();
    let first = pending
        .drive(
            steps,
            Binding::of(Some("alice"), &call(args.clone())),
            run_token,
            &stop,
        )
        .await
        .unwrap();
    let handle = handle_of(&first);
    let approve = json!({"action": "accept", "content": {"approve": true}});
    for (owner, handle, args) in [
        (Some("bob"), handle.as_str(), args.clone()),
        (None, handle.as_str(), args.clone()),
        (Some("alice"), handle.as_str(), json!({"text": "1+1"})),
        (Some("alice"), "no-such-handle", args.clone()),
    ] {
        let error = pending
            .resume(
                owner,
                no_events(),
                retry(handle, args, Some(approve.clone())),
                &stop,
            )
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("without requestState"), "{error:?}");
    }
    // Not an elicitation result: -32602, and the question still waits.
    let error = pending
        .resume(
            Some("alice"),
            no_events(),
            retry(&handle, args.clone(), Some(json!("yes"))),
            &stop,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    let done = pending
        .resume(
            Some("alice"),
            no_events(),
            retry(&handle, args, Some(approve)),
            &stop,
        )
        .await
        .unwrap();
    assert_eq!(echo(&done), "Approved");
}

#[tokio::test]
async fn a_full_store_denies_the_next_question_and_an_expired_one_cancels_its_run() {
    let full = PendingApprovals::with_limits(1, PENDING_TTL);
    let stop = CancellationToken::new();
    let binding = Binding::of(None, &call(json!({})));
    let (steps, run_token) = started();
    handle_of(
        &full
            .drive(steps, binding.clone(), run_token, &stop)
            .await
            .unwrap(),
    );
    let (steps, run_token) = started();
    let denied = full
        .drive(steps, binding.clone(), run_token, &stop)
        .await
        .unwrap();
    assert!(echo(&denied).contains("too many approvals"), "{denied:?}");

    let expiring = PendingApprovals::with_limits(10, Duration::ZERO);
    let (steps, run_token) = started();
    let first = expiring
        .drive(steps, binding, run_token.clone(), &stop)
        .await
        .unwrap();
    let error = expiring
        .resume(
            None,
            no_events(),
            retry(&handle_of(&first), json!({}), None),
            &stop,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        run_token.is_cancelled(),
        "an expired question's run is cancelled"
    );
}

#[test]
fn only_a_client_declaring_form_elicitation_is_asked() {
    let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).unwrap();
    assert!(can_ask(Some(&caps(json!({"elicitation": {}})))));
    assert!(can_ask(Some(&caps(json!({"elicitation": {"form": {}}})))));
    assert!(!can_ask(Some(&caps(json!({"elicitation": {"url": {}}})))));
    assert!(!can_ask(Some(&caps(json!({})))));
    assert!(!can_ask(None));
}
