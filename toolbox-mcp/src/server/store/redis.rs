//! Tasks kept in Redis (feature `task-redis`), on the `redis` crate's
//! tokio connection manager.

use std::sync::Arc;

use redis::aio::ConnectionManager;
use redis::AsyncCommands;

use super::versioned::{self, backend, decode, encode, Records, Waiters};
use super::{StoreResult, TaskRecord};

/// How long Redis keeps a record past the time [`sweep`](super::TaskStore::sweep)
/// would remove it, so a store nobody sweeps does not grow for ever while a
/// sweeping one reports what it removed: 10 minutes.
const GRACE_MS: u64 = 10 * 60 * 1000;

/// Stores a new record (KEYS: record, owner index, leases, expiries;
/// ARGV: id, record, created, lease expiry or '', expiry or '', key expiry or '').
const INSERT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'version', 1)
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1]) end
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1]) end
if ARGV[6] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[6]) end
return 1
";

/// Replaces a record at a version (KEYS as INSERT's; ARGV as INSERT's
/// and the version read).
const REPLACE: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[7] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'version', tonumber(ARGV[7]) + 1)
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
else redis.call('ZREM', KEYS[3], ARGV[1]) end
if ARGV[5] ~= '' then redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
else redis.call('ZREM', KEYS[4], ARGV[1]) end
if ARGV[6] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[6])
else redis.call('PERSIST', KEYS[1]) end
return 1
";

/// Removes a record at a version (KEYS as INSERT's; ARGV: id, version).
const REMOVE: &str = r"
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
";

/// Served tasks in Redis, shared by every server given the same URL and
/// prefix: any replica answers any task, and a task outlives the process
/// that created it. Needs Redis 6 or later (Lua scripting, pub/sub).
///
/// # Key layout
///
/// Under the prefix (`toolbox:tasks:` unless given):
///
/// | key | type | holds |
/// |---|---|---|
/// | `{prefix}task:{id}` | hash | `record`: the [`TaskRecord`] as JSON; `version`: its version |
/// | `{prefix}owner:-` / `{prefix}owner:={owner}` | sorted set | the ids of the tasks of no owner / of `owner`, scored by creation (ms) |
/// | `{prefix}leases` | sorted set | the ids of live tasks with a lease, scored by its expiry (ms) |
/// | `{prefix}expiries` | sorted set | the ids of tasks with a ttl, scored by `expires_at_ms` |
/// | `{prefix}cancel` | pub/sub channel | the id of each task whose cancel was just recorded |
///
/// Each change is a Lua script that writes the record only at the version
/// it was read at, and its indexes with it, so concurrent changes to one
/// task from several replicas apply one after the other (a task ended
/// twice keeps its first end). A record with a ttl also carries a Redis
/// expiry (`PEXPIREAT`) 10 minutes past the time a sweep would remove it,
/// so a deployment that never sweeps does not grow for ever; the index
/// entries of such a record are dropped when next read.
///
/// A runner waiting for a cancel ([`wait_cancel`](super::TaskStore::wait_cancel))
/// is woken through the channel (one subscription per handle) and polls
/// the flag besides.
///
/// # Example
///
/// ```no_run
/// use std::sync::Arc;
/// use toolbox_mcp::server::{RedisTaskStore, TaskStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let store: Arc<dyn TaskStore> = Arc::new(RedisTaskStore::connect("redis://127.0.0.1:6379/").await?);
/// # let _ = store;
/// # Ok(())
/// # }
/// ```
pub struct RedisTaskStore {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: String,
    insert: redis::Script,
    replace: redis::Script,
    remove: redis::Script,
    waiters: Arc<Waiters>,
    /// The task that reads the cancel channel; connecting it is done by
    /// one waiter while the others wait.
    subscription: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        if let Some(task) = self.subscription.get_mut().take() {
            task.abort();
        }
    }
}

const STORE: &str = "redis";

impl RedisTaskStore {
    /// Connects to the Redis server at `url` (`redis://host:port/db`,
    /// with `user:password@` where it asks for them), keys under
    /// `toolbox:tasks:`. Fails, naming the URL without its password, when
    /// the URL is not one or the server does not answer.
    pub async fn connect(url: &str) -> StoreResult<RedisTaskStore> {
        RedisTaskStore::connect_prefixed(url, "toolbox:tasks:").await
    }

