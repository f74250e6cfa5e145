//! The application's tools, one file each.

pub mod crm;
pub mod late_addition;
pub mod notes;
pub mod weather;
