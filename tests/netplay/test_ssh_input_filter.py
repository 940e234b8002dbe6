"""What a door visitor types reaches the session's program only as the program can take it
(netplay/ssh/input_filter.py): keys unchanged, a size report capped, what would stop Textual's
input reader dropped. Textual's own parser reads the filtered output here."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events
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
    "\x1b[97;5u\x1b[97;2;65u\x1b[97;1;97:98u",  # kitty keys, as Textual asks for them
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


def test_sequences_textual_would_read_past_are_dropped_whole() -> None:
    """Textual reads a sequence on past a final character it does not know: a letter inside a
    size report used to end the filter's look at it, and the rest, passed as text, made the
    report again (600 x 2000 drawn). A colon where Textual expects a number stopped it."""
    assert filtered(b"\x1b[48;600:a;2000;0;0t") == b";2000;0;0t"
    for bad in (b"\x1b[1:2u", b"\x1b[97:65;2u", b"\x1b[97;1:2u", b"\x1b[::u", b"\x1b[1;1;55296A",
                b"\x1b[55296~", b"\x1bM", b"\x1b[M", b"\x1b[5;5;5;5A"):
        typed = filtered(bad)
        assert b"\x1b[" not in typed, (bad, typed)
        parsed(typed)
    # The ESC of a dropped sequence went out with an earlier read: what follows is still
    # read as following it, as the program reads it.
    typed = InputFilter()
    assert typed.feed(b"\x1b") == b"\x1b"
    assert typed.feed(b"[9999999u") == b""
    assert typed.feed(b"[48;600;2000;0;0t") == f"[48;{MAX_ROWS};{MAX_COLUMNS};0;0t".encode()


def test_an_escape_that_ends_one_read_goes_out_and_its_sequence_is_still_checked() -> None:
    typed = InputFilter()
    assert typed.feed(b"\x1b") == b"\x1b"  # the Escape key cannot wait for more input
    assert typed.feed(b"[48;600;2000;0;0t") == f"[48;{MAX_ROWS};{MAX_COLUMNS};0;0t".encode()
    assert typed.feed(b"\x1b") == b"\x1b"
    assert typed.feed(b"[9999999u") == b""
    assert typed.feed(b"q") == b"q"


# Input a hostile visitor might type: pieces of control sequences, numbers, broken UTF-8.
PIECES = st.sampled_from([b"\x1b", b"[", b"<", b"?", b";", b":", b"48", b"u", b"t", b"M", b"~",
                          b"$", b"y", b"R", b"A", b"c", b"9999999", b"55296", b"1114111", b"600",
                          b"0", b"\xc3", b"\xa9", b"\xff", b"\xf0\x9f", b"\x98\x80", b"a",
                          b"\r", b"\x1b[48;", b"\x1b[1;"])
HOSTILE = st.lists(PIECES | st.binary(max_size=6), max_size=40).map(b"".join)


def assert_safe(typed: bytes) -> None:
    """UTF-8, strictly; Textual's parser raises at none of it; no size past the cap, no key
    typed as half a character."""
    typed.decode()
    for event in parsed(typed):
        if isinstance(event, events.Resize):
            assert event.size.width <= MAX_COLUMNS and event.size.height <= MAX_ROWS
        if isinstance(event, events.Key):
            assert not any(0xD800 <= ord(c) < 0xE000 for c in event.character or "")


@settings(max_examples=400, deadline=None)
@given(HOSTILE, st.lists(st.integers(0, 240), max_size=6))
def test_any_input_cut_anywhere_is_safe_and_filters_the_same_but_for_an_escape_going_early(
        data: bytes, cuts: list[int]) -> None:
    """However the input is cut into reads it is safe; and it is filtered the same, unless a
    read ends just after an ESC, which goes out at once (the Escape key) and so also reaches
    the program when the sequence it began is dropped."""
    edges = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    whole = filtered(data)
    assert_safe(whole)
    chunked = filtered(*(data[a:b] for a, b in pairwise(edges)))
    assert_safe(chunked)
    if not any(data[c - 1:c] == b"\x1b" for c in edges[1:-1]):
        assert chunked == whole
