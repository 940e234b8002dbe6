"""What every per-address limit of cardtui counts a peer as (relay, SSH and browser doors, APIs).

An IPv6 subscriber is usually given a whole /64 and can pick a fresh address from it for
every connection, so a limit kept per exact IPv6 address limits nothing: the /64 counts as one.
"""

from __future__ import annotations

import ipaddress

IPV6_PREFIX = 64  # one subscriber's share of IPv6 space: its addresses count as one


def address_key(address: str) -> str:
    """What the per-address limits count `address` as: an IPv4 address itself (also when it
    comes IPv4-mapped), an IPv6 address as its /64 prefix, anything else as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)
