"""Checking Terelius-Wikstrom shuffle proofs, one at a time or a chain's several at once.

Each proof is checked in two parts (FAIRNESS.md A5, "Check"). Its Fiat-Shamir challenge is
recomputed from t1, t2 and the t-hat values (rebuilt from the responses) and the t3, t4b and t4a
it sent. Those three are then tested by their equations, which are linear in the points they
name: each is multiplied by a fresh secret random scalar and all of them, for every shuffle
checked together, are summed into one combination that must be the identity. A point that
several equations name (a deck that one shuffle outputs and the next takes in, the generators,
BASE, the key) is multiplied once; a point whose value this process knows as a combination of
others (an open deck's `card + K`, its own shuffle's outputs: an input plus its re-encryption
factor) is replaced by that combination. When the sum is not the identity, each proof is
checked alone, in the chain's order, and the first that fails is blamed: a false equation
survives a random combination only with probability 1/ORDER.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from netplay.fair.commit import LOCAL, FairnessError
from netplay.fair.context import ProofContext
from netplay.fair.elgamal import Ciphertext, card_point
from netplay.fair.group import (
    BASE,
    InvalidPoint,
    Point,
    Scalar,
    base_times,
    point_sum,
    weighted_sum,
)
from netplay.fair.shuffle import (
    Shuffle,
    final_challenge,
    generator,
    generator_sum,
    permutation_challenges,
)


@dataclass(frozen=True)
class ShuffleClaim:
    """One received shuffle and what it claims: a shuffle of `inputs` by `party` at `step`."""

    shuffle: Shuffle
    context: ProofContext
    party: int
    step: int
    key: Point
    inputs: Sequence[Ciphertext]


class LinearCheck:
    """A random combination of point equations, each point multiplied once (module doc)."""

    def __init__(self, key: Point) -> None:
        self.key = key
        self._weights: dict[bytes, Scalar] = {}
        self._points: dict[bytes, Point] = {}
        self._known: dict[bytes, list[tuple[Scalar, Point]]] = {}

    def know(self, point: Point, parts: list[tuple[Scalar, Point]]) -> None:
        """Note that `point` equals the sum of parts' scalar times point (a value made here)."""
        self._known[point.data] = parts

    def know_open_deck(self, cards: Sequence[str]) -> None:
        """Note each card's open encryption `(BASE, card + key)`."""
        one = Scalar.of(1)
        for card in set(cards):
            self.know(card_point(card) + self.key, [(one, card_point(card)), (one, self.key)])

    def know_own_shuffle(self, inputs: Sequence[Ciphertext], made: Shuffle) -> None:
        """Note each output of a shuffle this process made as its input plus re-encryption."""
        assert made.made_with is not None
        psi, factors = made.made_with
        one = Scalar.of(1)
        for i, output in enumerate(made.outputs):
            source = inputs[psi[i]]
            self.know(output.a, [(one, source.a), (factors[i], BASE)])
            self.know(output.b, [(one, source.b), (factors[i], self.key)])

    def add(self, weight: Scalar, point: Point) -> None:
        """Add weight * point to the combination."""
        parts = self._known.get(point.data)
        if parts is not None:
            for factor, part in parts:
                self.add(weight * factor, part)
            return
        key = point.data
        if key in self._weights:
            self._weights[key] = self._weights[key] + weight
        else:
            self._weights[key], self._points[key] = weight, point

    def add_claim(self, claim: ShuffleClaim, u: list[Scalar]) -> None:
        """Add the t3, t4b and t4a equations of one proof, each times a fresh random scalar."""
        p, c = claim.shuffle.proof, claim.shuffle.proof.proof_challenge
        n = len(claim.inputs)
        beta3, beta_b, beta_a = Scalar.random(), Scalar.random(), Scalar.random()
        # t3 = s3*B + sum s'_i*h_i - c * sum u_i*c_i
        self.add(beta3 * p.s3, BASE)
        for i in range(n):
            self.add(beta3 * p.s_prime[i], generator(i))
            self.add(-(beta3 * c * u[i]), p.commitments[i])
        self.add(-beta3, p.t3)
        # t4b = sum s'_i*b~_i - s4*K - c * sum u_i*b_i, and t4a the same with a and B
        self.add(-(beta_b * p.s4), self.key)
        self.add(-(beta_a * p.s4), BASE)
        for i in range(n):
            output, source = claim.shuffle.outputs[i], claim.inputs[i]
            self.add(beta_b * p.s_prime[i], output.b)
            self.add(beta_a * p.s_prime[i], output.a)
            self.add(-(beta_b * c * u[i]), source.b)
            self.add(-(beta_a * c * u[i]), source.a)
        self.add(-beta_b, p.t4_b)
        self.add(-beta_a, p.t4_a)

    def holds(self) -> bool:
        """Whether the combination is the identity (InvalidPoint for a point outside the group)."""
        weights = dict(self._weights)
        on_base = weights.pop(BASE.data, Scalar.of(0))
        keys = list(weights)
        total = base_times(on_base) + weighted_sum([weights[k] for k in keys],
                                                   [self._points[k] for k in keys])
        return total.is_identity


