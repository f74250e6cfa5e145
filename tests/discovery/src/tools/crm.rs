//! Customer records: an impl block of a `Default` type.

use toolbox::prelude::*;

/// The customer database (in memory here).
#[derive(Default)]
pub struct Crm {
    names: Vec<&'static str>,
}

/// Customer records.
#[tool_box]
impl Crm {
    /// Looks a customer up by id.
    #[tool(read_only)]
    fn lookup(
        &self,
        /// The customer's id.
        id: u32,
    ) -> String {
        self.names
            .get(id as usize)
            .copied()
            .unwrap_or("Ada Lovelace")
            .to_owned()
    }
}

/// A box that needs a connection: discovered through its constructor.
pub struct Billing {
    currency: &'static str,
}

impl Billing {
    /// What discovery builds the box with.
    pub fn connect_default() -> Self {
        Billing { currency: "EUR" }
    }
}

/// Invoices.
#[tool_box(register = Billing::connect_default)]
impl Billing {
    /// The balance of an account.
    #[tool(read_only)]
    fn balance(
        &self,
        /// The account.
        account: String,
    ) -> String {
        format!("{account}: 0 {}", self.currency)
    }
}

/// A box that cannot be built without arguments: opted out of discovery
/// (without `register = false` it would not compile: discovery builds
/// boxes with `Default`); scan it once built.
pub struct Session {
    /// The user.
    pub user: String,
}

/// One user's session.
#[tool_box(register = false)]
impl Session {
    /// Who is signed in.
    #[tool]
    fn whoami(&self) -> String {
        self.user.clone()
    }
}
