"""Game records (docs/RECORDS.md): one round or deal as JSON, read, written and replayed through the engine."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from engine import hekata, zodiak
from engine.cards import Card, parse_digit
from engine.errors import IllegalMove, InvalidMove, RecordError
from engine.games import GAME_NAMES, ZODIAK, game_named
from engine.house import STANDARD, HouseRules
from engine.match import Round

SEAT_NAMES = ("North", "East", "South", "West")


@dataclass
class Record:
    """One round (Zodiak) or deal (Hekata): seats, the exact deal, and every move in order."""

    game: str
    seats: list[dict[str, str]]
    dealer: int
    scores: list[int]
    deal: dict[str, Any]
    moves: list[dict[str, Any]] = field(default_factory=list)
    house: HouseRules = STANDARD

    # -- reading ----------------------------------------------------------

    @classmethod
    def loads(cls, text: str | bytes) -> Record:
        """Parse and validate a record from JSON text, raising RecordError that says what is wrong."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RecordError(f"not valid JSON: {exc}") from None
        except RecursionError:
            raise RecordError("not valid JSON: nested too deeply") from None
        return cls.from_json(data)

    @classmethod
    def from_json(cls, data: Any) -> Record:
        """Validate a decoded JSON value as a record, raising RecordError."""
        if not isinstance(data, dict):
            raise RecordError("a record is a JSON object")
        game = data.get("game")
        try:
            rules = game_named(game)
        except IllegalMove:
            raise RecordError(f'"game" must be {" or ".join(map(json.dumps, GAME_NAMES))}') from None
        seats = data.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats):
            raise RecordError('"seats" must be a list of objects')
        try:
            rules.check_players(len(seats))
        except IllegalMove as exc:
            raise RecordError(f'"seats": {exc}') from None
        dealer = data.get("dealer")
        if type(dealer) is not int or not 0 <= dealer < len(seats):
            raise RecordError(f'"dealer" must be a seat number from 0 to {len(seats) - 1}')
        teams = rules.sides(len(seats))
        scores = data.get("scores", [0] * teams)
        if (not isinstance(scores, list) or len(scores) != teams
                or not all(type(s) is int and s >= 0 for s in scores)):
            raise RecordError(f'"scores" must be a list of {teams} whole numbers')
        deal = data.get("deal")
        if not isinstance(deal, dict):
            raise RecordError('"deal" must be an object')
        moves = data.get("moves", [])
        if not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
            raise RecordError('"moves" must be a list of objects')
        house_text = data.get("house", "standard")
        try:
            house = HouseRules.parse(house_text)
        except IllegalMove as exc:
            raise RecordError(f'"house": {exc}') from None
        record = cls(rules.name, seats, dealer, list(scores), deal, list(moves), house)
        record.start()  # validates the deal and the seats
        for number, move in enumerate(record.moves, 1):
            # A move the rules forbid is still a move of a valid record: replay reports it.
            with contextlib.suppress(IllegalMove):
                record._parse_move(number, move)
        return record

    def dumps(self) -> str:
        """The record as JSON text."""
        return json.dumps(self.as_json(), indent=2, ensure_ascii=False) + "\n"

    def as_json(self) -> dict[str, Any]:
        """The record as the JSON object `dumps` writes (sharing this record's lists: dump it now)."""
        data = {"game": self.game, "seats": self.seats, "dealer": self.dealer,
                "scores": self.scores, "deal": self.deal, "moves": self.moves}
        if not self.house.standard:
            data["house"] = str(self.house)
        return data

    # -- building -----------------------------------------------------------

    @classmethod
    def of_round(cls, game: str, names: list[str], start: Round,
                 house: HouseRules = STANDARD) -> Record:
        """A record with no moves yet of a round (or deal) as dealt under `house`; `start` must know every card."""
        if isinstance(start, zodiak.ZodiakRound):
            seats = [{"name": n, "sign": s} for n, s in zip(names, start.signs)]
            deal: dict[str, Any] = {"hands": [[str(c) for c in h] for h in start.hands],
                                    "pile": [str(c) for c in start.pile],
                                    "stock": [str(c) for c in start.stock]}
        else:
            assert isinstance(start, hekata.HekataDeal)
            seats = [{"name": n} for n in names]
            deal = {"hands": [[str(c) for c in h] for h in start.hands],
                    "table": [str(c) for c in start.table],
                    "stock": [str(c) for c in start.stock]}
        return cls(game, seats, start.dealer, list(start.scores), deal, house=house)

    def add_move(self, seat: int, move: zodiak.ZodiakMove | hekata.HekataMove) -> None:
        """Append a move in record form."""
        if isinstance(move, zodiak.Draw):
            self.moves.append({"seat": seat, "draw": True})
        elif isinstance(move, zodiak.Run):
            self.moves.append({"seat": seat, "play": str(move)})
        elif move.trick is None:
            self.moves.append({"seat": seat, "play": str(move.card)})
        else:
            self.moves.append({"seat": seat, "play": str(move.card), "trick": str(move.trick)})

    def set_reshuffles(self, orders: list[list[Card]]) -> None:
        """Record the stock orders of the reshuffles made so far (Zodiak)."""
        if orders:
            self.deal["reshuffles"] = [[str(c) for c in order] for order in orders]

    # -- replaying ----------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Each seat's name."""
        return [str(s.get("name", SEAT_NAMES[i])) for i, s in enumerate(self.seats)]

    def start(self) -> Round:
        """The round as dealt, before any move, raising RecordError for an impossible deal."""
        try:
            if game_named(self.game).uses_signs:
                return self._start_zodiak()
            return self._start_hekata()
        except IllegalMove as exc:
            raise RecordError(str(exc)) from None

    def _start_zodiak(self) -> zodiak.ZodiakRound:
        signs = []
        for i, seat in enumerate(self.seats):
            if "sign" not in seat:
                raise RecordError(f"seat {i} has no zodiac sign")
            signs.append(zodiak.parse_sign(seat["sign"]))
        hands = [_cards(h, f"deal.hands[{i}]") for i, h in enumerate(self._list("hands"))]
        pile = _cards(self.deal.get("pile"), "deal.pile")
        stock = _cards(self.deal.get("stock", []), "deal.stock")
        reshuffles = self.deal.get("reshuffles", [])
        if not isinstance(reshuffles, list):
            raise RecordError('"deal.reshuffles" must be a list of card lists')
        orders = [_cards(r, f"deal.reshuffles[{i}]") for i, r in enumerate(reshuffles)]
        copies = Counter(c for part in (*hands, pile, stock) for c in part)
        doubled = sorted(str(c) for c, n in copies.items() if n > 1)
        if doubled:
            raise RecordError(f"the deal holds more than one {', '.join(doubled)}")
        if len(hands) != len(self.seats):
            raise RecordError(f"{len(hands)} hands for {len(self.seats)} seats")
        return zodiak.ZodiakRound.from_parts(hands, pile, stock, signs, self.dealer,
                                             self.scores, orders)

    def _start_hekata(self) -> hekata.HekataDeal:
        hands = [_digits(h, f"deal.hands[{i}]") for i, h in enumerate(self._list("hands"))]
        table = _digits(self.deal.get("table", []), "deal.table")
        stock = _digits(self.deal.get("stock", []), "deal.stock")
        copies = Counter(c for part in (*hands, table, stock) for c in part)
        over = sorted(d for d, n in copies.items() if n > 5)
        if over:
            raise RecordError(f"the deal holds more than five of {', '.join(map(str, over))}")
        if len(hands) != len(self.seats):
            raise RecordError(f"{len(hands)} hands for {len(self.seats)} seats")
        return hekata.HekataDeal.from_parts(hands, table, stock, self.dealer, self.scores,
                                            self.house)

    def _list(self, key: str) -> list:
        value = self.deal.get(key)
        if not isinstance(value, list):
            raise RecordError(f'"deal.{key}" must be a list')
        return value

    def _parse_move(self, number: int, move: dict[str, Any]) -> tuple[int, Any]:
        """The seat and move of move `number`.

        Raises RecordError for a move not written as docs/RECORDS.md, "Moves", says (no seat, an unknown card:
        InvalidMove), and IllegalMove for a well-written move the rules forbid wherever it is made.
        """
        seat = move.get("seat")
        if type(seat) is not int or not 0 <= seat < len(self.seats):
            raise RecordError(f"move {number}: \"seat\" must be a seat number")
        kinds = [k for k in ("play", "draw") if k in move]
        if len(kinds) != 1:
            raise RecordError(f'move {number}: needs exactly one of "play" or "draw"')
        try:
            if game_named(self.game) is ZODIAK:
                if "trick" in move:
                    raise RecordError(f'move {number}: Zodiak moves have no "trick"')
                if kinds == ["draw"]:
                    if move["draw"] is not True:
                        raise RecordError(f'move {number}: "draw" must be true')
                    return seat, zodiak.Draw()
                return seat, zodiak.Run.parse(_text(move["play"], number))
            if kinds == ["draw"]:
                raise RecordError(f"move {number}: Hekata has no draw move")
            card = parse_digit(move["play"])
            trick = move.get("trick")
            if trick is None:
                return seat, hekata.HekataMove(card)
            return seat, hekata.HekataMove(card, hekata.parse_trick(_text(trick, number)))
        except InvalidMove as exc:
            raise RecordError(f"move {number}: {exc}") from None

    def replay(self) -> ReplayResult:
        """Play the moves in order, stopping at the first illegal one."""
        state = self.start()
        lines: list[str] = []
        for number, raw in enumerate(self.moves, 1):
            try:
                seat, move = self._parse_move(number, raw)
                state.check(move, seat)
                effect = state.push(move)
            except IllegalMove as exc:
                # _parse_move has checked "seat" before it raises IllegalMove.
                return ReplayResult(self, state, number - 1, lines,
                                    (number, raw["seat"], str(exc)))
            lines.append(f"{number}. {state.describe(effect)}{_consequence(state, effect)}")
        return ReplayResult(self, state, len(self.moves), lines, None)


