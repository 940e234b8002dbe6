"""Issue 10 item 4 before the start: a seat's token seen on the wire (plain ws://) does not take
the seat while the match has not started either, whatever key the thief proves it holds."""

from __future__ import annotations

import asyncio
from typing import Any

from netplay.fair import Identity
from netplay.fair.transcript import SignedMessage
from netplay.messages import Frame
from netplay.protocol import inner, join_proof_digest, pack, unpack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig


async def answer_to_join(conn: RelayConnection) -> dict[str, Any]:
    """The host's next challenge, welcome or error to this conn (opened if it is signed)."""
    while True:
        frame = await conn.recv()
        if not isinstance(frame, Frame):
            continue
        body = unpack(frame.body)
        if body["t"] == "s":
            body = inner(SignedMessage.from_wire(body["m"]).payload)
        if body["t"] in ("challenge", "welcome", "error"):
            return body


async def steal_in_the_lobby() -> tuple[list[str], str | None, str | None]:
    relay = await start_relay()
    host = Host(HostConfig(game="zodiak", players=3, seed=4), on_event=lambda _: None)
    host_conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(host_conn))
    victim = RemoteSession(game="", url=relay.url, room=host_conn.room, name="victim")
    thief = await RelayConnection.enter(relay.url, host_conn.room)
    try:
        await victim.start()
        await victim.wait_seated()
        rightful = host.seats[victim.my_seat].ident
        mine = Identity.generate()
        # What a sniffer saw: the victim's token. The thief proves its own key, as asked.
        join: dict[str, Any] = {"name": "thief", "id": mine.public.to_bytes(),
                                "token": victim.identity.token, "c": -1, "n": 0}
        answers: list[str] = []
        await thief.send(pack("join", **join), to=0)
        for _ in range(3):
            answer = await asyncio.wait_for(answer_to_join(thief), 30)
            answers.append(answer["t"])
            if answer["t"] != "challenge":
                break
            proof = mine.sign(join_proof_digest(answer["table"], answer["nonce"]))
            await thief.send(pack("join", **join, proof=proof), to=0)
        return answers, rightful, host.seats[victim.my_seat].ident
    finally:
        await thief.close()
        await victim.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await host_conn.close()
        await relay.close()


def test_a_sniffed_token_does_not_take_a_seat_in_the_lobby() -> None:
    """PROTOCOL.md G3 'Proof of key': a token is worthless without the seat's own key; the host
    refuses the join and the seat keeps the identity it was taken with."""
    answers, before, after = asyncio.run(steal_in_the_lobby())
    assert answers == ["challenge", "error"]
    assert after == before
