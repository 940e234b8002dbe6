"""Server-side tables: this process deals every table (a Host per relay room) and lists them over HTTP.

`cardtui serve` adds these routes to the relay's aiohttp application:

- `GET /tables` answers `{"tables": [summary, ...], "max_tables": N, "version": V}`; with
  `?since=V&wait=S` it waits up to S seconds (at most 30) while the listing is still version V,
  so a lobby learns of changes at once without asking again and again;
- `POST /tables` with `{"game": "zodiak", "players": 2, "bots": 1}` opens a room, seats the
  dealer in it as its host, and answers 201 `{"room": CODE, "owner": HEX}`; `"bot_kind":
  "expert"` (or "greedy", "random") chooses the bots (default: the server's); an optional
  `"house": "max-row=4,target=3000"` sets the table's house rules (engine.house), which every
  summary shows; the owner secret lets whoever created the table start it early. Anything else
  gets 400 and `{"error": why}`. A server session's program names its visitor's address in
  `X-Cardtui-Visitor` (`VISITOR_HEADER`); one address keeps at most
  `tables_per_remote_address` tables open (503 past it).

A table ends when its match ends and no seated person offers a rematch (any of them may, for
`TableLimits.rematch_seconds`), or when nobody has sat at it or watched it for a while.
"""

from __future__ import annotations

import asyncio
import builtins
import ipaddress
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAMES
from engine.house import STANDARD, HouseRules
from netplay.addresses import address_key
from netplay.messages import ProtocolError
from netplay.relay.client import RelayConnection
from netplay.relay.wire import format_room_code, parse_room_code
from netplay.table.opened import OPENED_ADDRESS

if TYPE_CHECKING:
    from netplay.session.thinking import Thinkers
    from netplay.table.host import Host

log = logging.getLogger("cardtui.tables")

MAX_BODY_BYTES = 1024
# The address of the SSH or browser visitor a server session's request is for: the server's own
# session programs send it (the visitor cannot: they only type into the program), so that their
# tables count against that address as the opened API's do. Requests through the opened API
# are counted by their own source and this header is ignored there.
VISITOR_HEADER = "X-Cardtui-Visitor"
REQUEST_FIELDS = ("game", "players", "bots", "bot_kind", "house")
LONGEST_WAIT = 30.0  # seconds GET /tables?since= holds an unchanged listing


