//! The client's task journal: the MCP tasks an [`McpToolBox`](super::McpToolBox)
//! started and has not yet ended, kept where a restarted process finds them
//! (SEP-2663: clients SHOULD persist task ids so that polling resumes after
//! a crash or restart).
//!
//! A task is written when the server answers a `tools/call` with it, and
//! marked ended when its call ends — with its result, an error, or
//! cancelled. What is left unfinished after a crash is what
//! [`McpToolBox::resume_task`](super::McpToolBox::resume_task) picks up.
//! [`TaskJournal`] is the seam; [`FileTaskJournal`] (JSON lines, each
//! appended and synced) is the implementation
//! [`McpConnect::task_journal`](super::McpConnect::task_journal) opens.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use toolbox_core::dispatch::BoxFuture;
use toolbox_core::ToolError;

/// One task a client started: enough to poll it again from another
/// process and to end its call there. The call's arguments are not kept
/// (they may hold what should not sit in a file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JournaledTask {
    /// The server's name in the program that started it
    /// ([`McpToolBox::name`](super::McpToolBox::name)).
    pub server: String,
    /// Where the server is, as texts show it
    /// ([`McpToolBox::origin`](super::McpToolBox::origin)).
    pub origin: String,
    /// The tool called.
    pub tool: String,
    /// The provider's call id of the call, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The server's id of the task.
    pub task_id: String,
    /// When the server created it, in milliseconds since the Unix epoch
    /// (as this client saw the answer).
    pub created_ms: u64,
    /// How long the server keeps it (its `ttlMs`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// The server's polling interval (its `pollIntervalMs`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl JournaledTask {
    /// A task of `tool` on the server `server` at `origin`, created now.
    pub fn new(
        server: impl Into<String>,
        origin: impl Into<String>,
        tool: impl Into<String>,
        task_id: impl Into<String>,
    ) -> Self {
        JournaledTask {
            server: server.into(),
            origin: origin.into(),
            tool: tool.into(),
            call_id: None,
            task_id: task_id.into(),
            created_ms: now_ms(),
            ttl_ms: None,
            poll_interval_ms: None,
        }
    }

    /// The same task, for the call `id`.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// How long ago the task was created (zero for a clock that went back).
    pub fn age(&self) -> Duration {
        Duration::from_millis(now_ms().saturating_sub(self.created_ms))
    }

    /// Whether it is the task `task_id` of the server `server` at `origin`.
    fn is(&self, server: &str, origin: &str, task_id: &str) -> bool {
        self.task_id == task_id && self.origin == origin && self.server == server
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where a client keeps the tasks it started until their calls end: a
/// file ([`FileTaskJournal`]), or a store of the application's (a
/// database row per task, for a client that runs on many machines).
///
/// `started` is awaited before the task is first polled, so a task whose
/// call is lost with its process is in the journal; `ended` when its call
/// ends, whatever the end. An error of either is logged and the call goes
/// on: the task already runs on the server.
pub trait TaskJournal: Send + Sync {
    /// Keeps `task`, started now.
    fn started<'a>(&'a self, task: &'a JournaledTask) -> BoxFuture<'a, Result<(), ToolError>>;

    /// Forgets `task`: its call ended.
    fn ended<'a>(&'a self, task: &'a JournaledTask) -> BoxFuture<'a, Result<(), ToolError>>;

    /// The tasks started and not ended, of every server, oldest first.
    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<JournaledTask>, ToolError>>;

    /// Where the journal is, for texts (a path, a table).
    fn location(&self) -> String;
}

/// One line of a [`FileTaskJournal`].
#[derive(Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Line {
    Started(JournaledTask),
    Ended {
        server: String,
        origin: String,
        task_id: String,
    },
}

/// Once this many lines of the file are of ended tasks, and more than
/// twice those still open, the file is written again with only the open
/// ones.
const COMPACT_AFTER: usize = 1_000;

