//! No build step. The script is here for its build-dependency (`Cargo.toml`): the build scripts
//! of the `ballista` feature's crates turn on `memchr`'s default features on the build side, which
//! the build scripts under DataFusion share; with them on here too, the default build and the
//! tests' `--features ballista` build share one DataFusion (docs/development.md).
fn main() {}
