//! JSON paths as errors and reports write them.

/// `base.key`, or `key` at the root: the one way provider and lock paths
/// are written.
pub(crate) fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}
