"""Every command seats you under the same name and sign: --name/--sign, else what Settings saved,
else your login name and today's sign (`cardtui host` drew a sign from the table's seed, and
`join` ignored the name in Settings)."""

from __future__ import annotations

from tui.cli import build_parser
from tui.commands.join import seat_session
from tui.commands.play import options_from
from tui.matchsetup import default_name, sign_of_today
from tui.settings import Settings, save_settings


def parsed(*argv: str):
    return build_parser().parse_args(list(argv))


def joined_as(*extra: str) -> tuple[str, str | None]:
    args = parsed("join", "127.0.0.1:7777", *extra)
    session = seat_session(args, lambda why: None)
    assert session is not None
    return session.name, session.sign


def test_without_settings_every_command_takes_the_login_name_and_todays_sign() -> None:
    assert joined_as() == (default_name(), sign_of_today())
    options = options_from(parsed("play", "zodiak"))
    assert (options.name, options.sign) == (default_name(), sign_of_today())


def test_the_name_and_sign_saved_in_settings_come_next_and_the_command_line_first() -> None:
    save_settings(Settings(name="Alice", sign="virgo"))
    assert joined_as() == ("Alice", "virgo")
    assert joined_as("--name", "Bob", "--sign", "leo") == ("Bob", "leo")
    options = options_from(parsed("play", "zodiak"))
    assert (options.name, options.sign) == ("Alice", "virgo")
