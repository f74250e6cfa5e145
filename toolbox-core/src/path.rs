//! JSON paths as errors and reports write them.

use std::fmt;

use crate::echo::echo;

/// Where in a call's arguments something is, written the one way every
/// error of toolbox's writes it: `filters.tags[1]` (keys joined by `.`,
/// escaped and cut as [`echo`](crate::args::echo) does, indices in
/// brackets), `?` for a step that cannot be named, and the empty path for
/// the arguments as a whole.
///
/// ```
/// use toolbox_core::args::JsonPath;
///
/// let mut path = JsonPath::root();
/// path.push_key("filters");
/// path.push_key("tags");
/// path.push_index(1);
/// assert_eq!(path.to_string(), "filters.tags[1]");
/// assert_eq!(JsonPath::from_pointer("/filters/tags/1"), path);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<PathStep>,
}

/// One step of a [`JsonPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// An object's property.
    Key(String),
    /// An array's item.
    Index(usize),
    /// A step that cannot be named (a key that is not a string).
    Unknown,
}

impl JsonPath {
    /// The arguments as a whole.
    pub fn root() -> Self {
        JsonPath::default()
    }

    /// A JSON Pointer (`/filters/tags/1`, RFC 6901) as a path: a token
    /// written as an array index (`0`, or digits without a leading zero) is
    /// an index, any other a key.
    pub fn from_pointer(pointer: &str) -> Self {
        let mut path = JsonPath::root();
        for token in pointer.split('/').skip(1) {
            let token = token.replace("~1", "/").replace("~0", "~");
            let index_form = token == "0"
                || (!token.starts_with('0') && token.bytes().all(|b| b.is_ascii_digit()));
            match token.parse::<usize>() {
                Ok(index) if index_form => path.push_index(index),
                _ => path.push_key(token),
            }
        }
        path
    }

    /// Steps into an object's property.
    pub fn push_key(&mut self, key: impl Into<String>) {
        self.steps.push(PathStep::Key(key.into()));
    }

    /// Steps into an array's item.
    pub fn push_index(&mut self, index: usize) {
        self.steps.push(PathStep::Index(index));
    }

    /// Steps somewhere that cannot be named.
    pub fn push_unknown(&mut self) {
        self.steps.push(PathStep::Unknown);
    }

    /// Steps back out, returning the step left.
    pub fn pop(&mut self) -> Option<PathStep> {
        self.steps.pop()
    }

    /// The steps, outermost first.
    pub fn steps(&self) -> &[PathStep] {
        &self.steps
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            let dot = if i == 0 { "" } else { "." };
            match step {
                PathStep::Key(key) => write!(f, "{dot}{}", echo(key))?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
                PathStep::Unknown => write!(f, "{dot}?")?,
            }
        }
        Ok(())
    }
}

/// `base.key`, or `key` at the root: how schema locations (a provider
/// report's, a lock's) are written; they name schema keywords, which are
/// never escaped.
pub fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_one_way() {
        let mut path = JsonPath::root();
        assert_eq!(path.to_string(), "");
        path.push_index(0);
        path.push_key("a b");
        path.push_unknown();
        path.push_key("line\nbreak");
        assert_eq!(path.to_string(), "[0].a b.?.line\\nbreak");
        assert_eq!(
            JsonPath::from_pointer("/a~1b/0/~0/12x/10/007/+1/"),
            JsonPath {
                steps: vec![
                    PathStep::Key("a/b".into()),
                    PathStep::Index(0),
                    PathStep::Key("~".into()),
                    PathStep::Key("12x".into()),
                    PathStep::Index(10),
                    PathStep::Key("007".into()),
                    PathStep::Key("+1".into()),
                    PathStep::Key("".into()),
                ]
            }
        );
    }
}
