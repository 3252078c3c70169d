//! A Ballista cluster of lakewriter's own processes on the loopback interface: a scheduler and
//! executors (`lakewriter engine scheduler|executor`), each started here and stopped by PID
//! (SIGTERM) when the cluster is dropped.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::command;

/// A free port on 127.0.0.1 (free when asked: the process that binds it comes next).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// Waits until something listens on `port`.
fn listening(port: u16, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops `child` with SIGTERM and waits for it; whether it then exited with success (`None` where it
/// had ended before).
fn terminate(child: &mut Child) -> Option<bool> {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return None;
    }
    let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).stderr(Stdio::null()).status();
    child.wait().ok().map(|status| status.success())
}

pub struct Cluster {
    dir: tempfile::TempDir,
    scheduler_port: u16,
    scheduler: Option<Child>,
    executors: Vec<Child>,
    /// `df://127.0.0.1:PORT`.
    pub url: String,
}

impl Cluster {
    /// A scheduler and `executors` executors of one task slot each, in a folder of their own (no
    /// project file: no storage options). `env` is added to each process. An executor beats every
    /// second and is given up after 10 s without a beat; each logs the tasks it runs into
    /// `executor-I.log` there.
    pub fn start(executors: usize, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let scheduler_port = free_port();
        let mut cluster = Self {
            url: format!("df://127.0.0.1:{scheduler_port}"),
            dir,
            scheduler_port,
            scheduler: None,
            executors: Vec::new(),
        };
        cluster.start_scheduler(env);
        for i in 0..executors {
            let (flight, grpc) = (free_port(), free_port());
            let bind = format!("127.0.0.1:{flight}");
            let scheduler = format!("127.0.0.1:{scheduler_port}");
            let args = [
                "engine",
                "executor",
                "--scheduler",
                &scheduler,
                "--bind",
                &bind,
                "--grpc-port",
                &grpc.to_string(),
                "--slots",
                "1",
                "--heartbeat",
                "1",
            ];
            let log = std::fs::File::create(cluster.executor_log(i)).expect("an executor's log");
            let mut command = command(&args, cluster.dir.path(), env);
            command.env("RUST_LOG", "warn,ballista_executor=info").stdout(Stdio::null()).stderr(log);
            cluster.executors.push(command.spawn().expect("start an executor"));
            listening(flight, "an executor");
        }
        // Registration follows the executor's first heartbeat to the scheduler.
        std::thread::sleep(Duration::from_secs(1));
        cluster
    }

    fn start_scheduler(&mut self, env: &[(&str, &str)]) {
        let bind = format!("127.0.0.1:{}", self.scheduler_port);
        let args = ["engine", "scheduler", "--bind", &bind, "--executor-timeout", "10"];
        self.scheduler = Some(spawn(&args, self.dir.path(), env));
        listening(self.scheduler_port, "the scheduler");
    }

    /// Stops the scheduler (SIGTERM), and waits for it; whether it exited with success.
    pub fn stop_scheduler(&mut self) -> Option<bool> {
        self.scheduler.take().and_then(|mut scheduler| terminate(&mut scheduler))
    }

    /// Stops every executor (SIGTERM), and waits for them; whether each exited with success.
    pub fn stop_executors(&mut self) -> Vec<Option<bool>> {
        self.executors.iter_mut().map(terminate).collect()
    }

    /// Kills executor `i` (SIGKILL), as a machine lost.
    pub fn kill_executor(&mut self, i: usize) {
        let _ = self.executors[i].kill();
        let _ = self.executors[i].wait();
    }

    fn executor_log(&self, i: usize) -> std::path::PathBuf {
        self.dir.path().join(format!("executor-{i}.log"))
    }

    /// Waits until an executor's log says a task started there that has not finished, and kills
    /// that executor (SIGKILL) at once. Returns the executor and whether the task was still
    /// running when it died: its log says nothing of its end.
    pub fn kill_executor_in_a_task(&mut self) -> (usize, bool) {
        let started = Instant::now();
        loop {
            for i in 0..self.executors.len() {
                let log = std::fs::read_to_string(self.executor_log(i)).unwrap_or_default();
                let running = running_task(&log);
                if let Some(task) = running {
                    self.kill_executor(i);
                    let log = std::fs::read_to_string(self.executor_log(i)).unwrap_or_default();
                    return (i, !log.contains(&format!("Finished task : [{task}]")));
                }
            }
            assert!(started.elapsed() < Duration::from_mins(2), "no executor started a task");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// A task an executor's `log` says it started and not that it finished (Ballista's
/// `Execute task  : [TID …]` and `Finished task : [TID …]` lines).
fn running_task(log: &str) -> Option<String> {
    let id = |line: &str, start: &str| {
        line.split_once(start).and_then(|(_, rest)| rest.split_once(']')).map(|(id, _)| id.to_owned())
    };
    let mut started = log.lines().filter_map(|line| id(line, "Execute task  : ["));
    let finished: Vec<String> = log.lines().filter_map(|line| id(line, "Finished task : [")).collect();
    started.rfind(|task| !finished.contains(task))
}

fn spawn(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Child {
    command(args, dir, env).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start an engine process")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop_executors();
        self.stop_scheduler();
    }
}
