//! Tasks kept in PostgreSQL (feature `task-postgres`), on `tokio-postgres`
//! with a `deadpool-postgres` pool.

use std::sync::Arc;

use deadpool_postgres::{Manager, Pool, Runtime};
use tokio_postgres::NoTls;

use super::versioned::{self, backend, decode, encode, Records, Waiters};
use super::{StoreResult, TaskRecord, TaskStoreError};

const STORE: &str = "postgres";

/// Served tasks in PostgreSQL, shared by every server given the same
/// database and table: any replica answers any task, and a task outlives
/// the process that created it. Needs PostgreSQL 11 or later.
///
/// # Schema
///
/// Created on [`connect`](PostgresTaskStore::connect) when missing (under
/// an advisory lock, so replicas starting together do not race), in the
/// table `toolbox_tasks` unless given:
///
/// ```sql
/// CREATE TABLE IF NOT EXISTS toolbox_tasks (
///     id                  TEXT PRIMARY KEY,
///     owner               TEXT,             -- NULL without authorization
///     status              TEXT NOT NULL,    -- working, input_required, completed, failed, cancelled
///     created_at_ms       BIGINT NOT NULL,
///     lease_expires_at_ms BIGINT,           -- live tasks with a runner
///     expires_at_ms       BIGINT,           -- ttl: fails when live, removed when ended
///     version             BIGINT NOT NULL,  -- one more at each change
///     record              JSON NOT NULL     -- the whole TaskRecord
/// );
/// CREATE INDEX IF NOT EXISTS toolbox_tasks_owner ON toolbox_tasks (owner, created_at_ms);
/// CREATE INDEX IF NOT EXISTS toolbox_tasks_lease ON toolbox_tasks (lease_expires_at_ms)
///     WHERE lease_expires_at_ms IS NOT NULL;
/// CREATE INDEX IF NOT EXISTS toolbox_tasks_expiry ON toolbox_tasks (expires_at_ms)
///     WHERE expires_at_ms IS NOT NULL;
/// ```
///
/// Each change is an `UPDATE … WHERE id = $1 AND version = $2` of the
/// record as read, so concurrent changes to one task from several
/// replicas apply one after the other (a task ended twice keeps its first
/// end). A recorded cancel is announced with `NOTIFY toolbox_tasks_cancel`
/// (the task id as payload); a runner waiting for it
/// ([`wait_cancel`](super::TaskStore::wait_cancel)) listens on a
/// connection of its handle's own and polls the flag besides.
///
/// # Example
///
/// ```no_run
/// use std::sync::Arc;
/// use toolbox_mcp::server::{PostgresTaskStore, TaskStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let store: Arc<dyn TaskStore> =
///     Arc::new(PostgresTaskStore::connect("postgres://toolbox@127.0.0.1/app").await?);
/// # let _ = store;
/// # Ok(())
/// # }
/// ```
pub struct PostgresTaskStore {
    config: tokio_postgres::Config,
    shown: String,
    pool: Pool,
    table: String,
    waiters: Arc<Waiters>,
    /// The listening connection's client and the task that reads its
    /// notifications.
    /// (Connecting it is done by one waiter while the others wait.)
    /// Its client also reads the records waiters poll: queries on one
    /// client are pipelined, so a waiter's read left pending never holds a
    /// pooled connection another call needs.
    listener:
        tokio::sync::Mutex<Option<(Arc<tokio_postgres::Client>, tokio::task::JoinHandle<()>)>>,
}

impl std::fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTaskStore")
            .field("url", &self.shown)
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresTaskStore {
    fn drop(&mut self) {
        if let Some((_, task)) = self.listener.get_mut().take() {
            task.abort();
        }
    }
}

