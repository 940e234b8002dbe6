"""Each kind's fields as docs/PROTOCOL.md lists them, made from the declarations themselves.

The test that PROTOCOL.md mirrors this package (tests/netplay/test_messages_docs.py) compares
each kind's subsection there with `field_rows`, so the document cannot drift from the code.
"""

from __future__ import annotations

from netplay.messages.codec import Message, Nested, max_size, schema
from netplay.messages.fields import Opt


def field_rows(cls: type) -> list[str]:
    """The Markdown table of a kind's (or nested map's) fields: key, type and bounds, optional."""
    rows = ["| field | type and bounds | |", "|---|---|---|"]
    for f in schema(cls):
        spec = f.spec.spec if isinstance(f.spec, Opt) else f.spec
        rows.append(f"| `{f.key}` | {spec.text()} | {'' if f.required else '*opt*'} |")
    return rows


def nested_classes(cls: type) -> list[type]:
    """The classes of the maps a kind holds (a lobby's seats), in field order."""
    found = []
    for f in schema(cls):
        spec = f.spec.spec if isinstance(f.spec, Opt) else f.spec
        item = getattr(spec, "item", spec)
        if isinstance(item, Nested):
            found.append(item.cls)
    return found


def kind_section(cls: type[Message]) -> str:
    """A kind's subsection of docs/PROTOCOL.md: heading, what it says, fields, largest size."""
    doc = " ".join((cls.__doc__ or "").split())
    lines = [f"#### `{cls.t}` ({cls.__name__})", "", doc, "", *field_rows(cls)]
    for inner in nested_classes(cls):
        inner_doc = " ".join((inner.__doc__ or "").split())
        lines += ["", f"{inner.__name__}: {inner_doc}", "", *field_rows(inner)]
    lines += ["", f"At most {max_size(cls):,} bytes packed."]
    return "\n".join(lines) + "\n"
