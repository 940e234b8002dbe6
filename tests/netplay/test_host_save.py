"""The host's save file is JSON that reads back as what was saved (the round's log spliced in)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from netplay.table.store import hex_list_json, json_with

values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                      lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@given(data=st.dictionaries(st.text(max_size=8), values, min_size=1, max_size=6),
       key=st.text(max_size=8), value=values)
def test_json_with_reads_back_as_the_map_with_the_value_added(data: dict[str, Any], key: str,
                                                               value: Any) -> None:
    # The save splices the round's log, encoded on its own, into the map: whatever the map and
    # the key, the text is JSON and reads back as the map holding the value at that key.
    others = {k: v for k, v in data.items() if k != key}
    assume(others)
    assert json.loads(json_with(others, key, json.dumps(value))) == {**others, key: value}


@given(log=st.lists(st.binary(max_size=200), max_size=30))
def test_the_logs_joined_hex_reads_back_as_its_hex_strings(log: list[bytes]) -> None:
    assert json.loads(hex_list_json(log)) == [b.hex() for b in log]