def challenge_holds(claim: ShuffleClaim) -> list[Scalar]:
    """Recompute a proof's challenge; its u values, or FairnessError blaming its party."""
    shuffle, party, step = claim.shuffle, claim.party, claim.step
    p, outputs, n = shuffle.proof, shuffle.outputs, len(claim.inputs)
    if not len(outputs) == len(p.commitments) == len(p.chain) == len(p.s_hat) == len(
            p.s_prime) == n:
        raise FairnessError(party, f"its shuffle does not have {n} cards")
    key = claim.key
    u = permutation_challenges(claim.context, party, step, key, claim.inputs, outputs,
                               p.commitments)
    c = p.proof_challenge
    u_product = Scalar.of(1)
    for value in u:
        u_product = u_product * value
    c_bar = point_sum(list(p.commitments)) - generator_sum(n)
    c_hat = p.chain[-1] - generator(-1) * u_product
    links = [generator(-1), *p.chain[:-1]]
    t_hat = [base_times(p.s_hat[i]) + links[i] * p.s_prime[i] - p.chain[i] * c for i in range(n)]
    t1 = base_times(p.s1) - c_bar * c
    t2 = base_times(p.s2) - c_hat * c
    proof_points = [*p.commitments, *p.chain, t1, t2, p.t3, p.t4_b, p.t4_a, *t_hat]
    if final_challenge(claim.context, party, step, key, claim.inputs, outputs,
                       proof_points) != c:
        raise _not_proven(claim)
    return u


def verify_shuffles(
    claims: Sequence[ShuffleClaim],
    open_cards: Sequence[str] | None = None,
    own: Sequence[tuple[Sequence[Ciphertext], Shuffle]] = (),
) -> None:
    """Raise FairnessError blaming the party of the first of `claims` (in the chain's order)
    that is not a proven shuffle of its inputs; each point of each is multiplied, so one
    outside the group is refused too. `open_cards` are the cards of the epoch's open deck,
    and `own` this process's own shuffles of the chain, with their inputs (module doc)."""
    if not claims:
        return

    def prepared() -> LinearCheck:
        check = LinearCheck(claims[0].key)
        if open_cards is not None:
            check.know_open_deck(open_cards)
        for inputs, made in own:
            check.know_own_shuffle(inputs, made)
        return check

    try:
        together = prepared()
        for claim in claims:
            together.add_claim(claim, challenge_holds(claim))
        if together.holds():
            return
    except (InvalidPoint, FairnessError):
        pass  # found below, with its party
    for claim in claims:
        try:
            alone = prepared()
            alone.add_claim(claim, challenge_holds(claim))
            holds = alone.holds()
        except (InvalidPoint, FairnessError):
            holds = False
        if not holds:
            p = claim.shuffle.proof
            sent = [*(x for c in claim.shuffle.outputs for x in (c.a, c.b)), *p.commitments,
                    *p.chain, p.t3, p.t4_b, p.t4_a]
            if not all(point.is_valid for point in sent):
                raise FairnessError(claim.party, "its shuffle holds a point that is not a valid"
                                    " group element")
            raise _not_proven(claim)
    raise FairnessError(LOCAL, "shuffles that each hold failed together")


def verify_shuffle(
    shuffle: Shuffle,
    context: ProofContext,
    party: int,
    step: int,
    key: Point,
    inputs: Sequence[Ciphertext],
    open_cards: Sequence[str] | None = None,
) -> None:
    """Raise FairnessError blaming `party` unless `shuffle` is a proven shuffle of `inputs`.

    `open_cards`, when given, says that `inputs` is `open_deck(open_cards, key)`.
    """
    verify_shuffles([ShuffleClaim(shuffle, context, party, step, key, inputs)], open_cards)


def _not_proven(claim: ShuffleClaim) -> FairnessError:
    return FairnessError(claim.party, f"its shuffle (step {claim.step} of the chain) is not"
                         " proven correct")
