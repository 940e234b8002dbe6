"""Issue 12's attacks on mental-poker dealing, end to end (FAIRNESS.md A8, A12): a hostile host
(tests/e2e/hostile_host.py, the real host with a modified host's hooks) in its own process with
its relay, and honest `cardtui join --bot` seats in theirs, all on 127.0.0.1.

Seat 1 is the victim; seat 2 is the host's bot, so the host holds one key (its bots' party).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_netplay import Procs, free_port, wait_all

pytestmark = pytest.mark.slow


def start_hostile(procs: Procs, mode: str, *args: str) -> subprocess.Popen:
    """The hostile host in its own process, logging to host.log; seats 0 and 1 join it."""
    port = free_port()
    with open(procs.tmp / "host.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.e2e.hostile_host", mode,
                                 str(port), str(procs.tmp / "attack.json"), *args],
                                stdout=log, stderr=subprocess.STDOUT, env=procs.env,
                                cwd=procs.tmp, start_new_session=True)
    procs.procs.append(proc)
    procs.wait_for_log("host", r"listening on")
    for seat in (0, 1):  # one after the other, so that seat 1 is the victim's
        procs.start(f"seat{seat}", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name",
                    f"p{seat}", "--result", str(procs.tmp / f"r{seat}.json"),
                    "--seat-file", str(procs.tmp / f"seat{seat}.id"), "--sign", "leo")
        procs.wait_for_log("host", rf"seat {seat} \(p{seat}\) joined")
    return proc


def report(procs: Procs) -> dict[str, Any]:
    return json.loads((procs.tmp / "attack.json").read_text())


def failures(procs: Procs, seat: int) -> list[str]:
    """The failed checks a seat's client showed."""
    return re.findall(r"\(check failed: (.*)\)", procs.log(f"seat{seat}"))


def shown_round(procs: Procs, seat: int, number: int) -> bool:
    """Whether a seat's client showed round `number` (its cards) to its player."""
    return re.search(rf"^round {number}$", procs.log(f"seat{seat}"), re.MULTILINE) is not None


@pytest.mark.timeout(900)  # a whole match, on a machine that may be busy
def test_hostile_host_trying_every_decryption_never_opens_a_persons_card(procs: Procs) -> None:
    """The host records every message and, after each, tries every subset of the shares it
    holds with its own key on every dealt position, and its key on every ciphertext of every
    shuffle: it opens its bots' cards and the cards played face up, never a person's card.
    A short match (to 20): every round is attacked alike, and there are several."""
    host = start_hostile(procs, "snoop", "--target", "20")
    wait_all([host, *procs.procs[1:]], timeout=900)
    found = report(procs)
    assert found["recovered_private"] == []
    assert found["recovered_own"] > 0 and found["recovered_public"] > 0  # the attack works
    # It held every share of a person's card but the person's own, for many cards.
    assert found["positions_with_all_other_shares"] > 10
    # Hundreds of tries a round (892 in a match that ended after one round: its length is the
    # deal's, which mental poker makes random).
    assert found["rounds"] >= 1 and found["attempts"] > 500
    for seat in (0, 1):
        assert failures(procs, seat) == []
        assert "result:" in procs.log(f"seat{seat}")  # the honest players finished the match


def test_host_forcing_a_reconnect_cannot_deal_without_the_persons_shuffle(procs: Procs) -> None:
    """The host closes the victim's socket and deals round 1 with the victim's seat given to
    its bots (no key, no shuffle from the victim): the victim refuses the round, blames the
    host, and shows no card of it."""
    start_hostile(procs, "exclude")
    procs.wait_for_log("seat1", r"check failed: the dealer: dealt round 1 with this seat"
                       r" played by its bots", timeout=300)
    assert "dealt round 1 with the victim's seat" in " ".join(report(procs)["done"])
    assert "connection lost" in procs.log("seat1")  # the host forced a reconnect first
    assert not shown_round(procs, 1, 1)


def test_shuffle_that_skips_every_persons_shuffle_is_refused(procs: Procs) -> None:
    """After forcing every seat to reconnect, the host's bots' party sends a shuffle made from
    the open deck (it knows every card's place), not from the people's shuffles: every seat
    refuses it, blames the host, and no card is dealt from that deck."""
    start_hostile(procs, "skip")
    for seat in (0, 1):
        procs.wait_for_log(f"seat{seat}", r"check failed: the dealer: its shuffle \(step 2 of"
                           r" the chain\) is not proven correct", timeout=300)
    for seat in (0, 1):
        assert not shown_round(procs, seat, 1)
        assert all(f.startswith("the dealer") for f in failures(procs, seat))


