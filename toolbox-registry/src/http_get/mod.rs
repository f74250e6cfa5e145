//! `http_get@core` in one place: the address policy (which IPs a fetch may
//! reach, checked on every resolved address and every redirect hop) and the
//! little client built on reqwest that applies it.

pub(crate) mod address;
#[cfg(feature = "http-get")]
mod client;