/// A [`TaskJournal`] in a file of JSON lines: a `started` line per task,
/// an `ended` line when its call ends, each appended in one write and
/// synced to the disk before the call goes on. A line cut short by a crash,
/// or any line that is not a journal line, is skipped with a warning — a
/// damaged journal never stops a client, and the file as it was is kept
/// beside it (`<name>.damaged`). The file is rewritten (a temporary file,
/// synced, renamed over it) at [`open`](FileTaskJournal::open) and when
/// ended tasks pile up, so it holds about the tasks still open.
///
/// Every read goes to the file, so several boxes (and processes, one at a
/// time) may share one journal: the journals of one process opened on one
/// file take turns, each with the others; a rewrite while another process
/// appends may lose that process's line, so give each running process a
/// file of its own.
///
/// ```
/// use toolbox_mcp::client::{FileTaskJournal, JournaledTask, TaskJournal};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let path = std::env::temp_dir().join(format!("journal-doc-{}.jsonl", std::process::id()));
/// let journal = FileTaskJournal::open(&path)?;
/// let task = JournaledTask::new("builder", "http://127.0.0.1:8765/mcp", "compile", "task-1");
/// journal.started(&task).await?;
/// // … the process stops here; another opens the same file:
/// let again = FileTaskJournal::open(&path)?;
/// assert_eq!(again.unfinished().await?, vec![task.clone()]);
/// again.ended(&task).await?;
/// assert!(again.unfinished().await?.is_empty());
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), toolbox_core::ToolError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct FileTaskJournal {
    path: Arc<PathBuf>,
    /// Serializes this journal's appends and rewrites; counts the lines of
    /// ended tasks since the last rewrite.
    lines: Arc<Mutex<Counts>>,
    damage: Option<Arc<str>>,
    /// [`COMPACT_AFTER`], but in tests.
    compact_after: usize,
}

#[derive(Debug, Default)]
struct Counts {
    open: usize,
    dead: usize,
}

impl FileTaskJournal {
    /// Opens the journal at `path` (made at the first task when missing;
    /// its directory must exist, else an error naming it).
    /// A damaged file is read for what it holds, with a warning
    /// ([`damage`](FileTaskJournal::damage)); a file that cannot be read or
    /// rewritten at all is an error naming it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ToolError> {
        let path = path.as_ref().to_path_buf();
        // One lock for every journal of this process on the file: two
        // boxes' appends and rewrites take turns (a rewrite between another
        // journal's read and rename lost that journal's line).
        let lines = shared_lock(&path);
        let mut counts = lines.lock().unwrap_or_else(|p| p.into_inner());
        let read = read(&path)?;
        if read.lines == 0 {
            // Made at the first task: where it cannot be, say so now rather
            // than in a warning at each call.
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(parent) = parent.filter(|p| !p.is_dir()) {
                return Err(ToolError::configuration(format!(
                    "the task journal at {} cannot be made: {} is not a directory",
                    path.display(),
                    parent.display()
                )));
            }
        }
        let mut damage = None;
        if !read.damaged.is_empty() {
            let kept = sibling(&path, "damaged");
            let copy = std::fs::copy(&path, &kept);
            let text = format!(
                "the task journal at {} had {} damaged line(s) (line {} first); they were skipped, {}",
                path.display(),
                read.damaged.len(),
                read.damaged[0],
                match copy {
                    Ok(_) => format!("and the file as it was is kept at {}", kept.display()),
                    Err(e) => format!("and the file as it was could not be kept at {}: {e}", kept.display()),
                }
            );
            tracing::warn!(target: "toolbox::mcp", "{text}");
            damage = Some(Arc::from(text));
        }
        *counts = Counts {
            open: read.open.len(),
            dead: read.lines - read.open.len(),
        };
        drop(counts);
        let journal = FileTaskJournal {
            path: Arc::new(path),
            lines: lines.clone(),
            damage,
            compact_after: COMPACT_AFTER,
        };
        if read.lines > read.open.len() {
            let mut counts = lines.lock().unwrap_or_else(|p| p.into_inner());
            // Read again under the lock: another journal may have appended.
            let open = self::read(&journal.path)?.open;
            journal.rewrite(&open)?;
            *counts = Counts {
                open: open.len(),
                dead: 0,
            };
        }
        Ok(journal)
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What [`open`](FileTaskJournal::open) warned of, when the file was
    /// damaged.
    pub fn damage(&self) -> Option<&str> {
        self.damage.as_deref()
    }

