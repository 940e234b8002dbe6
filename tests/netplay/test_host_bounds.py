"""Issue 10, items 1 and 3 piece by piece: what the host takes from a peer is bounded and closed,
its own messages have a size known in advance, and numbers of any size cross the wire."""

from __future__ import annotations

import json

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import hekata
from engine.records import Record
from netplay.fair import Identity, genesis_hash, sign_message
from netplay.messages import ProtocolError
from netplay.messages import decode_map as decode
from netplay.protocol import (
    MAX_BODY_BYTES,
    chain_room,
    envelope,
    pack,
    read_number,
    read_numbers,
    wire_number,
    wire_numbers,
)
from netplay.table.inbound import (
    FIELDS,
    MAX_SIGNED_PAYLOAD,
    check_fields,
    check_signed_payload,
)
from tui.widgets.players import score_text

TABLE = "K7QXM2RD9A-3f09c2d4a1b87e65"


@given(st.integers(-(10**120) + 1, 10**120 - 1))
def test_every_number_crosses_the_wire_as_itself(value: int) -> None:
    """A score of any size packs (never OverflowError) and reads back equal (PROTOCOL.md G1)."""
    body = pack("round_end", points=wire_number(value), scores=wire_numbers([value, -value]))
    msg = decode(body, MAX_BODY_BYTES)
    assert read_number(msg["points"]) == value
    assert read_numbers(msg["scores"], "scores") == [value, -value]


@pytest.mark.parametrize("bad", ["12", "0009223372036854775808", "-", "1e30", " 1" + "0" * 25,
                                 "9" * 121, 1.5, True, None, b"12"])
def test_a_number_has_one_form_and_no_other(bad: object) -> None:
    """A str that would fit an int, leading zeros, floats, booleans and over 120 digits are refused."""
    with pytest.raises(ProtocolError):
        read_number(bad)


def test_unknown_and_oversized_fields_are_refused() -> None:
    """Item 1: a field a message does not have (the 40 KB padding) or an overlong one is refused."""
    with pytest.raises(ProtocolError, match="no field 'pad'"):
        check_fields({"t": "sync", "c": 0, "n": 0, "pad": b"x" * 40_000}, FIELDS)
    with pytest.raises(ProtocolError, match="longer"):
        check_fields({"t": "join", "name": "x" * 1001}, FIELDS)
    with pytest.raises(ProtocolError, match="range"):
        check_fields({"t": "sync", "c": 2**40, "n": 0}, FIELDS)
    with pytest.raises(ProtocolError, match="no field"):
        check_signed_payload({"t": "nonce", "round": 1, "epoch": 0, "nonce": bytes(32),
                              "next": [], "seen": None, "pad": b"x"})
    with pytest.raises(ProtocolError, match="next"):
        check_signed_payload({"t": "nonce", "round": 1, "epoch": 0, "nonce": bytes(32),
                              "next": [[1, 0, bytes(32)]] * 3, "seen": None})
    check_signed_payload({"t": "nonce", "round": 1, "epoch": 0, "nonce": bytes(32),
                          "next": [[2, 0, bytes(32)]], "seen": [0, bytes(32)]})


def test_the_largest_shuffle_fits_the_body_limit() -> None:
    """G8: four seat-signed proofs of the largest payload a host accepts still fit one body."""
    seat = Identity.generate()
    room = chain_room(TABLE, 1)
    proof = sign_message(seat, 2**31, genesis_hash(room, "0/nonce"), b"\xff" * MAX_SIGNED_PAYLOAD)
    host = Identity.generate()
    payload = pack("shuffle", round=2**31, epoch=2**31, seed=bytes(32), seats=[0, 1, 2, 3],
                   commits=[[s, proof.to_wire()] for s in range(4)], missing=[], after=2**31)
    body = envelope(2**31, sign_message(host, 2**31, bytes(32), payload))
    assert len(body) < 18_000 < MAX_BODY_BYTES


def test_a_30_card_trick_is_scored_recorded_and_replayed() -> None:
    """Item 3 through the engine and records: a two-player deal where 28 cards are laid and
    the 29th takes all 30 as one row (tui/RULES.md 2.3: a single row, a multiple of 100)."""
    digits = [9, 8, 7, 6, 5, 4, 3, 2, 1] * 5  # with five zeros, the 50 cards of tui/RULES.md 2
    deck = digits[:12] + [0, 0] + digits[12:] + [0, 0, 0]  # two hands, the table, the stock
    deal = hekata.HekataDeal.deal(deck, 2, 0, [9999, 0])
    record = Record.of_round("hekata", ["a", "b"], deal.copy())
    while len(deal.table) < 29:
        seat = deal.turn
        card = next(c for c in deal.hands[seat] if c != 0 or len(deal.hands[seat]) == 1)
        move = hekata.HekataMove(card)
        deal.push(move)
        record.add_move(seat, move)
    seat = deal.turn
    card = deal.hands[seat][0]
    row = "".join(map(str, sorted([*deal.table, card], reverse=True)))
    move = hekata.HekataMove.parse(f"{card}: {row}")
    effect = deal.push(move)
    record.add_move(seat, move)
    assert len(row) == 30 and effect.total == int(row) > 2**64
    again = Record.from_json(json.loads(record.dumps())).replay().state
    assert again.scores == deal.scores and max(again.scores) > 10**28
    assert msgpack.unpackb(pack("x", s=wire_numbers(again.scores)))["s"][deal.team(seat)] == str(
        deal.scores[deal.team(seat)])


def test_the_players_panel_groups_digits_and_shortens_what_does_not_fit() -> None:
    """Item 3 in the app: grouped digits, and a 25-digit score as its first digits and a power."""
    assert score_text(1_234_567) == "1,234,567"
    assert score_text(9_876_543_210_123_456_789_012_345) == "9.87×10²⁴"
    assert score_text(-(10**24), ascii_only=True) == "-1.00e24"
    assert score_text(10**24, width=40) == f"{10**24:,}"
