"""The conventions docs/DESIGN.md states that a machine can check: ruff-clean code, imports flowing one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    """docs/DESIGN.md, "Conventions": the tree is ruff clean."""
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
    """docs/DESIGN.md, "Layout": tui -> netplay -> engine; the engine has no I/O frameworks."""
    engine = imported_packages("engine")
    assert not engine & {"netplay", "tui", "textual", "aiohttp", "asyncio", "asyncssh"}
    assert not imported_packages("netplay") & {"tui", "textual"}


# docs/DESIGN.md, "Layout": which netplay sub-package may import which (besides itself and engine).
NETPLAY_MAY_IMPORT: dict[str, set[str]] = {
    "machine": set(),
    "messages": set(),
    "relay": {"machine", "messages"},
    "fair": {"machine"},
    "session": {"machine"},
    "ssh": {"machine"},
    "protocol": {"machine", "relay", "fair", "messages"},
    "table": {"machine", "relay", "fair", "protocol", "session", "messages"},
    "seat": {"machine", "relay", "fair", "protocol", "session", "messages"},
}


def netplay_part(module: str) -> str | None:
    """The netplay sub-package (or top-level module) that `module` belongs to."""
    parts = module.split(".")
    return parts[1] if parts[0] == "netplay" and len(parts) > 1 else None


def module_imports(path: Path) -> set[str]:
    """The absolute module names `path` imports, at run time or for type checking alike."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def module_name(path: Path) -> str:
    """The dotted module name of a source file under ROOT."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_netplay_packages_import_only_what_design_allows() -> None:
    """docs/DESIGN.md, "Layout": each netplay sub-package imports only the sub-packages listed for it."""
    wrong = []
    for path in (ROOT / "netplay").rglob("*.py"):
        own = netplay_part(module_name(path))
        if own is None:
            continue
        assert own in NETPLAY_MAY_IMPORT, f"{own} is not in docs/DESIGN.md's layout"
        for imported in module_imports(path):
            part = netplay_part(imported)
            if part not in (None, own) and part not in NETPLAY_MAY_IMPORT[own]:
                wrong.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    """docs/DESIGN.md, "Layout": no module of engine, netplay or tui imports one that imports it back."""
    modules = {module_name(p): p for pkg in ("engine", "netplay", "tui")
               for p in (ROOT / pkg).rglob("*.py")}
    graph = {name: {m for m in module_imports(path) if m in modules and m != name}
             for name, path in modules.items()}
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(trail + [name, nxt]))
            if nxt not in state:
                visit(nxt, trail + [name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
