//! Event emission for one call: [`EventSink`] is where a transport receives live `skill/event`s;
//! [`EventEmitter`] is the per-call handle the run loop, tools and native handlers emit through.
//!
//! The emitter owns the call's invariants so no caller can break them: `seq` starts at 0 and has
//! no gaps, `progress.pct` never decreases, events are pushed live only when the call asked for
//! streaming, and every event is also collected for `SkillResult.events` up to a cap (past it,
//! collection stops and `truncated` is reported). State is per call: no global lock.
//!
//! Collected events are kept compact until the call answers (the private `Collected`): what a
//! [`SkillEvent`] adds (the id as text, the protocol version, the request id) is the same for
//! every event of the call or derived, so it is added once when the events are taken. That is
//! about half an event's memory, and three allocations fewer per event, for every call in
//! flight.

use crate::protocol::LogLevel;
use std::sync::{Arc, Mutex};

use crate::protocol::{EventPayload, SkillEvent, default_version, now_ts};

/// Receives the live events of calls. Implementations must not block (a transport typically
/// forwards into an unbounded channel); they are called on runtime threads.
pub trait EventSink: Send + Sync {
    /// Delivers one event.
    fn emit(&self, event: &SkillEvent);

    /// Whether this sink passes streamed model text (`artifact` events) on. A live sink that
    /// does not (MCP's: its protocol has no place for it) gets the call's other events live
    /// while the model answers each turn whole, which costs less than a stream nobody reads.
    fn forwards_text(&self) -> bool {
        true
    }
}

/// A sink that forwards events into a tokio unbounded channel.
impl EventSink for tokio::sync::mpsc::UnboundedSender<SkillEvent> {
    fn emit(&self, event: &SkillEvent) {
        // A closed receiver means the caller stopped listening; the run goes on and the events
        // stay collected in the result.
        let _ = self.send(event.clone());
    }
}

/// Default cap on events collected into one `SkillResult`.
pub const DEFAULT_COLLECT_CAP: usize = 1000;

/// The per-call event handle. Clones share the call's sequence and collection.
#[derive(Clone)]
pub struct EventEmitter {
    inner: Arc<EmitterInner>,
}

struct EmitterInner {
    req_id: String,
    live: Option<Arc<dyn EventSink>>,
    collect_cap: usize,
    state: Mutex<EmitterState>,
}

#[derive(Default)]
struct EmitterState {
    next_seq: u64,
    last_pct: u8,
    collected: Vec<Collected>,
    dropped: usize,
    closed: bool,
}

/// A collected event until the call answers: a [`SkillEvent`] without what every event of the
/// call shares. Also the form a checkpoint keeps the events so far in (`crate::checkpoint`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Collected {
    /// The event's id.
    pub id: uuid::Uuid,
    /// When it was emitted (Unix seconds).
    pub ts: f64,
    /// Its place in the call's sequence.
    pub seq: u64,
    /// What it says.
    pub payload: EventPayload,
}

impl Collected {
    /// The whole event, for a live sink (the collected one stays).
    fn to_event(&self, req_id: &str) -> SkillEvent {
        whole_event(self.id, self.ts, self.seq, req_id, self.payload.clone())
    }

    /// The whole event, when the call answers.
    fn into_event(self, req_id: &str) -> SkillEvent {
        whole_event(self.id, self.ts, self.seq, req_id, self.payload)
    }
}

fn whole_event(
    id: uuid::Uuid,
    ts: f64,
    seq: u64,
    req_id: &str,
    payload: EventPayload,
) -> SkillEvent {
    SkillEvent {
        id: crate::protocol::id_text(id),
        version: default_version(),
        ts,
        req_id: req_id.to_owned(),
        seq,
        payload,
    }
}

/// The events of a call so far, as a checkpoint keeps them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmitterSnapshot {
    /// The `seq` the next event gets.
    pub next_seq: u64,
    /// The last `progress` percentage.
    pub last_pct: u8,
    /// The collected events, in `seq` order.
    pub collected: Vec<Collected>,
}

impl EmitterState {
    /// Keeps `event`. The list grows by half (at least 4) instead of doubling: it lives as long
    /// as the call, so its spare room is memory every call in flight holds.
    fn collect(&mut self, event: Collected) {
        if self.collected.len() == self.collected.capacity() {
            self.collected
                .reserve_exact((self.collected.len() / 2).max(4));
        }
        self.collected.push(event);
    }
}

impl std::fmt::Debug for EventEmitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventEmitter")
            .field("req_id", &self.inner.req_id)
            .field("live", &self.inner.live.is_some())
            .finish()
    }
}

impl EventEmitter {
    /// An emitter for call `req_id`; events go live to `sink` when it is given (i.e. when the
    /// call asked for streaming) and are always collected, up to `collect_cap`.
    pub fn new(
        req_id: impl Into<String>,
        sink: Option<Arc<dyn EventSink>>,
        collect_cap: usize,
    ) -> Self {
        EventEmitter {
            inner: Arc::new(EmitterInner {
                req_id: req_id.into(),
                live: sink,
                collect_cap,
                state: Mutex::new(EmitterState::default()),
            }),
        }
    }

    /// An emitter that continues a call another process started (a resumed checkpoint): the
    /// events it collected are kept (not sent live again), `seq` goes on at `next_seq` and
    /// `progress` never drops below `last_pct`.
    pub fn resumed(
        req_id: impl Into<String>,
        sink: Option<Arc<dyn EventSink>>,
        collect_cap: usize,
        earlier: EmitterSnapshot,
    ) -> Self {
        let EmitterSnapshot {
            next_seq,
            last_pct,
            mut collected,
        } = earlier;
        collected.truncate(collect_cap);
        let emitter = EventEmitter::new(req_id, sink, collect_cap);
        {
            let mut state = emitter
                .inner
                .state
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            state.next_seq = next_seq;
            state.last_pct = last_pct.min(100);
            state.collected = collected;
        }
        emitter
    }

