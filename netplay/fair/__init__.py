"""The fairness toolkit in one import: commitments, fair shuffle, keys, sealed cards, audit.

Pure functions and small classes, no networking; docs/FAIRNESS.md gives the protocol they
implement step by step. Every check raises `FairnessError(blamed, reason)` (blamed is a seat
number, DEALER, or RELAY) and never another exception, whatever a peer sends.

Dealer, per shuffle epoch (epoch 0 is the deal, each reshuffle is the next epoch):
    seed = new_secret(); publish seed_commitment(room, round_no, epoch, seed)
    ... collect every seat's nonce_commitment, then the nonces ...
    deck = DeckCommitment.build(room, round_no, epoch, seed, nonces_in_seat_order, canonical)
    publish deck.commitments; deal position 0, 1, 2, ... in order:
    seal_card(dealer, seat_public, room, round_no, deck.opening(position)) to its seat,
    or publish deck.opening(position) for a card dealt face up; at round end publish each seed.

Seat:
    nonce = new_secret(); publish nonce_commitment(room, round_no, epoch, my_seat, nonce),
    then nonce; feed a RoundAudit everything seen (seed_committed, nonce_committed,
    nonce_revealed, deck_committed, dealt, delivered(open_card(...)), opened, seed_revealed),
    and play a card face up by publishing its CardOpening. At round end: audit.verify().

Messages: MessageSigner(identity, room, sender).sign(payload) on the sending side;
TranscriptChain(room, {sender: PublicIdentity}).append(sender, message) on receiving sides.
"""

from netplay.fair.audit import AuditReport, Failure, Owner, RoundAudit
from netplay.fair.commit import (
    DEALER,
    LOCAL,
    RELAY,
    TABLE,
    Blame,
    CardOpening,
    DeckCommitment,
    FairnessError,
    card_commitment,
    commit,
    derive_opening,
    new_secret,
    nonce_commitment,
    seed_commitment,
    shuffle_order,
    tagged_hash,
    verify_opening,
)
from netplay.fair.identity import Identity, PublicIdentity, open_card, seal_card
from netplay.fair.transcript import (
    MessageSigner,
    Sender,
    SignedMessage,
    TranscriptChain,
    genesis_hash,
    sign_message,
    verify_message,
)

__all__ = [
    "DEALER",
    "LOCAL",
    "RELAY",
    "TABLE",
    "AuditReport",
    "Blame",
    "CardOpening",
    "DeckCommitment",
    "Failure",
    "FairnessError",
    "Identity",
    "MessageSigner",
    "Owner",
    "PublicIdentity",
    "RoundAudit",
    "Sender",
    "SignedMessage",
    "TranscriptChain",
    "card_commitment",
    "commit",
    "derive_opening",
    "genesis_hash",
    "new_secret",
    "nonce_commitment",
    "open_card",
    "seal_card",
    "seed_commitment",
    "shuffle_order",
    "sign_message",
    "tagged_hash",
    "verify_message",
    "verify_opening",
]