    /// Appends `line` and syncs it; rewrites the file when ended tasks
    /// pile up.
    fn append(&self, line: &Line, ended: bool) -> Result<(), ToolError> {
        let mut text =
            serde_json::to_string(line).map_err(|e| self.error("could not write a line of", e))?;
        text.push('\n');
        let mut counts = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&*self.path)
            .map_err(|e| self.error("could not open", e))?;
        // A last line cut short before its newline (a torn write) would
        // swallow this one: it starts on a line of its own.
        if !ends_a_line(&mut file).map_err(|e| self.error("could not read", e))? {
            text.insert(0, '\n');
        }
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(|e| self.error("could not append to", e))?;
        if ended {
            counts.open = counts.open.saturating_sub(1);
            counts.dead += 2;
        } else {
            counts.open += 1;
        }
        if counts.dead >= self.compact_after && counts.dead > 2 * counts.open {
            let open = read(&self.path)?.open;
            self.rewrite(&open)?;
            *counts = Counts {
                open: open.len(),
                dead: 0,
            };
        }
        Ok(())
    }

    /// Writes the file again with only `open`: a temporary file beside it,
    /// synced, renamed over it.
    fn rewrite(&self, open: &[JournaledTask]) -> Result<(), ToolError> {
        let mut text = String::new();
        for task in open {
            let line = serde_json::to_string(&Line::Started(task.clone()))
                .map_err(|e| self.error("could not write a line of", e))?;
            text.push_str(&line);
            text.push('\n');
        }
        let temporary = sibling(&self.path, &format!("{}.tmp", std::process::id()));
        let written = File::create(&temporary)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&temporary, &*self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(self.error("could not rewrite", e));
        }
        // The rename lasts once the directory is synced (where the
        // platform lets a directory be opened).
        if let Some(parent) = self.path.parent() {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    fn error(&self, what: &str, error: impl std::fmt::Display) -> ToolError {
        ToolError::configuration(format!(
            "{what} the task journal at {}: {error}",
            self.path.display()
        ))
    }

    /// Runs `f` on this journal off the async threads (it syncs to disk).
    fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&FileTaskJournal) -> Result<T, ToolError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, ToolError>> {
        let journal = self.clone();
        Box::pin(async move {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    let path = journal.path.clone();
                    runtime
                        .spawn_blocking(move || f(&journal))
                        .await
                        .map_err(|e| {
                            ToolError::configuration(format!(
                                "the task journal at {} was not written or read: {e}",
                                path.display()
                            ))
                        })?
                }
                Err(_) => f(&journal),
            }
        })
    }
}

impl TaskJournal for FileTaskJournal {
    fn started<'a>(&'a self, task: &'a JournaledTask) -> BoxFuture<'a, Result<(), ToolError>> {
        let line = Line::Started(task.clone());
        self.blocking(move |journal| journal.append(&line, false))
    }

    fn ended<'a>(&'a self, task: &'a JournaledTask) -> BoxFuture<'a, Result<(), ToolError>> {
        let line = Line::Ended {
            server: task.server.clone(),
            origin: task.origin.clone(),
            task_id: task.task_id.clone(),
        };
        self.blocking(move |journal| journal.append(&line, true))
    }

    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<JournaledTask>, ToolError>> {
        self.blocking(|journal| Ok(read(&journal.path)?.open))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

/// Whether `file` is empty or its last byte ends a line.
fn ends_a_line(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The lock (and counts) of every [`FileTaskJournal`] of this process on
/// `path`, by its absolute path.
fn shared_lock(path: &Path) -> Arc<Mutex<Counts>> {
    type Locks = HashMap<PathBuf, std::sync::Weak<Mutex<Counts>>>;
    static LOCKS: Mutex<Option<Locks>> = Mutex::new(None);
    let key = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut locks = LOCKS.lock().unwrap_or_else(|p| p.into_inner());
    let locks = locks.get_or_insert_with(HashMap::new);
    if let Some(lock) = locks.get(&key).and_then(std::sync::Weak::upgrade) {
        return lock;
    }
    locks.retain(|_, lock| lock.strong_count() > 0);
    let lock = Arc::new(Mutex::new(Counts::default()));
    locks.insert(key, Arc::downgrade(&lock));
    lock
}

/// What a journal file holds.
struct Read {
    /// The tasks started and not ended, in the order they started.
    open: Vec<JournaledTask>,
    /// How many lines it has (empty ones aside).
    lines: usize,
    /// The numbers (from 1) of the lines that are not journal lines.
    damaged: Vec<usize>,
}

fn read(path: &Path) -> Result<Read, ToolError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(ToolError::configuration(format!(
                "could not read the task journal at {}: {e}",
                path.display()
            )))
        }
    };
    let mut open: Vec<JournaledTask> = Vec::new();
    let mut ended: HashMap<(String, String, String), usize> = HashMap::new();
    let (mut lines, mut damaged) = (0, Vec::new());
    for (number, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines += 1;
        match serde_json::from_slice::<Line>(line) {
            Ok(Line::Started(task)) => open.push(task),
            Ok(Line::Ended {
                server,
                origin,
                task_id,
            }) => {
                let before = open.len();
                open.retain(|t| !t.is(&server, &origin, &task_id));
                if open.len() == before {
                    // An end written before its start was rewritten away:
                    // remembered, in case the start follows.
                    *ended.entry((server, origin, task_id)).or_default() += 1;
                }
            }
            Err(_) => damaged.push(number + 1),
        }
    }
    if !ended.is_empty() {
        open.retain(|t| {
            !ended.contains_key(&(t.server.clone(), t.origin.clone(), t.task_id.clone()))
        });
    }
    // A task started twice (a server that reused an id) is one task.
    let mut seen = HashSet::new();
    open.retain(|t| seen.insert((t.server.clone(), t.origin.clone(), t.task_id.clone())));
    Ok(Read {
        open,
        lines,
        damaged,
    })
}

