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
    /// project file: no storage options). `env` is added to each process.
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
        for _ in 0..executors {
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
            ];
            cluster.executors.push(spawn(&args, cluster.dir.path(), env));
            listening(flight, "an executor");
        }
        // Registration follows the executor's first heartbeat to the scheduler.
        std::thread::sleep(Duration::from_secs(1));
        cluster
    }

    fn start_scheduler(&mut self, env: &[(&str, &str)]) {
        let bind = format!("127.0.0.1:{}", self.scheduler_port);
        self.scheduler = Some(spawn(&["engine", "scheduler", "--bind", &bind], self.dir.path(), env));
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
