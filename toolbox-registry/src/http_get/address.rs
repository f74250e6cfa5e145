//! Which addresses `http_get` refuses, checked on the resolved IP of every
//! connection: loopback (and the unspecified address, which reaches it),
//! private and local ranges, and every other IANA special-purpose block,
//! with embedded IPv4 addresses (mapped, translated, compatible, NAT64,
//! 6to4) decoded and judged as themselves.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::core_tools::HttpGetOptions;

/// What kind of address a refused one is; each kind has its own switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Reaches this host: loopback, and the unspecified address.
    Loopback,
    /// Reaches the local network: private, link-local, unique-local,
    /// site-local, shared (CGNAT), local-use NAT64, cloud metadata.
    Private,
    /// Any other IANA special-purpose block: documentation, benchmarking,
    /// protocol assignments, multicast, reserved, transition mechanisms.
    Special,
}

/// Why `ip` may not be fetched under `options`, or `None` when it may.
pub(crate) fn refusal(ip: IpAddr, options: &HttpGetOptions) -> Option<String> {
    let (kind, reason) = classify(ip)?;
    let allowed = match kind {
        Kind::Loopback => options.allow_loopback,
        Kind::Private => options.allow_private,
        Kind::Special => options.allow_special,
    };
    (!allowed).then_some(reason)
}

