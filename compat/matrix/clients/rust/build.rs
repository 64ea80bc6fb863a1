// Passes the rdkafka crate's version, as Cargo.lock pins it, to the adapter's
// "version" answer.
fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut version = "unknown";
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"rdkafka\"" {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                version = v.trim_end_matches('"');
            }
        }
    }
    println!("cargo:rustc-env=RDKAFKA_CRATE_VERSION={version}");
}
