//! Who a request is from behind a proxy: the client address a trusted
//! proxy forwarded (`Forwarded`, RFC 7239, else `X-Forwarded-For`), read
//! only when the request comes from one of the configured proxies.

use std::net::IpAddr;

use ipnet::IpNet;

/// The proxies whose forwarded client addresses are believed.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustedProxies {
    nets: Vec<IpNet>,
}

impl TrustedProxies {
    /// Parses each entry: an address (`10.0.0.7`, `::1`) or a network
    /// (`10.0.0.0/8`). The error names the entry and the forms accepted.
    pub(crate) fn parse<'a>(
        entries: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, std::io::Error> {
        let mut nets = Vec::new();
        for entry in entries {
            let entry = entry.trim();
            let net = entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "trusted proxy `{entry}` is neither an IP address (10.0.0.7, ::1) nor a network (10.0.0.0/8)"
                        ),
                    )
                })?;
            nets.push(net);
        }
        Ok(TrustedProxies { nets })
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.nets.iter().any(|net| net.contains(&address))
    }

    /// The client of a request from `peer` with these headers: `peer`
    /// itself unless it is a trusted proxy; else the forwarded chain read
    /// from the right, past every trusted proxy, to the first address that
    /// is not one (a client cannot skip the proxies by writing its own
    /// header: only what the trusted hops appended is believed). A hop
    /// that forwarded no usable address (`unknown`, an obfuscated name)
    /// is the client as that hop named it.
    pub(crate) fn client(&self, peer: IpAddr, headers: &axum::http::HeaderMap) -> String {
        if self.nets.is_empty() || !self.trusts(peer) {
            return format!("address:{}", canonical(peer));
        }
        let chain = forwarded_for(headers);
        for hop in chain.iter().rev() {
            match parse_node(hop) {
                Some(address) if self.trusts(address) => continue,
                Some(address) => return format!("address:{}", canonical(address)),
                None => return format!("forwarded:{hop}"),
            }
        }
        // Every hop is a proxy (or none was named): the outermost one.
        chain.first().and_then(|hop| parse_node(hop)).map_or_else(
            || format!("address:{}", canonical(peer)),
            |address| format!("address:{}", canonical(address)),
        )
    }
}

/// An IPv4 address mapped into IPv6 read as IPv4, so one client is one key.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The forwarded addresses, client first: `Forwarded`'s `for=` parameters
/// when the header is there, else `X-Forwarded-For`'s list.
fn forwarded_for(headers: &axum::http::HeaderMap) -> Vec<String> {
    let forwarded: Vec<String> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                key.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| value.trim().trim_matches('"').to_owned())
            })
        })
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|hop| hop.trim().to_owned())
        .filter(|hop| !hop.is_empty())
        .collect()
}

/// A forwarded node's address: `192.0.2.60`, `192.0.2.60:4711`,
/// `[2001:db8::1]`, `[2001:db8::1]:4711` or a bare IPv6 address.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(address);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    node.rsplit_once(':')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> axum::http::HeaderMap {
        let mut map = axum::http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_forwarded_address_is_believed_only_from_a_trusted_proxy() {
        let proxies = TrustedProxies::parse(["127.0.0.1", "10.0.0.0/8"]).unwrap();
        let forwarded = headers(&[("x-forwarded-for", "203.0.113.9")]);
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let stranger: IpAddr = "198.51.100.4".parse().unwrap();
        assert_eq!(proxies.client(proxy, &forwarded), "address:203.0.113.9");
        assert_eq!(proxies.client(stranger, &forwarded), "address:198.51.100.4");
        // No proxies configured: the peer, whatever the headers say.
        assert_eq!(
            TrustedProxies::default().client(proxy, &forwarded),
            "address:10.1.2.3"
        );
    }

    #[test]
    fn the_chain_is_read_from_the_right_past_the_trusted_hops() {
        let proxies = TrustedProxies::parse(["127.0.0.1", "10.0.0.0/8"]).unwrap();
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        // The client wrote its own header; the trusted hops appended the
        // real address after it.
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.0.0.5")]);
        assert_eq!(proxies.client(proxy, &spoofed), "address:203.0.113.9");
        let rfc = headers(&[(
            "forwarded",
            r#"for="[2001:db8::17]:4711";proto=https, for=10.0.0.5"#,
        )]);
        assert_eq!(proxies.client(proxy, &rfc), "address:2001:db8::17");
        let hidden = headers(&[("forwarded", "for=_gateway7")]);
        assert_eq!(proxies.client(proxy, &hidden), "forwarded:_gateway7");
        // Only proxies in the chain: the outermost.
        let inner = headers(&[("x-forwarded-for", "10.0.0.9, 10.0.0.5")]);
        assert_eq!(proxies.client(proxy, &inner), "address:10.0.0.9");
        // No header from a trusted proxy: the proxy itself.
        assert_eq!(proxies.client(proxy, &headers(&[])), "address:127.0.0.1");
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(proxies.client(mapped, &spoofed), "address:203.0.113.9");
    }

    #[test]
    fn a_bad_entry_is_named() {
        let error = TrustedProxies::parse(["10.0.0.0/8", "lb.internal"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "trusted proxy `lb.internal` is neither an IP address (10.0.0.7, ::1) nor a network (10.0.0.0/8)"
        );
    }
}
