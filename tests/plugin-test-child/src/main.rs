//! A deliberately misbehaving A2E plugin for Skillet's sandboxed-plugin tests; not for
//! production use. It speaks A2E JSON lines on stdin/stdout like the seed's `SkillPlugin`, in a
//! separate language runtime for all Skillet knows, and each of its skills fails in one way.
//!
//! `plugin-test-child [start-mode]`; start modes:
//! - `normal` (default): serve until stdin closes.
//! - `crash-on-start`: write to stderr and exit 1 at once.
//! - `crash-after-first-start`: serve normally the first time it runs in a directory (it leaves
//!   a `started-once` marker there), exit 1 at start every later time.
//! - `garbage-discover`: answer `skill/discover/req` with a line that is not JSON.
//!
//! Skills (each call runs on its own thread, so calls overlap and answer out of order):
//! `echo` (`{events: n}` → n progress events, then `{echo: arguments, pid}`), `slow`
//! (`{ms}` → sleeps, then `{slept: ms}`), `fail` (a failed result with `skill_error`), `reject`
//! (a transport error `unauthorized`), `crash` (one event, then abort), `segfault`, `exit`
//! (`{code}`), `allocate` (allocates until the memory limit stops it), `hang` (never answers),
//! `garbage` (a line that is not JSON), `wrong_type` (a `skill/call/resp` whose `data` is a
//! string), `no_payload` (a response with neither `data` nor `error`), `huge_line`
//! (`{bytes}` of one line, no answer).
#![allow(unsafe_code)]

use std::io::{BufRead, Write};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

static STDOUT: Mutex<()> = Mutex::new(());

const SKILLS: [&str; 13] = [
    "echo",
    "slow",
    "fail",
    "reject",
    "crash",
    "segfault",
    "exit",
    "allocate",
    "hang",
    "garbage",
    "wrong_type",
    "no_payload",
    "huge_line",
];

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "normal".into());
    match mode.as_str() {
        "normal" | "garbage-discover" => {}
        "crash-on-start" => {
            eprintln!("plugin-test-child: crashing at start on request");
            std::process::exit(1);
        }
        "crash-after-first-start" => {
            if std::path::Path::new("started-once").exists() {
                eprintln!("plugin-test-child: not the first start, crashing");
                std::process::exit(1);
            }
            if let Err(e) = std::fs::write("started-once", b"1") {
                eprintln!("plugin-test-child: cannot write marker: {e}");
                std::process::exit(2);
            }
        }
        other => {
            eprintln!("unknown start mode {other:?}");
            std::process::exit(2);
        }
    }
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("plugin-test-child: ignoring a line that is not JSON");
            continue;
        };
        let id = message["id"].as_str().unwrap_or("").to_owned();
        match message["type"].as_str() {
            Some("skill/discover/req") if mode == "garbage-discover" => {
                write_raw("hello, I am not A2E")
            }
            Some("skill/discover/req") => write(json!({
                "type": "skill/discover/resp", "id": format!("{id}-resp"), "version": "1.0",
                "ts": 0.0, "req_id": id,
                "skills": SKILLS.iter().map(|name| definition(name)).collect::<Vec<_>>(),
            })),
            Some("skill/call/req") => {
                let name = message["name"].as_str().unwrap_or("").to_owned();
                let arguments = message["arguments"].clone();
                std::thread::spawn(move || call(&id, &name, &arguments));
            }
            _ => eprintln!("plugin-test-child: ignoring message {line}"),
        }
    }
}

fn definition(name: &str) -> Value {
    json!({
        "name": name, "version": "1.0.0", "description": format!("test skill {name}"),
        "triggers": [], "tools": ["some_plugin_side_tool"], "toolkits": null, "status": "Published",
        "input_schema": {"type": "object"}, "output_schema": {},
        "when_to_use": "in tests", "argument_hint": "any object", "source": "system",
    })
}

fn call(id: &str, name: &str, arguments: &Value) {
    let number = |key: &str, default: u64| arguments[key].as_u64().unwrap_or(default);
    match name {
        "echo" => {
            let n = number("events", 3);
            for i in 0..n {
                event(
                    id,
                    i,
                    "progress",
                    json!({"pct": (i + 1) * 100 / n.max(1), "message": format!("step {i}")}),
                );
            }
            answer(
                id,
                name,
                json!({"success": true, "data": {"echo": arguments, "pid": std::process::id()}, "duration_ms": 1}),
            );
        }
        "slow" => {
            let ms = number("ms", 100);
            std::thread::sleep(Duration::from_millis(ms));
            answer(
                id,
                name,
                json!({"success": true, "data": {"slept": ms}, "duration_ms": ms}),
            );
        }
        "fail" => answer(
            id,
            name,
            json!({"success": false, "error": "asked to fail", "error_code": "skill_error", "duration_ms": 1}),
        ),
        "reject" => write(json!({
            "type": "skill/call/resp", "id": format!("{id}-resp"), "req_id": id, "name": name,
            "error": {"code": "unauthorized", "message": "not for you", "retryable": false},
        })),
        "crash" => {
            event(id, 0, "status", json!({"message": "about to crash"}));
            std::thread::sleep(Duration::from_millis(50));
            eprintln!("plugin-test-child: aborting mid-call on request");
            std::process::abort();
        }
        // SAFETY: not safe at all, on purpose: the point is to die of SIGSEGV.
        "segfault" => unsafe { std::ptr::null_mut::<u8>().write_volatile(1) },
        "exit" => std::process::exit(number("code", 3) as i32),
        "allocate" => {
            // Address space in 64 MiB chunks, one byte touched each; the cap (64 GiB) answers
            // "not limited" rather than take the machine.
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            for _ in 0..1024 {
                let mut chunk = Vec::<u8>::with_capacity(64 << 20);
                chunk.push(1);
                chunks.push(chunk);
            }
            answer(
                id,
                name,
                json!({"success": true, "data": {"not_limited": chunks.len()}, "duration_ms": 1}),
            );
        }
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        "garbage" => write_raw("Traceback (most recent call last): not JSON at all"),
        "wrong_type" => write(
            json!({"type": "skill/call/resp", "id": format!("{id}-resp"), "req_id": id, "name": name, "data": "not a result"}),
        ),
        "no_payload" => write(
            json!({"type": "skill/call/resp", "id": format!("{id}-resp"), "req_id": id, "name": name}),
        ),
        "huge_line" => write_raw(&"x".repeat(number("bytes", 2 << 20) as usize)),
        _ => write(json!({
            "type": "skill/call/resp", "id": format!("{id}-resp"), "req_id": id, "name": name,
            "error": {"code": "unknown_skill", "message": format!("no skill {name}"), "retryable": false},
        })),
    }
}

fn event(id: &str, seq: u64, kind: &str, data: Value) {
    write(
        json!({"type": "skill/event", "id": format!("{id}-ev{seq}"), "req_id": id, "seq": seq, "kind": kind, "data": data}),
    );
}

fn answer(id: &str, name: &str, result: Value) {
    write(
        json!({"type": "skill/call/resp", "id": format!("{id}-resp"), "req_id": id, "name": name, "data": result}),
    );
}

fn write(message: Value) {
    write_raw(&message.to_string());
}

fn write_raw(line: &str) {
    let _guard = STDOUT.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = std::io::stdout().lock();
    // A closed stdout means the engine went away; nothing left to do but exit.
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}
