//! Pausing a run of the binary as it enters a phase of its write (SIGSTOP), told by its phase
//! events in its JSON log on stderr, never by a guessed time; and letting it go on (SIGCONT).

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use lakewriter_core::Phase;

use crate::support::{Lake, LogLine, Run, log_lines};

/// The paused run's log: its phases, and the retry loop's line when it runs again after a conflict.
const LOG: &str = "lakewriter=warn,lakewriter::phase=info,lakewriter::run=info";
/// Written into the run's stderr pipe behind everything it wrote before it stopped.
const SENTINEL: &str = "-- the paused run wrote nothing after this line before it stopped --";

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to process `pid`; whether it was sent.
fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill").args([format!("-{signal}"), pid.to_string()]).status().is_ok_and(|s| s.success())
}

/// A shell waiting to stop process `pid` (SIGSTOP) with its built-in `kill`: started ahead, so
/// stopping takes a line through a pipe rather than starting a process — the run goes on
/// meanwhile, and a slower signal more often lets it finish the phase it was to be stopped in.
struct Stopper(Child);

impl Stopper {
    fn start(pid: u32) -> Self {
        let mut command = Command::new("sh");
        command.args(["-c", "read -r _ && kill -STOP \"$1\"", "sh", &pid.to_string()]).stdin(Stdio::piped());
        Self(command.spawn().expect("spawn sh"))
    }

    /// Stops the process; whether the signal was sent.
    fn stop(mut self) -> bool {
        let sent = self.0.stdin.take().is_some_and(|mut stdin| writeln!(stdin).is_ok());
        sent && self.0.wait().is_ok_and(|s| s.success())
    }

    /// Lets the shell end without stopping anything.
    fn cancel(mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// The state of process `pid` (Linux: `/proc/PID/stat`): `T` stopped, `Z` ended (a child not yet
/// waited for), `R`, `S`, `D` running or waiting.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next())
}

enum Event {
    /// The run logged the phase and was sent SIGSTOP (unless it had ended).
    Reached,
    /// The lines the run wrote before the sentinel.
    Drained(Vec<String>),
}

/// A run of the binary paused (SIGSTOP) as it entered a phase. A thread drains its stderr — so
/// it never blocks on a full pipe — and stops it (`kill -STOP`) the moment the phase's line
/// arrives. The run may have gone on before the signal took effect (on a busy machine, even to its
/// end): once `/proc` says it is stopped (or ended), a sentinel line is written into its stderr
/// pipe behind whatever it wrote, and the lines before the sentinel tell the phases it entered.
/// The run is not waited for until it is resumed, so its PID is never another process's when it
/// is signalled.
pub struct Paused {
    child: Option<Child>,
    pid: u32,
    /// This side's copy of the write end of the run's stderr pipe: the sentinel goes through it.
    stderr: Option<std::io::PipeWriter>,
    lines: Option<JoinHandle<Vec<String>>>,
    stdout: Option<JoinHandle<String>>,
    /// The phases the run had entered when it stopped.
    entered: Vec<Phase>,
}

impl Paused {
    /// Starts `lakewriter --log-format json ARGS` on `lake` and pauses it as it logs that it
    /// enters `phase`. Its stderr, once it ends, is its JSON log.
    pub fn start(lake: &Lake, args: &[&str], phase: Phase) -> Self {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let mut child = {
            let mut command = lake.command(&[&["--log-format", "json"], args].concat());
            command.env("RUST_LOG", LOG).stdout(Stdio::piped()).stderr(writer.try_clone().expect("a pipe end"));
            command.spawn().expect("spawn lakewriter")
        };
        let pid = child.id();
        let mut out = child.stdout.take().expect("stdout");
        let stdout = std::thread::spawn(move || {
            let mut text = String::new();
            out.read_to_string(&mut text).expect("stdout");
            text
        });
        let (events, received) = mpsc::channel();
        let stopper = Stopper::start(pid);
        let lines = std::thread::spawn(move || drain(reader, stopper, phase, &events));
        let mut paused = Self {
            child: Some(child),
            pid,
            stderr: Some(writer),
            lines: Some(lines),
            stdout: Some(stdout),
            entered: Vec::new(),
        };
        paused.wait_for_stop(&received, phase);
        paused
    }

    /// Waits until the run stopped (or ended), then reads everything it wrote before.
    fn wait_for_stop(&mut self, events: &mpsc::Receiver<Event>, phase: Phase) {
        let ended = |pid| matches!(process_state(pid), Some('Z') | None);
        loop {
            match events.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Reached) => break,
                Ok(Event::Drained(_)) => unreachable!("no sentinel yet"),
                Err(_) if ended(self.pid) => break,
                Err(_) => {}
            }
        }
        while !matches!(process_state(self.pid), Some('T' | 'Z') | None) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let writer = self.stderr.as_mut().expect("the pipe");
        writeln!(writer, "{SENTINEL}").expect("the sentinel");
        let lines = loop {
            if let Event::Drained(lines) = events.recv().expect("the thread reading the run's stderr") {
                break lines;
            }
        };
        self.entered = log_lines(&lines.join("\n")).iter().filter_map(LogLine::phase).collect();
        if !self.entered.contains(&phase) {
            let run = self.finish();
            panic!("the run ended without entering {phase}:\n{}\n{}", run.stdout, run.stderr);
        }
    }

    /// The phase the run was in when it stopped: the last it entered.
    pub fn stopped_at(&self) -> Phase {
        *self.entered.last().expect("the run entered its phase")
    }

    /// Lets the run go on (SIGCONT) and waits for it to end.
    pub fn resume(mut self) -> Run {
        assert!(signal(self.pid, "CONT"), "SIGCONT to a run not waited for yet");
        self.finish()
    }

    fn finish(&mut self) -> Run {
        let status = self.child.take().expect("the run").wait().expect("wait for lakewriter");
        drop(self.stderr.take());
        let lines = self.lines.take().expect("the stderr thread").join().expect("stderr");
        let stdout = self.stdout.take().expect("the stdout thread").join().expect("stdout");
        Run { code: status.code().unwrap_or(-1), stdout, stderr: lines.join("\n") }
    }
}

impl Drop for Paused {
    /// A test that fails while the run is stopped ends it.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(self.pid, "CONT");
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Reads the run's stderr to its end, line by line; stops the run (SIGSTOP) as the first phase
/// event of `phase` arrives, and answers the sentinel with the lines before it.
fn drain(reader: std::io::PipeReader, stopper: Stopper, phase: Phase, events: &mpsc::Sender<Event>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut stopper = Some(stopper);
    for line in BufReader::new(reader).lines().map_while(Result::ok) {
        if line == SENTINEL {
            let _ = events.send(Event::Drained(lines.clone()));
            continue;
        }
        if LogLine::parse(&line).and_then(|l| l.phase()) == Some(phase)
            && let Some(stopper) = stopper.take()
        {
            // The run is not waited for yet: where it has ended, this signals its zombie.
            assert!(stopper.stop(), "SIGSTOP to a run not waited for yet");
            let _ = events.send(Event::Reached);
        }
        lines.push(line);
    }
    if let Some(stopper) = stopper {
        stopper.cancel();
    }
    lines
}
