//! Recording calls to a JSON Lines tape, and replaying a tape without running
//! any tool: re-run a turn in a debugger, or pin a test to real traffic.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dispatch::{BoxFuture, DispatchResult};
use crate::{
    args::Arguments, context::Context, dispatch::DispatchFuture, error::ToolError,
    error::ToolErrorKind, response::ToolResponse, toolbox::ToolBox,
};

/// The largest tape line written or read (16 MiB). A bigger entry is
/// recorded with its arguments and response replaced by a note saying so;
/// a bigger line in a tape is reported as a defect, not read into memory.
pub const MAX_TAPE_LINE: usize = 16 * 1024 * 1024;

/// One recorded call: a line of the tape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapeEntry {
    /// The provider's call id, if the caller set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The argument object.
    pub arguments: Value,
    /// What the model got back.
    pub response: ToolResponse,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TapeError>,
    /// How long the dispatch took, in microseconds.
    pub duration_us: u64,
}

/// A recorded failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapeError {
    /// The error's kind.
    pub kind: ToolErrorKind,
    /// The operator's report (full chain).
    pub detail: String,
    /// Whether a retry could help.
    pub retryable: bool,
}

/// Writes every call of the wrapped box — name, arguments, result or error,
/// duration, call id — as one JSON line, written with one `write` and
/// flushed per call, so a crash loses at most the line being written and
/// recorders appending to one file never interleave. Numbers round-trip
/// exactly. A write failure is logged and never fails the call.
pub struct RecordingToolBox<B> {
    inner: B,
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl<B: ToolBox> RecordingToolBox<B> {
    /// Records to any writer.
    pub fn new(inner: B, sink: impl Write + Send + 'static) -> Self {
        RecordingToolBox {
            inner,
            sink: Arc::new(Mutex::new(Box::new(sink))),
        }
    }

    /// Records to a file, appending.
    pub fn to_file(inner: B, path: impl AsRef<Path>) -> io::Result<Self> {
        let file = File::options().create(true).append(true).open(path)?;
        Ok(RecordingToolBox::new(inner, file))
    }

    fn write(
        &self,
        name: &str,
        arguments: Arguments<'_>,
        ctx: &Context,
        result: &DispatchResult,
        micros: u64,
    ) {
        let (response, error) = match result {
            Ok(response) if response.is_error => (
                response.clone(),
                Some(TapeError {
                    kind: ToolErrorKind::Failed,
                    detail: response.content.clone(),
                    retryable: false,
                }),
            ),
            Ok(response) => (response.clone(), None),
            Err(error) => (
                ToolResponse::error(error.model_message()),
                Some(TapeError {
                    kind: error.kind(),
                    detail: error.report(),
                    retryable: error.is_retryable(),
                }),
            ),
        };
        let mut entry = TapeEntry {
            call_id: ctx.call_id().map(str::to_owned),
            name: name.to_owned(),
            arguments: arguments.recorded().into_owned(),
            response,
            error,
            duration_us: micros,
        };
        let written = tape_line(&entry)
            .and_then(|line| {
                if line.len() <= MAX_TAPE_LINE {
                    return Ok(line);
                }
                let size = line.len();
                entry.arguments =
                    Value::String(format!("(not recorded: the entry took {size} bytes)"));
                entry.response.content = format!("(not recorded: the entry took {size} bytes)");
                entry.response.element = None;
                tape_line(&entry)
            })
            .and_then(|line| {
                let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
                sink.write_all(&line)?;
                sink.flush()
            });
        if let Err(error) = written {
            tracing::warn!(tool = name, %error, "could not record a tool call");
        }
    }
}

impl<B: ToolBox> ToolBox for RecordingToolBox<B> {
    crate::forward_listing!(inner);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::new(async move {
            let started = std::time::Instant::now();
            let result = crate::lifecycle::guarded(&self.inner, name, arguments, ctx).await;
            let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.write(name, arguments, ctx, &result, micros);
            result
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}

/// One entry as one buffer: the JSON and its newline, written at once.
fn tape_line(entry: &TapeEntry) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(entry).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// What [`read_tape`] recovered: every complete entry, and what could not
/// be read (a line cut by a crash, a corrupt or oversized line), so a tape
/// is read like a write-ahead log and nothing before a defect is lost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tape {
    /// The entries read, in order.
    pub entries: Vec<TapeEntry>,
    /// The lines that could not be read, in order.
    pub defects: Vec<TapeDefect>,
}

/// A tape line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapeDefect {
    /// The line's number, from 1.
    pub line: usize,
    /// The byte offset where the line starts.
    pub offset: u64,
    /// Whether this is the last line, cut before its newline (a crash
    /// mid-write): the torn tail.
    pub torn: bool,
    /// Why it could not be read, naming the file and line.
    pub reason: String,
}

impl Tape {
    /// The entries, refusing a tape with any defect (the first one is the
    /// error).
    pub fn strict(self) -> io::Result<Vec<TapeEntry>> {
        match self.defects.into_iter().next() {
            None => Ok(self.entries),
            Some(defect) => Err(io::Error::new(io::ErrorKind::InvalidData, defect.reason)),
        }
    }

    /// The torn tail, if the tape ends in a line cut mid-write.
    pub fn torn_tail(&self) -> Option<&TapeDefect> {
        self.defects.last().filter(|d| d.torn)
    }
}

impl std::ops::Deref for Tape {
    type Target = [TapeEntry];

