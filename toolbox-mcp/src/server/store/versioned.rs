//! The shared backends' common ground: each task is one record with a
//! version; every change reads the record, applies the change here (the
//! same rules for every backend) and writes it back only if the version
//! is still the one read (Redis: a Lua script; PostgreSQL: a conditional
//! `UPDATE`), again from the read when another writer was first. So two
//! replicas ending one task at once keep the first end, and exactly one
//! of two claims of a lapsed lease wins.
//!
//! A cancel also wakes the task's runner at once through the backend's
//! notifications (Redis pub/sub, PostgreSQL `LISTEN/NOTIFY`); the runner
//! still polls the flag, so a notification lost to a reconnect delays a
//! cancel by one poll at most.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::{
    duration_ms, expired_outcome, now_ms, Claimed, Lease, StoreResult, Swept, TaskOutcome,
    TaskProgress, TaskRecord, TaskState, TaskStoreError,
};

/// How many times a change is tried again after another writer changed
/// the same task in between, before the store reports contention.
const ATTEMPTS: usize = 64;

/// A backend that keeps versioned records.
#[async_trait::async_trait]
pub(super) trait Records: Send + Sync + 'static {
    /// The store's name (`redis`, `postgres`).
    fn store_name(&self) -> &'static str;

    /// The record `id` and its version, `None` when there is none.
    async fn load(&self, id: &str) -> StoreResult<Option<(TaskRecord, u64)>>;

    /// The record `id` read for a waiter: as [`load`](Records::load), but
    /// through a connection no other call waits for where the backend has
    /// one (a runner that keeps a waiting `wait_cancel` pending while it
    /// makes another call must not hold a pooled connection meanwhile).
    async fn load_for_waiter(&self, id: &str) -> StoreResult<Option<(TaskRecord, u64)>> {
        self.load(id).await
    }

    /// Stores a new record at version 1; `false` when the id is taken.
    async fn insert(&self, task: &TaskRecord) -> StoreResult<bool>;

    /// Replaces the record at `version` with `task` (version + 1) and its
    /// indexes; `false` when the record is no longer at `version`.
    async fn replace(&self, task: &TaskRecord, version: u64) -> StoreResult<bool>;

    /// Removes the record at `version`; `false` when it changed or is gone.
    async fn remove(&self, id: &str, version: u64) -> StoreResult<bool>;

    /// Every record whose owner is `owner`, in any order.
    async fn owned(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>>;

    /// The ids of records whose lease lapsed by `now`, soonest lapsed
    /// first, at most `limit` (they may have ended since: checked here).
    async fn lapsed_ids(&self, now: u64, limit: usize) -> StoreResult<Vec<String>>;

    /// The ids of records whose `expires_at_ms` is at or before `now`.
    async fn due_ids(&self, now: u64) -> StoreResult<Vec<String>>;

    /// Tells every handle of the store that `id`'s cancel was recorded.
    async fn publish_cancel(&self, id: &str) -> StoreResult<()>;

    /// The waiters of this handle, woken by its subscription.
    fn waiters(&self) -> &Waiters;

    /// Starts this handle's subscription to cancels if it has none (it
    /// wakes [`waiters`](Records::waiters)); whether one is up. A failure
    /// leaves the waiters polling at the rate they asked for.
    async fn subscribe(&self) -> bool;
}

/// The tasks of one handle waiting for a cancel, by id.
#[derive(Debug, Default)]
pub(super) struct Waiters {
    waiting: Mutex<HashMap<String, Arc<Notify>>>,
}

impl Waiters {
    /// The wake-up of `id` (shared by its waiters on this handle).
    fn of(&self, id: &str) -> Arc<Notify> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        waiting.entry(id.to_owned()).or_default().clone()
    }

    /// Drops `id`'s wake-up once no waiter holds it.
    fn release(&self, id: &str) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if waiting.get(id).is_some_and(|n| Arc::strong_count(n) == 1) {
            waiting.remove(id);
        }
    }

    /// Wakes the waiters of `id` (a notification from the backend).
    pub(super) fn wake(&self, id: &str) {
        let waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(notify) = waiting.get(id) {
            notify.notify_waiters();
        }
    }
}

fn not_found(id: &str) -> TaskStoreError {
    TaskStoreError::NotFound { id: id.to_owned() }
}

/// A backend's error as the store's.
pub(super) fn backend(
    store: &'static str,
    doing: impl std::fmt::Display,
    error: impl std::error::Error + Send + Sync + 'static,
) -> TaskStoreError {
    TaskStoreError::Backend {
        store,
        message: format!("{doing}: {error}"),
        source: Some(Box::new(error)),
    }
}

/// A record as its stored text.
pub(super) fn encode(store: &'static str, task: &TaskRecord) -> StoreResult<String> {
    serde_json::to_string(task)
        .map_err(|e| backend(store, format!("writing task `{}`", task.id), e))
}

