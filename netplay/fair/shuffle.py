"""A re-encryption shuffle with a Terelius-Wikstrom proof that it is one.

`shuffle_deck` permutes and re-encrypts a deck and proves, in zero knowledge, that its outputs
are the inputs re-encrypted in some order, without saying which. The proof follows Algorithms 5
and 6 ("GenShuffleProof", "CheckShuffleProof") of Haenni, Locher, Koenig and Dubuis,
"Pseudo-Code Algorithms for Verifiable Re-Encryption Mix-Nets" (FC 2017), the Terelius-Wikstrom
proof as Wikstrom's Verificatum implements it, written additively and with a ciphertext as
(a, b) = (r*BASE, card + r*key). Its Fiat-Shamir challenges hash the table, round, epoch, the
shuffling party, its step in the chain of shuffles, the joint key, every input and output
ciphertext and every commitment, so a proof holds for that one shuffle only.

On the wire a shuffle of n cards is (6n + 8) * 32 bytes: the n output ciphertexts, the n
permutation commitments, the n chain commitments, the commitments t3, t4b and t4a, the
challenge, s1..s4, the n values s-hat and the n values s-prime. Sending t3, t4b and t4a (which
the challenge also hashes) lets a checker test their three equations for several shuffles of a
chain at once (netplay/fair/shuffle_check.py); `Shuffle.made_with` keeps, in the shuffler's own
process only, the permutation and re-encryption factors that let it skip its own outputs there.

The first shuffle of an epoch shuffles the open deck, whose every `a` is BASE and every `b` a
card's point plus the joint key. Given those cards (`open_cards`), the sums over the inputs'
`a` become one multiple of BASE and those over their `b` one multiple per distinct card (ten
for Hekata's fifty) and one of the key: the same values with fewer scalar multiplications.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from netplay.fair.commit import Blame, require_bytes
from netplay.fair.context import ProofContext, challenge
from netplay.fair.elgamal import (
    CIPHERTEXT_SIZE,
    Ciphertext,
    card_point,
    encode_ciphertexts,
)
from netplay.fair.group import (
    BASE,
    POINT_SIZE,
    SCALAR_SIZE,
    Point,
    Scalar,
    base_times,
    hash_to_point,
    hash_to_scalar,
    point_sum,
    weighted_sum,
)

_KIND = "shuffle"


def shuffle_size(n: int) -> int:
    """The exact number of bytes of a shuffle of `n` cards on the wire."""
    return (6 * n + 8) * 32


@lru_cache(maxsize=512)
def generator(index: int) -> Point:
    """Independent generator number `index` (-1 starts the commitment chain); nobody knows a log."""
    return hash_to_point("shuffle-generator", index.to_bytes(4, "big", signed=True))


@lru_cache(maxsize=64)
def generator_sum(n: int) -> Point:
    """The sum of generators 0 .. n-1, which every check of an n-card shuffle subtracts."""
    return point_sum([generator(i) for i in range(n)])


@dataclass(frozen=True)
class ShuffleProof:
    """The commitments and responses of one Terelius-Wikstrom proof."""

    commitments: tuple[Point, ...]
    chain: tuple[Point, ...]
    t3: Point
    t4_b: Point
    t4_a: Point
    proof_challenge: Scalar
    s1: Scalar
    s2: Scalar
    s3: Scalar
    s4: Scalar
    s_hat: tuple[Scalar, ...]
    s_prime: tuple[Scalar, ...]


@dataclass(frozen=True)
class Shuffle:
    """A shuffled, re-encrypted deck with its proof: what a shuffling party publishes."""

    outputs: tuple[Ciphertext, ...]
    proof: ShuffleProof
    # The shuffler's secret (permutation, re-encryption factors): never encoded or sent.
    made_with: tuple[tuple[int, ...], tuple[Scalar, ...]] | None = field(
        default=None, compare=False, repr=False)

    def encode(self) -> bytes:
        """The fixed-size wire form (see the module docstring)."""
        p = self.proof
        scalars = (p.proof_challenge, p.s1, p.s2, p.s3, p.s4, *p.s_hat, *p.s_prime)
        return (
            encode_ciphertexts(self.outputs)
            + b"".join(point.data for point in (*p.commitments, *p.chain, p.t3, p.t4_b, p.t4_a))
            + b"".join(scalar.data for scalar in scalars)
        )

    @classmethod
    def decode(cls, data: object, n: int, blamed: Blame) -> Shuffle:
        """Parse a shuffle of exactly `n` cards from a peer, validating every point and scalar."""
        raw = require_bytes(data, f"shuffle of {n} cards", blamed, shuffle_size(n))
        # Every point is multiplied by `verify_shuffle`, which refuses those outside the group.
        points = [Point.decode_for_product(raw[i * POINT_SIZE:(i + 1) * POINT_SIZE], blamed)
                  for i in range(4 * n + 3)]
        outputs = tuple(Ciphertext(points[2 * i], points[2 * i + 1]) for i in range(n))
        points = points[2 * n:]
        offset = n * CIPHERTEXT_SIZE + (2 * n + 3) * POINT_SIZE
        scalars = [
            Scalar.decode(raw[offset + i * SCALAR_SIZE : offset + (i + 1) * SCALAR_SIZE], blamed)
            for i in range(5 + 2 * n)
        ]
        challenge_, s1, s2, s3, s4 = scalars[:5]
        proof = ShuffleProof(
            tuple(points[:n]),
            tuple(points[n:2 * n]),
            points[2 * n],
            points[2 * n + 1],
            points[2 * n + 2],
            challenge_,
            s1,
            s2,
            s3,
            s4,
            tuple(scalars[5 : 5 + n]),
            tuple(scalars[5 + n :]),
        )
        return cls(outputs, proof)


def permutation_challenges(
    context: ProofContext,
    party: int,
    step: int,
    key: Point,
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    commitments: Sequence[Point],
) -> list[Scalar]:
    statement = [key, *flatten(inputs), *flatten(outputs), *commitments]
    seed = challenge(_KIND + "/u", context, party, step, statement).data
    return [hash_to_scalar("shuffle-u", seed, i.to_bytes(4, "big")) for i in range(len(inputs))]


def final_challenge(
    context: ProofContext,
    party: int,
    step: int,
    key: Point,
    inputs: Sequence[Ciphertext],
    outputs: Sequence[Ciphertext],
    proof_points: Sequence[Point],
) -> Scalar:
    statement = [key, *flatten(inputs), *flatten(outputs), *proof_points]
    return challenge(_KIND, context, party, step, statement)


def flatten(ciphertexts: Sequence[Ciphertext]) -> list[Point]:
    return [point for c in ciphertexts for point in (c.a, c.b)]


@dataclass(frozen=True)
class ShufflePlan:
    """The part of one shuffle that does not depend on its inputs (FAIRNESS.md A5, "Offline"):
    its secret permutation and random values and the points made from them alone, computed
    while the party waits for its turn. Secret; used for one shuffle only."""

    key: Point
    psi: tuple[int, ...]
    reencryption: tuple[Scalar, ...]
    on_base: tuple[Point, ...]  # reencryption[i]*BASE
    on_key: tuple[Point, ...]  # reencryption[i]*key
    r: tuple[Scalar, ...]
    commitments: tuple[Point, ...]
    r_hat: tuple[Scalar, ...]
    r_hat_base: tuple[Point, ...]
    w: tuple[Scalar, Scalar, Scalar, Scalar]
    w_hat: tuple[Scalar, ...]
    w_prime: tuple[Scalar, ...]
    w_hat_base: tuple[Point, ...]
    t1: Point
    t2: Point
    t3: Point


def plan_shuffle(n: int, key: Point, permutation: Sequence[int] | None = None) -> ShufflePlan:
    """Draw and compute everything a shuffle of `n` cards under `key` needs before its inputs."""
    if permutation is None:
        order = list(range(n))
        secrets.SystemRandom().shuffle(order)
        permutation = order
    if sorted(permutation) != list(range(n)):
        raise ValueError("not a permutation of the deck's positions")
    psi = tuple(permutation)
    reencryption = tuple(Scalar.random() for _ in range(n))
    # Commitment to the permutation: c[psi(i)] = r[psi(i)]*BASE + h_i.
    r = tuple(Scalar.random() for _ in range(n))
    commitments: list[Point] = [BASE] * n
    for i in range(n):
        commitments[psi[i]] = base_times(r[psi[i]]) + generator(i)
    r_hat = tuple(Scalar.random() for _ in range(n))
    w1, w2, w3, w4 = (Scalar.random() for _ in range(4))
    w_hat = tuple(Scalar.random() for _ in range(n))
    w_prime = tuple(Scalar.random() for _ in range(n))
    return ShufflePlan(
        key, psi, reencryption, tuple(base_times(x) for x in reencryption),
        tuple(key * x for x in reencryption), r, tuple(commitments), r_hat,
        tuple(base_times(x) for x in r_hat), (w1, w2, w3, w4), w_hat, w_prime,
        tuple(base_times(x) for x in w_hat), base_times(w1), base_times(w2),
        base_times(w3) + weighted_sum(list(w_prime), [generator(i) for i in range(n)]))


def shuffle_deck(
    context: ProofContext,
    party: int,
    step: int,
    key: Point,
    inputs: Sequence[Ciphertext],
    permutation: Sequence[int] | None = None,
    open_cards: Sequence[str] | None = None,
    plan: ShufflePlan | None = None,
) -> Shuffle:
    """Shuffle and re-encrypt `inputs` under joint `key`, with a proof; output i is input perm[i].

    `open_cards`, when given, says that `inputs` is `open_deck(open_cards, key)` (module doc);
    `plan`, when given, is this shuffle's part made in advance (`plan_shuffle`).
    """
    n = len(inputs)
    if open_cards is not None and len(open_cards) != n:
        raise ValueError("the open deck's cards and the inputs differ in number")
    if plan is None:
        plan = plan_shuffle(n, key, permutation)
    if plan.key != key or len(plan.psi) != n:
        raise ValueError("the shuffle's plan is for another key or deck size")
    psi, reencryption, r, r_hat = plan.psi, plan.reencryption, plan.r, plan.r_hat
    (w1, w2, w3, w4), w_hat, w_prime = plan.w, plan.w_hat, plan.w_prime
    outputs = tuple(Ciphertext(inputs[psi[i]].a + plan.on_base[i],
                               inputs[psi[i]].b + plan.on_key[i]) for i in range(n))
    commitments = plan.commitments
    u = permutation_challenges(context, party, step, key, inputs, outputs, commitments)
    u_permuted = [u[psi[i]] for i in range(n)]

    # Commitment chain: chain[i] = r_hat[i]*BASE + u_permuted[i]*chain[i-1], from generator(-1).
    chain: list[Point] = []
    previous = generator(-1)
    for i in range(n):
        previous = plan.r_hat_base[i] + previous * u_permuted[i]
        chain.append(previous)

    if open_cards is None:
        t4_b = weighted_sum(list(w_prime), [c.b for c in outputs]) - key * w4
        t4_a = weighted_sum(list(w_prime), [c.a for c in outputs]) - base_times(w4)
    else:  # output i is (s_i*BASE, card(psi(i)) + s_i*key) with s_i = 1 + r_i
        weight = total([w_prime[i] * (Scalar.of(1) + reencryption[i]) for i in range(n)]) - w4
        t4_b = _card_sum(w_prime, [open_cards[psi[i]] for i in range(n)]) + key * weight
        t4_a = base_times(weight)
    links = [generator(-1), *chain[:-1]]
    t_hat = [plan.w_hat_base[i] + links[i] * w_prime[i] for i in range(n)]
    proof_points = [*commitments, *chain, plan.t1, plan.t2, plan.t3, t4_b, t4_a, *t_hat]
    c = final_challenge(context, party, step, key, inputs, outputs, proof_points)

    v = [Scalar.of(1)] * n
    for i in range(n - 1, 0, -1):
        v[i - 1] = u_permuted[i] * v[i]
    s1 = w1 + c * total(r)
    s2 = w2 + c * total([r_hat[i] * v[i] for i in range(n)])
    s3 = w3 + c * total([r[j] * u[j] for j in range(n)])
    s4 = w4 + c * total([reencryption[i] * u_permuted[i] for i in range(n)])
    s_hat = tuple(w_hat[i] + c * r_hat[i] for i in range(n))
    s_prime = tuple(w_prime[i] + c * u_permuted[i] for i in range(n))
    proof = ShuffleProof(tuple(commitments), tuple(chain), plan.t3, t4_b, t4_a, c, s1, s2, s3,
                         s4, s_hat, s_prime)
    return Shuffle(outputs, proof, (psi, reencryption))


def _card_sum(weights: Sequence[Scalar], cards: Sequence[str]) -> Point:
    """The sum of weights[i] * card_point(cards[i]), one multiplication per distinct card."""
    by_card: dict[str, Scalar] = {}
    for weight, card in zip(weights, cards, strict=True):
        by_card[card] = by_card[card] + weight if card in by_card else weight
    return weighted_sum(list(by_card.values()), [card_point(card) for card in by_card])


def total(scalars: Sequence[Scalar]) -> Scalar:
    total = Scalar.of(0)
    for scalar in scalars:
        total = total + scalar
    return total
