use toolbox::prelude::*;
use toolbox::NamedToolBox;

trait Store: Send + Sync + 'static {}

struct Memory;
impl Store for Memory {}

struct Crm<S: Store> {
    store: S,
}

#[tool_box]
impl<S> Crm<S>
where
    S: Store,
{
    /// Finds a customer.
    #[tool]
    fn find(&self, id: u32) -> u32 {
        let _ = &self.store;
        id
    }
}

fn main() {
    let crm = Crm { store: Memory };
    assert_eq!(crm.box_name(), "crm");
    assert_eq!(crm.find(2), 2);
}