/// A record read back from its stored text.
pub(super) fn decode(id: &str, text: &str) -> StoreResult<TaskRecord> {
    serde_json::from_str(text).map_err(|e| TaskStoreError::Corrupt {
        id: id.to_owned(),
        message: e.to_string(),
    })
}

/// What a change does to a record.
enum Change<T> {
    /// Write the changed record, answer `T`.
    Write(T),
    /// Leave the record as it was, answer `T`.
    Keep(T),
}

/// Applies `change` to the record `id` until it is written at the
/// version it was read at (or the change keeps it, or refuses).
async fn update<R: Records + ?Sized, T>(
    records: &R,
    id: &str,
    mut change: impl FnMut(&mut TaskRecord) -> StoreResult<Change<T>>,
) -> StoreResult<T> {
    for _ in 0..ATTEMPTS {
        let (mut task, version) = records.load(id).await?.ok_or_else(|| not_found(id))?;
        match change(&mut task)? {
            Change::Keep(answer) => return Ok(answer),
            Change::Write(answer) => {
                if records.replace(&task, version).await? {
                    return Ok(answer);
                }
            }
        }
    }
    Err(TaskStoreError::Backend {
        store: records.store_name(),
        message: format!(
            "task `{id}` changed under {ATTEMPTS} attempts in a row to change it; try again"
        ),
        source: None,
    })
}

