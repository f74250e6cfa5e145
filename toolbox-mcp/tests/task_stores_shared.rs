//! The Redis and PostgreSQL task stores against real servers: the store
//! contract's suite (the one the in-memory store passes) on two handles of
//! each, the cancel notification across handles, the schema and key
//! layout, and the errors of a bad URL or an absent server.
//!
//! The servers' URLs come from `TOOLBOX_REDIS_URL` and
//! `TOOLBOX_POSTGRES_URL` (`scripts/task_stores` starts both on 127.0.0.1
//! and sets them; CI runs it). Without one, its tests say so and pass,
//! unless `TOOLBOX_REQUIRE_TASK_STORES` is set (as the script sets it),
//! where a missing URL fails them.
#![cfg(any(feature = "task-redis", feature = "task-postgres"))]

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolbox_mcp::server::store::suite;
use toolbox_mcp::server::{TaskRecord, TaskStore, TaskStoreError};

/// The URL in `variable`, or `None` (and why) when the tests cannot run.
fn url(variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("TOOLBOX_REQUIRE_TASK_STORES").is_none(),
                "{variable} is not set but TOOLBOX_REQUIRE_TASK_STORES is: run through scripts/task_stores"
            );
            eprintln!(
                "skipped: {variable} is not set (scripts/task_stores starts a server and sets it)"
            );
            None
        }
    }
}

/// A cancel recorded through `second` wakes a waiter on `first` at once,
/// though it polls only every minute: the notification channel works.
async fn cancel_wakes_through_the_channel(first: Arc<dyn TaskStore>, second: Arc<dyn TaskStore>) {
    let record = TaskRecord::new("slow", serde_json::json!({}), Some("alice".into()));
    first.create(&record).await.unwrap();
    let waiter = {
        let (first, id) = (first.clone(), record.id.clone());
        tokio::spawn(async move { first.wait_cancel(&id, Duration::from_secs(60)).await })
    };
    // The waiter's subscription is up once it polled the flag once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "no cancel yet");
    let sent = Instant::now();
    second
        .request_cancel(&record.id, Some("alice"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the notification wakes the waiter long before its minute's poll")
        .unwrap()
        .unwrap();
    eprintln!(
        "{}: a cancel woke its waiter in {:?}",
        first.name(),
        sent.elapsed()
    );
}

/// Two replicas end one task at once, many times: exactly one end wins,
/// and the task reads as that end.
async fn concurrent_finishes_keep_one(first: Arc<dyn TaskStore>, second: Arc<dyn TaskStore>) {
    use toolbox_mcp::server::TaskOutcome;
    for _ in 0..20 {
        let record = TaskRecord::new("slow", serde_json::json!({}), None);
        first.create(&record).await.unwrap();
        let ends = [(first.clone(), "first"), (second.clone(), "second")].map(|(store, name)| {
            let id = record.id.clone();
            tokio::spawn(async move {
                let outcome = TaskOutcome::failed(format!("ended by the {name} replica"));
                (store.finish(&id, outcome.clone()).await.unwrap(), outcome)
            })
        });
        let mut won = Vec::new();
        for end in ends {
            let (ended, outcome) = end.await.unwrap();
            if ended {
                won.push(outcome);
            }
        }
        assert_eq!(won.len(), 1, "exactly one of two concurrent ends wins");
        let read = second.get(&record.id, None).await.unwrap();
        assert_eq!(
            read.outcome.as_ref(),
            Some(&won[0]),
            "the winner's end is kept"
        );
    }
}

/// A runner's pattern: its `wait_cancel` stays pending (maybe mid-read)
/// while it renews its lease in the body of the same `select!`. With 40
/// such runners on one handle (more than a pool's connections) every
/// renewal still goes through: a pending waiter holds no connection.
async fn pending_waiters_hold_no_connection(store: Arc<dyn TaskStore>) {
    use toolbox_mcp::server::Lease;
    let runners: Vec<_> = (0..40)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let lease = Duration::from_secs(5);
                let record = TaskRecord::new("slow", serde_json::json!({}), None)
                    .with_lease(Lease::new("runner", lease));
                store.create(&record).await.unwrap();
                let stop = store.wait_cancel(&record.id, Duration::from_millis(1));
                tokio::pin!(stop);
                let mut renew = tokio::time::interval(Duration::from_millis(2));
                for _ in 0..25 {
                    tokio::select! {
                        answer = &mut stop => panic!("no cancel was asked: {answer:?}"),
                        _ = renew.tick() => {
                            assert!(store.renew_lease(&record.id, "runner", lease).await.unwrap());
                        }
                    }
                }
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), async {
        for runner in runners {
            runner.await.unwrap();
        }
    })
    .await
    .expect("every runner renewed its lease 25 times within 60 s");
}

#[cfg(feature = "task-redis")]
mod redis {
    use super::*;
    use toolbox_mcp::server::RedisTaskStore;

