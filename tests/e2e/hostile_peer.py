"""Hostile peers for the end-to-end tests, each run as its own process on loopback.

    python -m tests.e2e.hostile_peer MODE URL ROOM OUT [ARG]

The raw modes speak docs/PROTOCOL.md directly over an aiohttp WebSocket with msgpack (and
netplay.fair only for the FAIRNESS.md hashes and keys):

- `sync-flood`: enters, watches, then asks the host for a whole round's resync 95 times a second
  for ARG seconds; OUT gets how many frames and bytes came back.
- `steal`: presents the token and public identity of the seat file ARG (a sniffer on plain ws://
  sees both) to take that seat; it signs the host's challenges with its own key. OUT says what
  the host answered.
- `idle`: takes a free seat properly (its key proven) and then never moves.

The session modes are honest seats with one twist, built on netplay.seat.remote:

- `pad-nonce`: a greedy seat whose signed nonce reveals carry a 40 KB extra field.
- `lay-then-take`: a Hekata seat that only lays cards until the table holds 29, then takes the
  whole table as one row (a trick worth about 10^29) as soon as it can.
- `bad-proof`: a seat at a table dealt by mental poker whose every shuffle is a true shuffle
  sent with a proof that fails (its response s1 changed, FAIRNESS.md A5): the next shuffler
  shuffles on top of it before anyone checks it (A8).
- `refused-flood`: a greedy seat at a table dealt by mental poker that, besides playing, sends
  the host signed messages it refuses as fast as the relay lets its conn send: copies of the
  last message it signed and `mp_shares` of its own unplayed cards, next in its chain, whose
  last proof fails (FAIRNESS.md A6). OUT gets how many it sent and what the host answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgpack

from engine import hekata
from engine.bots import make_bot
from engine.tricks import parse_trick
from netplay.fair import Identity, tagged_hash
from netplay.fair.group import ORDER
from netplay.fair.shares import make_share
from netplay.protocol import pack as protocol_pack
from netplay.protocol import unpack
from netplay.seat.remote import RemoteSession
from netplay.session.events import MatchEnded

PAD = b"x" * 40_000


def pack(msg: dict[str, Any]) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


class RawPeer:
    """A conn in a relay room, speaking PROTOCOL.md sections 1-4 and G3 by hand."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.frames = 0
        self.bytes = 0
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def enter(cls, http: aiohttp.ClientSession, url: str, room: str | None) -> RawPeer:
        ws = await http.ws_connect(url, max_msg_size=8 * 1024 * 1024)
        await ws.send_bytes(pack({"t": "enter", "v": 1, "room": room}))
        answer = msgpack.unpackb((await ws.receive()).data, raw=False)
        assert answer["t"] == "entered", answer
        return cls(ws)

    async def send(self, body: dict[str, Any]) -> None:
        await self.ws.send_bytes(pack({"t": "send", "to": 0, "body": pack(body)}))

    async def next_body(self, timeout: float = 30) -> dict[str, Any] | None:
        """The next game message from the host (None once the conn is closed)."""
        # One deadline for the lot: aiohttp times each read afresh after a control frame, and
        # the relay's heartbeat pings a silent conn every 10 s.
        async with asyncio.timeout(timeout):
            while True:
                msg = await self.ws.receive()
                if msg.type is not aiohttp.WSMsgType.BINARY:
                    return None
                self.frames += 1
                self.bytes += len(msg.data)
                outer = msgpack.unpackb(msg.data, raw=False)
                if outer.get("t") == "frame":
                    return msgpack.unpackb(outer["body"], raw=False, strict_map_key=False)

    async def until(self, kinds: set[str], timeout: float = 30) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                body = await self.next_body(left)
            except TimeoutError:
                return None
            if body is None:
                return None
            self.seen.append({"t": body.get("t"), "code": body.get("code")})
            if body.get("t") in kinds:
                return body
        return None


def proof(identity: Identity, challenge: dict[str, Any]) -> bytes:
    """The join proof of PROTOCOL.md G3: a signature of tagged_hash("join", table, nonce)."""
    return identity.sign(tagged_hash("join", challenge["table"], challenge["nonce"]))


