//! The contract every [`TaskStore`] passes, as one suite a store's tests
//! run: `suite::run_all(first, second).await`, where `second` is another
//! handle on the same backend (another connection or pool; the same `Arc`
//! for a store of one process). It panics, naming the check, on the first
//! failure. Ids and owners are fresh per run, so it runs against a shared
//! backend that other runs left tasks in.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{Lease, TaskOutcome, TaskProgress, TaskRecord, TaskState, TaskStore, TaskStoreError};

/// Runs every check of the suite against `first`, with `second` another
/// handle on the same store.
pub async fn run_all(first: Arc<dyn TaskStore>, second: Arc<dyn TaskStore>) {
    create_and_get(&*first, &*second).await;
    tenancy(&*first).await;
    status_and_progress(&*first, &*second).await;
    finish_once(&*first, &*second).await;
    input_requests(&*first, &*second).await;
    cancel_across_handles(first.clone(), second.clone()).await;
    list_by_owner(&*first, &*second).await;
    expiry_sweep(&*first, &*second).await;
    leases(&*first, &*second).await;
    concurrent_creates(first.clone(), second.clone()).await;
}

/// A fresh owner for one check.
fn owner(name: &str) -> String {
    format!("{name}-{}", uuid::Uuid::new_v4())
}

fn task(owner: &str) -> TaskRecord {
    TaskRecord::new(
        "slow_echo",
        json!({"text": "hello", "n": 3}),
        Some(owner.to_owned()),
    )
}

fn not_found<T: std::fmt::Debug>(result: Result<T, TaskStoreError>, id: &str, what: &str) {
    match result {
        Err(TaskStoreError::NotFound { id: seen }) => {
            assert_eq!(seen, id, "{what}: NotFound names the id asked for");
        }
        other => panic!("{what}: expected NotFound for `{id}`, got {other:?}"),
    }
}

/// A created task reads back whole, from either handle; an id is created
/// once; an unknown id is not found, with a text naming it.
pub async fn create_and_get(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let mut record = task(&alice)
        .with_ttl(Duration::from_secs(600))
        .with_lease(Lease::new("replica-a", Duration::from_secs(30)));
    record.idempotent = true;
    record.caller = Some(json!({"subject": alice, "scopes": ["tools"], "claims": {}}));
    record.poll_interval_ms = Some(100);
    record.status_message = Some("queued".into());
    first.create(&record).await.expect("create");
    let read = second
        .get(&record.id, Some(&alice))
        .await
        .expect("create_and_get: the other handle reads a created task at once");
    assert_eq!(
        read, record,
        "create_and_get: every field reads back as written"
    );
    assert_eq!(
        first.get_any(&record.id).await.expect("get_any"),
        record,
        "create_and_get: get_any reads it whoever owns it"
    );
    match second.create(&record).await {
        Err(TaskStoreError::AlreadyExists { id }) => assert_eq!(id, record.id),
        other => panic!("create_and_get: a second create of one id is refused, got {other:?}"),
    }
    let unknown = uuid::Uuid::new_v4().to_string();
    let error = first.get(&unknown, Some(&alice)).await.unwrap_err();
    assert!(
        error.to_string().contains(&unknown),
        "create_and_get: the not-found text names the id: {error}"
    );
    not_found(first.get_any(&unknown).await, &unknown, "get_any unknown");
    assert_eq!(
        first
            .result(&record.id, Some(&alice))
            .await
            .expect("result"),
        None,
        "create_and_get: a live task has no result"
    );
}

