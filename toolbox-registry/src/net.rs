//! Which addresses `http_get` refuses, checked on the resolved IP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::HttpGetOptions;

/// Why `ip` may not be fetched under `options`, or `None` when it may.
pub(crate) fn refusal(ip: IpAddr, options: &HttpGetOptions) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    let (loopback, private) = match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    };
    match (loopback, private) {
        (Some(reason), _) if !options.allow_loopback => Some(reason),
        (_, Some(reason)) if !options.allow_private => Some(reason),
        _ => None,
    }
}

fn classify_v4(ip: Ipv4Addr) -> (Option<&'static str>, Option<&'static str>) {
    let [a, b, c, d] = ip.octets();
    if ip.is_loopback() {
        return (Some("a loopback address"), None);
    }
    let private = if (a, b, c, d) == (169, 254, 169, 254) || (a, b, c, d) == (100, 100, 100, 200) {
        Some("a cloud metadata address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else {
        None
    };
    (None, private)
}

fn classify_v6(ip: Ipv6Addr) -> (Option<&'static str>, Option<&'static str>) {
    if ip.is_loopback() {
        return (Some("a loopback address"), None);
    }
    let first = ip.segments()[0];
    let private = if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("a cloud metadata address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique-local address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if let Some(v4) = ip.to_ipv4() {
        // NAT64 and IPv4-compatible forms carry an IPv4 address.
        classify_v4(v4).1.or(classify_v4(v4).0)
    } else {
        None
    };
    (None, private)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(ip: &str) -> Option<&'static str> {
        refusal(ip.parse().unwrap(), &HttpGetOptions::default())
    }

    #[test]
    fn private_and_special_addresses_are_refused() {
        assert_eq!(refused("127.0.0.1"), Some("a loopback address"));
        assert_eq!(refused("::1"), Some("a loopback address"));
        assert_eq!(refused("::ffff:127.0.0.1"), Some("a loopback address"));
        assert_eq!(refused("10.1.2.3"), Some("a private address"));
        assert_eq!(refused("172.16.0.1"), Some("a private address"));
        assert_eq!(refused("192.168.1.1"), Some("a private address"));
        assert_eq!(refused("169.254.169.254"), Some("a cloud metadata address"));
        assert_eq!(refused("fd00:ec2::254"), Some("a cloud metadata address"));
        assert_eq!(refused("169.254.3.4"), Some("a link-local address"));
        assert_eq!(refused("fe80::1"), Some("a link-local address"));
        assert_eq!(refused("fd12:3456::1"), Some("a unique-local address"));
        assert_eq!(
            refused("100.64.0.1"),
            Some("a shared (carrier-grade NAT) address")
        );
        assert_eq!(refused("0.0.0.0"), Some("an unspecified address"));
        assert_eq!(refused("93.184.216.34"), None);
        assert_eq!(refused("2606:4700::1111"), None);
    }

    #[test]
    fn allowing_loopback_does_not_allow_private() {
        let options = HttpGetOptions {
            allow_loopback: true,
            ..HttpGetOptions::default()
        };
        assert_eq!(refusal("127.0.0.1".parse().unwrap(), &options), None);
        assert_eq!(
            refusal("10.0.0.1".parse().unwrap(), &options),
            Some("a private address")
        );
    }
}