fn classify(ip: IpAddr) -> Option<(Kind, String)> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|(k, r)| (k, r.to_owned())),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<(Kind, &'static str)> {
    let [a, b, _, _] = ip.octets();
    let u = u32::from(ip);
    let within = |net: u32, bits: u32| u >> (32 - bits) == net >> (32 - bits);
    Some(match () {
        _ if a == 127 => (Kind::Loopback, "a loopback address"),
        _ if a == 0 => (
            Kind::Loopback,
            "an unspecified (\"this network\") address, which reaches this host",
        ),
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) => {
            (Kind::Private, "a cloud metadata address")
        }
        _ if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) => {
            (Kind::Private, "a private address")
        }
        _ if a == 169 && b == 254 => (Kind::Private, "a link-local address"),
        _ if a == 100 && (64..128).contains(&b) => {
            (Kind::Private, "a shared (carrier-grade NAT) address")
        }
        _ if within(0xc000_0000, 24) => {
            (Kind::Special, "an IETF protocol assignment (192.0.0.0/24)")
        }
        _ if within(0xc000_0200, 24) || within(0xc633_6400, 24) || within(0xcb00_7100, 24) => {
            (Kind::Special, "a documentation (TEST-NET) address")
        }
        _ if within(0xc612_0000, 15) => (Kind::Special, "a benchmarking address (198.18.0.0/15)"),
        _ if within(0xc058_6300, 24) => (Kind::Special, "a 6to4 relay anycast address"),
        _ if within(0xc01f_c400, 24) || within(0xc0af_3000, 24) => {
            (Kind::Special, "an AS112 DNS address")
        }
        _ if within(0xc034_c100, 24) => (Kind::Special, "an AMT address (192.52.193.0/24)"),
        _ if (224..240).contains(&a) => (Kind::Special, "a multicast address"),
        _ if a >= 240 => (Kind::Special, "a reserved or broadcast address"),
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<(Kind, String)> {
    let s = ip.segments();
    let bits = u128::from(ip);
    let within = |net: u128, len: u32| bits >> (128 - len) == net >> (128 - len);
    let embedded = |v4: Ipv4Addr, form: &str| -> Option<(Kind, String)> {
        classify_v4(v4).map(|(kind, reason)| (kind, format!("{form} embedding {v4}, {reason}")))
    };
    let low_v4 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if ip.is_loopback() {
        return Some((Kind::Loopback, "a loopback address".into()));
    }
    if ip.is_unspecified() {
        return Some((
            Kind::Loopback,
            "the unspecified address, which reaches this host".into(),
        ));
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some((Kind::Private, "a cloud metadata address".into()));
    }
    // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d
    // (compatible, deprecated): judged as the IPv4 address they carry.
    if within(0xffff_0000_0000, 96) {
        return embedded(low_v4, "an IPv4-mapped address");
    }
    if within(0xffff_0000_0000_0000, 96) {
        return embedded(low_v4, "an IPv4-translated address").or(Some((
            Kind::Special,
            format!("an IPv4-translated address (::ffff:0:0:0/96, embedding {low_v4})"),
        )));
    }
    if within(0, 96) {
        return embedded(low_v4, "an IPv4-compatible address").or(Some((
            Kind::Special,
            format!("a deprecated IPv4-compatible address (embedding {low_v4})"),
        )));
    }
    // NAT64: the well-known prefix reaches the IPv4 address it carries.
    if within(0x0064_ff9b_0000_0000_0000_0000_0000_0000, 96) {
        return embedded(low_v4, "a NAT64 address");
    }
    if within(0x0064_ff9b_0001_0000_0000_0000_0000_0000, 48) {
        return Some((
            Kind::Private,
            format!("a local-use NAT64 address (64:ff9b:1::/48, embedding {low_v4})"),
        ));
    }
    if within(0x2002_0000_0000_0000_0000_0000_0000_0000, 16) {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return embedded(v4, "a 6to4 address").or(Some((
            Kind::Special,
            format!("a 6to4 address (2002::/16, embedding {v4})"),
        )));
    }
    if within(0x2001_0000_0000_0000_0000_0000_0000_0000, 32) {
        return Some((Kind::Special, "a Teredo address (2001::/32)".into()));
    }
    if within(0x2001_0db8_0000_0000_0000_0000_0000_0000, 32)
        || within(0x3fff_0000_0000_0000_0000_0000_0000_0000, 20)
    {
        return Some((Kind::Special, "a documentation address".into()));
    }
    if within(0x2001_0000_0000_0000_0000_0000_0000_0000, 23) {
        return Some((
            Kind::Special,
            "an IETF protocol assignment (2001::/23)".into(),
        ));
    }
    if within(0x0100_0000_0000_0000_0000_0000_0000_0000, 64) {
        return Some((Kind::Special, "a discard-only address (100::/64)".into()));
    }
    if within(0x5f00_0000_0000_0000_0000_0000_0000_0000, 16) {
        return Some((
            Kind::Special,
            "a segment-routing address (5f00::/16)".into(),
        ));
    }
    if s[0] & 0xfe00 == 0xfc00 {
        return Some((Kind::Private, "a unique-local address".into()));
    }
    if s[0] & 0xffc0 == 0xfe80 {
        return Some((Kind::Private, "a link-local address".into()));
    }
    if s[0] & 0xffc0 == 0xfec0 {
        return Some((Kind::Private, "a site-local address".into()));
    }
    if s[0] & 0xff00 == 0xff00 {
        return Some((Kind::Special, "a multicast address".into()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(ip: &str) -> Option<String> {
        refusal(ip.parse().unwrap(), &HttpGetOptions::default())
    }

    fn refused_with(ip: &str, options: &HttpGetOptions) -> Option<String> {
        refusal(ip.parse().unwrap(), options)
    }

    #[test]
    fn private_and_special_addresses_are_refused() {
        let cases = [
            ("127.0.0.1", "a loopback address"),
            ("::1", "a loopback address"),
            (
                "::ffff:127.0.0.1",
                "an IPv4-mapped address embedding 127.0.0.1, a loopback address",
            ),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("192.168.1.1", "a private address"),
            ("169.254.169.254", "a cloud metadata address"),
            ("fd00:ec2::254", "a cloud metadata address"),
            ("169.254.3.4", "a link-local address"),
            ("fe80::1", "a link-local address"),
            ("fd12:3456::1", "a unique-local address"),
            ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ];
        for (ip, reason) in cases {
            assert_eq!(refused(ip).as_deref(), Some(reason), "{ip}");
        }
        assert_eq!(refused("93.184.216.34"), None);
        assert_eq!(refused("2606:4700::1111"), None);
        // NAT64 of a public address is a public address.
        assert_eq!(refused("64:ff9b::5db8:d822"), None);
    }

    #[test]
    fn every_special_purpose_block_and_embedding_is_refused() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "::",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::a9fe:a9fe",
            "64:ff9b:1::5db8:d822",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "2002:5db8:d822::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "fec0::1",
            "::ffff:0:7f00:1",
            "::ffff:0:5db8:d822",
            "::7f00:1",
            "198.18.0.1",
            "198.19.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "192.88.99.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "2001:db8::1",
            "3fff::1",
            "100::1",
            "ff02::1",
            "2001:2::1",
            "5f00::1",
        ] {
            assert!(refused(ip).is_some(), "{ip} was not refused");
        }
    }

    #[test]
    fn allowing_private_never_reaches_loopback() {
        let options = HttpGetOptions {
            allow_private: true,
            ..HttpGetOptions::default()
        };
        for ip in [
            "0.0.0.0",
            "0",
            "::",
            "127.0.0.1",
            "::ffff:127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
        ] {
            let ip = if ip == "0" { "0.0.0.0" } else { ip };
            assert!(refused_with(ip, &options).is_some(), "{ip}");
        }
        assert_eq!(refused_with("10.0.0.1", &options), None);
        assert_eq!(refused_with("64:ff9b::a00:1", &options), None);
    }

    #[test]
    fn allowing_loopback_does_not_allow_private() {
        let options = HttpGetOptions {
            allow_loopback: true,
            ..HttpGetOptions::default()
        };
        assert_eq!(refused_with("127.0.0.1", &options), None);
        assert_eq!(
            refused_with("10.0.0.1", &options).as_deref(),
            Some("a private address")
        );
        assert!(refused_with("198.18.0.1", &options).is_some());
    }
}
