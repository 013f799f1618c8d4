//! `skillet card [--url URL]`: prints the A2A Agent Card of the loaded skills (pretty JSON on
//! stdout); exits 1, listing the problems on stderr, when it is not a valid card (no skills, a
//! skill without tags).

use std::io::Write;

use super::args::{CardArgs, GlobalArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use skillet_engine::service::SkillService;
use skillet_host::card::card_problems;

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
    let _ = writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(&card).unwrap_or_else(|_| card.to_string())
    );
    let mut problems = card_problems(&card);
    if let Some(error) = card.get("error").and_then(|e| e.as_str()) {
        problems.insert(0, error.to_owned());
    }
    for problem in &problems {
        console.warn(format!("agent card: {problem}"));
    }
    Ok(if problems.is_empty() {
        Outcome::Success
    } else {
        Outcome::Failed
    })
}
