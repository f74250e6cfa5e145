//! Served MCP tasks kept in a `TaskStore`: the store contract's suite on
//! the in-memory store, and servers sharing one store.

use std::sync::Arc;

use toolbox_mcp::server::store::suite;
use toolbox_mcp::server::{MemoryTaskStore, TaskStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_store_suite() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    suite::run_all(store.clone(), store).await;
}