/// Another owner neither reads, cancels, answers nor lists a task, and is
/// told exactly what an unknown id is told; a task without an owner is
/// not an owner's.
pub async fn tenancy(store: &dyn TaskStore) {
    let alice = owner("alice");
    let mallory = owner("mallory");
    let record = task(&alice);
    store.create(&record).await.expect("create");
    let id = record.id.as_str();
    not_found(store.get(id, Some(&mallory)).await, id, "tenancy get");
    not_found(store.get(id, None).await, id, "tenancy get without owner");
    not_found(store.result(id, Some(&mallory)).await, id, "tenancy result");
    not_found(
        store.request_cancel(id, Some(&mallory)).await,
        id,
        "tenancy cancel",
    );
    assert!(
        !store.cancel_requested(id).await.expect("cancel_requested"),
        "tenancy: another owner's cancel changed nothing"
    );
    not_found(
        store.answer_inputs(id, Some(&mallory), Map::new()).await,
        id,
        "tenancy answer_inputs",
    );
    let listed = store.list(Some(&mallory)).await.expect("list");
    assert!(
        listed.iter().all(|task| task.id != id),
        "tenancy: another owner's list leaves the task out"
    );
    let other = store.get(id, Some(&mallory)).await.unwrap_err().to_string();
    let unknown_id = uuid::Uuid::new_v4().to_string();
    let unknown = store
        .get(&unknown_id, Some(&mallory))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        other.replace(id, "ID"),
        unknown.replace(&unknown_id, "ID"),
        "tenancy: another's task reads as an unknown one"
    );
    let anonymous = TaskRecord::new("slow_echo", Value::Null, None);
    store.create(&anonymous).await.expect("create anonymous");
    store
        .get(&anonymous.id, None)
        .await
        .expect("tenancy: a task without owner reads without owner");
    not_found(
        store.get(&anonymous.id, Some(&alice)).await,
        &anonymous.id,
        "tenancy: an ownerless task is not an owner's",
    );
}

/// Status messages and progress land and move `updated_at_ms`; an ended
/// task refuses them, naming the change.
pub async fn status_and_progress(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let record = task(&alice);
    first.create(&record).await.expect("create");
    tokio::time::sleep(Duration::from_millis(5)).await;
    first
        .set_status_message(&record.id, "1 of 3")
        .await
        .expect("set_status_message");
    let read = second.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(read.status_message.as_deref(), Some("1 of 3"));
    assert_eq!(read.status, TaskState::Working);
    assert!(
        read.updated_at_ms > record.updated_at_ms,
        "status_and_progress: a change moves updated_at_ms ({} then {})",
        record.updated_at_ms,
        read.updated_at_ms
    );
    let progress = TaskProgress {
        progress: 2.0,
        total: Some(3.0),
    };
    second
        .set_progress(&record.id, progress.clone(), Some("2 of 3"))
        .await
        .expect("set_progress");
    let read = first.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(read.progress, Some(progress.clone()));
    assert_eq!(read.status_message.as_deref(), Some("2 of 3"));
    first
        .set_progress(
            &record.id,
            TaskProgress {
                progress: 3.0,
                total: None,
            },
            None,
        )
        .await
        .expect("set_progress without message");
    let read = first.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(
        read.status_message.as_deref(),
        Some("2 of 3"),
        "status_and_progress: progress without message keeps the message"
    );
    first
        .finish(&record.id, TaskOutcome::Cancelled)
        .await
        .expect("finish");
    match second.set_status_message(&record.id, "late").await {
        Err(error @ TaskStoreError::Ended { .. }) => {
            let text = error.to_string();
            assert!(
                text.contains(&record.id) && text.contains("cancelled"),
                "status_and_progress: the refusal names the task and how it ended: {text}"
            );
        }
        other => panic!("status_and_progress: an ended task refuses a message, got {other:?}"),
    }
    assert!(matches!(
        second.set_progress(&record.id, progress, None).await,
        Err(TaskStoreError::Ended { .. })
    ));
    let missing = uuid::Uuid::new_v4().to_string();
    not_found(
        first.set_status_message(&missing, "x").await,
        &missing,
        "set_status_message unknown",
    );
}

