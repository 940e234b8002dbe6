"""What a visitor types, made safe for the session's program before it reaches the pty.

The door caps the terminal's size in SSH's pty and window-change requests, but a terminal also
reports its size in the byte stream (the in-band resize, `ESC [ 48 ; rows ; cols ; ... t`),
and Textual believes it: a visitor could claim 2000 rows by typing them. Textual's input reader
also stops the whole program at bytes that are not UTF-8, at a key code past Unicode's last
(`ESC [ 9999999 u`) or with a colon where it expects a number (`ESC [ 1:2 u`).

So every byte from the visitor passes through an `InputFilter`. Text that is not UTF-8 is
dropped. A control sequence (`ESC [ ...` up to its final character) reaches the program only
if it has the shape of what a terminal sends Textual (a key, an SGR mouse event, a mode or
device report, an in-band resize), with every number in range; an in-band resize is rebuilt,
capped as the SSH requests are. Any other control sequence is dropped whole: Textual reads on
past a final character it does not know, so an unknown one could join the text after it into
a sequence this filter never saw. Everything else passes unchanged, in order.
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
# What terminals send Textual, as `ESC [` + parameters + final character.
# Cursor and function keys, and kitty's keys as Textual asks for them (flags 1, 8 and 16): a
# colon only among the code points of the text in the third field, never in the key's code or
# its modifiers (Textual's reader stops at `int("1:2")` there).
_KEY = re.compile(r"\d*(?:;\d*(?:;\d*(?::\d*)*)?)?[A-Za-z~]")
_MOUSE = re.compile(r"<\d+;-?\d+;-?\d+[Mm]")  # SGR mouse reports
_MODE = re.compile(r"\?\d+;\d+\$y")  # a mode report (DECRPM)
_DEVICE = re.compile(r"[?>]\d*(?:;\d*)*c")  # device attributes
_RESIZE = re.compile(r"48(?:;\d+(?::\d+)*){4}t")  # in-band resize, sub-fields allowed
_SHAPES = (_KEY, _MOUSE, _MODE, _DEVICE)


def checked_sequence(sequence: str) -> str:
    """The control sequence `ESC [ ... final` as the program may see it ("" drops it)."""
    body = sequence[2:]
    if any(len(n) > 7 or int(n) > MAX_CODE or int(n) in _SURROGATES
           for n in _NUMBER.findall(body)):
        return ""
    if _RESIZE.fullmatch(body):
        rows, columns, pixel_rows, pixel_columns = (  # each field's number, before any colon
            int(field.partition(":")[0]) for field in body[3:-1].split(";"))
        columns, rows = capped_size(columns, rows)
        return (f"{ESC}[48;{rows};{columns};{capped_pixels(pixel_rows)};"
                f"{capped_pixels(pixel_columns)}t")
    if body == "M":
        return ""  # an X10 mouse report, whose three bytes after it are raw: Textual asks for SGR
    if body == "[":
        return sequence  # the Linux console's F1 to F5 (ESC [ [ A ...): its letter follows
    return sequence if any(shape.fullmatch(body) for shape in _SHAPES) else ""


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
            self._step(char, out)
        if self._sequence == ESC and not self._escape_sent:
            # A lone ESC is the Escape key until more comes: the program must see it now.
            out.append(ESC)
            self._escape_sent = True
        return "".join(out).encode()

    def _step(self, char: str, out: list[str]) -> None:
        sequence = self._sequence
        if not sequence:
            if char == ESC:
                self._sequence = char
            else:
                out.append(char)
        elif sequence == ESC:
            if char == "[":
                self._sequence += char
            else:  # an Alt key, SS3 or a string: passed on as it came
                out.append("" if self._escape_sent else ESC)
                self._reset()
                self._step(char, out)
        elif "\x40" <= char <= "\x7e":  # the final character
            self._end_sequence("" if self._overlong else checked_sequence(sequence + char), out)
        elif "\x20" <= char <= "\x3f":  # parameters, kept up to a terminal's longest
            if len(sequence) < MAX_SEQUENCE:
                self._sequence += char
            else:
                self._overlong = True
        else:  # not a control sequence: it is dropped, and this character read anew
            self._end_sequence("", out)
            self._step(char, out)

    def _end_sequence(self, replacement: str, out: list[str]) -> None:
        if replacement:
            out.append(replacement[1:] if self._escape_sent else replacement)
            self._reset()
        elif self._escape_sent:
            # The program holds that ESC still, waiting for the rest of its sequence: what
            # comes next follows it there, so it is read here as following it too.
            self._sequence, self._overlong = ESC, False
        else:
            self._reset()

    def _reset(self) -> None:
        self._sequence, self._escape_sent, self._overlong = "", False, False
