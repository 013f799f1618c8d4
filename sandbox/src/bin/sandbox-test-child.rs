//! A deliberately misbehaving child for the sandbox's integration tests; not for production use.
//!
//! `sandbox-test-child <mode> [arg]`; each mode does one thing and says on stdout what happened,
//! so tests can tell "the sandbox stopped it" from "it did not try". Every unbounded mode carries
//! its own safety cap, so a sandbox that fails to contain it fails the test instead of the machine.
//!
//! Exit codes: 0 = the attempt succeeded (for probes: the sandbox did NOT stop it), 3 = the attempt
//! was denied, 2 = bad usage.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("");
    let arg = args.get(1).map(String::as_str);
    let code = match mode {
        "allocate-unbounded" => allocate_unbounded(),
        "segfault" => segfault(),
        "loop-forever" => loop {
            std::hint::black_box(0u64);
        },
        "fork-bomb" => fork_bomb(arg.and_then(|a| a.parse().ok()).unwrap_or(256)),
        // The same, then holding every process it got (for the caller's timeout to end).
        "fork-bomb-hold" => {
            let code = fork_bomb(arg.and_then(|a| a.parse().ok()).unwrap_or(256));
            std::thread::sleep(Duration::from_secs(30));
            code
        }
        "print-huge-output" => print_huge(arg.and_then(|a| a.parse().ok()).unwrap_or(8 << 20)),
        "echo-json" => echo_json(),
        "json-lines" => json_lines(),
        "exit-code" => arg.and_then(|a| a.parse().ok()).unwrap_or(1),
        "sleep" => {
            std::thread::sleep(Duration::from_millis(
                arg.and_then(|a| a.parse().ok()).unwrap_or(0),
            ));
            0
        }
        "try-network" => try_network(arg.unwrap_or("127.0.0.1:9")),
        "write-outside-dir" => report(std::fs::write(arg.unwrap_or("/tmp/escaped"), b"x")),
        "read-file" => report(std::fs::read(arg.unwrap_or("/etc/hostname")).map(drop)),
        "write-big-file" => write_big_file(arg.and_then(|a| a.parse().ok()).unwrap_or(16 << 20)),
        "print-env" => {
            for (k, v) in std::env::vars() {
                println!("{k}={v}");
            }
            0
        }
        "whoami" => {
            // SAFETY: getuid/getgid cannot fail and touch no memory.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            println!("uid={uid} gid={gid}");
            0
        }
        "spawn-grandchild" => spawn_grandchild(false),
        "spawn-detached" => spawn_grandchild(true),
        "try-syscall" => try_syscall(arg.unwrap_or("")),
        "touch-memory" => touch_memory(arg.and_then(|a| a.parse().ok()).unwrap_or(1024)),
        _ => {
            eprintln!("unknown mode {mode:?}");
            2
        }
    };
    std::process::exit(code);
}

/// Prints whether `result` succeeded: exit 0 if it did, 3 if it was denied.
fn report(result: std::io::Result<()>) -> i32 {
    match result {
        Ok(()) => {
            println!("allowed");
            0
        }
        Err(e) => {
            println!("denied: {e}");
            3
        }
    }
}

/// Reserves address space in 64 MiB chunks (touching one byte each, so little real memory is
/// used) until allocation fails. Safety cap: 64 GiB of address space, then exit 0 ("not limited").
fn allocate_unbounded() -> i32 {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..1024 {
        let mut chunk = Vec::<u8>::with_capacity(64 << 20);
        chunk.push(1);
        chunks.push(chunk);
    }
    println!("allocated {} chunks without hitting a limit", chunks.len());
    0
}

fn segfault() -> i32 {
    // SAFETY: not safe at all, on purpose: the point is to die of SIGSEGV.
    unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
    0
}

/// Forks children that just sleep, until fork fails; prints how many it got. The safety cap
/// `max` ends the bomb with "NOT contained" if the sandbox did not stop it first.
fn fork_bomb(max: u32) -> i32 {
    let mut forked = 0u32;
    while forked < max {
        // SAFETY: the child only sleeps (a syscall) and `_exit`s; no allocation after fork.
        match unsafe { libc::fork() } {
            0 => unsafe {
                libc::sleep(30);
                libc::_exit(0);
            },
            pid if pid > 0 => forked += 1,
            _ => {
                let err = std::io::Error::last_os_error();
                println!("contained after {forked} forks: {err}");
                return 0;
            }
        }
    }
    println!("NOT contained: {forked} forks");
    1
}