/// Milliseconds as PostgreSQL's `BIGINT`.
fn big(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

impl PostgresTaskStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`
    /// or a `key=value` connection string; without TLS), tasks in the table
    /// `toolbox_tasks`, created when missing. Fails, naming the URL
    /// without its password, when it is not one or the database does not
    /// answer.
    pub async fn connect(url: &str) -> StoreResult<PostgresTaskStore> {
        PostgresTaskStore::connect_table(url, "toolbox_tasks").await
    }

    /// As [`connect`](PostgresTaskStore::connect), tasks in `table` (a
    /// lowercase SQL identifier: letters, digits and `_`, at most 48
    /// characters), its indexes and notification channel named after it.
    pub async fn connect_table(url: &str, table: &str) -> StoreResult<PostgresTaskStore> {
        let valid = !table.is_empty()
            && table.len() <= 48
            && table.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && table
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Err(TaskStoreError::Backend {
                store: STORE,
                message: format!(
                    "the table name `{}` is not a lowercase SQL identifier (letters, digits and `_`, at most 48)",
                    toolbox_core::args::echo(table)
                ),
                source: None,
            });
        }
        let shown = crate::client::shown_url(url);
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            backend(
                STORE,
                format!("the URL `{shown}` is not a PostgreSQL URL"),
                e,
            )
        })?;
        let pool = Pool::builder(Manager::new(config.clone(), NoTls))
            .runtime(Runtime::Tokio1)
            .max_size(16)
            // A database that stops answering fails calls, never hangs them.
            .wait_timeout(Some(std::time::Duration::from_secs(10)))
            .create_timeout(Some(std::time::Duration::from_secs(10)))
            .build()
            .map_err(|e| backend(STORE, format!("a pool for {shown}"), e))?;
        let store = PostgresTaskStore {
            config,
            shown,
            pool,
            table: table.to_owned(),
            waiters: Arc::default(),
            listener: tokio::sync::Mutex::new(None),
        };
        store.create_schema().await?;
        Ok(store)
    }

    /// The table its tasks are in.
    pub fn table(&self) -> &str {
        &self.table
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        self.pool
            .get()
            .await
            .map_err(|e| backend(STORE, format!("connecting to {}", self.shown), e))
    }

    async fn create_schema(&self) -> StoreResult<()> {
        let t = &self.table;
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(|e| backend(STORE, format!("creating the table `{t}`"), e))?;
        transaction
            .batch_execute(&format!(
                "SELECT pg_advisory_xact_lock(hashtext('toolbox task store {t}'));
                 CREATE TABLE IF NOT EXISTS {t} (
                     id TEXT PRIMARY KEY,
                     owner TEXT,
                     status TEXT NOT NULL,
                     created_at_ms BIGINT NOT NULL,
                     lease_expires_at_ms BIGINT,
                     expires_at_ms BIGINT,
                     version BIGINT NOT NULL,
                     record JSON NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS {t}_owner ON {t} (owner, created_at_ms);
                 CREATE INDEX IF NOT EXISTS {t}_lease ON {t} (lease_expires_at_ms)
                     WHERE lease_expires_at_ms IS NOT NULL;
                 CREATE INDEX IF NOT EXISTS {t}_expiry ON {t} (expires_at_ms)
                     WHERE expires_at_ms IS NOT NULL;"
            ))
            .await
            .map_err(|e| backend(STORE, format!("creating the table `{t}`"), e))?;
        transaction
            .commit()
            .await
            .map_err(|e| backend(STORE, format!("creating the table `{t}`"), e))
    }

    fn channel(&self) -> String {
        format!("{}_cancel", self.table)
    }

    /// Runs `sql` with `params`: the rows it changed.
    async fn execute(
        &self,
        doing: impl std::fmt::Display,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<u64> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(|e| backend(STORE, &doing, e))?;
        client
            .execute(&statement, params)
            .await
            .map_err(|e| backend(STORE, &doing, e))
    }

    /// Runs the query `sql` with `params`.
    async fn query(
        &self,
        doing: impl std::fmt::Display,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<tokio_postgres::Row>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(|e| backend(STORE, &doing, e))?;
        client
            .query(&statement, params)
            .await
            .map_err(|e| backend(STORE, &doing, e))
    }

    fn ids(rows: Vec<tokio_postgres::Row>) -> Vec<String> {
        rows.iter().map(|row| row.get(0)).collect()
    }
}

#[async_trait::async_trait]
impl Records for PostgresTaskStore {
    fn store_name(&self) -> &'static str {
        STORE
    }

    async fn load(&self, id: &str) -> StoreResult<Option<(TaskRecord, u64)>> {
        let sql = format!(
            "SELECT record::text, version FROM {} WHERE id = $1",
            self.table
        );
        let rows = self
            .query(format!("reading task `{id}`"), &sql, &[&id])
            .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let record: String = row.get(0);
        let version: i64 = row.get(1);
        Ok(Some((
            decode(id, &record)?,
            u64::try_from(version).unwrap_or_default(),
        )))
    }

    async fn load_for_waiter(&self, id: &str) -> StoreResult<Option<(TaskRecord, u64)>> {
        let client = {
            let listener = self.listener.lock().await;
            match listener.as_ref() {
                Some((client, task)) if !task.is_finished() => client.clone(),
                _ => return self.load(id).await,
            }
        };
        let sql = format!(
            "SELECT record::text, version FROM {} WHERE id = $1",
            self.table
        );
        let rows = client
            .query(&sql, &[&id])
            .await
            .map_err(|e| backend(STORE, format!("reading task `{id}`"), e))?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let record: String = row.get(0);
        let version: i64 = row.get(1);
        Ok(Some((
            decode(id, &record)?,
            u64::try_from(version).unwrap_or_default(),
        )))
    }

    async fn insert(&self, task: &TaskRecord) -> StoreResult<bool> {
        let sql = format!(
            "INSERT INTO {} (id, owner, status, created_at_ms, lease_expires_at_ms, expires_at_ms, version, record)
             VALUES ($1, $2, $3, $4, $5, $6, 1, $7::text::json) ON CONFLICT (id) DO NOTHING",
            self.table
        );
        let record = encode(STORE, task)?;
        let inserted = self
            .execute(
                format!("creating task `{}`", task.id),
                &sql,
                &[
                    &task.id,
                    &task.owner,
                    &task.status.as_str(),
                    &big(task.created_at_ms),
                    &task.lease.as_ref().map(|l| big(l.expires_at_ms)),
                    &task.expires_at_ms.map(big),
                    &record,
                ],
            )
            .await?;
        Ok(inserted == 1)
    }

    async fn replace(&self, task: &TaskRecord, version: u64) -> StoreResult<bool> {
        let sql = format!(
            "UPDATE {} SET status = $2, lease_expires_at_ms = $3, expires_at_ms = $4,
                 record = $5::text::json, version = version + 1
             WHERE id = $1 AND version = $6",
            self.table
        );
        let record = encode(STORE, task)?;
        let updated = self
            .execute(
                format!("writing task `{}`", task.id),
                &sql,
                &[
                    &task.id,
                    &task.status.as_str(),
                    &task.lease.as_ref().map(|l| big(l.expires_at_ms)),
                    &task.expires_at_ms.map(big),
                    &record,
                    &big(version),
                ],
            )
            .await?;
        Ok(updated == 1)
    }

    async fn remove(&self, id: &str, version: u64) -> StoreResult<bool> {
        let sql = format!("DELETE FROM {} WHERE id = $1 AND version = $2", self.table);
        let removed = self
            .execute(format!("removing task `{id}`"), &sql, &[&id, &big(version)])
            .await?;
        Ok(removed == 1)
    }

    async fn owned(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        let t = &self.table;
        let rows = match owner {
            Some(owner) => {
                let sql = format!("SELECT id, record::text FROM {t} WHERE owner = $1");
                self.query("listing tasks", &sql, &[&owner]).await?
            }
            None => {
                let sql = format!("SELECT id, record::text FROM {t} WHERE owner IS NULL");
                self.query("listing tasks", &sql, &[]).await?
            }
        };
        rows.iter()
            .map(|row| decode(row.get(0), row.get(1)))
            .collect()
    }

    async fn lapsed_ids(&self, now: u64, limit: usize) -> StoreResult<Vec<String>> {
        let sql = format!(
            "SELECT id FROM {} WHERE lease_expires_at_ms <= $1 ORDER BY lease_expires_at_ms LIMIT $2",
            self.table
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .query("reading lapsed leases", &sql, &[&big(now), &limit])
            .await?;
        Ok(Self::ids(rows))
    }

    async fn due_ids(&self, now: u64) -> StoreResult<Vec<String>> {
        let sql = format!("SELECT id FROM {} WHERE expires_at_ms <= $1", self.table);
        let rows = self
            .query("reading expired tasks", &sql, &[&big(now)])
            .await?;
        Ok(Self::ids(rows))
    }

    async fn publish_cancel(&self, id: &str) -> StoreResult<()> {
        let channel = self.channel();
        self.query(
            format!("announcing the cancel of task `{id}`"),
            "SELECT pg_notify($1, $2)",
            &[&channel, &id],
        )
        .await?;
        Ok(())
    }

    fn waiters(&self) -> &Waiters {
        &self.waiters
    }

    async fn subscribe(&self) -> bool {
        let mut listener = self.listener.lock().await;
        if listener
            .as_ref()
            .is_some_and(|(_, task)| !task.is_finished())
        {
            return true;
        }
        let Ok((client, mut connection)) = self.config.connect(NoTls).await else {
            return false;
        };
        let waiters = self.waiters.clone();
        let task = tokio::spawn(async move {
            use futures_util::StreamExt as _;
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let tokio_postgres::AsyncMessage::Notification(note) = message {
                    waiters.wake(note.payload());
                }
            }
        });
        if client
            .batch_execute(&format!("LISTEN {}", self.channel()))
            .await
            .is_err()
        {
            task.abort();
            return false;
        }
        *listener = Some((Arc::new(client), task));
        true
    }
}

versioned::versioned_task_store!(PostgresTaskStore);