@dataclass
class ReplayResult:
    """Where a replay ended: the state, how many moves applied, and the first illegal move if any."""

    record: Record
    state: Round
    applied: int
    lines: list[str]
    error: tuple[int, int, str] | None

    @property
    def ok(self) -> bool:
        """Whether every move was legal."""
        return self.error is None

    def state_json(self) -> dict[str, Any]:
        """The end state in the shape docs/RECORDS.md gives ("`cardtui replay --json`")."""
        s = self.state
        data: dict[str, Any] = {
            "turn": s.turn,
            "hands": [[str(c) for c in h] for h in s.hands],
            "round_over": s.round_over,
            "winner": s.winner if s.round_over or isinstance(s, hekata.HekataDeal) else None,
            "scores": list(s.scores),
        }
        if isinstance(s, zodiak.ZodiakRound):
            data |= {"top": str(s.top), "declared": s.declared, "penalty": s.penalty,
                     "stock": len(s.stock), "pile": len(s.pile)}
        else:
            data |= {"table": [str(c) for c in s.table], "stock": len(s.stock),
                     "tricks": [{"seat": t.seat, "trick": str(t.trick), "total": t.total}
                                for t in s.tricks]}
        return data

    def to_json(self) -> dict[str, Any]:
        """The whole `cardtui replay --json` object."""
        error = None
        if self.error is not None:
            error = {"move": self.error[0], "seat": self.error[1], "reason": self.error[2]}
        return {"ok": self.ok, "applied": self.applied, "error": error, "state": self.state_json()}


