//! `skillet discover [--tag T]... [--category C]... [--json]`: the skills a host would advertise,
//! as a table or as the `skill/discover/resp` message.

use std::io::Write;

use super::args::{DiscoverArgs, GlobalArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use skillet_engine::tools::ToolkitStatus;
use skillet_protocol::{Message, SkillDiscoverResponse, SkillStatus};

/// Runs the command.
pub async fn discover(
    global: &GlobalArgs,
    args: &DiscoverArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let parts = setup::load_parts(global, console, None).await?;
    let skills = parts.skills.discover(&args.tags, &args.categories);
    let statuses = toolkit_statuses(&parts);
    parts.tools.shutdown_toolkits().await;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let response = SkillDiscoverResponse::new(skillet_protocol::new_id(), skills);
        let _ = writeln!(
            stdout,
            "{}",
            skillet_protocol::encode(&Message::DiscoverResponse(response))
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
        let toolkits: Vec<String> = skill
            .toolkits
            .iter()
            .flatten()
            .filter_map(|kit| kit.as_str().or_else(|| kit.get("name")?.as_str()))
            .map(|kit| match statuses.get(kit).cloned() {
                None => format!("{kit} (not configured)"),
                Some(ToolkitStatus::Failed(reason)) => format!("{kit} (failed: {reason})"),
                Some(status) => format!("{kit} ({})", format!("{status:?}").to_lowercase()),
            })
            .collect();
        if !toolkits.is_empty() {
            let _ = writeln!(stdout, "    toolkits: {}", toolkits.join(", "));
        }
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

/// Each configured toolkit's status, read before the command shuts the toolkits down.
fn toolkit_statuses(parts: &setup::HostParts) -> std::collections::HashMap<String, ToolkitStatus> {
    parts
        .tools
        .toolkits()
        .map(|kit| (kit.name().to_owned(), kit.status()))
        .collect()
}
