//! The in-process store: one map behind a lock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    duration_ms, expired_outcome, now_ms, Claimed, Lease, StoreResult, Swept, TaskOutcome,
    TaskProgress, TaskRecord, TaskState, TaskStore, TaskStoreError,
};

/// Tasks kept in this process (the default store): every server given the
/// same `Arc` shares them, a restart loses them. Durable in the
/// [`TaskStore`] sense within the process: a write is read by the next call.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tasks it holds (live and ended, until swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `change` on the live task `id`, refusing an ended one as `what`.
    fn live<T>(
        &self,
        id: &str,
        change: &'static str,
        apply: impl FnOnce(&mut TaskRecord) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let mut tasks = self.lock();
        let task = tasks.get_mut(id).ok_or_else(|| not_found(id))?;
        if task.status.is_terminal() {
            return Err(TaskStoreError::Ended {
                id: id.to_owned(),
                status: task.status,
                change,
            });
        }
        let answer = apply(task)?;
        task.updated_at_ms = now_ms();
        Ok(answer)
    }
}

fn not_found(id: &str) -> TaskStoreError {
    TaskStoreError::NotFound { id: id.to_owned() }
}

/// Ends `task` with `outcome` (the caller checked it is live).
fn end(task: &mut TaskRecord, outcome: TaskOutcome, now: u64) {
    task.status = outcome.state();
    task.outcome = Some(outcome);
    task.lease = None;
    task.input_requests.clear();
    // Kept only to run the task again elsewhere: an ended task's record
    // holds its result, not its call's arguments too.
    task.arguments = Value::Null;
    task.updated_at_ms = now;
    task.expires_at_ms = task.ttl_ms.map(|ttl| now.saturating_add(ttl));
}

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    fn name(&self) -> &'static str {
        "memory"
    }

    async fn create(&self, task: &TaskRecord) -> StoreResult<()> {
        let mut tasks = self.lock();
        if tasks.contains_key(&task.id) {
            return Err(TaskStoreError::AlreadyExists {
                id: task.id.clone(),
            });
        }
        tasks.insert(task.id.clone(), task.clone());
        Ok(())
    }

    async fn get(&self, id: &str, owner: Option<&str>) -> StoreResult<TaskRecord> {
        self.lock()
            .get(id)
            .filter(|task| task.visible_to(owner))
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    async fn get_any(&self, id: &str) -> StoreResult<TaskRecord> {
        self.lock().get(id).cloned().ok_or_else(|| not_found(id))
    }

    async fn set_status_message(&self, id: &str, message: &str) -> StoreResult<()> {
        self.live(id, "status message", |task| {
            task.status_message = Some(message.to_owned());
            Ok(())
        })
    }

    async fn set_progress(
        &self,
        id: &str,
        progress: TaskProgress,
        message: Option<&str>,
    ) -> StoreResult<()> {
        self.live(id, "progress", |task| {
            task.progress = Some(progress);
            if let Some(message) = message {
                task.status_message = Some(message.to_owned());
            }
            Ok(())
        })
    }

    async fn finish(&self, id: &str, outcome: TaskOutcome) -> StoreResult<bool> {
        let mut tasks = self.lock();
        let task = tasks.get_mut(id).ok_or_else(|| not_found(id))?;
        if task.status.is_terminal() {
            return Ok(false);
        }
        end(task, outcome, now_ms());
        Ok(true)
    }

    async fn request_input(&self, id: &str, key: &str, request: Value) -> StoreResult<()> {
        self.live(id, "input request", |task| {
            if task.input_keys.iter().any(|used| used == key) {
                return Err(TaskStoreError::InputKeyUsed {
                    id: id.to_owned(),
                    key: key.to_owned(),
                });
            }
            task.input_keys.push(key.to_owned());
            task.input_requests.insert(key.to_owned(), request);
            task.status = TaskState::InputRequired;
            Ok(())
        })
    }

    async fn answer_inputs(
        &self,
        id: &str,
        owner: Option<&str>,
        answers: Map<String, Value>,
    ) -> StoreResult<Vec<String>> {
        let mut tasks = self.lock();
        let task = tasks
            .get_mut(id)
            .filter(|task| task.visible_to(owner))
            .ok_or_else(|| not_found(id))?;
        if task.status.is_terminal() {
            return Ok(Vec::new());
        }
        let mut accepted = Vec::new();
        for (key, answer) in answers {
            if task.input_requests.remove(&key).is_some() {
                task.input_answers.insert(key.clone(), answer);
                accepted.push(key);
            }
        }
        if task.input_requests.is_empty() {
            task.status = TaskState::Working;
        }
        task.updated_at_ms = now_ms();
        Ok(accepted)
    }

    async fn take_answer(&self, id: &str, key: &str) -> StoreResult<Option<Value>> {
        let mut tasks = self.lock();
        let task = tasks.get_mut(id).ok_or_else(|| not_found(id))?;
        Ok(task.input_answers.remove(key))
    }

    async fn request_cancel(&self, id: &str, owner: Option<&str>) -> StoreResult<()> {
        let mut tasks = self.lock();
        let task = tasks
            .get_mut(id)
            .filter(|task| task.visible_to(owner))
            .ok_or_else(|| not_found(id))?;
        if !task.status.is_terminal() && !task.cancel_requested {
            task.cancel_requested = true;
            task.updated_at_ms = now_ms();
        }
        Ok(())
    }

    async fn cancel_requested(&self, id: &str) -> StoreResult<bool> {
        self.lock()
            .get(id)
            .map(|task| task.cancel_requested)
            .ok_or_else(|| not_found(id))
    }

    async fn list(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        let mut tasks: Vec<TaskRecord> = self
            .lock()
            .values()
            .filter(|task| task.visible_to(owner))
            .cloned()
            .collect();
        tasks.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Ok(tasks)
    }

    async fn renew_lease(&self, id: &str, holder: &str, duration: Duration) -> StoreResult<bool> {
        let mut tasks = self.lock();
        let task = tasks.get_mut(id).ok_or_else(|| not_found(id))?;
        let held = task
            .lease
            .as_ref()
            .is_some_and(|lease| lease.holder == holder);
        if task.status.is_terminal() || !held {
            return Ok(false);
        }
        task.lease = Some(Lease::new(holder, duration));
        Ok(true)
    }

    async fn lapsed_leases(&self, limit: usize) -> StoreResult<Vec<TaskRecord>> {
        let now = now_ms();
        let mut lapsed: Vec<TaskRecord> = self
            .lock()
            .values()
            .filter(|task| {
                !task.status.is_terminal()
                    && task
                        .lease
                        .as_ref()
                        .is_some_and(|lease| lease.lapsed_at(now))
            })
            .cloned()
            .collect();
        lapsed.sort_by_key(|task| task.lease.as_ref().map(|lease| lease.expires_at_ms));
        lapsed.truncate(limit);
        Ok(lapsed)
    }

    async fn claim_lapsed(
        &self,
        id: &str,
        holder: &str,
        duration: Duration,
    ) -> StoreResult<Option<Claimed>> {
        let now = now_ms();
        let mut tasks = self.lock();
        let task = tasks.get_mut(id).ok_or_else(|| not_found(id))?;
        let Some(lapsed) = task
            .lease
            .clone()
            .filter(|lease| lease.lapsed_at(now) && !task.status.is_terminal())
        else {
            return Ok(None);
        };
        task.lease = Some(Lease {
            holder: holder.to_owned(),
            expires_at_ms: now.saturating_add(duration_ms(duration)),
        });
        task.attempts = task.attempts.saturating_add(1);
        task.updated_at_ms = now;
        Ok(Some(Claimed {
            task: task.clone(),
            lapsed,
        }))
    }

    async fn sweep(&self) -> StoreResult<Swept> {
        let now = now_ms();
        let mut swept = Swept::default();
        let mut tasks = self.lock();
        tasks.retain(|id, task| {
            if task.expires_at_ms.is_none_or(|at| now < at) {
                return true;
            }
            if task.status.is_terminal() {
                swept.removed.push(id.clone());
                return false;
            }
            let ttl = task.ttl_ms.unwrap_or_default();
            end(task, expired_outcome(ttl), now);
            swept.expired.push(id.clone());
            true
        });
        Ok(swept)
    }
}