    /// As [`connect`](RedisTaskStore::connect), keys under `prefix`
    /// (several deployments on one server each with its own).
    pub async fn connect_prefixed(url: &str, prefix: &str) -> StoreResult<RedisTaskStore> {
        let shown = crate::client::shown_url(url);
        let client = redis::Client::open(url)
            .map_err(|e| backend(STORE, format!("the URL `{shown}` is not a Redis URL"), e))?;
        // A loaded server answers late rather than never: 10 s for an
        // answer (the crate's default is 500 ms), 5 s to connect, as the
        // PostgreSQL store's pool waits.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(std::time::Duration::from_secs(10)))
            .set_connection_timeout(Some(std::time::Duration::from_secs(5)));
        let connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| backend(STORE, format!("connecting to {shown}"), e))?;
        Ok(RedisTaskStore {
            client,
            connection,
            prefix: prefix.to_owned(),
            insert: redis::Script::new(INSERT),
            replace: redis::Script::new(REPLACE),
            remove: redis::Script::new(REMOVE),
            waiters: Arc::default(),
            subscription: tokio::sync::Mutex::new(None),
        })
    }

    /// The prefix of its keys.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn owner_key(&self, owner: Option<&str>) -> String {
        match owner {
            None => format!("{}owner:-", self.prefix),
            Some(owner) => format!("{}owner:={owner}", self.prefix),
        }
    }

    fn leases_key(&self) -> String {
        format!("{}leases", self.prefix)
    }

    fn expiries_key(&self) -> String {
        format!("{}expiries", self.prefix)
    }

    fn channel(&self) -> String {
        format!("{}cancel", self.prefix)
    }

    /// The script `script` on `task`'s keys with its index arguments, and
    /// `extra` after them.
    async fn write(
        &self,
        script: &redis::Script,
        task: &TaskRecord,
        extra: Option<u64>,
    ) -> StoreResult<bool> {
        let record = encode(STORE, task)?;
        let number = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
        let key_expiry = task.expires_at_ms.map(|at| {
            let live_ttl = if task.status.is_terminal() {
                0
            } else {
                task.ttl_ms.unwrap_or_default()
            };
            at.saturating_add(live_ttl).saturating_add(GRACE_MS)
        });
        let mut invocation = script.prepare_invoke();
        invocation
            .key(self.task_key(&task.id))
            .key(self.owner_key(task.owner.as_deref()))
            .key(self.leases_key())
            .key(self.expiries_key())
            .arg(&task.id)
            .arg(record)
            .arg(task.created_at_ms)
            .arg(number(task.lease.as_ref().map(|l| l.expires_at_ms)))
            .arg(number(task.expires_at_ms))
            .arg(number(key_expiry));
        if let Some(version) = extra {
            invocation.arg(version.to_string());
        }
        let written: i64 = invocation
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|e| backend(STORE, format!("writing task `{}`", task.id), e))?;
        Ok(written == 1)
    }

    async fn ids_scored_until(
        &self,
        key: String,
        now: u64,
        limit: Option<usize>,
    ) -> StoreResult<Vec<String>> {
        let mut connection = self.connection.clone();
        let ids: Vec<String> = match limit {
            Some(limit) => {
                connection
                    .zrangebyscore_limit(
                        &key,
                        "-inf",
                        now,
                        0,
                        isize::try_from(limit).unwrap_or(isize::MAX),
                    )
                    .await
            }
            None => connection.zrangebyscore(&key, "-inf", now).await,
        }
        .map_err(|e| backend(STORE, format!("reading `{key}`"), e))?;
        Ok(ids)
    }
}