@dataclass(frozen=True)
class TableLimits:
    """How many tables may be open, when an unattended one closes, and how its bots behave."""

    max_tables: int = 50
    empty_seconds: float = 120.0
    sweep_seconds: float = 1.0
    bot_delay: float = 0.6
    away_timeout: float = 30.0
    turn_seconds: float | None = 60.0  # server tables have a turn timer; None: none
    bot_kind: str = "greedy"  # the bots of a table whose request names none
    think: float | None = None  # an expert bot's time limit per move; None: the default
    rematch_seconds: float = 120.0  # how long a finished table waits for a seat's rematch

    def __post_init__(self) -> None:
        for name in ("max_tables", "empty_seconds", "sweep_seconds", "away_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"TableLimits.{name} must be positive, not {getattr(self, name)}")
        if self.bot_kind not in BOT_KINDS:
            raise ValueError(f"TableLimits.bot_kind must be one of {', '.join(BOT_KINDS)}")
        if self.think is not None and not self.think > 0:
            raise ValueError(f"TableLimits.think must be positive, not {self.think}")


class BadTableRequest(ValueError):
    """A table request that cannot be honoured, with a message for the person who sent it."""


@dataclass(frozen=True)
class TableRequest:
    """What a player asks for: a game, the number of seats, how many of them bots take, and the
    house rules."""

    game: str
    players: int
    bots: int
    bot_kind: str | None = None  # None: the server's default kind
    house: HouseRules = STANDARD

    @classmethod
    def parse(cls, data: Any) -> TableRequest:
        """Return the request in data (decoded JSON), or raise BadTableRequest saying what is wrong."""
        if not isinstance(data, dict):
            raise BadTableRequest('the body must be a JSON object like {"game": "zodiak", '
                                  '"players": 2, "bots": 1}')
        unknown = sorted(str(k)[:40] for k in data if k not in REQUEST_FIELDS)
        if unknown:
            raise BadTableRequest(f"unknown field {unknown[0]!r}: only game, players, bots,"
                                  " bot_kind and house")
        game = data.get("game")
        if game not in GAMES:
            raise BadTableRequest(f"game must be \"zodiak\" or \"hekata\", not {_show(game)}")
        players = data.get("players")
        if type(players) is not int or players not in GAMES[game].players:
            allowed = " or ".join(map(str, GAMES[game].players))
            raise BadTableRequest(f"players must be {allowed} for {game}, not {_show(players)}")
        bots = data.get("bots", 0)
        if type(bots) is not int or not 0 <= bots < players:
            raise BadTableRequest(f"bots must be a whole number from 0 to {players - 1} so one seat"
                                  f" is left for you, not {_show(bots)}")
        bot_kind = data.get("bot_kind")
        if bot_kind is not None and bot_kind not in BOT_KINDS:
            raise BadTableRequest(f"bot_kind must be {', '.join(map(json.dumps, BOT_KINDS))},"
                                  f" not {_show(bot_kind)}")
        house = data.get("house", "")
        if type(house) is not str:
            raise BadTableRequest(f"house must be text like \"max-row=4,target=3000\", not"
                                  f" {_show(house)}")
        try:
            rules = HouseRules.parse(house)
            GAMES[game].check_house(rules)
        except IllegalMove as exc:
            raise BadTableRequest(f"house rules: {exc}") from None
        return cls(game, players, bots, bot_kind, rules)


def _show(value: Any) -> str:
    """Return a short JSON rendering of a bad value for an error message."""
    return "nothing" if value is None else json.dumps(value)[:40]


@dataclass(frozen=True)
class TableInfo:
    """One line of the tables listing."""

    room: str
    game: str
    players: int
    taken: int
    people: int
    watching: int
    state: str  # "waiting", "playing" or "over"
    house: str = "standard"  # the house rules' text form (engine.house)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableInfo:
        """Return the summary the server sent, or raise ValueError if it is malformed."""
        try:
            return cls(str(data["room"]), str(data["game"]), int(data["players"]),
                       int(data["taken"]), int(data["people"]), int(data["watching"]),
                       str(data["state"]), str(HouseRules.parse(data.get("house", ""))))
        except IllegalMove as exc:
            raise ValueError(f"malformed table summary: {exc}") from None
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed table summary: {exc}") from None


@dataclass
class Table:
    """A table the server deals: its Host, the host's relay connection, and who created it."""

    host: Host
    conn: RelayConnection
    owner: str
    empty_since: float | None
    task: asyncio.Task[None] | None = None
    creator: str | None = None  # the remote address that opened it through an opened API

    @property
    def room(self) -> str:
        """Return the canonical room code."""
        return self.conn.room

    @property
    def attended(self) -> bool:
        """Return whether a person is connected to the table, seated or watching."""
        return bool(self.host.spectators) or any(s.conn is not None for s in self.host.seats)

    def info(self) -> TableInfo:
        """Return this table's line in the listing."""
        seats = self.host.seats
        state = "over" if self.host.finished else "playing" if self.host.started else "waiting"
        return TableInfo(format_room_code(self.room), self.host.config.game, len(seats),
                         sum(s.taken for s in seats), sum(s.conn is not None for s in seats),
                         len(self.host.spectators), state, str(self.host.config.house))


@dataclass
class TablesService:
    """Every table this server deals; `relay_url` is where their hosts open their rooms."""

    limits: TableLimits = TableLimits()
    relay_url: str | None = None
    tables: dict[str, Table] = field(default_factory=dict)
    tables_per_remote_address: int = 2
    thinkers: Thinkers | None = None  # the processes the tables' expert bots search in
    version: int = 0  # goes up whenever the listing changes
    _listed: list[TableInfo] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _opening: list[str | None] = field(default_factory=list)  # creators of rooms being opened
    _stopping: bool = False

    def note_changes(self) -> None:
        """Bump the listing's version and wake the waiting lobbies if the listing changed."""
        listing = self.listing()
        if listing != self._listed:
            self._listed = listing
            self.version += 1
            self._changed.set()
            self._changed = asyncio.Event()

    async def changed_since(self, version: int, timeout: float) -> None:
        """Return when the listing is past version, or after timeout seconds."""
        if version != self.version or self._stopping:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    def stop_waiting(self) -> None:
        """Answer every waiting lobby now: the server is shutting down."""
        self._stopping = True
        self._changed.set()

    async def create(self, request: TableRequest, creator: str | None = None) -> Table:
        """Open a room on the relay and start dealing a new table in it.

        creator is the remote address that asks, through an opened API or one of this server's
        sessions (None: a program on this machine); one such address (an IPv6 address's /64)
        keeps at most tables_per_remote_address tables open. A table counts from the moment it
        is asked for: requests that arrive while its room is opened see it.
        """
        creator = None if creator is None else address_key(creator)
        counted = [t.creator for t in self.tables.values()] + self._opening
        if creator is not None and counted.count(creator) >= self.tables_per_remote_address:
            raise BadTableRequest(f"your address already has {self.tables_per_remote_address}"
                                  " tables open, the most one address may; a table closes"
                                  f" {self.limits.empty_seconds:g} s after everyone has left it")
        if len(counted) >= self.limits.max_tables:
            raise BadTableRequest(f"the server already has {len(counted)} tables, the most it"
                                  " keeps; join one of them or try again later")
        if self.relay_url is None:
            raise RuntimeError("the tables service has no relay to open rooms on")
        # Imported here: every session's lobby imports this module and never deals.
        from netplay.table.host import Host, HostConfig

        owner = secrets.token_hex(16)
        kind = request.bot_kind or self.limits.bot_kind
        config = HostConfig(game=request.game, players=request.players, bots=request.bots,
                            bot_kind=kind, think=self.limits.think, thinkers=self.thinkers,
                            bot_delay=self.limits.bot_delay,
                            away_timeout=self.limits.away_timeout, owner_secret=owner,
                            turn_seconds=self.limits.turn_seconds, house=request.house,
                            rematch_seconds=self.limits.rematch_seconds,
                            rematch_by_any_seat=True)
        host = Host(config, on_event=lambda text: log.debug("table: %s", text))
        self._opening.append(creator)
        try:
            conn = await RelayConnection.open_room(self.relay_url)
            table = Table(host, conn, owner, empty_since=time.monotonic(), creator=creator)
            self.tables[table.room] = table
        finally:
            self._opening.remove(creator)
        table.task = asyncio.create_task(self._deal(table))
        self.note_changes()
        log.info("table %s opened: %s for %d with %d %s bots, house rules %s",
                 format_room_code(table.room), request.game, request.players, request.bots,
                 kind, request.house)
        return table

    async def _deal(self, table: Table) -> None:
        """Serve the table until its match ends (and no seat offers a rematch) or its room goes,
        then forget it."""
        serving = asyncio.create_task(table.host.serve(table.conn))
        try:
            await asyncio.wait((serving,))
            if not serving.cancelled() and serving.exception() is not None:
                log.error("table %s failed", table.room, exc_info=serving.exception())
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
            self.tables.pop(table.room, None)
            self.note_changes()
            await table.conn.close()
            log.info("table %s closed", format_room_code(table.room))

    def listing(self) -> list[TableInfo]:
        """Return every open table, oldest first."""
        return [t.info() for t in self.tables.values()]

    async def close_table(self, room: str) -> None:
        """Stop dealing the table in room and wait until it is gone."""
        table = self.tables.get(room)
        if table is not None and table.task is not None:
            table.task.cancel()
            await asyncio.gather(table.task, return_exceptions=True)

    async def sweep(self) -> None:
        """Close tables nobody has attended for `empty_seconds`, forever (cancel to stop)."""
        while True:
            await asyncio.sleep(self.limits.sweep_seconds)
            self.note_changes()  # seats taken, people gone, matches started
            now = time.monotonic()
            for room, table in list(self.tables.items()):
                if table.attended:
                    table.empty_since = None
                elif table.empty_since is None:
                    table.empty_since = now
                elif now - table.empty_since >= self.limits.empty_seconds:
                    await self.close_table(room)

    async def close(self) -> None:
        """Stop dealing every table."""
        for room in list(self.tables):
            await self.close_table(room)


TABLES_KEY = web.AppKey("tables", TablesService)


def add_table_routes(app: web.Application, service: TablesService) -> None:
    """Serve GET and POST /tables from app, sweeping unattended tables while it runs."""
    app[TABLES_KEY] = service
    app.router.add_get("/tables", list_tables)
    app.router.add_post("/tables", create_table)
    app.cleanup_ctx.append(_tables_lifetime)
    app.on_shutdown.append(_answer_waiting_lobbies)


async def _answer_waiting_lobbies(app: web.Application) -> None:
    # A lobby's request waits up to 30 s for a change; the shutdown would wait for it.
    app[TABLES_KEY].stop_waiting()


async def _tables_lifetime(app: web.Application) -> AsyncIterator[None]:
    service = app[TABLES_KEY]
    sweeper = asyncio.create_task(service.sweep())
    yield
    sweeper.cancel()
    await service.close()


async def list_tables(request: web.Request) -> web.Response:
    """Answer the listing of open tables."""
    service = request.app[TABLES_KEY]
    since, wait = request.query.get("since", ""), request.query.get("wait", "")
    if since.isdigit() and len(since) < 20:
        seconds = float(wait) if wait.isdigit() and len(wait) < 4 else LONGEST_WAIT
        await service.changed_since(int(since), min(seconds, LONGEST_WAIT))
    tables = [asdict(t) for t in service.listing()]
    return web.json_response({"tables": tables, "max_tables": service.limits.max_tables,
                              "version": service.version})


async def create_table(request: web.Request) -> web.Response:
    """Open a table as the JSON body asks, or answer 400 saying what is wrong with the body."""
    body = await request.content.read(MAX_BODY_BYTES + 1)
    if len(body) > MAX_BODY_BYTES:
        return _refuse(413, f"the body is over {MAX_BODY_BYTES} bytes")
    try:
        table_request = TableRequest.parse(json.loads(body or b"null"))
    except (ValueError, RecursionError) as exc:  # BadTableRequest and JSON errors alike
        message = str(exc) if isinstance(exc, BadTableRequest) else f"the body is not JSON: {exc}"
        return _refuse(400, message)
    creator = request.get(OPENED_ADDRESS)
    if creator is None and VISITOR_HEADER in request.headers:
        try:
            creator = str(ipaddress.ip_address(request.headers[VISITOR_HEADER][:64]))
        except ValueError:
            return _refuse(400, f"{VISITOR_HEADER} must be an IP address")
    service = request.app[TABLES_KEY]
    try:
        table = await service.create(table_request, creator)
    except BadTableRequest as exc:
        return _refuse(503, str(exc))
    except (ProtocolError, OSError, aiohttp.ClientError) as exc:  # the relay would not open a room
        log.warning("cannot open a room for a table: %s", exc)
        return _refuse(503, "the server cannot open a table right now; try again later")
    return web.json_response({"room": format_room_code(table.room), "owner": table.owner},
                             status=201)


def _refuse(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class TablesClient:
    """The lobby's view of a server's tables, through its HTTP API at base_url (http://HOST:PORT);
    the tables it opens count against `visitor`'s address, if given (a server session's)."""

    def __init__(self, base_url: str, visitor: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.visitor = visitor
        self._http: aiohttp.ClientSession | None = None

    @property
    def relay_url(self) -> str:
        """Return the WebSocket URL of the relay the tables' rooms are on."""
        return "ws" + self.base_url.removeprefix("http") + "/ws"

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        return self._http

    async def list(self) -> list[TableInfo]:
        """Return the open tables, or raise OSError/aiohttp.ClientError/ValueError."""
        async with self._session().get(f"{self.base_url}/tables") as response:
            response.raise_for_status()
            data = await response.json()
        return [TableInfo.from_json(t) for t in data["tables"]]

    async def watch(self, since: int | None, wait: float = 25.0) -> tuple[builtins.list[TableInfo], int]:
        """Return the listing and its version once it is past since (or after wait seconds)."""
        params = {} if since is None else {"since": str(since), "wait": str(int(wait))}
        timeout = aiohttp.ClientTimeout(total=wait + 10)
        async with self._session().get(f"{self.base_url}/tables", params=params,
                                       timeout=timeout) as response:
            response.raise_for_status()
            data = await response.json()
        version = data.get("version")
        if type(version) is not int:
            raise ValueError("the listing has no version")
        return [TableInfo.from_json(t) for t in data["tables"]], version

    async def create(self, game: str, players: int, bots: int,
                     bot_kind: str | None = None,
                     house: HouseRules = STANDARD) -> tuple[str, bytes]:
        """Open a table; return its room code and owner secret, or raise BadTableRequest."""
        payload: dict[str, Any] = {"game": game, "players": players, "bots": bots}
        if bot_kind is not None:
            payload["bot_kind"] = bot_kind
        if not house.standard:
            payload["house"] = str(house)
        headers = {VISITOR_HEADER: self.visitor} if self.visitor is not None else {}
        async with self._session().post(f"{self.base_url}/tables", json=payload,
                                        headers=headers) as response:
            data = await response.json()
            if response.status != 201:
                raise BadTableRequest(str(data.get("error", f"HTTP {response.status}")))
        return parse_room_code(data["room"]), bytes.fromhex(data["owner"])

    async def close(self) -> None:
        """Close the HTTP connections."""
        if self._http is not None:
            await self._http.close()
