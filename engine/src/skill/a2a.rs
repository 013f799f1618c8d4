//! The A2A projection of compiled skills (seed 001): an [`AgentSkill`] per skill, and the
//! `Published` skills of a registry for a card. The card's types, their v1.0/v0.3 reading and
//! validity rules are the contract `skillet_core::card` defines.

pub(crate) use skillet_core::card::{AgentCard, AgentSkill, CardError};

use super::compiled::CompiledSkill;
use super::registry::Registry;

/// Projects a compiled skill.
pub(crate) fn agent_skill(skill: &CompiledSkill) -> AgentSkill {
    let def = &skill.spec;
    AgentSkill {
        id: skill.a2a.id.clone(),
        name: skill
            .a2a
            .display_name
            .clone()
            .unwrap_or_else(|| def.name.clone()),
        description: def.description.clone(),
        tags: skill.a2a.card_tags(def.category.as_deref()),
        examples: skill.a2a.examples.clone(),
        input_modes: skill.a2a.input_modes.clone(),
        output_modes: skill.a2a.output_modes.clone(),
        security_requirements: skill.a2a.security_requirements.clone(),
    }
}

/// Every `Published` skill of `registry` projected, in name order.
pub(crate) fn published_skills(registry: &Registry) -> Vec<AgentSkill> {
    registry
        .skills()
        .iter()
        .filter(|s| s.is_runnable())
        .map(|s| agent_skill(&s.compiled))
        .collect()
}
