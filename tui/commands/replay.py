"""`cardtui replay FILE`: play a game record through the engine (docs/RECORDS.md)."""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import RecordError
from engine.records import Record, ReplayResult

HELP = ("Play a game record through the engine. Exit status: 0 every move legal, "
        "1 an illegal move (reported), 2 not a valid record.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("file", help="the record, a JSON file (docs/RECORDS.md); - reads standard input")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    """Replay the record and report as docs/RECORDS.md, "`cardtui replay`", describes."""
    try:
        if args.file == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                text = f.read()
        result = Record.loads(text).replay()
    except OSError as exc:
        return _not_a_record(args, f"cannot read {args.file}", str(exc.strerror))
    except RecordError as exc:
        return _not_a_record(args, f"{args.file} is not a valid record", str(exc))
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(render_text(result))
    return 0 if result.ok else 1


def _not_a_record(args: argparse.Namespace, what: str, reason: str) -> int:
    """Report a file that cannot be replayed (docs/RECORDS.md, "Exit status"): status 2."""
    if args.json:
        error = {"move": None, "seat": None, "reason": reason}
        print(json.dumps({"ok": False, "applied": 0, "error": error, "state": None}))
    print(f"cardtui replay: {what}: {reason}", file=sys.stderr)
    return 2


def render_text(result: ReplayResult) -> str:
    """The replay as text: each move with its effect, the error if any, then the end state."""
    lines = list(result.lines)
    if result.error is not None:
        number, seat, reason = result.error
        lines.append(f"move {number} (seat {seat}): illegal: {reason}")
    state = result.state_json()
    names = result.record.names
    lines.append("")
    lines.append("state:")
    for seat, hand in enumerate(state["hands"]):
        lines.append(f"  seat {seat} ({names[seat]}): {' '.join(hand) or '-'}")
    for key in ("top", "declared", "penalty", "pile", "table", "stock", "turn", "round_over",
                "winner", "scores"):
        if key in state:
            value = state[key]
            if isinstance(value, list):
                value = " ".join(map(str, value)) or "-"
            elif value is None or isinstance(value, bool):
                value = json.dumps(value)  # the words --json uses: null, true, false
            lines.append(f"  {key}: {value}")
    for t in state.get("tricks", []):
        lines.append(f"  trick by seat {t['seat']}: {t['trick']} = {t['total']}")
    return "\n".join(lines)