    async fn two(url: &str) -> (Arc<dyn TaskStore>, Arc<dyn TaskStore>) {
        (
            Arc::new(RedisTaskStore::connect(url).await.unwrap()),
            Arc::new(RedisTaskStore::connect(url).await.unwrap()),
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store_passes_the_store_suite() {
        let Some(url) = url("TOOLBOX_REDIS_URL") else {
            return;
        };
        let (first, second) = two(&url).await;
        suite::run_all(first.clone(), second.clone()).await;
        cancel_wakes_through_the_channel(first.clone(), second.clone()).await;
        concurrent_finishes_keep_one(first.clone(), second).await;
        pending_waiters_hold_no_connection(first).await;
    }

    #[tokio::test]
    async fn a_redis_task_is_one_hash_indexed_by_owner_with_a_key_expiry() {
        let Some(url) = url("TOOLBOX_REDIS_URL") else {
            return;
        };
        let prefix = format!("test:{}:", uuid::Uuid::new_v4());
        let store = RedisTaskStore::connect_prefixed(&url, &prefix)
            .await
            .unwrap();
        assert_eq!(store.prefix(), prefix);
        let record = TaskRecord::new("slow", serde_json::json!({"n": 1}), Some("bob".into()))
            .with_ttl(Duration::from_secs(60));
        store.create(&record).await.unwrap();
        let client = ::redis::Client::open(url.as_str()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        let key = format!("{prefix}task:{}", record.id);
        let (stored, version): (String, u64) = ::redis::cmd("HMGET")
            .arg(&key)
            .arg("record")
            .arg("version")
            .query_async(&mut connection)
            .await
            .unwrap();
        let read: TaskRecord = serde_json::from_str(&stored).unwrap();
        assert_eq!((read, version), (record.clone(), 1));
        let ttl_ms: i64 = ::redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .unwrap();
        // Live: ttl to fail it, ttl to keep it ended, 10 minutes' grace.
        assert!(
            (700_000..=720_000).contains(&ttl_ms),
            "the key expires past the task's retention: {ttl_ms} ms"
        );
        let owned: Vec<String> = ::redis::cmd("ZRANGE")
            .arg(format!("{prefix}owner:=bob"))
            .arg(0)
            .arg(-1)
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(owned, std::slice::from_ref(&record.id));
        // A record Redis expired itself leaves no listed task behind.
        let _: i64 = ::redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .unwrap();
        assert!(store.list(Some("bob")).await.unwrap().is_empty());
        let left: i64 = ::redis::cmd("ZCARD")
            .arg(format!("{prefix}owner:=bob"))
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(left, 0, "the stale index entry is dropped when read");
    }

    #[tokio::test]
    async fn a_bad_redis_url_or_an_absent_server_is_named_without_its_password() {
        let error = RedisTaskStore::connect("http://example.com/")
            .await
            .unwrap_err();
        assert!(
            error.to_string().starts_with(
                "the task store `redis` failed: the URL `http://example.com/` is not a Redis URL"
            ),
            "{error}"
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("redis://user:s3cret@127.0.0.1:{port}/");
        let error = RedisTaskStore::connect(&url).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!("connecting to redis://127.0.0.1:{port}/")),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
        assert!(matches!(
            error,
            TaskStoreError::Backend { store: "redis", .. }
        ));
    }
}

#[cfg(feature = "task-postgres")]
mod postgres {
    use super::*;
    use toolbox_mcp::server::PostgresTaskStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_store_suite() {
        let Some(url) = url("TOOLBOX_POSTGRES_URL") else {
            return;
        };
        let first: Arc<dyn TaskStore> = Arc::new(PostgresTaskStore::connect(&url).await.unwrap());
        let second: Arc<dyn TaskStore> = Arc::new(PostgresTaskStore::connect(&url).await.unwrap());
        suite::run_all(first.clone(), second.clone()).await;
        cancel_wakes_through_the_channel(first.clone(), second.clone()).await;
        concurrent_finishes_keep_one(first.clone(), second).await;
        pending_waiters_hold_no_connection(first).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replicas_starting_together_create_one_schema() {
        let Some(url) = url("TOOLBOX_POSTGRES_URL") else {
            return;
        };
        let table = format!("test_{}", uuid::Uuid::new_v4().simple());
        let starts: Vec<_> = (0..4)
            .map(|_| {
                let (url, table) = (url.clone(), table.clone());
                tokio::spawn(async move { PostgresTaskStore::connect_table(&url, &table).await })
            })
            .collect();
        let mut stores = Vec::new();
        for start in starts {
            stores.push(start.await.unwrap().expect("each replica connects"));
        }
        assert_eq!(stores[0].table(), table);
        let record = TaskRecord::new("slow", serde_json::json!({}), None);
        stores[0].create(&record).await.unwrap();
        assert_eq!(stores[3].get(&record.id, None).await.unwrap(), record);
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let row = client
            .query_one(
                &format!("SELECT status, version, record->>'tool' FROM {table} WHERE id = $1"),
                &[&record.id],
            )
            .await
            .unwrap();
        let (status, version, tool): (String, i64, String) = (row.get(0), row.get(1), row.get(2));
        assert_eq!(
            (status.as_str(), version, tool.as_str()),
            ("working", 1, "slow")
        );
        client
            .batch_execute(&format!("DROP TABLE {table}"))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_bad_table_name_url_or_absent_server_is_named() {
        let error = PostgresTaskStore::connect_table("postgres://127.0.0.1/x", "tasks; DROP")
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the task store `postgres` failed: the table name `tasks; DROP` is not a lowercase SQL identifier (letters, digits and `_`, at most 48)"
        );
        let error = PostgresTaskStore::connect("mysql://x@127.0.0.1/db")
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the URL `mysql://127.0.0.1/db` is not a PostgreSQL URL"),
            "{error}"
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("postgres://toolbox:s3cret@127.0.0.1:{port}/tasks");
        let error = PostgresTaskStore::connect(&url).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!("connecting to postgres://127.0.0.1:{port}/tasks")),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }
}
