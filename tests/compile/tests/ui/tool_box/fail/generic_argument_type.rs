use toolbox::prelude::*;

trait Store: Send + Sync + 'static {
    type Id: serde::de::DeserializeOwned + schemars::JsonSchema;
}

struct Crm<S: Store> {
    store: S,
}

#[tool_box]
impl<S: Store> Crm<S> {
    /// Finds a record.
    #[tool]
    fn find(&self, id: S::Id) -> String {
        let _ = (&self.store, id);
        String::new()
    }
}

fn main() {}
