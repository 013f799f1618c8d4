//! Live display of a `skillet run`: on a terminal, an indicatif bar with the turn, status,
//! progress and elapsed time, and log lines above it; otherwise plain `[kind] text` lines. With
//! `-vv` the model's streamed text is shown as it is written — inline, under a `[model turn N]`
//! heading — not one chunk per line. Both go to stderr, so stdout carries only the result.
//!
//! Events arrive on runtime threads through [`EventSink`]; drawing happens on a dedicated OS
//! thread so terminal writes never block the runtime.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use skillet_engine::events::EventSink;
use skillet_protocol::{EventPayload, SkillEvent};

/// How events are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayMode {
    /// A live bar (stderr is a terminal).
    Bar,
    /// One line per event.
    Lines,
    /// Nothing (`-q`).
    Silent,
}

impl DisplayMode {
    /// The mode for this process: silent when `quiet`, a bar on a terminal, else lines.
    pub fn detect(quiet: bool) -> Self {
        if quiet {
            DisplayMode::Silent
        } else if std::io::stderr().is_terminal() {
            DisplayMode::Bar
        } else {
            DisplayMode::Lines
        }
    }
}

/// The running display; [`Progress::finish`] clears the bar and waits for the drawing thread.
#[derive(Debug)]
pub struct Progress {
    sender: Option<Sender<SkillEvent>>,
    thread: Option<JoinHandle<()>>,
    /// Whether the model's text is shown as it is written (`-vv`, not silent).
    shows_text: bool,
}

struct ChannelSink {
    sender: Sender<SkillEvent>,
    shows_text: bool,
}

impl EventSink for ChannelSink {
    fn emit(&self, event: &SkillEvent) {
        // The display thread outlives every sink; a send fails only if it died, and then the
        // events are still collected in the result.
        let _ = self.sender.send(event.clone());
    }

    /// Only a display that shows the model's text as it is written asks the model to stream
    /// it: otherwise each request is a whole answer, without the streaming fields the
    /// peers never send (`stream`, `stream_options`).
    fn forwards_text(&self) -> bool {
        self.shows_text
    }
}

impl Progress {
    /// Starts displaying events of skill `skill`; `verbose` > 0 also shows `debug`/`info` logs.
    pub fn start(mode: DisplayMode, skill: &str, verbose: u8) -> Self {
        let (sender, receiver) = mpsc::channel();
        let skill = skill.to_owned();
        let thread = std::thread::Builder::new()
            .name("skillet-progress".into())
            .spawn(move || draw(mode, &skill, verbose, receiver))
            .ok();
        Progress {
            sender: Some(sender),
            thread,
            shows_text: verbose >= 2 && mode != DisplayMode::Silent,
        }
    }

    /// The sink to hand to the call.
    pub fn sink(&self) -> Arc<dyn EventSink> {
        let sender = self.sender.clone().unwrap_or_else(|| mpsc::channel().0);
        Arc::new(ChannelSink {
            sender,
            shows_text: self.shows_text,
        })
    }

    /// Stops the display (after the call ended and every sink was dropped).
    pub fn finish(mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn draw(mode: DisplayMode, skill: &str, verbose: u8, events: Receiver<SkillEvent>) {
    let bar = (mode == DisplayMode::Bar).then(|| {
        let bar = ProgressBar::with_draw_target(Some(100), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(&super::color::bar_template(
            "{spinner:.cyan} {prefix:.bold} [{bar:24.cyan/blue}] {pos:>3}% {elapsed:>4} {wide_msg}",
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(skill.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    });
    let mut status = String::from("starting");
    let mut detail = String::new();
    let mut stderr = std::io::stderr();
    let mut text = ModelText::default();
    while let Ok(event) = events.recv() {
        if let EventPayload::Artifact {
            name,
            chunk,
            is_final,
            ..
        } = &event.payload
            && skillet_protocol::is_model_text_artifact(name)
        {
            if verbose >= 2 {
                for line in text.add(name, chunk, *is_final) {
                    match &bar {
                        Some(bar) => bar.println(format!("  {line}")),
                        None if mode == DisplayMode::Lines => {
                            let _ = write!(stderr, "{line}");
                        }
                        None => {}
                    }
                }
            }
            continue;
        }
        if let Some(rest) = text.interrupt()
            && mode == DisplayMode::Lines
            && bar.is_none()
        {
            let _ = write!(stderr, "{rest}");
        }
        let line = match &event.payload {
            EventPayload::Status { message, .. } => {
                status.clone_from(message);
                format!("[status] {message}")
            }
            EventPayload::Progress { pct, message } => {
                detail.clone_from(message);
                if let Some(bar) = &bar {
                    bar.set_position(u64::from(*pct));
                }
                format!("[progress {pct:>3}%] {message}")
            }
            EventPayload::Log { level, message } => {
                let shown = verbose > 0 || matches!(level.as_str(), "warn" | "warning" | "error");
                if !shown {
                    continue;
                }
                format!("[log {level}] {message}")
            }
            EventPayload::Artifact { name, chunk, .. } => {
                if verbose < 2 {
                    continue;
                }
                format!("[artifact {name}] {chunk}")
            }
        };
        match (&bar, mode) {
            (Some(bar), _) => {
                if !line.starts_with("[status]") && !line.starts_with("[progress") {
                    bar.println(format!("  {line}"));
                }
                let message = if detail.is_empty() {
                    status.clone()
                } else {
                    format!("{status} · {detail}")
                };
                bar.set_message(message);
            }
            (None, DisplayMode::Lines) => {
                let _ = writeln!(stderr, "{line}");
            }
            (None, _) => {}
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

/// The model's streamed text as a person reads it: a heading when a turn's text starts, then
/// the text line by line as each line completes (a bar prints whole lines, and a line per chunk
/// is what this replaces).
#[derive(Debug, Default)]
struct ModelText {
    /// The artifact being written (`turn-2`), while it is open.
    open: Option<String>,
    /// Text written since the last newline (what a bar cannot print yet).
    partial: String,
}

impl ModelText {
    fn add(&mut self, name: &str, chunk: &str, is_final: bool) -> Vec<String> {
        let mut out = Vec::new();
        if self.open.as_deref() != Some(name) {
            out.extend(self.interrupt());
            let turn = name.trim_start_matches("turn-");
            out.push(format!("[model turn {turn}]\n"));
            self.open = Some(name.to_owned());
        }
        self.partial.push_str(chunk);
        while let Some(end) = self.partial.find('\n') {
            out.push(self.partial.drain(..=end).collect());
        }
        if is_final {
            out.extend(self.interrupt());
        }
        out
    }

    /// Ends the open text (another event comes, or the stream ended): what is left, with a
    /// newline.
    fn interrupt(&mut self) -> Option<String> {
        self.open.take()?;
        let rest = std::mem::take(&mut self.partial);
        (!rest.is_empty()).then(|| format!("{rest}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_is_shown_inline_under_one_heading_per_turn() {
        let mut text = ModelText::default();
        let mut shown = String::new();
        for (chunk, last) in [
            ("{\"a\":", false),
            (" 1,\n\"b\"", false),
            (": 2}", false),
            ("", true),
        ] {
            shown.extend(text.add("turn-1", chunk, last));
        }
        assert_eq!(shown, "[model turn 1]\n{\"a\": 1,\n\"b\": 2}\n");
        shown.extend(text.add("turn-2", "ok", false));
        shown.extend(text.interrupt());
        assert!(shown.ends_with("[model turn 2]\nok\n"), "{shown}");
        assert_eq!(text.interrupt(), None);
    }
}
