"""Claims of a shared judge run: several runners, on one machine or many, judge one run and each judgment is
requested once.

Each runner holds a lease of its own, ``run:<id>:runner:<token>`` (pid, host, heartbeat: ``leases.py``), and claims
each (item content hash, repeat) before it sends the request. A claim is a row of ``run_claims`` naming the
runner's token; it is taken with ``INSERT ... ON CONFLICT DO NOTHING RETURNING`` (a key nobody claimed) or a
compare-and-set ``UPDATE ... WHERE token = <the dead runner's> AND done = 0 RETURNING`` (a key whose runner died),
so two claimers can never both get a key, on SQLite (the claim is one ``BEGIN IMMEDIATE`` transaction) or Postgres
(the row's unique key and the row lock decide, whatever the isolation). The transaction that stores a judgment sets
its claim ``done`` (``settle``): a stored judgment is never claimed again, and of two verdicts for one key only the
first is stored.

A claim is taken over only when its runner is gone by the lease rules: its heartbeat is older than
``LEASE_STALE_S``, or it was a process of this host that no longer exists. A request that runner had sent but
whose verdict it had not stored is then sent again: a runner killed mid-run can cost at most one request per claim
it held (``takeovers`` counts them); a live runner's claims are never taken.

``run:<id>`` (no suffix) stays the lease of a runner that must be alone on the run (batch mode): it refuses shared
runners while alive, and they refuse it.

    me, blocker = join(store, run_id)                 # blocker: the live exclusive holder, else None
    got = claim(store, run_id, me, [(h, 0), (h2, 0)], want=2)   # None: our lease was taken, stop
    with store.transaction(): settle(store, run_id, (h, 0), me) and store.insert_judgments(...)
    with store.transaction(): leave(store, run_id, me)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.store import leases
from workbench.store.db import Connection, now

log = logging.getLogger(__name__)

Key = tuple[str, int]  # (item content hash, repeat)


@dataclass(frozen=True)
class Claimed:
    """What a claim found for the keys it looked at (a prefix of the candidates, in their order)."""

    claimed: tuple[Key, ...] = ()  # this runner's now (taken_over among them)
    done: tuple[Key, ...] = ()  # stored already, by any runner
    held: tuple[Key, ...] = ()  # claimed by a live runner: look again later
    taken_over: tuple[Key, ...] = ()  # claims of a dead runner, now this runner's


def exclusive_key(run_id: int) -> str:
    return f"run:{run_id}"


def runner_prefix(run_id: int) -> str:
    return f"run:{run_id}:runner:"


def runners(store: Connection, run_id: int) -> list[leases.Holder]:
    """The live holders of the run: its exclusive holder, if any, then its shared runners, oldest first."""
    found = [h for h in (leases.current(store, exclusive_key(run_id)),) if h is not None]
    found += leases.holders(store, runner_prefix(run_id))
    return [h for h in found if not leases.is_abandoned(h)]


def _drop_abandoned(store: Connection, run_id: int) -> set[str]:
    """Delete the leases of the run's runners that are gone (their keepers, if alive after all, then stop);
    returns the tokens of the live runners."""
    alive = set()
    for h in leases.holders(store, runner_prefix(run_id)):
        if leases.is_abandoned(h):
            log.warning("runner %s of run %d is gone (last heartbeat %.0f s ago): its claims are free",
                        h.describe(), run_id, h.heartbeat_age_s())
            store.conn.execute("DELETE FROM leases WHERE key = ? AND token = ?", (h.key, h.token))
        else:
            alive.add(h.token)
    return alive


def join(store: Connection, run_id: int, *, exclusive: bool = False) -> tuple[leases.Holder, leases.Holder | None]:
    """Become a runner of the run: (this runner's lease, None), or (the lease it would have had, the live holder
    that refuses it).

    A shared runner is refused only by a live exclusive holder; an exclusive one by any live runner. A holder that
    is gone is taken over (its lease replaced or deleted), as ``leases.acquire`` does.
    """
    mine = leases.mint(exclusive_key(run_id)) if exclusive else leases.mint(prefix=runner_prefix(run_id))

    def take() -> tuple[leases.Holder, leases.Holder | None]:
        with store.transaction():
            held = leases.current(store, exclusive_key(run_id))
            if held is not None and not leases.is_abandoned(held):
                return mine, held
            if held is not None:
                log.warning("taking over run %d from %s (last heartbeat %.0f s ago)", run_id, held.describe(),
                            held.heartbeat_age_s())
                store.conn.execute("DELETE FROM leases WHERE key = ? AND token = ?", (held.key, held.token))
            alive = _drop_abandoned(store, run_id)
            if exclusive and alive:
                return mine, next(h for h in leases.holders(store, runner_prefix(run_id)) if h.token in alive)
            leases.write(store, mine)
            return mine, None

    return store.retrying(take, what=f"joining run {run_id}")


def claim(store: Connection, run_id: int, me: leases.Holder, candidates: Sequence[Key], want: int) -> Claimed | None:
    """Claim up to ``want`` of ``candidates`` (in order) for ``me``; None when ``me``'s lease is no longer its own
    (another runner found it gone and took its claims: it must stop)."""

    def take() -> Claimed | None:
        claimed: list[Key] = []
        done: list[Key] = []
        held: list[Key] = []
        taken: list[Key] = []
        with store.transaction():
            own = leases.current(store, me.key)
            if own is None or own.token != me.token:
                return None
            alive = _drop_abandoned(store, run_id)
            at = now()
            for key in candidates:
                if len(claimed) >= want:
                    break
                fresh = store.conn.execute(
                    """INSERT INTO run_claims (run_id, content_hash, repeat, token, claimed_at) VALUES (?, ?, ?, ?, ?)
                       ON CONFLICT (run_id, content_hash, repeat) DO NOTHING RETURNING repeat""",
                    (run_id, key[0], key[1], me.token, at)).fetchone()
                if fresh is not None:
                    claimed.append(key)
                    continue
                row = store.conn.execute(
                    "SELECT token, done FROM run_claims WHERE run_id = ? AND content_hash = ? AND repeat = ?",
                    (run_id, key[0], key[1])).fetchone()
                if row[1]:
                    done.append(key)
                elif row[0] == me.token:
                    claimed.append(key)
                elif row[0] in alive:
                    held.append(key)
                elif store.conn.execute(
                        """UPDATE run_claims SET token = ?, claimed_at = ?, takeovers = takeovers + 1
                           WHERE run_id = ? AND content_hash = ? AND repeat = ? AND token = ? AND done = 0
                           RETURNING repeat""", (me.token, at, run_id, key[0], key[1], row[0])).fetchone():
                    claimed.append(key)
                    taken.append(key)
                else:  # cannot happen inside the transaction; counted as held, looked at again
                    held.append(key)
        if taken:
            log.warning("run %d: took over %d claims of a runner that is gone (their requests may be paid twice)",
                        run_id, len(taken))
        return Claimed(tuple(claimed), tuple(done), tuple(held), tuple(taken))

    return store.retrying(take, what=f"claiming work of run {run_id}")


def settle(store: Connection, run_id: int, key: Key, me: leases.Holder) -> bool:
    """Mark the key stored, inside the transaction that stores its judgment; False when a runner stored it first
    (then this verdict is dropped: a judgment is stored once)."""
    moved = store.conn.execute(
        """UPDATE run_claims SET done = 1, token = ? WHERE run_id = ? AND content_hash = ? AND repeat = ?
           AND done = 0""", (me.token, run_id, key[0], key[1])).rowcount
    if moved == 1:
        return True
    fresh = store.conn.execute(
        """INSERT INTO run_claims (run_id, content_hash, repeat, token, claimed_at, done) VALUES (?, ?, ?, ?, ?, 1)
           ON CONFLICT (run_id, content_hash, repeat) DO NOTHING RETURNING repeat""",
        (run_id, key[0], key[1], me.token, now())).fetchone()
    return fresh is not None


def release(store: Connection, run_id: int, me: leases.Holder, keys: Iterable[Key] | None = None) -> None:
    """Give back ``me``'s claims not stored (all, or ``keys``): another runner may take them at once."""
    with store.transaction():
        if keys is None:
            store.conn.execute("DELETE FROM run_claims WHERE run_id = ? AND token = ? AND done = 0",
                               (run_id, me.token))
            return
        for key in keys:
            store.conn.execute("""DELETE FROM run_claims WHERE run_id = ? AND content_hash = ? AND repeat = ?
                                  AND token = ? AND done = 0""", (run_id, key[0], key[1], me.token))


def leave(store: Connection, run_id: int, me: leases.Holder) -> bool:
    """Release ``me``'s unstored claims and its lease (joins the caller's transaction); False when the lease was
    not its own any more (taken over)."""
    with store.transaction():
        release(store, run_id, me)
        own = leases.current(store, me.key)
        if own is None or own.token != me.token:
            return False
        leases.release(store, me)
        return True


def others_alive(store: Connection, run_id: int, me: leases.Holder) -> bool:
    """Whether a live runner other than ``me`` still works on the run."""
    return any(h.token != me.token for h in runners(store, run_id))


def takeovers(store: Connection, run_id: int) -> int:
    """How many claims were taken over from runners that were gone: at most this many requests were paid twice."""
    row = store.conn.execute("SELECT coalesce(sum(takeovers), 0) FROM run_claims WHERE run_id = ?",
                             (run_id,)).fetchone()
    return int(row[0])