def _consequence(state: Round, effect: Any) -> str:
    """What a replayed move did beyond its description: cards drawn, a penalty, the round's end."""
    parts = []
    drawn = [str(c) for c in effect.drawn if c is not None]
    if drawn:
        parts.append(f"drew {' '.join(drawn)}")
    if isinstance(state, zodiak.ZodiakRound):
        if state.penalty and state.turn is not None:
            parts.append(f"seat {state.turn} faces {state.penalty}")
        if state.blocked:
            parts.append("the round is blocked")
        elif state.round_over:
            parts.append(f"seat {state.winner} wins the round")
    elif state.winner is not None:
        parts.append(f"team {state.winner} reaches {state.target:,} and wins")
    elif state.round_over:
        parts.append("the deal is over")
    return f" ({'; '.join(parts)})" if parts else ""


def _text(value: Any, number: int) -> str:
    if not isinstance(value, str):
        raise RecordError(f"move {number}: the move must be written as text")
    return value


def _cards(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list):
        raise RecordError(f'"{where}" must be a list of cards')
    try:
        return [Card.parse(v) if isinstance(v, str) else Card.parse(repr(v)) for v in value]
    except IllegalMove as exc:
        raise RecordError(f'"{where}": {exc}') from None


def _digits(value: Any, where: str) -> list[int]:
    if not isinstance(value, list):
        raise RecordError(f'"{where}" must be a list of digit cards')
    try:
        return [parse_digit(v) for v in value]
    except IllegalMove as exc:
        raise RecordError(f'"{where}": {exc}') from None
