"""The host's save file: everything `cardtui host --resume` needs to continue a table."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Self

import msgpack

from engine.games import game_named
from engine.house import HouseRules
from engine.match import Match
from engine.records import Record
from netplay.fair import DeckCommitment, Identity, SignedMessage
from netplay.machine import write_private
from netplay.protocol import ChainHead, unpack
from netplay.table.state import Epoch, HostConfig, Seat, TableState


def json_with(data: dict[str, Any], key: str, encoded: str) -> str:
    """The JSON text of `data` (a map with at least one entry) with `key` holding `encoded`,
    a value already in JSON."""
    return f"{json.dumps(data)[:-1]}, {json.dumps(key)}: {encoded}}}"


def hex_list_json(items: list[bytes]) -> str:
    """`json.dumps([b.hex() for b in items])`, without the encoder's scan for characters to
    escape (hex has none): the round's log is most of the save, written after every move."""
    return '["' + '","'.join(b.hex() for b in items) + '"]' if items else "[]"


class HostStore(TableState):
    """The `Host` methods that save the table after every step and resume it from the file."""

    def _save(self) -> None:
        path = self.config.save_path
        if path is None or self.finished:
            return
        data = {
            "config": {"game": self.config.game, "players": self.config.players,
                       "bots": self.config.bots, "seed": self.seed,
                       "owner_secret": self.config.owner_secret,
                       "house": str(self.config.house), "mental": self.config.mental},
            # vars(), not asdict(): a seat holds only scalars, and asdict deep-copies them all.
            "seats": [{**vars(s), "conn": None, "away_since": None} for s in self.seats],
            "started": self.started, "moves_made": self.moves_made,
            "round_base": self.round_base,
            "match": None if self.match is None else {
                "dealer": self.match.dealer, "scores": self.match.scores,
                "rounds_played": self.match.rounds_played},
            "record": None if self.record is None else self.record.as_json(),
            "room": self.relay.room if self.relay else None,
            "host_secret": self.relay.host_secret.hex() if self.relay and self.relay.host_secret
            else None,
            # A deal by mental poker cannot go on after a restart (the bots' key is gone): its
            # last epoch is kept so the deal made again starts past it. Seats that handed their
            # key over are kept apart: they are parties of the deal in play, and the void that
            # deals it again must name them as gone, as every seat's view of that deal has them.
            "mental": None if self.mental is None else {
                "epoch": self.mental.mental.epoch, "moves": self.deal_moves,
                "stand_ins": sorted(self.stand_ins), "handed": sorted(self.handed)},
        }
        # Private: it holds this round's seeds, and whoever reads it knows the deck. Renamed into
        # place before anyone hears of the step, so a restarted process signs on from here; the
        # flush to disk runs beside the table rather than in every move's round trip.
        fair = json_with(self._fair_json(), "log", hex_list_json(self.log))
        write_private(path, json_with(data, "fair", fair), sync=False)
        self._flusher.request(path)

    def _fair_json(self) -> dict[str, Any]:
        return {
            "identity": self.identity.seed.hex(), "table": self.table,
            "round": self.round_number, "after": self._after, "lobby_epoch": self.lobby_epoch,
            "scored": self.round_scored,
            "heads": {k: [h.seq, h.head.hex()] for k, h in self.heads.items()},
            "precommits": {k: msgpack.packb(v, use_bin_type=True).hex()
                           for k, v in self.precommits.items()},
            "epochs": [{"seed": ep.seed.hex(), "seats": ep.seats, "reveal_open": ep.reveal_open,
                        "commits": {str(s): c.hex() for s, c in ep.commits.items()},
                        "nonces": {str(s): c.hex() for s, c in ep.nonces.items()},
                        "canonical": ep.canonical, "dealt": ep.deck is not None,
                        "owners": ep.owners, "opened": sorted(ep.opened)} for ep in self.epochs],
        }

    def _restore_fair(self, data: dict[str, Any]) -> None:
        self.identity, self.table = Identity(bytes.fromhex(data["identity"])), data["table"]
        self._new_chain(data["round"])
        self._after, self.round_scored = data.get("after", 0), data.get("scored", True)
        # The next lobby deck names a later epoch than any in the saved chain 0 (seats refuse
        # an epoch they have seen).
        self.lobby_epoch = int(data.get("lobby_epoch", 0))
        self.log = [bytes.fromhex(b) for b in data["log"]]
        if self.log:
            last = SignedMessage.from_wire(unpack(self.log[-1])["m"])
            self.head = ChainHead(last.seq + 1, last.digest)
        self.heads = {k: ChainHead(v[0], bytes.fromhex(v[1])) for k, v in data["heads"].items()}
        self.precommits = {k: msgpack.unpackb(bytes.fromhex(v), raw=False)
                           for k, v in data["precommits"].items()}
        for saved in data["epochs"]:
            ep = Epoch(bytes.fromhex(saved["seed"]), saved["seats"],
                       {int(s): bytes.fromhex(c) for s, c in saved["commits"].items()},
                       {int(s): bytes.fromhex(c) for s, c in saved["nonces"].items()},
                       saved["reveal_open"], saved["canonical"], None, saved["owners"],
                       set(saved["opened"]))
            if saved["dealt"]:
                nonces = [ep.nonces[s] for s in sorted(ep.nonces)]
                ep.deck = DeckCommitment.build(self.table, self.round_number, len(self.epochs),
                                               ep.seed, nonces, ep.canonical or [])
            self.epochs.append(ep)

    @classmethod
    def resume(cls, config: HostConfig, path: Path) -> tuple[Self, str | None, bytes | None]:
        """The host saved at `path`, with its room code and host secret."""
        data = json.loads(path.read_text())
        if "fair" not in data:
            raise ValueError(f"{path} was saved by an older cardtui without verifiable dealing;"
                             " start a new game")
        saved = data["config"]
        config.game, config.players, config.bots = saved["game"], saved["players"], saved["bots"]
        config.seed, config.owner_secret = saved["seed"], saved.get("owner_secret")
        config.house = HouseRules.parse(saved.get("house", ""))
        config.mental = saved.get("mental") is True
        config.save_path = path
        host = cls(config, seats=[Seat(**s) for s in data["seats"]])
        host.started, host.moves_made = data["started"], data["moves_made"]
        host.round_base = data.get("round_base", 0)
        for seat in host.seats:
            if seat.bot is None and seat.token is not None:
                seat.away_since = time.monotonic()
        if data["match"] is not None:
            signs = game_named(config.game).signs_for([s.sign for s in host.seats])
            host.match = Match(config.game, config.players, signs, **data["match"],
                               house=config.house)
        if data["record"] is not None:
            host.record = Record.from_json(data["record"])
            host.state = host.record.replay().state
        host._restore_fair(data["fair"])
        mental = data.get("mental")
        if (config.mental and mental is not None and host.match is not None
                and host.round_number == host.match.rounds_played + 1):
            host.resume_epoch = int(mental["epoch"])
            host.stand_ins = {int(s) for s in mental["stand_ins"]}
            host.handed = {int(s) for s in mental.get("handed", [])}
            host.deal_moves = int(mental.get("moves", 0))
        secret = bytes.fromhex(data["host_secret"]) if data.get("host_secret") else None
        return host, data.get("room"), secret
