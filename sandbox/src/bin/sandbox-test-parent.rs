//! A stand-in engine for the sandbox's crash test; not for production use.
//!
//! `sandbox-test-parent <child-program> <workdir>` runs `<child-program> sleep 60000` under the
//! default sandbox policy, prints `child <pid>` once the child is running, and waits. The test
//! then kills this process with `SIGKILL` and checks that the sandboxed child died with it.

use std::io::Write;
use std::time::Duration;

use skillet_sandbox::{InteractiveOptions, ProcessBackend, SandboxBackend, SandboxCommand};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(program), Some(workdir)) = (args.first(), args.get(1)) else {
        eprintln!("usage: sandbox-test-parent <child-program> <workdir>");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let command = SandboxCommand::new(program, workdir).args(["sleep", "60000"]);
        let child = match ProcessBackend::new()
            .spawn_interactive(&command, &Default::default(), InteractiveOptions::default())
            .await
        {
            Ok(child) => child,
            Err(e) => {
                eprintln!("spawn failed: {e}");
                std::process::exit(1);
            }
        };
        let pid = child.id().unwrap_or(0);
        let mut out = std::io::stdout();
        let _ = writeln!(out, "child {pid}").and_then(|()| out.flush());
        tokio::time::sleep(Duration::from_secs(120)).await;
        drop(child);
    });
}
