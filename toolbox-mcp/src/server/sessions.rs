//! A served endpoint as a service: calls bounded in time and in number,
//! sessions that make room for new clients, and the state a graceful
//! shutdown drains.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolbox_core::CancellationToken;

/// How a served box bounds its calls. [`CallLimits::default`]: 300 s a
/// call, 32 calls in flight per session, 512 in all.
#[derive(Clone, Debug)]
pub(crate) struct CallLimits {
    pub(crate) call_timeout: Duration,
    pub(crate) tool_timeouts: Arc<HashMap<String, Duration>>,
    pub(crate) per_session: usize,
    pub(crate) total: usize,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            call_timeout: Duration::from_secs(300),
            tool_timeouts: Arc::default(),
            per_session: 32,
            total: 512,
        }
    }
}

impl CallLimits {
    /// The limit of one call to `tool`.
    pub(crate) fn timeout_for(&self, tool: &str) -> Duration {
        self.tool_timeouts
            .get(tool)
            .copied()
            .unwrap_or(self.call_timeout)
    }
}

/// What every clone of a served box shares (one clone serves each HTTP
/// session): the calls in flight, the shutdown's cancellation, and the
/// HTTP endpoint's session table when there is one.
#[derive(Default)]
pub(crate) struct ServeState {
    /// Calls in flight, over every session.
    pub(crate) calls: AtomicUsize,
    /// Cancelled when a shutdown's deadline passes: calls still running
    /// end with an error the client reads.
    pub(crate) deadline: CancellationToken,
    /// The HTTP endpoint's sessions, set when served over HTTP.
    pub(crate) sessions: std::sync::OnceLock<Arc<Sessions>>,
    /// Told when the number of calls in flight drops to zero.
    pub(crate) idle: tokio::sync::Notify,
}

/// Why a call was refused before it ran.
pub(crate) enum Busy {
    Session(usize),
    Server(usize),
}

impl Busy {
    pub(crate) fn message(&self) -> String {
        match self {
            Busy::Session(limit) => format!(
                "too many calls in flight: this session already has {limit}, the server's limit per session; wait for one to finish"
            ),
            Busy::Server(limit) => format!(
                "too many calls in flight: the server already runs {limit}, its limit; try again shortly"
            ),
        }
    }

    pub(crate) fn data(&self) -> serde_json::Value {
        match self {
            Busy::Session(limit) => serde_json::json!({"limit": limit, "scope": "session"}),
            Busy::Server(limit) => serde_json::json!({"limit": limit, "scope": "server"}),
        }
    }
}

/// One call's place among the calls in flight; given back when dropped.
pub(crate) struct CallSlot {
    state: Arc<ServeState>,
    session: Arc<AtomicUsize>,
}

impl CallSlot {
    /// A place for a call of a session whose count is `session`, within
    /// both limits.
    pub(crate) fn take(
        state: &Arc<ServeState>,
        session: Arc<AtomicUsize>,
        limits: &CallLimits,
    ) -> Result<CallSlot, Busy> {
        if session.fetch_add(1, Ordering::SeqCst) >= limits.per_session {
            session.fetch_sub(1, Ordering::SeqCst);
            return Err(Busy::Session(limits.per_session));
        }
        if state.calls.fetch_add(1, Ordering::SeqCst) >= limits.total {
            state.calls.fetch_sub(1, Ordering::SeqCst);
            session.fetch_sub(1, Ordering::SeqCst);
            return Err(Busy::Server(limits.total));
        }
        Ok(CallSlot {
            state: state.clone(),
            session,
        })
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        self.session.fetch_sub(1, Ordering::SeqCst);
        if self.state.calls.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.state.idle.notify_waiters();
        }
    }
}

/// One HTTP session as the endpoint sees it.
struct Session {
    /// Who opened it: the verified subject, else the peer's address.
    client: String,
    last: Instant,
    /// Whether it made a request after `initialize` (notifications, such
    /// as `initialized`, are not requests): a session that made none is
    /// ended first.
    used: bool,
    calls: Arc<AtomicUsize>,
}

/// The HTTP endpoint's sessions: who holds them, when each was last used,
/// which made a request, which have calls in flight. Bounded by the
/// endpoint's session cap.
///
/// When a session must end to make room, it is one with no call in
/// flight: a session that never made a request after `initialize` before
/// any that did, and among either the one heard from longest ago. So
/// abandoned `initialize`s end one another, never a session in use.
#[derive(Default)]
pub(crate) struct Sessions {
    table: Mutex<HashMap<String, Session>>,
    /// Set when a shutdown begins: readiness says so, new sessions are refused.
    pub(crate) draining: AtomicBool,
}

impl Sessions {
    /// Notes a message of session `id`; whether the session has yet to be
    /// seen making a request (so the message's answer is worth reading:
    /// see [`used`](Sessions::used)).
    pub(crate) fn touch(&self, id: &str) -> bool {
        match self
            .table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(id)
        {
            Some(session) => {
                session.last = Instant::now();
                !session.used
            }
            None => false,
        }
    }

    /// Notes that session `id` made a request after `initialize`: it is
    /// ended only after every idle session that made none.
    pub(crate) fn used(&self, id: &str) {
        if let Some(session) = self
            .table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(id)
        {
            session.used = true;
        }
    }