/// `path` with `.{suffix}` added to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

/// The tasks driven in this process, by origin and task id: a task is
/// driven by one call at a time, so its end reaches one handler.
static DRIVING: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

/// A task this process drives; released when dropped.
#[derive(Debug)]
pub(super) struct Claim {
    key: (String, String),
}

impl Claim {
    /// Claims the task `task_id` of the server at `origin`; `None` when a
    /// call of this process drives it already.
    pub(super) fn take(origin: &str, task_id: &str) -> Option<Claim> {
        let key = (origin.to_owned(), task_id.to_owned());
        let mut driving = DRIVING.lock().unwrap_or_else(|p| p.into_inner());
        // Made only when the key went in: a `Claim` dropped here would
        // release the claim of the call that holds it.
        driving
            .get_or_insert_with(HashSet::new)
            .insert(key.clone())
            .then(|| Claim { key })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut driving = DRIVING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(driving) = driving.as_mut() {
            driving.remove(&self.key);
        }
    }
}

/// A task being driven by a call of this process, and the journal that
/// keeps it until the call ends.
pub(super) struct Tracking {
    pub(super) journal: Arc<dyn TaskJournal>,
    pub(super) task: JournaledTask,
    pub(super) _claim: Option<Claim>,
}

impl Tracking {
    /// Writes the task's end; an error is logged (the call has ended).
    pub(super) async fn ended(self) {
        if let Err(error) = self.journal.ended(&self.task).await {
            tracing::warn!(target: "toolbox::mcp", task = %self.task.task_id, error = %error.report(), "the task's end was not written to the task journal");
        }
    }
}

/// Writes a call's end when the call is dropped before it returned.
pub(super) struct Ending(pub(super) Option<Tracking>);

