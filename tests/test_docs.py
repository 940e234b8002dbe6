"""Every citation of the rules, the record format or the design names a file in the repository and a
section that file has (docs/DESIGN.md, "Conventions")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
    assert not wrong, "\n".join(wrong)


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
