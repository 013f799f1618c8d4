//! The A2A Agent Card as the host serves it: the service's card (built from the registry by the
//! `skill` module), completed with where this host listens, and checked against the A2A rules a
//! client relies on (seed `001`): at least one skill, every skill with non-empty `tags`, and the
//! card's `defaultInputModes` / `defaultOutputModes` present.
//!
//! Building the card from skills is not done here; this module only adds the transport's URL and
//! reports problems.

use serde_json::{Value, json};

/// The `protocolBinding` this host advertises for its `POST /a2e` endpoint. A2A v1.0 leaves the
/// binding an open string; the core bindings (`JSONRPC`, `GRPC`, `HTTP+JSON`) are A2A itself,
/// which this endpoint does not speak, so it names the protocol it does speak.
pub(crate) const A2E_BINDING: &str = "A2E";

/// Returns `card` with a `supportedInterfaces` entry for `a2e_url` when the card names no
/// interface yet (and `a2e_url` is known).
pub(crate) fn complete_card(mut card: Value, a2e_url: Option<&str>) -> Value {
    let (Some(url), Some(object)) = (a2e_url, card.as_object_mut()) else {
        return card;
    };
    let has_interfaces = object
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .is_some_and(|list| !list.is_empty());
    if !has_interfaces {
        object.insert(
            "supportedInterfaces".to_owned(),
            json!([{"url": url, "protocolBinding": A2E_BINDING, "protocolVersion": "1.0"}]),
        );
    }
    card
}

/// Every way `card` breaks the A2A rules above, as `location: reason` lines (empty: valid).
pub fn card_problems(card: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for field in ["name", "description", "version"] {
        if card
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            problems.push(format!("{field}: missing or empty"));
        }
    }
    for field in ["defaultInputModes", "defaultOutputModes"] {
        if card
            .get(field)
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            problems.push(format!("{field}: missing or empty"));
        }
    }
    match card.get("skills").and_then(Value::as_array) {
        None => problems.push("skills: missing".to_owned()),
        Some(skills) if skills.is_empty() => {
            problems.push("skills: empty (an A2A card needs at least one skill)".to_owned());
        }
        Some(skills) => {
            for (i, skill) in skills.iter().enumerate() {
                let id = skill.get("id").and_then(Value::as_str).unwrap_or("?");
                if skill
                    .get("tags")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    problems.push(format!("skills[{i}] ({id}).tags: missing or empty"));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_a2e_interface_is_added_only_when_the_card_names_none() {
        let card = complete_card(json!({"name": "x"}), Some("http://127.0.0.1:1/a2e"));
        assert_eq!(
            card["supportedInterfaces"][0]["url"],
            "http://127.0.0.1:1/a2e"
        );
        let own = json!({"supportedInterfaces": [{"url": "https://mine"}]});
        assert_eq!(complete_card(own.clone(), Some("http://other")), own);
    }

    #[test]
    fn a_card_without_skills_or_with_an_untagged_skill_is_reported() {
        let empty = json!({"name": "n", "description": "d", "version": "1",
            "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
            "skills": []});
        assert_eq!(card_problems(&empty).len(), 1);
        let untagged = json!({"name": "n", "description": "d", "version": "1",
            "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
            "skills": [{"id": "s", "tags": []}]});
        assert_eq!(
            card_problems(&untagged),
            ["skills[0] (s).tags: missing or empty"]
        );
    }
}
