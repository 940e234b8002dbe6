"""`cardtui play GAME` with a match already saved: the saved match is moved aside, not
overwritten by the new one (the start screen asks first; a command line cannot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.commands.play import PREVIOUS, keep_previous_save
from tui.matchsetup import save_path


def test_a_saved_match_is_kept_beside_the_new_ones_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    saved = save_path()
    assert keep_previous_save() is None  # nothing saved: nothing to keep
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text('{"game": "zodiak"}')
    kept = keep_previous_save()
    assert kept == saved.with_name(PREVIOUS)
    assert kept.read_text() == '{"game": "zodiak"}' and not saved.exists()
