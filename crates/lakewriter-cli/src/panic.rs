//! The one panic that is not lakewriter's to report. object_store's `BufWriter::abort` panics
//! "Already shut down" when the upload it would abort failed while completing — a data file that
//! a full or read-only disk refused. delta-rs (`upload_parquet_file`) calls it inside
//! `catch_unwind`, logs a warning of its own (shown with `-v`) and returns the write's error,
//! which lakewriter reports. Only the default panic message would still reach stderr, where it
//! reads as a crash; this hook leaves that message out and hands every other panic on.

use std::panic::PanicHookInfo;

/// Installs the hook, in front of the default one.
pub fn install() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_caught_abort(info) {
            default(info);
        }
    }));
}

/// Whether `info` is object_store's "Already shut down" panic of `BufWriter::abort`.
fn is_caught_abort(info: &PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message =
        payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    let file = info.location().map(std::panic::Location::file).unwrap_or_default();
    message == Some("Already shut down") && file.contains("object_store") && file.ends_with("buffered.rs")
}