/// The first end wins; the result reads back from either handle; the lease
/// and outstanding input requests go; retention starts.
pub async fn finish_once(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let record = task(&alice)
        .with_ttl(Duration::from_secs(600))
        .with_lease(Lease::new("replica-a", Duration::from_secs(30)));
    first.create(&record).await.expect("create");
    first
        .request_input(
            &record.id,
            "confirm",
            json!({"method": "elicitation/create"}),
        )
        .await
        .expect("request_input");
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    assert!(
        first
            .finish(
                &record.id,
                TaskOutcome::Completed {
                    result: result.clone()
                }
            )
            .await
            .expect("finish"),
        "finish_once: the first finish ends the task"
    );
    assert!(
        !second
            .finish(&record.id, TaskOutcome::failed("too late"))
            .await
            .expect("second finish"),
        "finish_once: a second finish reports it did not end the task"
    );
    let read = second.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(read.status, TaskState::Completed);
    assert_eq!(
        read.outcome,
        Some(TaskOutcome::Completed {
            result: result.clone()
        }),
        "finish_once: the first outcome stays"
    );
    assert_eq!(
        read.lease, None,
        "finish_once: an ended task holds no lease"
    );
    assert!(
        read.input_requests.is_empty(),
        "finish_once: no input request is outstanding on an ended task"
    );
    let retention = read.expires_at_ms.expect("finish_once: retention set");
    assert!(
        retention >= read.updated_at_ms + 600_000 - 1_000,
        "finish_once: an ended task is kept a ttl past its end"
    );
    assert_eq!(
        first
            .result(&record.id, Some(&alice))
            .await
            .expect("result"),
        Some(TaskOutcome::Completed { result })
    );
    let failed = task(&alice);
    first.create(&failed).await.expect("create");
    first
        .finish(&failed.id, TaskOutcome::failed("the tool broke"))
        .await
        .expect("finish failed");
    let read = second.get(&failed.id, Some(&alice)).await.expect("get");
    assert_eq!(read.status, TaskState::Failed);
    assert_eq!(
        read.outcome,
        Some(TaskOutcome::Failed {
            error: json!({"code": -32603, "message": "the tool broke"})
        })
    );
}

/// Input requests: `input_required` while one is outstanding, keys used
/// once, answers accepted for outstanding keys only and taken once.
pub async fn input_requests(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let record = task(&alice);
    first.create(&record).await.expect("create");
    let question = json!({"method": "elicitation/create", "params": {"message": "sure?"}});
    first
        .request_input(&record.id, "q1", question.clone())
        .await
        .expect("request_input");
    first
        .request_input(
            &record.id,
            "q2",
            json!({"method": "sampling/createMessage"}),
        )
        .await
        .expect("request_input q2");
    let read = second.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(read.status, TaskState::InputRequired);
    assert_eq!(read.input_requests.get("q1"), Some(&question));
    match first.request_input(&record.id, "q1", json!({})).await {
        Err(error @ TaskStoreError::InputKeyUsed { .. }) => {
            assert!(error.to_string().contains("`q1`"), "{error}");
        }
        other => panic!("input_requests: a used key is refused, got {other:?}"),
    }
    let mut answers = Map::new();
    answers.insert("q1".into(), json!({"action": "accept"}));
    answers.insert("nope".into(), json!({"action": "accept"}));
    let accepted = second
        .answer_inputs(&record.id, Some(&alice), answers.clone())
        .await
        .expect("answer_inputs");
    assert_eq!(
        accepted,
        vec!["q1".to_owned()],
        "input_requests: only outstanding keys are accepted"
    );
    let read = first.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(
        read.status,
        TaskState::InputRequired,
        "input_requests: still input_required while q2 is outstanding"
    );
    assert_eq!(
        second
            .answer_inputs(&record.id, Some(&alice), answers)
            .await
            .expect("again"),
        Vec::<String>::new(),
        "input_requests: an answered key is not accepted twice"
    );
    assert_eq!(
        first.take_answer(&record.id, "q1").await.expect("take"),
        Some(json!({"action": "accept"}))
    );
    assert_eq!(
        first.take_answer(&record.id, "q1").await.expect("take"),
        None,
        "input_requests: an answer is taken once"
    );
    assert_eq!(
        first.take_answer(&record.id, "q2").await.expect("take"),
        None
    );
    let mut last = Map::new();
    last.insert("q2".into(), json!({"role": "assistant"}));
    second
        .answer_inputs(&record.id, Some(&alice), last)
        .await
        .expect("answer q2");
    let read = first.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(
        read.status,
        TaskState::Working,
        "input_requests: working again once nothing is outstanding"
    );
    first
        .finish(&record.id, TaskOutcome::Cancelled)
        .await
        .expect("finish");
    assert!(matches!(
        first.request_input(&record.id, "q3", json!({})).await,
        Err(TaskStoreError::Ended { .. })
    ));
}

