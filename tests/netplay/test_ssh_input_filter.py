"""What a door visitor types reaches the session's program only as the program can take it
(netplay/ssh/input_filter.py): keys unchanged, a size report capped, what would stop Textual's
input reader dropped. Textual's own parser reads the filtered output here."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from textual._xterm_parser import XTermParser

from netplay.ssh.guard import MAX_COLUMNS, MAX_ROWS
from netplay.ssh.input_filter import InputFilter

# What a terminal sends for keys, the mouse, a paste and its own replies: passed on unchanged.
KEYS = [
    "plain text, ♠♥♦♣ and 漢字",
    "\x1b",  # Escape alone
    "\x1b[A\x1b[B\x1b[1;5C",  # arrows, ctrl+right
    "\x1bOP\x1b[15~",  # F1, F5
    "\x1bx",  # alt+x
    "\x1b[<0;12;7M\x1b[<0;12;7m",  # a click
    "\x1b[200~pasted\r\nlines\x1b[201~",
    "\x1b[97;5u\x1b[97:65;2u",  # kitty keyboard protocol
    "\x1b[?2048;1$y\x1b[48;30;100;600;1000t",  # in-band resize: supported, then a size
    "\x1b\x1b[A",  # alt+up as some terminals send it
]


def filtered(*chunks: bytes) -> bytes:
    typed = InputFilter()
    return b"".join(typed.feed(chunk) for chunk in chunks)


def parsed(data: bytes) -> list[object]:
    """What Textual makes of data (an empty feed means end of input to its parser)."""
    return list(XTermParser().feed(data.decode())) if data else []


def test_keys_mouse_and_pastes_pass_unchanged() -> None:
    for keys in KEYS:
        assert filtered(keys.encode()) == keys.encode(), repr(keys)


def test_a_size_report_in_the_input_is_capped_as_the_ssh_requests_are() -> None:
    # The audit's case: 600 rows and 2000 columns claimed in the byte stream.
    assert filtered(b"\x1b[48;600;2000;0;0t") == \
        f"\x1b[48;{MAX_ROWS};{MAX_COLUMNS};0;0t".encode()
    assert filtered(b"\x1b[48;99999:1;99999;70000;70000t") == \
        f"\x1b[48;{MAX_ROWS};{MAX_COLUMNS};0;0t".encode()
    (event,) = parsed(filtered(b"\x1b[48;2000;6000;0;0t"))
    assert (event.size.width, event.size.height) == (MAX_COLUMNS, MAX_ROWS)  # type: ignore[attr-defined]


def test_bytes_that_are_not_utf8_are_dropped_and_the_rest_kept() -> None:
    assert filtered(b"a\xc3(b\xff\xfec") == b"a(bc"
    assert filtered("é".encode()[:1], "é".encode()[1:]) == "é".encode()  # split: kept whole


def test_a_key_code_past_unicode_or_half_a_character_is_dropped() -> None:
    # Textual's reader raised ValueError at the first and would type half a character for the
    # second, which no terminal can show.
    assert filtered(b"x\x1b[9999999uy") == b"xy"
    assert filtered(b"\x1b[55296u\x1b[1;1;56000u") == b""
    assert filtered(b"\x1b[" + b"1;" * 40 + b"u") == b""  # longer than any terminal's


def test_an_escape_that_ends_one_read_goes_out_and_its_sequence_is_still_checked() -> None:
    typed = InputFilter()
    assert typed.feed(b"\x1b") == b"\x1b"  # the Escape key cannot wait for more input
    assert typed.feed(b"[48;600;2000;0;0t") == f"[48;{MAX_ROWS};{MAX_COLUMNS};0;0t".encode()
    assert typed.feed(b"\x1b") == b"\x1b"
    assert typed.feed(b"[9999999u") == b""
    assert typed.feed(b"q") == b"q"


# Input a hostile visitor might type: pieces of control sequences, numbers, broken UTF-8.
PIECES = st.sampled_from([b"\x1b", b"[", b"<", b"?", b";", b":", b"48", b"u", b"t", b"M", b"~",
                          b"$", b"y", b"R", b"9999999", b"55296", b"1114111", b"600", b"0",
                          b"\xc3", b"\xa9", b"\xff", b"\xf0\x9f", b"\x98\x80", b"a", b"\r"])
HOSTILE = st.lists(PIECES | st.binary(max_size=6), max_size=40).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(HOSTILE, st.lists(st.integers(0, 240), max_size=6))
def test_any_input_cut_anywhere_filters_the_same_and_textual_reads_it(
        data: bytes, cuts: list[int]) -> None:
    edges = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    whole = filtered(data)
    assert filtered(*(data[a:b] for a, b in pairwise(edges))) == whole
    whole.decode()  # UTF-8, strictly
    parsed(whole)  # Textual's parser raises at nothing that is left
    for rows, columns in re.findall(rb"\x1b\[48;(\d+);(\d+);", whole):
        assert int(rows) <= MAX_ROWS and int(columns) <= MAX_COLUMNS
