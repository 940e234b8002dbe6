"""What a visitor types, made safe for the session's program before it reaches the pty.

The door caps the terminal's size in SSH's pty and window-change requests, but a terminal also
reports its size in the byte stream (the in-band resize, `ESC [ 48 ; rows ; cols ; ... t`),
and Textual believes it: a visitor could claim 2000 rows by typing them. Textual's input reader
also stops the whole program at bytes that are not UTF-8, and at a key code past Unicode's last
(`ESC [ 9999999 u`). So every byte from the visitor passes through an `InputFilter`: text that
is not UTF-8 is dropped, a control sequence whose numbers are out of range is dropped, and an
in-band resize is capped as the SSH requests are. Everything else passes unchanged, in order.
"""

from __future__ import annotations

import codecs
import re

from netplay.ssh.guard import capped_pixels, capped_size

ESC = "\x1b"
MAX_SEQUENCE = 64  # characters of one control sequence; longer ones are not a terminal's
MAX_CODE = 0x10FFFF  # any number in a control sequence (Unicode's last code point)
_NUMBER = re.compile(r"\d+")
_SURROGATES = range(0xD800, 0xE000)


def checked_sequence(sequence: str) -> str:
    """The control sequence `ESC [ ... final` as the program may see it ("" drops it)."""
    params = sequence[2:-1]
    final = sequence[-1]
    numbers = _NUMBER.findall(params)
    if any(len(n) > 7 or int(n) > MAX_CODE for n in numbers):
        return ""
    if final == "u" and any(int(n) in _SURROGATES for n in numbers):
        return ""  # a key "typed" as half a character would break the program's output
    if final == "t" and params.split(";", 1)[0] == "48":
        fields = [_leading_number(f) for f in params.split(";")[1:5]]
        rows, columns, pixel_rows, pixel_columns = (fields + [0, 0, 0, 0])[:4]
        columns, rows = capped_size(columns, rows)
        return (f"{ESC}[48;{rows};{columns};{capped_pixels(pixel_rows)};"
                f"{capped_pixels(pixel_columns)}t")
    return sequence


def _leading_number(field: str) -> int:
    found = _NUMBER.match(field)  # a field may carry sub-fields after a colon
    return int(found.group()) if found else 0


class InputFilter:
    """A stream filter over one session's input: feed it bytes, write what it returns."""

    def __init__(self) -> None:
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="ignore").decode
        self._sequence = ""  # a control sequence begun and not yet ended
        self._escape_sent = False  # its ESC went out already (it ended the previous input)
        self._overlong = False  # it is longer than a terminal's: it will be dropped whole

    def feed(self, data: bytes) -> bytes:
        """The bytes of `data` (and of earlier input held back) that may reach the program."""
        text = self._decode(data)
        if not self._sequence and ESC not in text:
            return text.encode()
        out: list[str] = []
        for char in text:
            if not self._sequence:
                if char == ESC:
                    self._sequence = char
                else:
                    out.append(char)
            elif self._sequence == ESC:
                if char == "[":
                    self._sequence += char
                else:  # an Alt key, SS3 or a string: passed on as it came
                    out.append(ESC if not self._escape_sent else "")
                    self._sequence, self._escape_sent = "", False
                    if char == ESC:
                        self._sequence = char
                    else:
                        out.append(char)
            elif "\x40" <= char <= "\x7e":  # the final character
                sequence = self._sequence + char
                self._end_sequence("" if self._overlong else checked_sequence(sequence), out)
            elif "\x20" <= char <= "\x3f":  # parameters, kept up to a terminal's longest
                if len(self._sequence) < MAX_SEQUENCE:
                    self._sequence += char
                else:
                    self._overlong = True
            else:
                self._end_sequence("", out)  # not a control sequence: dropped with this
        if self._sequence == ESC and not self._escape_sent:
            # A lone ESC is the Escape key until more comes: the program must see it now.
            out.append(ESC)
            self._escape_sent = True
        return "".join(out).encode()

    def _end_sequence(self, replacement: str, out: list[str]) -> None:
        if replacement:
            out.append(replacement[1:] if self._escape_sent else replacement)
        self._sequence, self._escape_sent, self._overlong = "", False, False
