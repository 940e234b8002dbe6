"""The bounds of the wire: the largest name, chat line, body and number a message may carry."""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
MAX_RELAY_BODY: Final = 4 * 1024 * 1024  # what a relay client reads at most; the relay's own
# frame limit (RelayLimits.max_frame_bytes) is checked before a frame is decoded
MAX_BODY_BYTES: Final = 60_000  # a game body, signed or not
MAX_SEATS: Final = 8
MAX_NAME: Final = 24  # what the host keeps of a name
MAX_NAME_WIRE: Final = 64  # a name as the host sends it (it keeps MAX_NAME characters)
MAX_RAW_NAME: Final = 1000  # a name as a join may carry it
MAX_CHAT: Final = 300
MAX_RAW_CHAT: Final = 1200  # a chat line as a seat may send it (the host keeps MAX_CHAT)
MAX_NUMBER_DIGITS: Final = 121  # a score beyond 64 bits travels as its digits
MAX_MOVE_TEXT: Final = 400
MAX_CARDS: Final = 64  # positions in one deck, cards in one deal, draw or move
MAX_SEEDS: Final = 1000  # seeds one `round_end` or `seeds` reveals (a round may shuffle more)
MAX_MENTAL_DECK: Final = 52  # cards in a deck dealt by mental poker (Zodiak's)
MAX_SEALED: Final = 256  # a sealed card: a box around [room, round, epoch, position, card, opening]
MAX_HOST_PAYLOAD: Final = MAX_BODY_BYTES - 200  # the host's, inside its `s` envelope
MAX_TABLE_ID: Final = 64
MAX_SUMMARY: Final = 1000
MAX_UINT32: Final = 2**32 - 1
SIGNED_MIN: Final = -(2**63)
SIGNED_MAX: Final = 2**63 - 1