/// A cancel recorded through one handle is seen through the other, and
/// wakes a waiter there; it is idempotent and a no-op once ended.
pub async fn cancel_across_handles(first: Arc<dyn TaskStore>, second: Arc<dyn TaskStore>) {
    let alice = owner("alice");
    let record = task(&alice);
    first.create(&record).await.expect("create");
    assert!(!first.cancel_requested(&record.id).await.expect("flag"));
    let waiter = {
        let first = first.clone();
        let id = record.id.clone();
        tokio::spawn(async move { first.wait_cancel(&id, Duration::from_millis(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(
        !waiter.is_finished(),
        "cancel_across_handles: wait_cancel waits while no cancel is recorded"
    );
    second
        .request_cancel(&record.id, Some(&alice))
        .await
        .expect("request_cancel");
    second
        .request_cancel(&record.id, Some(&alice))
        .await
        .expect("request_cancel is idempotent");
    assert!(
        first.cancel_requested(&record.id).await.expect("flag"),
        "cancel_across_handles: the runner's handle sees the other's cancel"
    );
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("cancel_across_handles: wait_cancel wakes within 5 s")
        .expect("join")
        .expect("wait_cancel");
    let read = first.get(&record.id, Some(&alice)).await.expect("get");
    assert_eq!(
        read.status,
        TaskState::Working,
        "cancel_across_handles: a cancel is a request; the runner ends the task"
    );
    first
        .finish(&record.id, TaskOutcome::Cancelled)
        .await
        .expect("finish");
    let ended = task(&alice);
    first.create(&ended).await.expect("create");
    first
        .finish(
            &ended.id,
            TaskOutcome::Completed {
                result: json!({"content": []}),
            },
        )
        .await
        .expect("finish");
    second
        .request_cancel(&ended.id, Some(&alice))
        .await
        .expect("a cancel of an ended task is acknowledged");
    let read = first.get(&ended.id, Some(&alice)).await.expect("get");
    assert_eq!(
        read.status,
        TaskState::Completed,
        "cancel_across_handles: a cancel does not change an ended task"
    );
}

/// An owner's list has their tasks, oldest first, and no one else's.
pub async fn list_by_owner(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let bob = owner("bob");
    let mut ids = Vec::new();
    for _ in 0..3 {
        let record = task(&alice);
        first.create(&record).await.expect("create");
        ids.push(record.id);
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let bobs = task(&bob);
    second.create(&bobs).await.expect("create");
    let listed: Vec<String> = second
        .list(Some(&alice))
        .await
        .expect("list")
        .into_iter()
        .map(|task| task.id)
        .collect();
    assert_eq!(
        listed, ids,
        "list_by_owner: alice's tasks, oldest first, none of bob's"
    );
    let listed = first.list(Some(&bob)).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, bobs.id);
}

/// A live task past its ttl fails at a sweep, saying so; an ended one is
/// removed a ttl after it ended; tasks without ttl stay.
pub async fn expiry_sweep(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let ttl = Duration::from_millis(300);
    let short = task(&alice).with_ttl(ttl);
    first.create(&short).await.expect("create");
    let forever = task(&alice);
    first.create(&forever).await.expect("create");
    let swept = second.sweep().await.expect("sweep");
    assert!(
        !swept.expired.contains(&short.id) && !swept.removed.contains(&short.id),
        "expiry_sweep: a task within its ttl is left alone"
    );
    // `ends` ends 250 ms after `short` began: kept until 550 ms.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let ends = task(&alice).with_ttl(ttl);
    first.create(&ends).await.expect("create");
    first
        .finish(
            &ends.id,
            TaskOutcome::Completed {
                result: json!({"content": []}),
            },
        )
        .await
        .expect("finish");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let swept = second.sweep().await.expect("sweep");
    assert!(
        swept.expired.contains(&short.id),
        "expiry_sweep: a live task past its ttl is reported expired: {swept:?}"
    );
    assert!(
        !swept.removed.contains(&ends.id),
        "expiry_sweep: an ended task is kept a ttl past its end"
    );
    let read = first.get(&short.id, Some(&alice)).await.expect("get");
    assert_eq!(read.status, TaskState::Failed);
    match &read.outcome {
        Some(TaskOutcome::Failed { error }) => {
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("ttl of 300 ms"),
                "expiry_sweep: the failure says the ttl elapsed: {message}"
            );
        }
        other => panic!("expiry_sweep: expected a failure, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    let swept = first.sweep().await.expect("sweep");
    assert!(
        swept.removed.contains(&short.id) && swept.removed.contains(&ends.id),
        "expiry_sweep: ended tasks past their retention are removed: {swept:?}"
    );
    not_found(
        second.get(&short.id, Some(&alice)).await,
        &short.id,
        "expiry_sweep removed",
    );
    second
        .get(&forever.id, Some(&alice))
        .await
        .expect("expiry_sweep: a task without ttl stays");
}

/// Leases: renewed by their holder only; a lapsed one is listed and
/// claimed by exactly one of concurrent claimers, naming the holder that
/// stopped; an ended task holds none.
pub async fn leases(first: &dyn TaskStore, second: &dyn TaskStore) {
    let alice = owner("alice");
    let lease = Duration::from_millis(300);
    let record = task(&alice).with_lease(Lease::new("replica-a", lease));
    first.create(&record).await.expect("create");
    assert!(
        first
            .renew_lease(&record.id, "replica-a", lease)
            .await
            .expect("renew"),
        "leases: the holder renews"
    );
    assert!(
        !second
            .renew_lease(&record.id, "replica-b", lease)
            .await
            .expect("renew"),
        "leases: another replica does not renew a lease it does not hold"
    );
    let before = second.get_any(&record.id).await.expect("get_any");
    assert_eq!(
        before.lease.as_ref().map(|l| l.holder.as_str()),
        Some("replica-a")
    );
    assert!(
        second
            .claim_lapsed(&record.id, "replica-b", lease)
            .await
            .expect("claim")
            .is_none(),
        "leases: a held lease is not claimed"
    );
    let lapsed = second.lapsed_leases(10_000).await.expect("lapsed");
    assert!(
        lapsed.iter().all(|task| task.id != record.id),
        "leases: a held lease is not lapsed"
    );
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let lapsed = second.lapsed_leases(10_000).await.expect("lapsed");
    assert!(
        lapsed.iter().any(|task| task.id == record.id),
        "leases: a lease not renewed lapses"
    );
    let (one, two) = tokio::join!(
        first.claim_lapsed(&record.id, "replica-b", lease),
        second.claim_lapsed(&record.id, "replica-c", lease),
    );
    let claims: Vec<_> = [one.expect("claim"), two.expect("claim")]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(claims.len(), 1, "leases: exactly one concurrent claim wins");
    let claim = &claims[0];
    assert_eq!(
        claim.lapsed.holder, "replica-a",
        "leases: the claim names the replica that stopped"
    );
    assert_eq!(claim.task.attempts, 2, "leases: a claim counts an attempt");
    let winner = claim.task.lease.clone().expect("claimed lease");
    assert!(winner.holder == "replica-b" || winner.holder == "replica-c");
    let read = first.get_any(&record.id).await.expect("get_any");
    assert_eq!(read.lease.as_ref().map(|l| &l.holder), Some(&winner.holder));
    assert_eq!(read.attempts, 2);
    assert!(
        !first
            .renew_lease(&record.id, "replica-a", lease)
            .await
            .expect("renew"),
        "leases: the stopped holder cannot renew once claimed"
    );
    assert!(
        second
            .renew_lease(&record.id, &winner.holder, lease)
            .await
            .expect("renew"),
        "leases: the claimer renews"
    );
    first
        .finish(&record.id, TaskOutcome::failed("stopped"))
        .await
        .expect("finish");
    assert!(
        !second
            .renew_lease(&record.id, &winner.holder, lease)
            .await
            .expect("renew"),
        "leases: an ended task's lease is not renewed"
    );
    tokio::time::sleep(lease + Duration::from_millis(50)).await;
    let lapsed = second.lapsed_leases(10_000).await.expect("lapsed");
    assert!(
        lapsed.iter().all(|task| task.id != record.id),
        "leases: an ended task is never lapsed"
    );
    assert!(second
        .claim_lapsed(&record.id, "replica-d", lease)
        .await
        .expect("claim")
        .is_none());
}

/// Many creates at once on both handles: every one lands, readable.
pub async fn concurrent_creates(first: Arc<dyn TaskStore>, second: Arc<dyn TaskStore>) {
    let alice = owner("alice");
    let mut creates = Vec::new();
    for n in 0..64 {
        let store = if n % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        let record = task(&alice);
        creates.push(tokio::spawn(async move {
            store.create(&record).await.map(|()| record.id)
        }));
    }
    let mut ids = Vec::new();
    for create in creates {
        ids.push(create.await.expect("join").expect("concurrent create"));
    }
    for id in &ids {
        first
            .get(id, Some(&alice))
            .await
            .expect("concurrent_creates: every created task reads back");
    }
    assert_eq!(
        second.list(Some(&alice)).await.expect("list").len(),
        64,
        "concurrent_creates: none lost"
    );
}
