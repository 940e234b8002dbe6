"""The conventions docs/DESIGN.md states that a machine can check: ruff-clean code, imports flowing
one way, and citations that name a file and a section it has."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    """docs/DESIGN.md, "Conventions": the tree is ruff clean."""
    found = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", str(ROOT)],
                           capture_output=True, text=True, cwd=ROOT, check=False)
    assert found.returncode == 0, found.stdout + found.stderr


def test_types_check() -> None:
    """DESIGN 'Conventions': types checked by mypy, pinned in pyproject, over engine/ netplay/ tui/."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["engine", "netplay", "tui"]
    found = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"],
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
    "addresses": set(),
    "messages": set(),
    "relay": {"machine", "addresses", "messages"},
    "fair": {"machine"},
    "session": {"machine"},
    "ssh": {"machine", "addresses"},
    "protocol": {"machine", "relay", "fair", "messages"},
    "table": {"machine", "addresses", "relay", "fair", "protocol", "session", "messages"},
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


# docs/DESIGN.md, "Conventions": citations of the rules, the record format and the design.
SOURCES = [p for d in ("engine", "netplay", "tui", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
DOCS = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "tui").glob("*.md")]

CITED = re.compile(r"(?P<path>[\w./-]*?)(?P<name>RULES|RECORDS|DESIGN)\.md(?=(?P<after>[^\n]{0,160}))")
NUMBER = r"\d+(?:\.\d+)?"
NUMBERS = re.compile(rf"^(?:'s)?,?\s*(?:sections?\s+)?(?P<first>{NUMBER})"
                     rf"(?P<more>(?:\s*(?:,|and|-|–|/)\s*{NUMBER})*)")
TITLES = re.compile(r'^(?:\'s)?,?\s*(?P<titles>"[^"\n]+"(?:\s*(?:,|and)\s*"[^"\n]+")*)')
SHORT_RULES = re.compile(rf"\bRULES (?P<first>{NUMBER})(?P<more>(?:\s*(?:,|and|-|–|/)\s*{NUMBER})*)")
SHORT_TITLED = re.compile(r"\b(?P<name>DESIGN|RECORDS) '(?P<title>[^']+)'")


def headings(path: Path) -> set[str]:
    """The titles of a Markdown file's sections, without backticks, and their numbers alone."""
    found: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().replace("`", "")
            found.add(title)
            number = re.match(rf"({NUMBER})\.?\s", title)
            if number:
                found.add(number.group(1))
    return found


RULES = ROOT / "tui" / "RULES.md"
SECTIONS = {"RULES": headings(RULES), "RECORDS": headings(ROOT / "docs" / "RECORDS.md"),
            "DESIGN": headings(ROOT / "docs" / "DESIGN.md")}


def numbers_in(match: re.Match[str]) -> list[str]:
    return [match.group("first"), *re.findall(NUMBER, match.group("more"))]


def citations() -> list[tuple[Path, int, re.Match[str]]]:
    """Every place a source, test or document names tui/RULES.md, docs/RECORDS.md or docs/DESIGN.md."""
    found = []
    for path in SOURCES + DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in CITED.finditer(line):
                before = line[:match.start()]
                if before.endswith('"') and match.group("after").startswith('"'):
                    continue  # a file name in code ("RULES.md"), not a citation
                found.append((path, number, match))
    return found


def test_there_are_citations_to_check() -> None:
    """The check below sees the citations the code and tests make (about fifty and more)."""
    assert len(citations()) > 50


def test_every_citation_names_a_file_in_the_repository() -> None:
    """Each citation of tui/RULES.md, docs/RECORDS.md or docs/DESIGN.md is written with a path that
    exists from the repository's top or from the citing file (docs cite their siblings by name)."""
    wrong = []
    for path, number, match in citations():
        cited = match.group("path") + match.group("name") + ".md"
        if not ((ROOT / cited).is_file() or (path.parent / cited).is_file()):
            wrong.append(f"{path.relative_to(ROOT)}:{number}: {cited}")
    assert not wrong, ("write the path (tui/RULES.md 2.3, docs/RECORDS.md, docs/DESIGN.md):\n"
                       + "\n".join(wrong))


def test_every_cited_section_exists() -> None:
    """A section number after tui/RULES.md, or a quoted title after docs/RECORDS.md or
    docs/DESIGN.md, is a heading of that file."""
    wrong = []
    for path, number, match in citations():
        name, after = match.group("name"), match.group("after")
        wanted: list[str] = []
        if name == "RULES" and (numbers := NUMBERS.match(after)):
            wanted = numbers_in(numbers)
        elif name != "RULES" and (titles := TITLES.match(after)):
            wanted = [t.replace("`", "") for t in re.findall(r'"([^"]+)"', titles.group("titles"))]
        wrong += [f"{path.relative_to(ROOT)}:{number}: {name}.md has no section {w!r}"
                  for w in wanted if w not in SECTIONS[name]]
    assert not wrong, "\n".join(wrong)


def test_every_short_citation_names_a_section_that_exists() -> None:
    """`RULES 2.3` (tui/RULES.md's section 2.3) and `DESIGN 'Layout'` point at real sections."""
    wrong = []
    for path in SOURCES + DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in SHORT_RULES.finditer(line):
                wrong += [f"{path.relative_to(ROOT)}:{number}: RULES {n}"
                          for n in numbers_in(match) if n not in SECTIONS["RULES"]]
            for match in SHORT_TITLED.finditer(line):
                if match.group("title") not in SECTIONS[match.group("name")]:
                    wrong.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert not wrong, "\n".join(wrong)
