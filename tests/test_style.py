"""The conventions DESIGN.md states that a machine can check: ruff-clean code, imports flowing one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    """DESIGN 'Conventions': the tree is ruff clean."""
    found = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", str(ROOT)],
                           capture_output=True, text=True, cwd=ROOT, check=False)
    assert found.returncode == 0, found.stdout + found.stderr


def imported_packages(package: str) -> set[str]:
    """The top-level names every module of `package` imports."""
    names: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def test_imports_flow_one_way() -> None:
    """DESIGN 'Layout': tui -> netplay -> engine; the engine has no I/O frameworks."""
    engine = imported_packages("engine")
    assert not engine & {"netplay", "tui", "textual", "aiohttp", "asyncio", "asyncssh"}
    assert not imported_packages("netplay") & {"tui", "textual"}
