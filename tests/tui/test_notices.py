"""Notices on the game screen: every one in the log, few at once as pop-ups (a host sending
refusals or chat without end cannot bury the table in them), a failed check always."""

from __future__ import annotations

from netplay.session.events import Notice
from tests.tui.conftest import fresh_app, game_screen, log_text, settle
from tui.screens.game import TOASTS_AT_ONCE


async def test_a_flood_of_notices_is_logged_whole_but_pops_up_only_a_few() -> None:
    app = fresh_app("zodiak", 2, seed=3)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = game_screen(app)
        before = len(app._notifications)
        for i in range(50):
            screen.session.emit(Notice(f"p1: chat {i}", "chat"))
        screen.session.emit(Notice("check failed: the dealer: a test", "error", kept=True))
        await settle(pilot)
        text = log_text(app)
        assert "p1: chat 0" in text and "p1: chat 49" in text
        shown = [n for n in app._notifications][before:]
        assert len(shown) == TOASTS_AT_ONCE + 1, [n.message for n in shown]
        assert shown[-1].message == "check failed: the dealer: a test"
        assert shown[-1].severity == "error"
        assert all(n.severity == "information" for n in shown[:-1]), "chat is no error"
