//! `skillet discover [--tag T]... [--category C]... [--json]`: the skills a host would advertise,
//! as a table or as the `skill/discover/resp` message.

use std::io::Write;

use super::args::{DiscoverArgs, GlobalArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use crate::protocol::{self, Message, SkillDiscoverResponse, SkillStatus};

/// Runs the command.
pub async fn discover(
    global: &GlobalArgs,
    args: &DiscoverArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let parts = setup::load_parts(global, console, None).await?;
    let skills = parts.skills.discover(&args.tags, &args.categories);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let response = SkillDiscoverResponse::new(protocol::new_id(), skills);
        let _ = writeln!(
            stdout,
            "{}",
            protocol::encode(&Message::DiscoverResponse(response))
        );
        return Ok(Outcome::Success);
    }
    if skills.is_empty() {
        console.notice("no skills match");
        return Ok(Outcome::Success);
    }
    for skill in &skills {
        let tags = skill.tags.clone().unwrap_or_default().join(", ");
        let category = skill.category.as_deref().unwrap_or("-");
        let _ = writeln!(
            stdout,
            "{}  {}  {:?}  category: {category}  tags: {tags}",
            skill.name, skill.version, skill.status
        );
        let _ = writeln!(stdout, "    {}", skill.description);
        if skill.status == SkillStatus::Blocked {
            let reason = skill
                .metadata
                .as_ref()
                .and_then(|m| m.get("blocked_reason"))
                .and_then(|r| r.as_str())
                .unwrap_or("missing dependencies");
            let _ = writeln!(stdout, "    blocked: {reason}");
        }
    }
    Ok(Outcome::Success)
}
