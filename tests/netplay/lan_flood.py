"""A hostile neighbour on the LAN: floods `_cardtui._tcp` with announcements, on loopback only.

Run by the tests with `sys.executable` in a process of its own. It speaks mDNS through
zeroconf's own packet writer but answers no query: it only multicasts responses, as a
malicious host may.

    python lan_flood.py --ghosts N --tables N [--churn] [--garbage] [--seconds S]

- ghosts: service names announced by a pointer alone, so that asking for their records waits
  until the asker gives up;
- tables: complete announcements (pointer, SRV, TXT, A) of tables on 127.0.0.1, ports from 40000;
- churn: then, round after round (about 4 a second: some 55 datagrams, 950 records a second),
  withdraw the 25 oldest tables and announce 25 new ones and 25 new ghosts;
- garbage: first, a table whose name holds control characters (port 39000), and three tables
  whose TXT records are garbage (ports 39001-39003): not UTF-8 with control characters, values
  hundreds of bytes long, seat counts that are not numbers; again in every churn round.

It prints `flooding` once the first round is out, a line per churn round, and stops after
`--seconds` (default 60) or when killed.
"""

from __future__ import annotations

import argparse
import socket
import time

from zeroconf import (
    DNSAddress,
    DNSOutgoing,
    DNSPointer,
    DNSRecord,
    DNSService,
    DNSText,
    IPVersion,
    Zeroconf,
)

SERVICE_TYPE = "_cardtui._tcp.local."
TYPE_A, TYPE_PTR, TYPE_TXT, TYPE_SRV = 1, 12, 16, 33
CLASS_IN, CLASS_UNIQUE = 1, 0x8000
FLAGS_RESPONSE = 0x8400  # QR and AA
TTL = 4500
GARBAGE_PORTS = (39001, 39002, 39003)
BAD_NAME_PORT = 39000  # a table whose very name holds control characters
FLOOD_PORT = 40000
PER_PACKET = 10  # services per response (zeroconf splits what does not fit one packet)


def txt(pairs: list[bytes]) -> bytes:
    """TXT record data: length-prefixed strings of at most 255 bytes."""
    return b"".join(bytes([len(p)]) + p for p in pairs)


def pointer(name: str, ttl: int) -> DNSPointer:
    return DNSPointer(SERVICE_TYPE, TYPE_PTR, CLASS_IN, ttl, name)


def table_records(label: str, port: int, text: bytes, ttl: int) -> list[DNSRecord]:
    name, server = f"{label}.{SERVICE_TYPE}", f"flood-{port}.local."
    return [pointer(name, ttl),
            DNSService(name, TYPE_SRV, CLASS_IN | CLASS_UNIQUE, ttl, 0, 0, port, server),
            DNSText(name, TYPE_TXT, CLASS_IN | CLASS_UNIQUE, ttl, text),
            DNSAddress(server, TYPE_A, CLASS_IN | CLASS_UNIQUE, ttl, socket.inet_aton("127.0.0.1"))]


def flood_table(i: int, ttl: int = TTL) -> list[DNSRecord]:
    text = txt([b"game=zodiak", b"players=4", b"host=Flood %d" % i])
    return table_records(f"Flood {i:05d}", FLOOD_PORT + i % 20000, text, ttl)


def garbage_tables() -> list[DNSRecord]:
    records = table_records("Evil\x1b[2J\x07", BAD_NAME_PORT, txt([b"game=zodiak"]), TTL)
    bad_host = b"host=\xff\xfe\x1b[31mEvil\x07\x00Host" + b"\xc3" * 40
    huge_game = b"game=" + b"Z" * 245
    padding = [b"pad%d=" % i + b"x" * 240 for i in range(20)]  # a TXT record of about 5 KB
    for port, players in zip(GARBAGE_PORTS, (b"players=lots", b"players=\xff\xfe",
                                             b"players=99999999999999999999"), strict=True):
        text = txt([bad_host, huge_game, players, *padding])
        records += table_records(f"Garbage {port}", port, text, TTL)
    return records


def send(zc: Zeroconf, records: list[DNSRecord]) -> None:
    for start in range(0, len(records), 4 * PER_PACKET):
        out = DNSOutgoing(FLAGS_RESPONSE)
        for record in records[start:start + 4 * PER_PACKET]:
            out.add_answer_at_time(record, 0)
        zc.send(out)
        time.sleep(0.005)  # a steady stream, not a burst the socket buffer drops


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ghosts", type=int, default=0)
    parser.add_argument("--tables", type=int, default=0)
    parser.add_argument("--churn", action="store_true")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    try:
        if args.garbage:
            send(zc, garbage_tables())
        send(zc, [pointer(f"Ghost {i:05d}.{SERVICE_TYPE}", TTL) for i in range(args.ghosts)])
        send(zc, [r for i in range(args.tables) for r in flood_table(i)])
        print("flooding", flush=True)
        oldest, newest, rounds = 0, args.tables, 0
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if not args.churn:
                continue
            # Withdraw 25 (a goodbye is the same records with TTL 0), announce 25 new tables and
            # 25 new ghosts, and the garbage again (a datagram lost on a busy machine is not).
            if args.garbage:
                send(zc, garbage_tables())
            send(zc, [r for i in range(oldest, oldest + 25) for r in flood_table(i, 0)])
            send(zc, [r for i in range(newest, newest + 25) for r in flood_table(i)])
            send(zc, [pointer(f"Ghost {rounds:05d}-{i}.{SERVICE_TYPE}", TTL) for i in range(25)])
            oldest, newest, rounds = oldest + 25, newest + 25, rounds + 1
            print(f"round {rounds}", flush=True)
    finally:
        zc.close()


if __name__ == "__main__":
    main()