async def sync_flood(peer: RawPeer, out: Path, seconds: float) -> None:
    await peer.send({"t": "join", "name": "flood", "id": Identity.generate().public.to_bytes(),
                     "watch": True, "c": -1, "n": 0})
    await peer.until({"synced"})
    before = peer.bytes
    reading = asyncio.create_task(peer.until({"never"}, seconds + 2))  # and answers on the way
    deadline = time.monotonic() + seconds
    sent = 0
    while time.monotonic() < deadline:
        await peer.send({"t": "sync", "c": -1, "n": 0})  # the whole round, every time
        sent += 1
        await asyncio.sleep(1 / 95)
    await reading
    out.write_text(json.dumps({"sent": sent, "bytes": peer.bytes - before,
                               "frames": peer.frames, "seconds": seconds,
                               "rate_limited": sum(s["code"] == "rate_limited"
                                                   for s in peer.seen)}))


async def steal(peer: RawPeer, out: Path, seat_file: Path) -> None:
    victim = json.loads(seat_file.read_text())
    token = bytes.fromhex(victim["token"])
    public = Identity(bytes.fromhex(victim["key"])).public.to_bytes()
    mine = Identity.generate()
    join = {"t": "join", "name": "thief", "id": public, "token": token, "c": -1, "n": 0}
    answers = []
    await peer.send(join)
    for _ in range(3):
        body = await peer.until({"challenge", "welcome", "error"}, 10)
        answers.append(None if body is None else {"t": body["t"], "seat": body.get("seat"),
                                                   "code": body.get("code")})
        if body is None or body["t"] != "challenge":
            break
        await peer.send({**join, "proof": proof(mine, body)})  # not the seat's key
    out.write_text(json.dumps({"answers": answers}))


async def idle(peer: RawPeer, out: Path) -> None:
    identity = Identity.generate()
    join = {"t": "join", "name": "idle", "id": identity.public.to_bytes(), "c": -1, "n": 0}
    await peer.send(join)
    challenge = await peer.until({"challenge"})
    assert challenge is not None
    await peer.send({**join, "proof": proof(identity, challenge)})
    welcome = await peer.until({"welcome"})
    assert welcome is not None and welcome["seat"] is not None, welcome
    out.write_text(json.dumps({"seat": welcome["seat"], "turn_seconds": welcome["turn_seconds"]}))
    await peer.until({"never"}, 600)  # reads, and never moves


class PaddedSession(RemoteSession):
    """A seat that pads every nonce reveal it signs with an extra 40 KB field."""

    def _sign(self, chain: str, t: str, **fields: Any) -> None:
        if t == "nonce":
            fields["pad"] = PAD
        super()._sign(chain, t, **fields)


