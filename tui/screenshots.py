"""Write the README's SVG screenshots of both games to docs/screenshots (`python -m tui.screenshots`)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from tui.app import CardApp
from tui.matchsetup import MatchOptions, new_match

SHOTS = [
    ("zodiak.svg", "zodiak", 3, 3, ["h"], (100, 30)),
    ("zodiak-wide.svg", "zodiak", 4, 3, ["h"], (120, 40)),
    ("hekata.svg", "hekata", 4, 8, [], (100, 30)),
    ("hekata-trick.svg", "hekata", 4, 16, ["h"], (100, 30)),  # a trick on the table at once
]


async def shoot(path: Path, game: str, players: int, seed: int, keys: list[str],
                size: tuple[int, int]) -> None:
    """Play up to your first turn from a fixed seed, press `keys`, and save the screen."""
    app = CardApp(new_match(MatchOptions(game, players, "Sam", "leo", ("greedy",), seed, 0.0)))
    async with app.run_test(size=size) as pilot:
        from tui.screens.game import GameScreen

        for _ in range(2000):
            await pilot.pause()
            screen = app.screen
            if isinstance(screen, GameScreen) and screen.my_turn and screen.session.queue.empty():
                break
        await pilot.press(*keys)
        await pilot.pause()
        app.save_screenshot(path.name, str(path.parent))


def main(out: str = "docs/screenshots") -> int:
    """Write every screenshot; saves go to a temporary directory, not yours."""
    os.environ["CARDTUI_DATA_DIR"] = tempfile.mkdtemp(prefix="cardtui-shots-")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name, game, players, seed, keys, size in SHOTS:
        asyncio.run(shoot(folder / name, game, players, seed, keys, size))
        print(folder / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
