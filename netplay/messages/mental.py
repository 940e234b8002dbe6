"""The mental-poker messages (PROTOCOL.md G9, FAIRNESS.md Part A): keys, shuffles, shares.

Each travels as a signed payload: a seat's in its own move chain, forwarded by the host in a
`fwd`; those of the host's key for its bots in the host's chain, naming the `party` whose key they
are of when it is not the bots' (a key handed over). The host voids a deal (`mp_void`); a
person leaving hands its key over (`mp_handover`), or says it lost it (`mp_lost`).
"""

from __future__ import annotations

from typing import Annotated, Final

from netplay.messages.codec import Message, kind
from netplay.messages.fields import Bin, Exactly, Int, ListOf, Opt
from netplay.messages.limits import MAX_CARDS, MAX_MENTAL_DECK, MAX_SEATS
from netplay.messages.shapes import EPOCH, ROUND

HANDOVER_SIZE: Final = 72  # a 32-byte round secret in a crypto_box: 24-byte nonce, 16-byte tag
KEY_SIZE: Final = 96  # a round key and its Schnorr proof (FAIRNESS.md A3)
SHARE_SIZE: Final = 96  # one decryption share and its proof (FAIRNESS.md A6)
PARTY: Final = Int(0, 255)  # a seat's number, or 255: the host's key for its bots
POSITION: Final = Int(0, 4096)  # a deck position as the round's own checks bound it


def shuffle_size(cards: int) -> int:
    """The bytes of one shuffle step of a deck of `cards` (FAIRNESS.md A5)."""
    return (6 * cards + 8) * 32


@kind
class MpKey(Message):
    """A party's round key with its proof of knowledge, for the deal's first epoch."""

    t = "mp_key"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    key: Annotated[bytes, Exactly(KEY_SIZE)]
    party: Annotated[int | None, Opt(PARTY)] = None  # the host's: whose key, if not its bots'


@kind
class MpShuffle(Message):
    """A party's step `step` of the chain of shuffles of one epoch, with its proof."""

    t = "mp_shuffle"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    step: Annotated[int, Int(0, MAX_SEATS)]
    deck: Annotated[bytes, Bin(shuffle_size(MAX_MENTAL_DECK))]
    party: Annotated[int | None, Opt(PARTY)] = None  # the host's: whose key, if not its bots'


@kind
class MpShares(Message):
    """A party's decryption shares of some dealt positions of one epoch."""

    t = "mp_shares"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    positions: Annotated[tuple[int, ...], ListOf(POSITION, MAX_CARDS)]
    shares: Annotated[bytes, Bin(SHARE_SIZE * MAX_CARDS)]
    party: Annotated[int | None, Opt(PARTY)] = None  # the host's: whose key, if not its bots'


@kind
class MpVoid(Message):
    """The host voids a deal a person stays away from: it is made again from `epoch` + 1."""

    t = "mp_void"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    away: Annotated[tuple[int, ...], ListOf(PARTY, MAX_SEATS)]


@kind
class MpPrepare(Message):
    """The host names the parties of the first round's deck, shuffled in the lobby (A8)."""

    t = "mp_prepare"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]  # the lobby epoch: each new lobby deck names the next
    parties: Annotated[tuple[int, ...], ListOf(PARTY, MAX_SEATS)]  # each seat's party


@kind
class MpChecked(Message):
    """A party checked every proof of the lobby's deck: the digest a deal names it by (A8)."""

    t = "mp_checked"
    round: Annotated[int, ROUND]
    epoch: Annotated[int, EPOCH]
    digest: Annotated[bytes, Exactly(32)]


@kind
class MpHandover(Message):
    """A person leaving in good order: its round secret, sealed to the host's box key."""

    t = "mp_handover"
    round: Annotated[int, ROUND]
    key: Annotated[bytes, Exactly(HANDOVER_SIZE)]


@kind
class MpLost(Message):
    """A person's program started again without its round key: the deal cannot go on."""

    t = "mp_lost"
    round: Annotated[int, ROUND]
    # The first epoch of the deal it holds no key of (a prepared deck it never saw shuffled);
    # absent: the deal in play.
    epoch: Annotated[int | None, Opt(EPOCH)] = None


MENTAL_KINDS: Final = (MpKey, MpShuffle, MpShares)
LEAVING_KINDS: Final = (MpHandover, MpLost)  # a seat's, about its own key
