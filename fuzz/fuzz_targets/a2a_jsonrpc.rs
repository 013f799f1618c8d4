//! Fuzz target: one A2A `POST /a2a` body through the binding's decoding (JSON-RPC envelope,
//! method params, skill selection and part → argument mapping with input-schema validation),
//! against the bundled skills. Nothing panics; a refusal is a JSON-RPC 2.0 error answer with an
//! integer code; an accepted message names one of the indexed skills.
#![no_main]

use std::path::Path;
use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use skillet_engine::run::Executor;
use skillet_engine::skill::{Registry, load_skill_dir};
use skillet_host::a2a::fuzzing::{SkillIndex, decode_request};

static INDEX: LazyLock<SkillIndex> = LazyLock::new(|| {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    let registry = Registry::new();
    for name in ["summarize", "code-review", "expense-report", "table-report"] {
        let skill = load_skill_dir(
            &skills.join(name),
            skillet_engine::skill::SkillSource::System,
        )
        .expect("bundled skill loads");
        let refused = registry.register_all([skill]);
        assert!(refused.is_empty(), "{refused:?}");
    }
    let executor = Executor::builder()
        .skills(Arc::new(registry))
        .build()
        .expect("an executor without a provider builds");
    let index = SkillIndex::build(&executor);
    assert!(
        !index.ids().is_empty(),
        "the bundled skills are on the card"
    );
    index
});

fuzz_target!(|data: &[u8]| {
    match decode_request(&INDEX, data) {
        Ok(Some(call)) => assert!(INDEX.ids().contains(&call.skill_id.as_str()), "{call:?}"),
        Ok(None) => {}
        Err(answer) => {
            assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
            assert!(answer["error"]["code"].is_i64(), "{answer}");
        }
    }
});