    /// What a checkpoint keeps of the events so far: the next `seq`, the last progress and a
    /// copy of the collected events.
    pub fn snapshot(&self) -> EmitterSnapshot {
        let state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        EmitterSnapshot {
            next_seq: state.next_seq,
            last_pct: state.last_pct,
            collected: state.collected.clone(),
        }
    }

    /// An emitter that only collects (no live sink), with the default cap.
    pub fn collecting(req_id: impl Into<String>) -> Self {
        EventEmitter::new(req_id, None, DEFAULT_COLLECT_CAP)
    }

    /// The call's request id.
    pub fn req_id(&self) -> &str {
        &self.inner.req_id
    }

    /// Emits one event and returns its `seq`. A `progress` below the last one is raised to it.
    pub fn emit(&self, mut payload: EventPayload) -> u64 {
        let (seq, for_sink) = {
            let mut state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.closed {
                // The call has answered; a straggler (e.g. an aborted tool task) must not
                // reach the sink after the response.
                return state.next_seq;
            }
            if let EventPayload::Progress { pct, .. } = &mut payload {
                *pct = (*pct).clamp(state.last_pct, 100);
                state.last_pct = *pct;
            }
            let seq = state.next_seq;
            state.next_seq += 1;
            let event = Collected {
                id: uuid::Uuid::new_v4(),
                ts: now_ts(),
                seq,
                payload,
            };
            let collect = state.collected.len() < self.inner.collect_cap;
            if !collect {
                state.dropped += 1;
            }
            // The live sink gets a whole event; the collected one stays compact.
            let for_sink = match (self.inner.live.is_some(), collect) {
                (true, true) => {
                    let live = event.to_event(&self.inner.req_id);
                    state.collect(event);
                    Some(live)
                }
                (true, false) => Some(event.into_event(&self.inner.req_id)),
                (false, true) => {
                    state.collect(event);
                    None
                }
                (false, false) => None,
            };
            (seq, for_sink)
        };
        // Delivered outside the lock; sinks never block, so order across clones follows `seq`
        // closely, and a transport that needs strict order sorts by it.
        if let (Some(live), Some(event)) = (&self.inner.live, for_sink) {
            live.emit(&event);
        }
        seq
    }

    /// Emits a `status` event.
    pub fn status(&self, message: impl Into<String>) -> u64 {
        self.emit(EventPayload::status(message))
    }

    /// Emits a `progress` event (`pct` never goes below the last one emitted).
    pub fn progress(&self, pct: u8, message: impl Into<String>) -> u64 {
        self.emit(EventPayload::progress(pct, message))
    }

    /// Emits a `log` event.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) -> u64 {
        // A log line may quote an upstream's error (a toolkit that failed at first use), which
        // may quote a secret the host sent it; it goes to the caller redacted.
        let message = crate::secrets::REDACTOR.redact_owned(message.into());
        self.emit(EventPayload::log(level, message))
    }

    /// Emits an `artifact` chunk.
    pub fn artifact(
        &self,
        name: &str,
        mime: &str,
        chunk: impl Into<String>,
        is_final: bool,
    ) -> u64 {
        self.emit(EventPayload::artifact(name, mime, chunk, is_final))
    }

    /// The last progress percentage emitted.
    pub fn last_progress(&self) -> u8 {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last_pct
    }

    /// Takes the collected events, and whether some were dropped because of the cap, and
    /// closes the emitter: later emits are dropped, so nothing reaches the sink after the call's
    /// response is assembled.
    pub fn take_collected(&self) -> (Vec<SkillEvent>, bool) {
        let (collected, dropped) = {
            let mut state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
            state.closed = true;
            (std::mem::take(&mut state.collected), state.dropped > 0)
        };
        let req_id = &self.inner.req_id;
        let events = collected
            .into_iter()
            .map(|c| c.into_event(req_id))
            .collect();
        (events, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_has_no_gaps_and_progress_never_decreases() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let emitter = EventEmitter::new("r1", Some(Arc::new(tx)), 100);
        emitter.progress(40, "a");
        emitter.status("s");
        emitter.progress(10, "b");
        let (events, truncated) = emitter.take_collected();
        assert!(!truncated);
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![0, 1, 2]);
        assert_eq!(events[2].payload, EventPayload::progress(40, "b"));
        let mut live = Vec::new();
        while let Ok(e) = rx.try_recv() {
            live.push(e.seq);
        }
        assert_eq!(live, vec![0, 1, 2]);
    }

    #[test]
    fn nothing_is_emitted_after_the_events_were_taken() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let emitter = EventEmitter::new("r3", Some(Arc::new(tx)), 100);
        emitter.status("before");
        let (events, _) = emitter.take_collected();
        assert_eq!(events.len(), 1);
        emitter.log(LogLevel::Info, "straggler");
        assert_eq!(rx.try_recv().unwrap().seq, 0);
        assert!(rx.try_recv().is_err(), "no event after the response");
        assert!(emitter.take_collected().0.is_empty());
    }

    #[test]
    fn collection_stops_at_the_cap_and_reports_truncation() {
        let emitter = EventEmitter::new("r2", None, 2);
        for i in 0..5 {
            emitter.log(LogLevel::Debug, format!("line {i}"));
        }
        let (events, truncated) = emitter.take_collected();
        assert_eq!(events.len(), 2);
        assert!(truncated);
    }
}
