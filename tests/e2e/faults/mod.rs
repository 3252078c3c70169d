//! Faults and races: bad input, a run killed or paused at a phase, concurrent writers, storage
//! faults; each table checked whole afterwards, and each scenario counted for docs/reliability.md.

mod bad_input;
mod concurrent;
mod crash;
mod failures;
mod late_file;
mod local_faults;
mod maintain_races;
mod mixed;
mod races;
mod schema_change;
mod storage_faults;
