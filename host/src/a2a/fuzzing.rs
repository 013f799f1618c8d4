//! The fuzzing entry (`fuzz/a2a_jsonrpc`): one `POST /a2a` body through the same decoding the
//! binding does before anything runs — the JSON-RPC envelope ([`jsonrpc::decode`]), the method's
//! params (the methods' own `params` and `historyLength` checks), and for `SendMessage` /
//! `SendStreamingMessage` the message's skill selection and part → argument mapping
//! ([`SkillIndex::resolve`]; the input schema is the engine's to check, not fuzzed here). Built only with
//! the `fuzzing` feature (the fuzz crate's); not an API.
//!
//! Not here: running the call, the task store, HTTP (`methods`, `store`, `http`).

use serde_json::Value;

pub use super::input::{SkillIndex, SkillInvocation};
use super::jsonrpc::{self, RpcError};
use super::jsonrpc::{history_length, params};
use super::wire::{GetTaskParams, SendMessageParams, TaskIdParams};

/// Decodes `body` as the binding would: `Ok(Some(call))` for a message that selects a skill with
/// valid arguments, `Ok(None)` for another method whose params decode, `Err` with the JSON-RPC
/// error answer otherwise.
pub fn decode_request(index: &SkillIndex, body: &[u8]) -> Result<Option<SkillInvocation>, Value> {
    let request = jsonrpc::decode(body).map_err(|(id, error)| jsonrpc::error(&id, &error))?;
    let answer = |error: RpcError| jsonrpc::error(&request.id, &error);
    match request.method.as_str() {
        "SendMessage" | "SendStreamingMessage" => {
            let send: SendMessageParams = params(request.params.clone()).map_err(answer)?;
            let configuration = send.configuration.unwrap_or_default();
            history_length(configuration.history_length).map_err(answer)?;
            index
                .resolve(
                    &send.message,
                    send.metadata.as_ref(),
                    |_| true,
                    |_, _| Ok(()),
                )
                .map(Some)
                .map_err(|unresolved| answer(unresolved.unknown_skill()))
        }
        "GetTask" => {
            let get: GetTaskParams = params(request.params.clone()).map_err(answer)?;
            history_length(get.history_length).map_err(answer)?;
            Ok(None)
        }
        "CancelTask" | "SubscribeToTask" => {
            params::<TaskIdParams>(request.params.clone()).map_err(answer)?;
            Ok(None)
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_envelopes_and_params_are_answered_with_the_request_id_when_known() {
        let index = SkillIndex::default();
        let answer = decode_request(&index, b"[1]").unwrap_err();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, (-32600).into())
        );
        let get = br#"{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":"t","historyLength":-1}}"#;
        let answer = decode_request(&index, get).unwrap_err();
        assert_eq!(answer["id"], "g");
        assert_eq!(answer["error"]["code"], -32602);
        let send = br#"{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
        let answer = decode_request(&index, send).unwrap_err();
        assert_eq!(
            answer["error"]["code"], -32602,
            "no skill to select: {answer}"
        );
        let cancel = br#"{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"t"}}"#;
        assert_eq!(decode_request(&index, cancel), Ok(None));
    }
}