#[async_trait::async_trait]
impl Records for RedisTaskStore {
    fn store_name(&self) -> &'static str {
        STORE
    }

    async fn load(&self, id: &str) -> StoreResult<Option<(TaskRecord, u64)>> {
        let (record, version): (Option<String>, Option<u64>) = redis::cmd("HMGET")
            .arg(self.task_key(id))
            .arg("record")
            .arg("version")
            .query_async(&mut self.connection.clone())
            .await
            .map_err(|e| backend(STORE, format!("reading task `{id}`"), e))?;
        match (record, version) {
            (Some(record), Some(version)) => Ok(Some((decode(id, &record)?, version))),
            _ => Ok(None),
        }
    }

    async fn insert(&self, task: &TaskRecord) -> StoreResult<bool> {
        self.write(&self.insert, task, None).await
    }

    async fn replace(&self, task: &TaskRecord, version: u64) -> StoreResult<bool> {
        self.write(&self.replace, task, Some(version)).await
    }

    async fn remove(&self, id: &str, version: u64) -> StoreResult<bool> {
        let Some((task, _)) = self.load(id).await? else {
            return Ok(false);
        };
        let removed: i64 = self
            .remove
            .key(self.task_key(id))
            .key(self.owner_key(task.owner.as_deref()))
            .key(self.leases_key())
            .key(self.expiries_key())
            .arg(id)
            .arg(version.to_string())
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|e| backend(STORE, format!("removing task `{id}`"), e))?;
        Ok(removed == 1)
    }

    async fn owned(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        let key = self.owner_key(owner);
        let mut connection = self.connection.clone();
        let ids: Vec<String> = connection
            .zrange(&key, 0, -1)
            .await
            .map_err(|e| backend(STORE, format!("reading `{key}`"), e))?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hget(self.task_key(id), "record");
        }
        let records: Vec<Option<String>> = pipe
            .query_async(&mut connection)
            .await
            .map_err(|e| backend(STORE, format!("reading the tasks of `{key}`"), e))?;
        let mut tasks = Vec::with_capacity(ids.len());
        let mut gone = Vec::new();
        for (id, record) in ids.iter().zip(records) {
            match record {
                Some(record) => tasks.push(decode(id, &record)?),
                // Removed by Redis's own expiry: its index entry goes too.
                None => gone.push(id.clone()),
            }
        }
        if !gone.is_empty() {
            let _: Result<i64, _> = connection.zrem(&key, gone).await;
        }
        Ok(tasks)
    }

    async fn lapsed_ids(&self, now: u64, limit: usize) -> StoreResult<Vec<String>> {
        self.ids_scored_until(self.leases_key(), now, Some(limit))
            .await
    }

    async fn due_ids(&self, now: u64) -> StoreResult<Vec<String>> {
        let ids = self
            .ids_scored_until(self.expiries_key(), now, None)
            .await?;
        // Entries whose record Redis already expired: dropped here.
        let mut due = Vec::with_capacity(ids.len());
        let mut connection = self.connection.clone();
        for id in ids {
            let exists: bool = connection
                .exists(self.task_key(&id))
                .await
                .map_err(|e| backend(STORE, format!("reading task `{id}`"), e))?;
            if exists {
                due.push(id);
            } else {
                for key in [self.expiries_key(), self.leases_key()] {
                    let _: Result<i64, _> = connection.zrem(key, &id).await;
                }
            }
        }
        Ok(due)
    }

    async fn publish_cancel(&self, id: &str) -> StoreResult<()> {
        let _: i64 = self
            .connection
            .clone()
            .publish(self.channel(), id)
            .await
            .map_err(|e| backend(STORE, format!("announcing the cancel of task `{id}`"), e))?;
        Ok(())
    }

    fn waiters(&self) -> &Waiters {
        &self.waiters
    }

    async fn subscribe(&self) -> bool {
        let mut running = self.subscription.lock().await;
        if running.as_ref().is_some_and(|task| !task.is_finished()) {
            return true;
        }
        let Ok(mut pubsub) = self.client.get_async_pubsub().await else {
            return false;
        };
        if pubsub.subscribe(self.channel()).await.is_err() {
            return false;
        }
        let waiters = self.waiters.clone();
        *running = Some(tokio::spawn(async move {
            use futures_util::StreamExt as _;
            let mut messages = pubsub.into_on_message();
            while let Some(message) = messages.next().await {
                if let Ok(id) = message.get_payload::<String>() {
                    waiters.wake(&id);
                }
            }
        }));
        true
    }
}

versioned::versioned_task_store!(RedisTaskStore);