class BadProofSession(RemoteSession):
    """A seat whose shuffles carry a proof with s1 changed; everything else it does honestly."""

    def _sign_mental(self, payload: bytes, chain: str = "move") -> None:
        body = unpack(payload)
        if body.get("t") == "mp_shuffle":
            deck = body["deck"]
            offset = (4 * (len(deck) // 32 - 8) // 6 + 4) * 32  # s1, after t3..t4a and c
            s1 = (int.from_bytes(deck[offset:offset + 32], "little") + 1) % ORDER
            body["deck"] = deck[:offset] + s1.to_bytes(32, "little") + deck[offset + 32:]
            payload = protocol_pack(body.pop("t"), **body)
            print("sent a shuffle whose proof fails", flush=True)
        super()._sign_mental(payload, chain)


class RefusedFloodSession(RemoteSession):
    """A seat that plays honestly and floods the host with signed messages it must refuse."""

    last_signed: bytes | None = None
    flood_sent: int = 0
    answers: dict[str, int]

    def _sign_mental(self, payload: bytes, chain: str = "move") -> None:
        super()._sign_mental(payload, chain)
        self.last_signed = self._out[-1]  # sent now; a copy of it from then on

    def _on_error(self, msg: Any) -> None:
        self.answers[msg.code] = self.answers.get(msg.code, 0) + 1
        super()._on_error(msg)

    def bad_shares(self) -> bytes | None:
        """Shares of this seat's unplayed cards, next in its chain, the last proof failing."""
        play, seat = self.mental, self.my_seat
        if play is None or seat is None or play.mental.joint is None:
            return None
        rnd, epoch = play.mental, play.first_epoch
        mine = [q for q, owner in enumerate(rnd.owners.get(epoch, ()))
                if owner == seat and (epoch, q) not in rnd.public][:64]
        if not mine:
            return None
        deck = rnd.decks[epoch]
        blob = bytearray(b"".join(make_share(rnd.key, deck.ciphertext(q), deck.context, seat,
                                             q).encode() for q in mine))
        s = (int.from_bytes(blob[-32:], "little") + 1) % ORDER  # the last response, changed
        blob[-32:] = s.to_bytes(32, "little")
        payload = protocol_pack("mp_shares", round=play.round_no, epoch=epoch, positions=mine,
                                shares=bytes(blob))
        message = self._heads["move"].sign(self.identity.key, payload)  # the head stays put
        return protocol_pack("s", c=self.chain_no, m=message.to_wire())

    async def flood(self) -> None:
        """From its first cards on, send a refused message whenever the relay's pace allows,
        until the match ends."""
        while self.bad_shares() is None:
            await asyncio.sleep(0.05)
        while self.result is None and not self.closed:
            frames = [self.last_signed, self.bad_shares()]
            frames = [f for f in frames if f is not None]
            if not frames or self.phase != "live":
                await asyncio.sleep(0.05)
                continue
            for frame in frames:
                await self._send(frame)  # paced under the relay's rate, like every send
                self.flood_sent += 1
            if self.flood_sent % 500 < len(frames):
                print(f"flood {self.flood_sent} sent, answers {self.answers}", flush=True)


def lay_or_take(view: hekata.HekataDeal, seat: int) -> hekata.HekataMove:
    """Lay a card; once 29 or more lie on the table, take them all as one row if that is legal."""
    hand = [c for c in view.hands[seat] if c is not None]
    if len(view.table) >= 29:
        for card in sorted(set(hand)):
            digits = sorted([*view.table, card], reverse=True)
            move = hekata.HekataMove(card, parse_trick("".join(map(str, digits))))
            if view.is_legal(move):
                return move
    return hekata.HekataMove(hand[0])


async def play(session: RemoteSession, choose: Any) -> dict[str, Any] | None:
    await session.set_ready(True)
    answered = None
    async for event in session.events():
        if isinstance(event, MatchEnded):
            break
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or not session.queue.empty()):
            continue
        position = (session.round_number, len(view.history))
        if position != answered:
            answered = position
            await session.submit(choose(view.view(session.my_seat), session.my_seat))
    return session.result


async def main(mode: str, url: str, room: str, out: Path, arg: str | None) -> None:
    code = None if room == "-" else room
    if mode == "refused-flood":
        flooder = RefusedFloodSession(game="", url=url, room=code, name=mode,
                                      result_path=out.with_suffix(".result.json"),
                                      identity_path=out.with_suffix(".id"))
        flooder.answers = {}
        await flooder.start()
        flooding = asyncio.create_task(flooder.flood())
        bot = make_bot("greedy", 1)
        await play(flooder, lambda view, seat: bot.choose(view))
        flooding.cancel()
        print(f"flood {flooder.flood_sent} sent, answers {flooder.answers}", flush=True)
        out.write_text(json.dumps({"sent": flooder.flood_sent, "answers": flooder.answers}))
        await flooder.close()
        return
    if mode in ("pad-nonce", "lay-then-take", "bad-proof"):
        cls = {"pad-nonce": PaddedSession, "bad-proof": BadProofSession}.get(mode, RemoteSession)
        session = cls(game="", url=url, room=code, name=mode, result_path=out,
                      identity_path=out.with_suffix(".id"))
        await session.start()
        if mode in ("pad-nonce", "bad-proof"):
            bot = make_bot("greedy", 1)
            await play(session, lambda view, seat: bot.choose(view))
        else:
            await play(session, lay_or_take)
        await session.close()
        return
    async with aiohttp.ClientSession() as http:
        peer = await RawPeer.enter(http, url, code)
        if mode == "sync-flood":
            await sync_flood(peer, out, float(arg or 20))
        elif mode == "steal":
            await steal(peer, out, Path(str(arg)))
        elif mode == "idle":
            await idle(peer, out)
        await peer.ws.close()


if __name__ == "__main__":
    mode, url, room, out, *rest = sys.argv[1:]
    asyncio.run(main(mode, url, room, Path(out), rest[0] if rest else None))
