"""The record format's examples are what `cardtui replay` prints, and the paths the design names exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PATH_IN_BACKTICKS = re.compile(r"`((?:engine|netplay|tui|tests|benchmarks|docs)/[\w./-]*)`")


def test_every_path_the_design_and_the_record_format_name_exists() -> None:
    """Files and folders named in docs/DESIGN.md and docs/RECORDS.md are in the repository."""
    missing = [f"{doc}: {path}" for doc in ("DESIGN.md", "RECORDS.md")
               for path in PATH_IN_BACKTICKS.findall((ROOT / "docs" / doc).read_text())
               if not (ROOT / path).exists()]
    assert not missing, "\n".join(missing)


def test_the_record_format_examples_are_what_replay_prints() -> None:
    """docs/RECORDS.md, "`cardtui replay`" and "`cardtui replay --json`": the example output is
    what `cardtui replay` prints for the example record (tests/engine/records)."""
    import json
    import subprocess
    import sys

    text = (ROOT / "docs" / "RECORDS.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.DOTALL)
    example = ROOT / "tests" / "engine" / "records" / "records_md_example.json"
    shape = json.loads(example.read_text())
    documented = json.loads(blocks[0][1].replace(', "..."', ""))
    assert shape["deal"]["stock"][:2] == documented["deal"]["stock"]
    assert {k: v for k, v in shape.items() if k != "deal"} == {
        k: v for k, v in documented.items() if k != "deal"}

    def replay(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "tui.cli", "replay", *args, str(example)],
                              capture_output=True, text=True, cwd=ROOT, check=True).stdout

    lines = next(body for kind, body in blocks if not kind).strip().splitlines()
    assert replay().splitlines()[:len(lines)] == lines
    assert json.loads(replay("--json")) == json.loads(blocks[-1][1])
