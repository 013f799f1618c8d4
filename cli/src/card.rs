//! `skillet card [--url URL]`: prints the A2A Agent Card of the loaded skills (pretty JSON on
//! stdout); exits 1, saying why on stderr, when no valid card can be made (no skills, a skill
//! without tags).

use std::io::Write;

use super::args::{CardArgs, GlobalArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use skillet_engine::service::SkillService;

/// Runs the command.
pub async fn card(
    global: &GlobalArgs,
    args: &CardArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let parts = setup::load_parts(global, console, None).await?;
    let mut identity = parts.config.card.identity(None);
    if let Some(url) = &args.url {
        identity.url.clone_from(url);
    }
    // The card needs no model: the executor is built without a default provider.
    let executor = setup::build_executor(&parts, None, identity)?;
    let card = executor.agent_card();
    parts.tools.shutdown_toolkits().await;
    match card {
        Ok(card) => {
            // A card of strings, lists and maps always serializes.
            let text = serde_json::to_string_pretty(&card).unwrap_or_default();
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            Ok(Outcome::Success)
        }
        Err(problem) => {
            console.warn(format!("agent card: {problem}"));
            Ok(Outcome::Failed)
        }
    }
}