    /// A session the endpoint just opened for `client`.
    pub(crate) fn opened(&self, id: String, client: String) {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).insert(
            id,
            Session {
                client,
                last: Instant::now(),
                used: false,
                calls: Arc::default(),
            },
        );
    }

    /// The calls-in-flight count of session `id` (a fresh one for a session
    /// the table does not know).
    pub(crate) fn calls(&self, id: &str) -> Arc<AtomicUsize> {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .map(|s| s.calls.clone())
            .unwrap_or_default()
    }

    /// Forgets sessions rmcp no longer holds (ended, expired).
    pub(crate) fn retain_live(&self, live: impl Fn(&str) -> bool) {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|id, _| live(id));
    }

    /// How many live sessions `client` holds.
    pub(crate) fn held_by(&self, client: &str) -> usize {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|s| s.client == client)
            .count()
    }

    /// The session to end so a new client is served, taken out of the
    /// table: one with no call in flight, in the [eviction order](Sessions).
    pub(crate) fn evict_idle(&self) -> Option<String> {
        self.evict_where(|_| true)
    }

    /// The session of `client` to end so the client's new session fits its
    /// share, taken out of the table: one with no call in flight, in the
    /// [eviction order](Sessions).
    pub(crate) fn evict_idle_of(&self, client: &str) -> Option<String> {
        self.evict_where(|s| s.client == client)
    }

    fn evict_where(&self, which: impl Fn(&Session) -> bool) -> Option<String> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let id = table
            .iter()
            .filter(|(_, s)| which(s) && s.calls.load(Ordering::SeqCst) == 0)
            .min_by_key(|(_, s)| (s.used, s.last))
            .map(|(id, _)| id.clone())?;
        table.remove(&id);
        Some(id)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_session_used_longest_ago_makes_room() {
        let sessions = Sessions::default();
        sessions.opened("a".into(), "alice".into());
        std::thread::sleep(Duration::from_millis(2));
        sessions.opened("b".into(), "bob".into());
        std::thread::sleep(Duration::from_millis(2));
        sessions.opened("c".into(), "alice".into());
        // `a` is busy, `b` is the oldest idle one.
        let busy = sessions.calls("a");
        busy.fetch_add(1, Ordering::SeqCst);
        assert_eq!(sessions.evict_idle().as_deref(), Some("b"));
        sessions.touch("c");
        busy.fetch_sub(1, Ordering::SeqCst);
        assert_eq!(sessions.evict_idle().as_deref(), Some("a"));
        assert_eq!(sessions.held_by("alice"), 1);
        sessions.opened("d".into(), "bob".into());
        // A client's own idle session makes room in its share, not another's.
        assert_eq!(sessions.evict_idle_of("bob").as_deref(), Some("d"));
        assert_eq!(sessions.evict_idle_of("bob"), None);
        assert_eq!(sessions.held_by("alice"), 1);
        sessions.retain_live(|id| id != "c");
        assert_eq!(sessions.len(), 0);
        assert_eq!(sessions.evict_idle(), None);
    }

    #[test]
    fn sessions_that_never_made_a_request_end_before_those_that_did() {
        let sessions = Sessions::default();
        sessions.opened("worker".into(), "10.0.0.1".into());
        assert!(sessions.touch("worker"), "a new session is yet to be used");
        sessions.used("worker");
        assert!(!sessions.touch("worker"));
        assert!(!sessions.touch("unknown"));
        std::thread::sleep(Duration::from_millis(2));
        sessions.opened("old".into(), "10.0.0.1".into());
        std::thread::sleep(Duration::from_millis(2));
        sessions.opened("new".into(), "10.0.0.1".into());
        // The unused ones go first, the oldest of them first, though the
        // used one was heard from before either.
        assert_eq!(sessions.evict_idle_of("10.0.0.1").as_deref(), Some("old"));
        assert_eq!(sessions.evict_idle().as_deref(), Some("new"));
        assert_eq!(sessions.evict_idle().as_deref(), Some("worker"));
    }

    #[test]
    fn a_session_in_use_outlives_a_flood_of_abandoned_ones_from_its_client() {
        let (sessions, share) = (Sessions::default(), 100);
        sessions.opened("worker".into(), "10.0.0.1".into());
        sessions.used("worker");
        // As the gate admits each `initialize`: room first, then the session.
        for n in 0..3_000 {
            while sessions.held_by("10.0.0.1") >= share {
                let ended = sessions.evict_idle_of("10.0.0.1").unwrap();
                assert_ne!(ended, "worker", "after {n} abandoned sessions");
            }
            sessions.opened(format!("abandoned-{n}"), "10.0.0.1".into());
        }
        assert!(!sessions.touch("worker"), "the session in use is held");
        assert_eq!(sessions.held_by("10.0.0.1"), share);
    }

    #[test]
    fn call_slots_are_bounded_per_session_and_in_all() {
        let state = Arc::new(ServeState::default());
        let limits = CallLimits {
            per_session: 2,
            total: 3,
            ..CallLimits::default()
        };
        let (one, two) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let a = CallSlot::take(&state, one.clone(), &limits).ok().unwrap();
        let _b = CallSlot::take(&state, one.clone(), &limits).ok().unwrap();
        assert!(matches!(
            CallSlot::take(&state, one.clone(), &limits),
            Err(Busy::Session(2))
        ));
        let _c = CallSlot::take(&state, two.clone(), &limits).ok().unwrap();
        assert!(matches!(
            CallSlot::take(&state, two.clone(), &limits),
            Err(Busy::Server(3))
        ));
        drop(a);
        assert_eq!(one.load(Ordering::SeqCst), 1);
        assert!(CallSlot::take(&state, two, &limits).is_ok());
    }
}
