//! The engine's processes on one machine (a build with the `ballista` feature): executors given
//! only their own `--bind` share no port, a taken port is refused with exit 2 naming it, and the
//! scheduler says how many executors it has.

use std::process::Stdio;

use super::super::support::Run;

/// A port free on 127.0.0.1 whose next port is free too (an executor's gRPC port by default).
fn free_pair() -> u16 {
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
        if port < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

/// Waits up to 30 s for `file` to hold `text`.
fn logged(file: &std::path::Path, text: &str) -> String {
    let started = std::time::Instant::now();
    loop {
        let log = std::fs::read_to_string(file).unwrap_or_default();
        if log.contains(text) || started.elapsed() > std::time::Duration::from_secs(30) {
            return log;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn executors_given_their_own_bind_share_no_port_and_a_taken_port_is_refused() {
    use super::super::support::command;
    let dir = tempfile::tempdir().expect("temp dir");
    let scheduler = free_pair();
    let log = dir.path().join("scheduler.log");
    let bind = format!("127.0.0.1:{scheduler}");
    let mut started = Vec::new();
    let args = ["engine", "scheduler", "--bind", bind.as_str()];
    let err = std::fs::File::create(&log).expect("the scheduler's log");
    started.push(command(&args, dir.path(), &[]).stdout(Stdio::null()).stderr(err).spawn().expect("a scheduler"));
    assert!(logged(&log, "0 executors registered").contains("0 executors registered"));
    // Two executors on one machine, each told only its own --bind: their gRPC ports follow.
    let (first, second) = (free_pair(), free_pair());
    for port in [first, second] {
        let bind = format!("127.0.0.1:{port}");
        let args = [
            "engine",
            "executor",
            "--scheduler",
            &format!("127.0.0.1:{scheduler}"),
            "--bind",
            &bind,
            "--heartbeat",
            "1",
        ];
        started.push(
            command(&args, dir.path(), &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("an executor"),
        );
    }
    let two = format!("2 executors registered: 127.0.0.1:{}, 127.0.0.1:{}", first.min(second), first.max(second));
    let seen = logged(&log, &two);
    assert!(seen.contains(&two), "{seen}");

    // A third on a port taken, its own or its gRPC port: refused, the port named, exit 2.
    let run = |bind: u16, grpc: Option<u16>| {
        let bind = format!("127.0.0.1:{bind}");
        let grpc = grpc.map(|p| p.to_string());
        let mut args = vec!["engine", "executor", "--scheduler", "127.0.0.1:1", "--bind", bind.as_str()];
        args.extend(grpc.as_deref().map(|p| ["--grpc-port", p]).into_iter().flatten());
        Run::from(&command(&args, dir.path(), &[]).output().expect("run an executor"))
    };
    let taken = run(first, None);
    taken.assert_code(2);
    assert!(taken.stderr.contains(&format!("error: --bind: cannot listen on 127.0.0.1:{first}: ")), "{}", taken.stderr);
    let taken = run(free_pair(), Some(first + 1));
    taken.assert_code(2);
    assert!(
        taken.stderr.contains(&format!("error: --grpc-port: cannot listen on 127.0.0.1:{}: ", first + 1)),
        "{}",
        taken.stderr
    );
    let again =
        Run::from(&command(&["engine", "scheduler", "--bind", &bind], dir.path(), &[]).output().expect("a scheduler"));
    again.assert_code(2);
    assert!(again.stderr.starts_with(&format!("error: --bind: cannot listen on {bind}: ")), "{}", again.stderr);

    for mut child in started.into_iter().rev() {
        let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let _ = child.wait();
    }
}