    fn deref(&self) -> &[TapeEntry] {
        &self.entries
    }
}

impl From<Tape> for Vec<TapeEntry> {
    fn from(tape: Tape) -> Self {
        tape.entries
    }
}

/// Reads a tape written by [`RecordingToolBox`]: every complete entry, with
/// each line that is not one reported as a [`TapeDefect`] naming the line.
/// Fails only when the file cannot be read.
pub fn read_tape(path: impl AsRef<Path>) -> io::Result<Tape> {
    let path = path.as_ref();
    let mut reader = BufReader::new(File::open(path)?);
    let mut tape = Tape::default();
    let mut offset = 0u64;
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let read = (&mut reader)
            .take(MAX_TAPE_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        let start = offset;
        offset += read as u64;
        let complete = line.last() == Some(&b'\n');
        let defect = |reason: String| TapeDefect {
            line: number,
            offset: start,
            torn: false,
            reason: format!("{}:{number}: {reason}", path.display()),
        };
        if !complete && read > MAX_TAPE_LINE {
            tape.defects.push(defect(format!(
                "the line is longer than {MAX_TAPE_LINE} bytes; skipped"
            )));
            // Skip the rest of the oversized line.
            loop {
                let buffer = reader.fill_buf()?;
                if buffer.is_empty() {
                    break;
                }
                match buffer.iter().position(|b| *b == b'\n') {
                    Some(end) => {
                        reader.consume(end + 1);
                        offset += end as u64 + 1;
                        break;
                    }
                    None => {
                        let len = buffer.len();
                        reader.consume(len);
                        offset += len as u64;
                    }
                }
            }
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TapeEntry>(&text) {
            Ok(entry) => tape.entries.push(entry),
            Err(error) if !complete => tape.defects.push(TapeDefect {
                torn: true,
                ..defect(format!(
                    "the last line is cut short (a crash mid-write?): {error}"
                ))
            }),
            Err(error) => tape
                .defects
                .push(defect(format!("not a tape entry: {error}"))),
        }
    }
    Ok(tape)
}

/// Answers calls from a tape, in order, without running any tool. A call
/// whose name or arguments differ from the tape's next entry is drift: an
/// error naming the first difference, never a silent wrong answer. In
/// lenient mode a drifting call runs on the live box instead.
pub struct ReplayToolBox<B> {
    live: B,
    tape: Vec<TapeEntry>,
    position: Mutex<usize>,
    lenient: bool,
}

impl<B: ToolBox> ReplayToolBox<B> {
    /// Replays `tape` (a [`Tape`] or its entries); `live` provides the
    /// specifications (and, when lenient, answers drifting calls).
    pub fn new(tape: impl Into<Vec<TapeEntry>>, live: B) -> Self {
        ReplayToolBox {
            live,
            tape: tape.into(),
            position: Mutex::new(0),
            lenient: false,
        }
    }

    /// Lets drifting calls fall through to the live box.
    pub fn lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// How many tape entries have been used.
    pub fn replayed(&self) -> usize {
        *self.position.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next(&self, name: &str, arguments: Arguments<'_>) -> Result<TapeEntry, String> {
        let mut position = self.position.lock().unwrap_or_else(|p| p.into_inner());
        let number = *position + 1;
        let Some(entry) = self.tape.get(*position) else {
            return Err(format!(
                "replay drift at call {number}: the tape holds {} calls; this extra call is `{name}`",
                self.tape.len()
            ));
        };
        if entry.name != name {
            return Err(format!(
                "replay drift at call {number}: the tape has `{}`, the call is `{name}`",
                entry.name
            ));
        }
        let arguments = arguments.recorded();
        if let Some((path, taped, called)) =
            first_difference(&entry.arguments, &arguments, String::new())
        {
            let at = if path.is_empty() {
                "the whole object".to_owned()
            } else {
                format!("`{path}`")
            };
            return Err(format!(
                "replay drift at call {number} (`{name}`): the arguments differ at {at}: the tape has {taped}, the call has {called}"
            ));
        }
        *position += 1;
        Ok(entry.clone())
    }
}

fn first_difference(
    taped: &Value,
    called: &Value,
    path: String,
) -> Option<(String, String, String)> {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (taped, called) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    None => return Some((join(key), value.to_string(), "nothing".into())),
                    Some(other) => {
                        if let Some(found) = first_difference(value, other, join(key)) {
                            return Some(found);
                        }
                    }
                }
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, value)| (join(key), "nothing".into(), value.to_string()))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, format!("{path}[{i}]"))),
        (a, b) if a == b => None,
        (a, b) => Some((path, a.to_string(), b.to_string())),
    }
}

impl<B: ToolBox> ToolBox for ReplayToolBox<B> {
    crate::forward_listing!(live);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.next(name, arguments) {
            Ok(entry) => DispatchFuture::ready(match entry.error {
                None => Ok(entry.response),
                Some(error) => Err(ToolError::Failed {
                    message: entry.response.content,
                    retryable: error.retryable,
                    source: Some(format!("replayed {}: {}", error.kind, error.detail).into()),
                }),
            }),
            Err(_) if self.lenient => self.live.dispatch(name, arguments, ctx),
            Err(drift) => DispatchFuture::ready(Err(ToolError::failed(drift))),
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.live.close()
    }
}