impl Drop for Ending {
    fn drop(&mut self) {
        let Some(tracking) = self.0.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(tracking.ended());
            }
            Err(_) => {
                tracing::warn!(target: "toolbox::mcp", task = %tracking.task.task_id, "a task's call ended outside a runtime; its end was not written to the task journal")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "toolbox-journal-{name}-{}.jsonl",
            std::process::id()
        ))
    }

    #[test]
    fn ended_lines_are_rewritten_away_at_open_and_ends_before_starts_count() {
        let path = path("rewrite");
        let a = JournaledTask::new("s", "o", "t", "a");
        let b = JournaledTask::new("s", "o", "t", "b");
        let ended_b = Line::Ended {
            server: "s".into(),
            origin: "o".into(),
            task_id: "b".into(),
        };
        let text = [
            serde_json::to_string(&ended_b).unwrap(),
            serde_json::to_string(&Line::Started(a.clone())).unwrap(),
            serde_json::to_string(&Line::Started(b)).unwrap(),
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        let journal = FileTaskJournal::open(&path).unwrap();
        assert!(journal.damage().is_none());
        let read = read(&path).unwrap();
        assert_eq!(read.open, vec![a]);
        assert_eq!(read.lines, 1, "rewritten with the open task only");
        let _ = std::fs::remove_file(&path);
    }

    #[tokio::test]
    async fn ended_tasks_piling_up_are_rewritten_away() {
        let path = path("pile");
        let _ = std::fs::remove_file(&path);
        let mut journal = FileTaskJournal::open(&path).unwrap();
        journal.compact_after = 6;
        let kept = JournaledTask::new("s", "o", "t", "kept");
        journal.started(&kept).await.unwrap();
        for n in 0..3 {
            let task = JournaledTask::new("s", "o", "t", format!("done-{n}"));
            journal.started(&task).await.unwrap();
            journal.ended(&task).await.unwrap();
        }
        // Three ended tasks are six dead lines: the file holds the open one.
        let read = read(&path).unwrap();
        assert_eq!((read.open, read.lines), (vec![kept.clone()], 1));
        let task = JournaledTask::new("s", "o", "t", "after");
        journal.started(&task).await.unwrap();
        assert_eq!(journal.unfinished().await.unwrap(), vec![kept, task]);
        let _ = std::fs::remove_file(&path);
    }

    #[tokio::test]
    async fn a_last_line_without_its_newline_does_not_swallow_the_next() {
        // A write torn just before its newline leaves a whole line without
        // one; the next task's line used to be glued to it, and both read
        // as damaged (neither task could be resumed).
        let path = path("torn");
        let a = JournaledTask::new("s", "o", "t", "a");
        std::fs::write(
            &path,
            serde_json::to_string(&Line::Started(a.clone())).unwrap(),
        )
        .unwrap();
        let journal = FileTaskJournal::open(&path).unwrap();
        let b = JournaledTask::new("s", "o", "t", "b");
        journal.started(&b).await.unwrap();
        assert_eq!(journal.unfinished().await.unwrap(), vec![a, b]);
        assert!(read(&path).unwrap().damaged.is_empty());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_journal_in_a_missing_directory_is_refused_at_open() {
        // It opened, and every task's line then failed with a warning.
        let path = std::env::temp_dir()
            .join(format!("toolbox-no-such-dir-{}", std::process::id()))
            .join("tasks.jsonl");
        let error = FileTaskJournal::open(&path).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "configuration error: the task journal at {} cannot be made: {} is not a directory",
                path.display(),
                path.parent().unwrap().display()
            )
        );
        // A directory given as the journal is named too.
        let error = FileTaskJournal::open(std::env::temp_dir())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("could not read the task journal at"),
            "{error}"
        );
    }

    #[test]
    fn two_journals_of_one_process_on_one_file_lose_no_line() {
        // Each had a lock of its own: one's rewrite (read, write aside,
        // rename) ran between the other's appends and dropped their lines.
        let path = path("two");
        let _ = std::fs::remove_file(&path);
        let mut a = FileTaskJournal::open(&path).unwrap();
        a.compact_after = 2;
        let b = FileTaskJournal::open(&path).unwrap();
        let churn = std::thread::spawn(move || {
            for n in 0..200 {
                let task = JournaledTask::new("s", "o", "t", format!("a-{n}"));
                a.append(&Line::Started(task.clone()), false).unwrap();
                let ended = Line::Ended {
                    server: "s".into(),
                    origin: "o".into(),
                    task_id: task.task_id,
                };
                a.append(&ended, true).unwrap();
            }
        });
        let mut kept = Vec::new();
        for n in 0..200 {
            let task = JournaledTask::new("s", "o", "t", format!("b-{n}"));
            b.append(&Line::Started(task.clone()), false).unwrap();
            kept.push(task);
        }
        churn.join().unwrap();
        let open = read(&path).unwrap().open;
        let lost = kept.iter().filter(|t| !open.contains(t)).count();
        assert_eq!(lost, 0, "of 200 tasks started through the second journal");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_claim_is_one_drivers_until_dropped() {
        let first = Claim::take("o", "claimed").unwrap();
        assert!(Claim::take("o", "claimed").is_none());
        assert!(Claim::take("other", "claimed").is_some());
        drop(first);
        assert!(Claim::take("o", "claimed").is_some());
    }
}