def test_lobby_shuffle_that_skips_every_persons_shuffle_is_refused(procs: Procs) -> None:
    """In the lobby, the host's bots' party sends a shuffle of the first round's deck made from
    the open deck: every seat refuses it and blames the host, no card of that deck is shown
    (a seat that saw it fail will not follow a deal naming it), and the honest players still
    finish their match."""
    start_hostile(procs, "lobbyskip", "--target", "20")
    for seat in (0, 1):
        procs.wait_for_log(f"seat{seat}", r"check failed: the dealer: its shuffle \(step 2 of"
                           r" the chain\) is not proven correct", timeout=300)
    for seat in (0, 1):
        procs.wait_for_log(f"seat{seat}", r"result:", timeout=600)
        assert all(f.startswith("the dealer") for f in failures(procs, seat))
    assert "skipping every person's shuffle" in " ".join(report(procs)["done"])


def test_replayed_shuffle_and_share_of_an_earlier_round_are_refused(procs: Procs) -> None:
    """Round 1 is honest. At round 2 the host forces reconnects, forwards seat 0's signed
    shuffle of round 1, and sends its share of round 1 for a person's position as the share
    of round 2: both are refused and blamed on the host; the person whose card it was is not
    shown round 2."""
    start_hostile(procs, "replay")
    procs.wait_for_log("host", r"hostile: sent its share of round 1", timeout=600)
    victim = report(procs)["replayed_share_owner"]
    procs.wait_for_log(f"seat{victim}", r"check failed: the dealer: its decryption share for"
                       r" deck position \d+ does not hold", timeout=120)
    for seat in (0, 1):
        # Seat 0's message of round 1 does not follow its chain of round 2.
        procs.wait_for_log(f"seat{seat}", r"check failed: the dealer: .*from seat 0",
                           timeout=120)
        assert all(f.startswith("the dealer") for f in failures(procs, seat))
    assert shown_round(procs, victim, 1) and not shown_round(procs, victim, 2)


def test_round_sent_again_from_its_start_is_refused(procs: Procs) -> None:
    """The host forces the victim to reconnect mid-deal and sends it the round again from its
    start, so that a client that forgot would announce a second key: the victim keeps what it
    had, blames the host, and its round goes on."""
    start_hostile(procs, "rewind")
    procs.wait_for_log("seat1", r"check failed: the dealer: sent round 1 again from its start",
                       timeout=300)
    procs.wait_for_log("seat1", r"(?m)^round 1$", timeout=120)
    assert all(f.startswith("the dealer") for f in failures(procs, 1))
    assert failures(procs, 0) == []


def test_round_dealt_again_with_the_same_parties_is_refused(procs: Procs) -> None:
    """Once the seats have sent their shares of round 1, the host deals round 1 again (to keep
    whichever deal its bots like): every seat keeps the first deal and blames the host."""
    start_hostile(procs, "redeal")
    for seat in (0, 1):
        procs.wait_for_log(f"seat{seat}", r"check failed: the dealer: dealt round 1 a second"
                           r" time", timeout=300)
    for seat in (0, 1):
        assert len(re.findall(r"(?m)^round 1$", procs.log(f"seat{seat}"))) <= 1
        assert all(f.startswith("the dealer") for f in failures(procs, seat))


def test_dropped_shares_are_blamed_on_the_host_not_the_victim(procs: Procs) -> None:
    """The host never forwards the victim's decryption shares, and closes its socket: the
    victim sends them again after reconnecting, then blames the host; no seat blames the
    victim."""
    start_hostile(procs, "drop")
    procs.wait_for_log("seat1", r"check failed: the dealer: did not forward this seat's"
                       r" decryption shares", timeout=300)
    assert report(procs)["dropped"] >= 2  # sent again after the reconnect
    assert not any(f.startswith("seat 1") for f in failures(procs, 0))
    assert all(f.startswith("the dealer") for f in failures(procs, 1))


def test_a_proof_that_fails_after_its_deck_was_shuffled_on_stops_the_deal(procs: Procs) -> None:
    """FAIRNESS.md A8, "Shuffle": a seat (tests/e2e/hostile_peer.py `bad-proof`, seat 0, the
    first shuffler) sends a true shuffle with a proof that fails, in the lobby and again in
    round 1's own chain; the honest seat shuffles on top of it without waiting for its check,
    then checks the chain and blames the cheat before any card of that deck opens; the host
    voids the deal and deals the round again with its bot in the cheat's seat, and the honest
    seat plays it."""
    port = free_port()
    procs.start("host", "host", "--headless", "--game", "zodiak", "--players", "3", "--bots",
                "1", "--port", str(port), "--bind", "127.0.0.1", "--seed", "4", "--speed", "0",
                "--result", str(procs.tmp / "host.json"))
    procs.wait_for_log("host", r"others run")
    with open(procs.tmp / "cheat.log", "w") as log:
        procs.procs.append(subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.hostile_peer", "bad-proof",
             f"ws://127.0.0.1:{port}/ws", "-", str(procs.tmp / "cheat.json")],
            stdout=log, stderr=subprocess.STDOUT, env=procs.env, cwd=procs.tmp,
            start_new_session=True))
    procs.wait_for_log("host", r"seat 0 \(bad-proof\) joined")
    procs.start("seat1", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--name", "p1",
                "--result", str(procs.tmp / "r1.json"), "--seat-file",
                str(procs.tmp / "seat1.id"), "--sign", "leo")
    procs.wait_for_log("seat1", r"check failed: seat 0: its shuffle \(step 0 of the chain\)"
                       r" is not proven correct", timeout=300)
    procs.wait_for_log("host", r"round 1 voided \(party 0's shuffle failed its check",
                       timeout=300)
    procs.wait_for_log("seat1", r"(?m)^round 1$", timeout=300)  # dealt again, bot in seat 0
    seat = procs.log("seat1")
    shown = re.search(r"^round 1$", seat, re.MULTILINE)
    assert shown is not None and seat.index("check failed") < shown.start()
    blamed = "seat 0: its shuffle (step 0 of the chain) is not proven correct"
    # Blamed first in the lobby (its shuffle of the first round's deck), then in round 1's own
    # chain of shuffles, where it cheats again.
    assert failures(procs, 1) == [blamed, blamed]
    assert re.search(r"party 0's shuffle of the first round's deck failed its check",
                     procs.log("host"))
    assert "sent a shuffle whose proof fails" in procs.log("cheat")


