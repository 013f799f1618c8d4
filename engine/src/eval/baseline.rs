//! The baseline of `skillet eval --baseline`: the same skill without its instructions, so each
//! case also runs as the bare request to the same model with the same tools — the question
//! every skill author asks ("does the skill help?"), as skill-creator's `without_skill` runs and
//! SkillsBench's with/without protocol ask it.
//!
//! What stays: the name (so cases call it unchanged), the input and output schemas (the call's
//! contract: a host would still validate the answer), the declared tools and toolkits, the
//! limits. What goes: the instructions (an empty system prompt) and the files beside `SKILL.md`
//! (references and scripts are part of the skill). Not here: running it (the CLI registers it
//! in a registry of its own and runs the plan on that).

use crate::skill::{CompiledSkill, TemplateMode};
use crate::template::Template;

/// `skill` without its instructions and its folder's files.
pub fn without_instructions(skill: &CompiledSkill) -> CompiledSkill {
    let mut bare = skill.clone();
    bare.template = Template::literal("");
    bare.template_mode = TemplateMode::Literal;
    bare.spec.instructions = String::new();
    bare.resources.files.clear();
    bare.resources.listing_cut = false;
    bare
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_keeps_the_contract_and_drops_the_instructions_and_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/summarize");
        let skill = crate::skill::load_skill_dir(&root, crate::skill::SkillSource::System)
            .expect("the bundled summarize skill loads");
        let bare = without_instructions(&skill);
        assert_eq!(bare.name(), skill.name());
        assert!(bare.output_schema.is_some() && bare.input_schema.is_some());
        let arguments = serde_json::json!({"text": "x"});
        assert!(!skill.render_instructions(&arguments).unwrap().is_empty());
        assert_eq!(bare.render_instructions(&arguments).unwrap(), "");
        assert!(bare.resources.files.is_empty());
    }
}
