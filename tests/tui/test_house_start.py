"""House rules chosen on the start screen and in the host's setup (issue 13, "house rules chosen
at the start"): the field takes the text form, refuses nonsense with the reason, and the match
or the `cardtui host` command gets exactly the rules typed."""

from __future__ import annotations

from textual.widgets import Select, Static

from engine.house import STANDARD, HouseRules
from tests.tui.test_footer_fits import footer_keys
from tui.app import CardApp
from tui.matchsetup import MatchOptions
from tui.screens.netstart import HostSetup
from tui.widgets.house import HouseRulesInput

from .conftest import session_of, settle


def start_app(house: HouseRules = STANDARD) -> CardApp:
    return CardApp(defaults=MatchOptions("hekata", 2, "Me", "leo", seed=1, speed=0.0, house=house))


def error_text(app: CardApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_house_rules_typed_on_the_start_screen_are_the_matchs() -> None:
    app = start_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#house", HouseRulesInput)
        assert field.value == "" and "max-row=4" in field.placeholder
        field.focus()
        await pilot.press(*"max-row=9,target=0")
        await pilot.press("enter")  # enter in a field plays, as in the name field
        await pilot.pause()
        assert "target must be a whole number from 1" in error_text(app, "#start-error")
        assert app.session is None  # nothing started
        field.value = ""
        await pilot.press(*"max-row=3, target=2000", "enter")
        await settle(pilot)
        match = session_of(app).match
        assert match.house == HouseRules(max_row=3, target=2000)
        assert match.target == 2000


async def test_the_command_lines_house_rules_fill_the_field() -> None:
    app = start_app(HouseRules(max_row=4))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.query_one("#house", HouseRulesInput).value == "max-row=4"


async def test_host_setup_passes_the_house_rules_to_cardtui_host() -> None:
    app = start_app(HouseRules(target=3000))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, HostSetup)
        keys = footer_keys(app)  # its own footer, not the start screen's
        assert "Host" in keys and "Cancel" in keys and "Play" not in keys, keys
        field = app.screen.query_one("#host-house", HouseRulesInput)
        assert field.value == "target=3000"  # what the start screen had
        app.screen.query_one("#host-bots", Select).value = 1
        field.value = "rows=4"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "'rows' is not a house rule" in error_text(app, "#host-error")
        field.value = "max-row=4,target=3000"
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.next_command == ["host", "--game", "hekata", "--players", "4", "--bots", "1",
                                "--port", "7777", "--name", "Me", "--house",
                                "max-row=4,target=3000"]


async def test_bad_house_rules_stop_the_host_setup_from_opening() -> None:
    app = start_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.screen.query_one("#house", HouseRulesInput).value = "max-row=x"
        await pilot.press("o")
        await pilot.pause()
        assert not isinstance(app.screen, HostSetup)
        assert "max-row needs a whole number" in error_text(app, "#start-error")
