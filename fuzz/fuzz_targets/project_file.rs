//! Fuzzes the project-file parser: any bytes given as `lakewriter.toml` either parse or fail with
//! an error of the project file that says where the mistake is (a line and column, a job, a
//! source, or the root) — never a panic.

#![no_main]

use std::path::Path;

use lakewriter_core::{Error, Project};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "/fuzz/lakewriter.toml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Project::parse(text, Path::new(FILE)) {
        Ok(project) => {
            for job in project.jobs.values() {
                let _ = job.code_fingerprint("SELECT 1");
            }
        }
        Err(Error::Config { file, message }) => {
            assert_eq!(file, Path::new(FILE));
            let places = ["TOML parse error at line ", "job `", "source `", "`root` "];
            assert!(places.iter().any(|p| message.starts_with(p)), "an error that does not say where: {message}");
        }
        Err(other) => panic!("not an error of the project file: {other:?}"),
    }
});