/// Refuses `change` on an ended task, else stamps it as updated.
fn live(task: &mut TaskRecord, change: &'static str) -> StoreResult<()> {
    if task.status.is_terminal() {
        return Err(TaskStoreError::Ended {
            id: task.id.clone(),
            status: task.status,
            change,
        });
    }
    task.updated_at_ms = now_ms();
    Ok(())
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

pub(super) async fn create<R: Records + ?Sized>(records: &R, task: &TaskRecord) -> StoreResult<()> {
    if records.insert(task).await? {
        Ok(())
    } else {
        Err(TaskStoreError::AlreadyExists {
            id: task.id.clone(),
        })
    }
}

pub(super) async fn get<R: Records + ?Sized>(
    records: &R,
    id: &str,
    owner: Option<&str>,
) -> StoreResult<TaskRecord> {
    match records.load(id).await? {
        Some((task, _)) if task.visible_to(owner) => Ok(task),
        _ => Err(not_found(id)),
    }
}

pub(super) async fn get_any<R: Records + ?Sized>(records: &R, id: &str) -> StoreResult<TaskRecord> {
    Ok(records.load(id).await?.ok_or_else(|| not_found(id))?.0)
}

pub(super) async fn set_status_message<R: Records + ?Sized>(
    records: &R,
    id: &str,
    message: &str,
) -> StoreResult<()> {
    update(records, id, |task| {
        live(task, "status message")?;
        task.status_message = Some(message.to_owned());
        Ok(Change::Write(()))
    })
    .await
}

pub(super) async fn set_progress<R: Records + ?Sized>(
    records: &R,
    id: &str,
    progress: TaskProgress,
    message: Option<&str>,
) -> StoreResult<()> {
    update(records, id, |task| {
        live(task, "progress")?;
        task.progress = Some(progress.clone());
        if let Some(message) = message {
            task.status_message = Some(message.to_owned());
        }
        Ok(Change::Write(()))
    })
    .await
}

pub(super) async fn finish<R: Records + ?Sized>(
    records: &R,
    id: &str,
    outcome: TaskOutcome,
) -> StoreResult<bool> {
    update(records, id, |task| {
        if task.status.is_terminal() {
            return Ok(Change::Keep(false));
        }
        end(task, outcome.clone(), now_ms());
        Ok(Change::Write(true))
    })
    .await
}

pub(super) async fn request_input<R: Records + ?Sized>(
    records: &R,
    id: &str,
    key: &str,
    request: Value,
) -> StoreResult<()> {
    update(records, id, |task| {
        live(task, "input request")?;
        if task.input_keys.iter().any(|used| used == key) {
            return Err(TaskStoreError::InputKeyUsed {
                id: id.to_owned(),
                key: key.to_owned(),
            });
        }
        task.input_keys.push(key.to_owned());
        task.input_requests.insert(key.to_owned(), request.clone());
        task.status = TaskState::InputRequired;
        Ok(Change::Write(()))
    })
    .await
}

pub(super) async fn answer_inputs<R: Records + ?Sized>(
    records: &R,
    id: &str,
    owner: Option<&str>,
    answers: Map<String, Value>,
) -> StoreResult<Vec<String>> {
    update(records, id, |task| {
        if !task.visible_to(owner) {
            return Err(not_found(id));
        }
        if task.status.is_terminal() {
            return Ok(Change::Keep(Vec::new()));
        }
        let mut accepted = Vec::new();
        for (key, answer) in &answers {
            if task.input_requests.remove(key).is_some() {
                task.input_answers.insert(key.clone(), answer.clone());
                accepted.push(key.clone());
            }
        }
        if task.input_requests.is_empty() {
            task.status = TaskState::Working;
        }
        task.updated_at_ms = now_ms();
        Ok(Change::Write(accepted))
    })
    .await
}

pub(super) async fn take_answer<R: Records + ?Sized>(
    records: &R,
    id: &str,
    key: &str,
) -> StoreResult<Option<Value>> {
    update(records, id, |task| match task.input_answers.remove(key) {
        Some(answer) => Ok(Change::Write(Some(answer))),
        None => Ok(Change::Keep(None)),
    })
    .await
}

pub(super) async fn request_cancel<R: Records + ?Sized>(
    records: &R,
    id: &str,
    owner: Option<&str>,
) -> StoreResult<()> {
    let recorded = update(records, id, |task| {
        if !task.visible_to(owner) {
            return Err(not_found(id));
        }
        if task.status.is_terminal() || task.cancel_requested {
            return Ok(Change::Keep(false));
        }
        task.cancel_requested = true;
        task.updated_at_ms = now_ms();
        Ok(Change::Write(true))
    })
    .await?;
    if recorded {
        // The flag is written: a lost notification costs one poll.
        let _ = records.publish_cancel(id).await;
    }
    Ok(())
}

pub(super) async fn cancel_requested<R: Records + ?Sized>(
    records: &R,
    id: &str,
) -> StoreResult<bool> {
    Ok(get_any(records, id).await?.cancel_requested)
}

/// How often a waiter whose handle is subscribed still reads the flag
/// itself (a notification lost to a reconnect costs at most this): ten
/// times the poll it asked for, at most 2 s, never more often than asked.
fn fallback_poll(poll: Duration) -> Duration {
    (poll * 10).min(Duration::from_secs(2)).max(poll)
}

pub(super) async fn wait_cancel<R: Records + ?Sized>(
    records: &R,
    id: &str,
    poll: Duration,
) -> StoreResult<()> {
    let notify = records.waiters().of(id);
    let answer = async {
        loop {
            let subscribed = records.subscribe().await;
            // Registered before the flag is read: a cancel recorded after
            // the read wakes it.
            let woken = notify.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            match records.load_for_waiter(id).await? {
                Some((task, _)) if task.cancel_requested || task.status.is_terminal() => {
                    return Ok(())
                }
                Some(_) => {}
                None => return Ok(()),
            }
            let wait = if subscribed {
                fallback_poll(poll)
            } else {
                poll
            };
            tokio::select! {
                () = woken => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
    .await;
    drop(notify);
    records.waiters().release(id);
    answer
}

pub(super) async fn list<R: Records + ?Sized>(
    records: &R,
    owner: Option<&str>,
) -> StoreResult<Vec<TaskRecord>> {
    let mut tasks = records.owned(owner).await?;
    tasks.retain(|task| task.visible_to(owner));
    tasks.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    Ok(tasks)
}

pub(super) async fn renew_lease<R: Records + ?Sized>(
    records: &R,
    id: &str,
    holder: &str,
    duration: Duration,
) -> StoreResult<bool> {
    update(records, id, |task| {
        let held = task.lease.as_ref().is_some_and(|l| l.holder == holder);
        if task.status.is_terminal() || !held {
            return Ok(Change::Keep(false));
        }
        task.lease = Some(Lease::new(holder, duration));
        Ok(Change::Write(true))
    })
    .await
}

pub(super) async fn lapsed_leases<R: Records + ?Sized>(
    records: &R,
    limit: usize,
) -> StoreResult<Vec<TaskRecord>> {
    let now = now_ms();
    let mut lapsed = Vec::new();
    for id in records.lapsed_ids(now, limit).await? {
        if let Some((task, _)) = records.load(&id).await? {
            if !task.status.is_terminal() && task.lease.as_ref().is_some_and(|l| l.lapsed_at(now)) {
                lapsed.push(task);
            }
        }
    }
    lapsed.sort_by_key(|task| task.lease.as_ref().map(|lease| lease.expires_at_ms));
    lapsed.truncate(limit);
    Ok(lapsed)
}

pub(super) async fn claim_lapsed<R: Records + ?Sized>(
    records: &R,
    id: &str,
    holder: &str,
    duration: Duration,
) -> StoreResult<Option<Claimed>> {
    update(records, id, |task| {
        let now = now_ms();
        let Some(lapsed) = task
            .lease
            .clone()
            .filter(|lease| lease.lapsed_at(now) && !task.status.is_terminal())
        else {
            return Ok(Change::Keep(None));
        };
        task.lease = Some(Lease {
            holder: holder.to_owned(),
            expires_at_ms: now.saturating_add(duration_ms(duration)),
        });
        task.attempts = task.attempts.saturating_add(1);
        task.updated_at_ms = now;
        Ok(Change::Write(Some(Claimed {
            task: task.clone(),
            lapsed,
        })))
    })
    .await
}

pub(super) async fn sweep<R: Records + ?Sized>(records: &R) -> StoreResult<Swept> {
    let now = now_ms();
    let mut swept = Swept::default();
    for id in records.due_ids(now).await? {
        for _ in 0..ATTEMPTS {
            let Some((mut task, version)) = records.load(&id).await? else {
                break;
            };
            if task.expires_at_ms.is_none_or(|at| now < at) {
                break;
            }
            if task.status.is_terminal() {
                if records.remove(&id, version).await? {
                    swept.removed.push(id.clone());
                    break;
                }
            } else {
                let ttl = task.ttl_ms.unwrap_or_default();
                end(&mut task, expired_outcome(ttl), now);
                if records.replace(&task, version).await? {
                    swept.expired.push(id.clone());
                    break;
                }
            }
        }
    }
    Ok(swept)
}

/// The [`TaskStore`](super::TaskStore) methods of a [`Records`] backend.
macro_rules! versioned_task_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl super::TaskStore for $store {
            fn name(&self) -> &'static str {
                super::versioned::Records::store_name(self)
            }
            async fn create(&self, task: &super::TaskRecord) -> super::StoreResult<()> {
                super::versioned::create(self, task).await
            }
            async fn get(
                &self,
                id: &str,
                owner: Option<&str>,
            ) -> super::StoreResult<super::TaskRecord> {
                super::versioned::get(self, id, owner).await
            }
            async fn get_any(&self, id: &str) -> super::StoreResult<super::TaskRecord> {
                super::versioned::get_any(self, id).await
            }
            async fn set_status_message(&self, id: &str, message: &str) -> super::StoreResult<()> {
                super::versioned::set_status_message(self, id, message).await
            }
            async fn set_progress(
                &self,
                id: &str,
                progress: super::TaskProgress,
                message: Option<&str>,
            ) -> super::StoreResult<()> {
                super::versioned::set_progress(self, id, progress, message).await
            }
            async fn finish(
                &self,
                id: &str,
                outcome: super::TaskOutcome,
            ) -> super::StoreResult<bool> {
                super::versioned::finish(self, id, outcome).await
            }
            async fn request_input(
                &self,
                id: &str,
                key: &str,
                request: serde_json::Value,
            ) -> super::StoreResult<()> {
                super::versioned::request_input(self, id, key, request).await
            }
            async fn answer_inputs(
                &self,
                id: &str,
                owner: Option<&str>,
                answers: serde_json::Map<String, serde_json::Value>,
            ) -> super::StoreResult<Vec<String>> {
                super::versioned::answer_inputs(self, id, owner, answers).await
            }
            async fn take_answer(
                &self,
                id: &str,
                key: &str,
            ) -> super::StoreResult<Option<serde_json::Value>> {
                super::versioned::take_answer(self, id, key).await
            }
            async fn request_cancel(
                &self,
                id: &str,
                owner: Option<&str>,
            ) -> super::StoreResult<()> {
                super::versioned::request_cancel(self, id, owner).await
            }
            async fn cancel_requested(&self, id: &str) -> super::StoreResult<bool> {
                super::versioned::cancel_requested(self, id).await
            }
            async fn wait_cancel(
                &self,
                id: &str,
                poll: std::time::Duration,
            ) -> super::StoreResult<()> {
                super::versioned::wait_cancel(self, id, poll).await
            }
            async fn list(
                &self,
                owner: Option<&str>,
            ) -> super::StoreResult<Vec<super::TaskRecord>> {
                super::versioned::list(self, owner).await
            }
            async fn renew_lease(
                &self,
                id: &str,
                holder: &str,
                duration: std::time::Duration,
            ) -> super::StoreResult<bool> {
                super::versioned::renew_lease(self, id, holder, duration).await
            }
            async fn lapsed_leases(
                &self,
                limit: usize,
            ) -> super::StoreResult<Vec<super::TaskRecord>> {
                super::versioned::lapsed_leases(self, limit).await
            }
            async fn claim_lapsed(
                &self,
                id: &str,
                holder: &str,
                duration: std::time::Duration,
            ) -> super::StoreResult<Option<super::Claimed>> {
                super::versioned::claim_lapsed(self, id, holder, duration).await
            }
            async fn sweep(&self) -> super::StoreResult<super::Swept> {
                super::versioned::sweep(self).await
            }
        }
    };
}
pub(super) use versioned_task_store;
