"""Issue 12, item 3: a host that repeats a table id gets no commitment to a nonce a seat already
revealed there, even from a seat file written by an earlier process (FAIRNESS.md Part B)."""

from __future__ import annotations

from pathlib import Path

from netplay.seat.remote import RemoteSession, SeatIdentity


def seat_at(table: str, seat_file: Path) -> RemoteSession:
    """A seat as it stands after the host's welcome to `table`, with its seat file loaded."""
    session = RemoteSession(game="zodiak", identity_path=seat_file)
    session.identity = SeatIdentity.load(seat_file)
    session.table, session.my_seat = table, 1
    return session


def test_a_revealed_nonce_is_never_committed_to_again(tmp_path: Path) -> None:
    seat_file = tmp_path / "seat.json"
    first = seat_at("ROOM-abc", seat_file)
    committed = first._commitment(1, 0)
    assert first._commitment(1, 0) == committed  # unrevealed: the same one, e.g. after a restart
    first._revealing(first._nonce_key(1, 0))

    again = seat_at("ROOM-abc", seat_file)  # a later process, the same table id
    assert again._commitment(1, 0) != committed
    later = seat_at("ROOM-abc", seat_file)
    assert later._commitment(1, 0) == again._commitment(1, 0)  # the fresh one is kept
