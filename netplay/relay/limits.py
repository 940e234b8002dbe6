"""The relay's bounds and counters: what it enforces, and what it counts for operators and tests."""

from __future__ import annotations

import resource
from dataclasses import dataclass

from netplay.addresses import address_key


@dataclass(frozen=True)
class RelayLimits:
    """Every bound the relay enforces; the defaults suit a public relay."""

    max_frame_bytes: int = 65536
    messages_per_second: float = 100.0
    burst: int = 200
    host_rate_factor: float = 20.0  # a host answers every seat at once, and resyncs whole rounds
    max_rooms: int = 1000
    max_conns_per_room: int = 16  # the host counts as one
    strikes_before_close: int = 20
    host_grace_seconds: float = 300.0
    idle_room_seconds: float = 3600.0
    hello_timeout_seconds: float = 10.0
    # A conn silent this long is pinged, and closed when half as long again passes unanswered:
    # a link that failed silently frees its slot, and its host hears that the seat left.
    heartbeat_seconds: float = 10.0
    max_send_backlog_bytes: int = 1 << 20
    # What the host has not admitted (a seat or a watcher, after its game-level join) is
    # pending: few per room, fewer per address, and dropped when not admitted in time.
    max_pending_per_room: int = 12
    max_pending_per_address: int = 4  # in one room
    admit_timeout_seconds: float = 10.0
    max_watchers_per_room: int = 32
    # Per source address, whatever the number of its connections.
    max_conns_per_address: int = 64
    connections_per_second_per_address: float = 20.0
    connection_burst_per_address: int = 40
    max_rooms_per_address: int = 10
    reads_per_second_per_address: float = 2000.0  # beyond it reading pauses; nothing is refused
    read_burst_per_address: int = 4000
    upgrade_timeout_seconds: float = 5.0  # TCP accept until the WebSocket upgrade is done
    max_connections: int = 0  # 0: what the descriptor limit leaves, minus a reserve
    # Connections not yet a room's host, admitted seat or watcher, from all addresses: past
    # it the newest evicts the oldest of the address holding most. 0: half of max_connections.
    max_waiting: int = 0
    exempt_addresses: frozenset[str] = frozenset()  # a server's own components, on loopback
    addresses_kept: int = 10_000  # idle addresses remembered (their connection rate) at most
    log_interval_seconds: float = 10.0

    def __post_init__(self) -> None:
        # Counted as the limits count them: an IPv6 address stands for its /64.
        object.__setattr__(self, "exempt_addresses",
                           frozenset(address_key(a) for a in self.exempt_addresses))

    @property
    def transport_max_bytes(self) -> int:
        """Largest WebSocket message read at all; between this and max_frame_bytes: too_big."""
        return self.max_frame_bytes * 4 + 1024


PUBLIC_LIMITS = RelayLimits()
"""The defaults: a relay open to anyone."""


@dataclass
class RelayStats:
    """Running counters for tests, benchmarks and operators."""

    frames_in: int = 0  # accepted `send` messages
    frames_out: int = 0  # `frame` messages written to recipients
    rejected: int = 0  # messages answered with an error
    rooms_opened: int = 0
    closed_for_abuse: int = 0
    evicted_slow: int = 0
    not_admitted: int = 0  # entered a room, never admitted by its host, dropped
    rooms_evicted: int = 0  # empty rooms closed for a newcomer on a full relay


ACCEPT_BACKLOG = 128  # asyncio accepts up to this many at once, before the guard sees any


def descriptor_budget() -> int:
    """Connections this process can hold, leaving a reserve for files, logs and listeners.

    The reserve covers a whole batch of accepts: they take descriptors before the guard can
    refuse (and close) the ones over the budget.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, (soft if soft != resource.RLIM_INFINITY else 1 << 20) - 64 - ACCEPT_BACKLOG)