@pytest.mark.timeout(900)  # a whole match, on a machine that may be busy
def test_a_prepared_deck_named_by_a_wrong_digest_deals_the_seats_out_and_the_match_ends(
        procs: Procs) -> None:
    """FAIRNESS.md A8, "Prepared deck": the host names a round's prepared deck by a digest no
    seat computed. Each person's client holds no key of such a deck: it says so (mp_lost) and
    sits that round out, its cards never shown, and (having seen the deck shuffled whole)
    blames the host for the digest; the match then goes on and both `join` processes finish
    it with the host's result."""
    host = start_hostile(procs, "misname", "--target", "30")
    wait_all([host, *procs.procs[1:]], timeout=600)
    misnamed = report(procs)["misnamed"]
    log = procs.log("host")
    assert re.search(rf"round {misnamed} voided \(seat [01] lost its round key\)", log)
    for seat in (0, 1):
        # Each client saw that deck shuffled whole: the digest is the host's lie.
        assert all(f.startswith(f"the dealer: named round {misnamed}'s deck by a digest")
                   for f in failures(procs, seat))
        assert json.loads((procs.tmp / f"r{seat}.json").read_text())["game"] == "zodiak"


@pytest.mark.timeout(900)
def test_a_host_flooding_refusals_and_chat_does_not_stop_the_seats(procs: Procs) -> None:
    """As round 1 is dealt the host sends each seat 8,000 refusals and the table 2,000 chat
    lines, as fast as it can: the `join --bot` seats show them, keep a bounded chat, blame
    nobody, and finish the match (the host's lines are its own to send; they stop nothing)."""
    host = start_hostile(procs, "flood", "--target", "20")
    wait_all([host, *procs.procs[1:]], timeout=900)
    assert "refusals and 2000 chat lines" in " ".join(report(procs)["done"])
    for seat in (0, 1):
        log = procs.log(f"seat{seat}")
        assert log.count("the host refused: no no") >= 1000
        assert "flood 1999" in log
        assert failures(procs, seat) == []
        assert "result:" in log  # the honest players finished the match


def cpu_seconds(proc: subprocess.Popen) -> float:
    """The CPU time (user and system) a running process has spent so far."""
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.timeout(900)
def test_a_host_flooding_shares_whose_proofs_fail_costs_a_seat_one_proof(procs: Procs) -> None:
    """Once round 1 is dealt, the host sends, as its bots' party and in its own signed chain,
    3,000 shares of its bots' own cards whose proofs fail, as fast as it can (each new in the
    chain; a seat must check such a share, its bots' cards opening face up with it), then voids
    the deal naming nobody and deals honestly. Each seat checks the first, blames the host, says
    once that it checks nothing more of that deal, and leaves the other 2,999 unchecked; the
    honest players then finish the match, round 1 dealt again. (Before the bound, each seat
    checked all 3,000 and showed the first 100 as failed checks.)"""
    host = start_hostile(procs, "badshares", "--target", "20")
    seats = procs.procs[1:]
    procs.wait_for_log("host", r"hostile: sending \d+ shares", timeout=300)
    before = [cpu_seconds(seat) for seat in seats]
    spent = []
    for seat, start in enumerate(before):  # the void comes after the flood in the chain
        procs.wait_for_log(f"seat{seat}", r"round 1 is dealt again", timeout=300)
        spent.append(cpu_seconds(seats[seat]) - start)
    found = report(procs)
    print(f"flood of {found['bad_sent']} bad shares sent in"
          f" {found['bad_ended'] - found['bad_started']:.2f} s; each seat's CPU from its start"
          f" to the void after it: {', '.join(f'{s:.2f} s' for s in spent)}")
    wait_all([host, *seats], timeout=900)
    for seat in (0, 1):
        log = procs.log(f"seat{seat}")
        bad = [f for f in failures(procs, seat) if "decryption share for deck position" in f]
        assert len(bad) == 1 and bad[0].startswith("the dealer")
        assert log.count("checks and takes nothing more of it") == 1
        assert "round 1 is dealt again (the host started again)" in log
        assert "result:" in log  # the honest players finished the match
