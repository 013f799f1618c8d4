//! [`RunState`]: what a call is doing right now — its turn, its [`Phase`], the usage each
//! turn reported and, when asked for, its transcript (`transcript`) — shared between the turn loop and the executor, which reads it after the loop
//! was dropped (the timeout message, the final usage log, the result's usage, a checkpoint).
//!
//! Not here: the loop that writes it (`agent.rs`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use skillet_providers::Usage;

use super::transcript::TranscriptRecorder;
use crate::protocol::{Transcript, TurnUsage};

/// What a call is doing right now, readable after the loop was dropped (for the timeout
/// message, the final usage log and the result's usage).
#[derive(Debug, Default)]
pub(crate) struct RunState {
    turn: AtomicU32,
    phase: AtomicU8,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
    /// Turns whose server reported no usage (their tokens are unknown, not zero).
    unreported_turns: AtomicU32,
    /// Each provider response's usage, in turn order (locked only to push and to take).
    turns: Mutex<Vec<TurnUsage>>,
    /// What each turn sent and got, when the call asked for its transcript.
    transcript: Option<TranscriptRecorder>,
}

/// Who answered a turn: the call's provider, or a fallback (its name) and its model.
pub(super) struct Answered<'a> {
    pub(super) model: &'a str,
    pub(super) fallback: Option<&'a str>,
}

/// Where in a turn a call is (before the first turn the phase reads as "starting").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Phase {
    Provider = 1,
    Tools = 2,
    Finishing = 3,
}

impl Phase {
    /// The phase an `AtomicU8` holds (`None`: not yet set, "starting").
    fn from_stored(stored: u8) -> Option<Phase> {
        [Phase::Provider, Phase::Tools, Phase::Finishing]
            .into_iter()
            .find(|phase| *phase as u8 == stored)
    }
}

impl RunState {
    /// The state of a call that starts now; `transcript`: whether it records its transcript;
    /// `capture_content`: whether the host has its entries as span events too.
    pub(crate) fn new(transcript: bool, capture_content: bool) -> Self {
        RunState {
            transcript: TranscriptRecorder::new(transcript, capture_content),
            ..RunState::default()
        }
    }

    /// The transcript's recorder, when the call asked for its transcript.
    pub(crate) fn transcript(&self) -> Option<&TranscriptRecorder> {
        self.transcript.as_ref()
    }

    /// The transcript so far (with each turn's tokens), when the call asked for it. Read
    /// before [`take_turn_usage`](Self::take_turn_usage).
    pub(crate) fn take_transcript(&self) -> Option<Transcript> {
        let recorder = self.transcript.as_ref().filter(|r| r.kept())?;
        Some(self.with_turn_usage(|usage| recorder.take(usage)))
    }

    pub(crate) fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    pub(crate) fn set_turn(&self, turn: u32) {
        self.turn.store(turn, Ordering::Relaxed);
    }

    /// The turn in progress (0 before the first).
    pub(crate) fn turn(&self) -> u32 {
        self.turn.load(Ordering::Relaxed)
    }

    /// Whether every turn so far reported its usage (else the token totals are unknown).
    pub(crate) fn usage_known(&self) -> bool {
        self.unreported_turns.load(Ordering::Relaxed) == 0
    }

    /// Input and output tokens reported so far (turns without usage count nothing).
    pub(crate) fn tokens(&self) -> (u64, u64) {
        (
            self.input_tokens.load(Ordering::Relaxed),
            self.output_tokens.load(Ordering::Relaxed),
        )
    }

    /// Records one answered turn's usage (or that its server reported none).
    pub(super) fn add_usage(&self, turn: u32, answered: &Answered, reported: Option<&Usage>) {
        let (model, provider) = (answered.model, answered.fallback);
        let usage = match reported {
            Some(reported) => {
                self.input_tokens
                    .fetch_add(reported.input_tokens, Ordering::Relaxed);
                self.output_tokens
                    .fetch_add(reported.output_tokens, Ordering::Relaxed);
                TurnUsage {
                    turn,
                    model: model.to_owned(),
                    provider: provider.map(str::to_owned),
                    input_tokens: Some(reported.input_tokens),
                    output_tokens: Some(reported.output_tokens),
                    cached_input_tokens: reported.cached_input_tokens,
                    cache_creation_input_tokens: reported.cache_creation_input_tokens,
                    reasoning_tokens: reported.reasoning_tokens,
                }
            }
            None => {
                self.unreported_turns.fetch_add(1, Ordering::Relaxed);
                TurnUsage {
                    turn,
                    model: model.to_owned(),
                    provider: provider.map(str::to_owned),
                    ..TurnUsage::default()
                }
            }
        };
        let mut turns = self
            .turns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // One slot per turn: a call has a few turns, and a doubling list's spare room (four
        // 136-byte records for the first) is memory every call in flight holds.
        turns.reserve_exact(1);
        turns.push(usage);
    }

    /// Reads the per-turn usage recorded so far.
    pub(crate) fn with_turn_usage<R>(&self, read: impl FnOnce(&[TurnUsage]) -> R) -> R {
        read(
            &self
                .turns
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// A copy of the per-turn usage recorded so far (for a checkpoint).
    pub(crate) fn turn_usage(&self) -> Vec<TurnUsage> {
        self.turns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Takes over the usage of the turns a checkpoint completed.
    pub(crate) fn restore_usage(&self, turns: Vec<TurnUsage>) {
        for turn in &turns {
            match (turn.input_tokens, turn.output_tokens) {
                (Some(input), Some(output)) => {
                    self.input_tokens.fetch_add(input, Ordering::Relaxed);
                    self.output_tokens.fetch_add(output, Ordering::Relaxed);
                }
                _ => {
                    self.unreported_turns.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        *self
            .turns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = turns;
    }

    /// The per-turn usage recorded so far.
    pub(crate) fn take_turn_usage(&self) -> Vec<TurnUsage> {
        std::mem::take(
            &mut *self
                .turns
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// What the call was doing, for messages ("waiting for the provider in turn 2").
    pub(crate) fn describe(&self) -> String {
        let turn = self.turn();
        match Phase::from_stored(self.phase.load(Ordering::Relaxed)) {
            Some(Phase::Provider) => format!("waiting for the provider in turn {turn}"),
            Some(Phase::Tools) => format!("running tools in turn {turn}"),
            Some(Phase::Finishing) => "finishing".to_owned(),
            None => "starting".to_owned(),
        }
    }
}