fn print_huge(bytes: usize) -> i32 {
    let line = [b'x'; 1023];
    let mut out = std::io::stdout().lock();
    let mut written = 0;
    while written < bytes {
        if out
            .write_all(&line)
            .and_then(|()| out.write_all(b"\n"))
            .is_err()
        {
            return 1;
        }
        written += 1024;
    }
    0
}

/// Reads a JSON document from stdin and writes `{"echo": <it>}`; garbage in → exit 4.
fn echo_json() -> i32 {
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        return 4;
    }
    match serde_json::from_str::<serde_json::Value>(&input) {
        Ok(value) => {
            println!("{}", serde_json::json!({ "echo": value }));
            0
        }
        Err(e) => {
            eprintln!("bad json: {e}");
            4
        }
    }
}

/// A line-oriented server: each stdin line comes back as `{"line": <n>, "text": <line>}`;
/// the line `crash` aborts the process, `exit` ends it cleanly.
fn json_lines() -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for (n, line) in stdin.lines().enumerate() {
        let Ok(line) = line else { return 1 };
        match line.as_str() {
            "crash" => {
                eprintln!("crashing on request");
                std::process::abort();
            }
            "exit" => return 0,
            _ => {
                let reply = serde_json::json!({ "line": n, "text": line });
                if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
                    return 1;
                }
            }
        }
    }
    0
}

fn try_network(addr: &str) -> i32 {
    let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
        return 2;
    };
    report(std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map(drop))
}

/// Writes `bytes` into `big.bin` in the working directory (the file-size limit should stop it).
fn write_big_file(bytes: usize) -> i32 {
    let chunk = vec![0u8; 1 << 20];
    let Ok(mut file) = std::fs::File::create("big.bin") else {
        return 1;
    };
    let mut written = 0;
    while written < bytes {
        if let Err(e) = file.write_all(&chunk) {
            println!("denied: {e}");
            return 3;
        }
        written += chunk.len();
    }
    println!("allowed");
    0
}

/// Starts a grandchild that sleeps holding stdout, prints its pid and exits at once: the sandbox
/// must kill the grandchild rather than wait for it.
/// Starts a grandchild that sleeps, prints its pid and exits; `detached` puts the grandchild in a
/// process group of its own, out of reach of the group kill.
fn spawn_grandchild(detached: bool) -> i32 {
    use std::os::unix::process::CommandExt;
    let me = std::env::current_exe().expect("own path");
    let mut command = std::process::Command::new(me);
    command.args(["sleep", "60000"]);
    if detached {
        command.process_group(0);
    }
    match command.spawn() {
        Ok(child) => {
            println!("grandchild {}", child.id());
            0
        }
        Err(e) => {
            println!("spawn failed: {e}");
            1
        }
    }
}

/// Makes one syscall a tool never needs, with harmless arguments that succeed for an
/// unprivileged process when nothing filters them; prints and exits like [`report`].
/// Linux syscalls: elsewhere the mode is a usage error.
#[cfg(not(target_os = "linux"))]
fn try_syscall(name: &str) -> i32 {
    eprintln!("try-syscall {name:?}: Linux only");
    2
}

/// Makes one syscall a tool never needs, with harmless arguments that succeed for an
/// unprivileged process when nothing filters them; prints and exits like [`report`].
#[cfg(target_os = "linux")]
fn try_syscall(name: &str) -> i32 {
    const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
    const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
    // SAFETY: each call takes integer arguments only and changes nothing the test relies on
    // (being traced by our parent that never traces, a keyring lookup, a new user namespace for
    // this short-lived process).
    let result = unsafe {
        match name {
            "ptrace" => libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0),
            "keyctl" => libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_GET_KEYRING_ID,
                KEY_SPEC_SESSION_KEYRING,
                0,
            ),
            "unshare-user" => libc::unshare(libc::CLONE_NEWUSER).into(),
            _ => {
                eprintln!("unknown syscall {name:?}");
                return 2;
            }
        }
    };
    report(if result == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    })
}

/// Allocates and writes every page of `mib` MiB, 4 MiB at a time, so the memory is resident.
/// Prints nothing on the way: a memory-cgroup kill leaves no stderr for the heuristic to read.
fn touch_memory(mib: usize) -> i32 {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..mib / 4 {
        chunks.push(vec![1u8; 4 << 20]);
    }
    println!("touched {} MiB without hitting a limit", chunks.len() * 4);
    0
}
