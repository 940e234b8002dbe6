"""docs/PROTOCOL.md mirrors netplay/messages kind by kind: every game kind declared there has its
subsection in the right G-section, with the fields, types, bounds and largest size the code has,
and every subsection names a declared kind (issue 9)."""

from __future__ import annotations

import re
from pathlib import Path

from netplay.messages import (
    HOST_BODIES,
    HOST_PAYLOADS,
    LEAVING_KINDS,
    MENTAL_KINDS,
    SEAT_BODIES,
    SEAT_PAYLOADS,
    Message,
    MpChecked,
    MpPrepare,
    MpVoid,
)
from netplay.messages.docs import kind_section

PROTOCOL = (Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md").read_text()
GAME = PROTOCOL[PROTOCOL.index("## Game messages"):]
HEADING = re.compile(r"^#### `(?P<t>[a-z_]+)` \((?P<name>\w+)\)$", re.MULTILINE)
MENTAL = {*MENTAL_KINDS, *LEAVING_KINDS, MpVoid, MpPrepare, MpChecked}
# Where each kind belongs: the G-section of the side that sends it.
SECTIONS: dict[str, set[type[Message]]] = {
    "G3": set(SEAT_BODIES.kinds.values()),
    "G4": set(HOST_BODIES.kinds.values()),
    "G5": {*HOST_PAYLOADS.kinds.values(), *SEAT_PAYLOADS.kinds.values()} - MENTAL,
    "G9": MENTAL,
}
DECLARED = {cls.__name__: cls for kinds in SECTIONS.values() for cls in kinds}


def subsections() -> dict[str, tuple[str, str, str]]:
    """Each kind subsection of the game part: class name -> (its G-section, `t`, its text)."""
    found: dict[str, tuple[str, str, str]] = {}
    for match in HEADING.finditer(GAME):
        section = re.findall(r"^### (G\d+)\.", GAME[:match.start()], re.MULTILINE)[-1]
        end = re.compile(r"^#{2,4} ", re.MULTILINE).search(GAME, match.end())
        text = GAME[match.start():end.start() if end else len(GAME)]
        assert match["name"] not in found, f"{match['name']} has two subsections"
        found[match["name"]] = (section, match["t"], text)
    return found


def test_every_declared_kind_has_its_subsection_and_every_subsection_a_kind() -> None:
    found = subsections()
    assert set(found) == set(DECLARED), (
        f"without a subsection: {sorted(set(DECLARED) - set(found))};"
        f" naming no declared kind: {sorted(set(found) - set(DECLARED))}")
    for name, (_, t, _) in found.items():
        assert DECLARED[name].t == t, f"{name} is `{DECLARED[name].t}`, not `{t}`"


def test_each_kind_is_in_the_section_of_the_side_that_sends_it() -> None:
    found = subsections()
    for section, kinds in SECTIONS.items():
        for cls in kinds:
            assert found[cls.__name__][0] == section, f"{cls.__name__} belongs in {section}"


def test_each_subsection_lists_the_fields_types_bounds_and_size_the_code_has() -> None:
    """Regenerate with `kind_section` when a kind changes; the document then says the same."""
    for name, (_, _, text) in subsections().items():
        assert text.strip() == kind_section(DECLARED[name]).strip(), name
