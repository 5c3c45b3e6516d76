"""The dispatcher: the one place a job's message is made, recorded in a transition and published.

The protocol (docs/architecture.md, "The seam between the record and the queue"): a fresh message
id is made first, the transition writes it on the job in its own transaction, and only after that
commit is the message published. A message therefore never names a job whose record does not
expect it, and a publish that fails (Redis down) leaves a recorded id that recovery republishes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# A transition that records `message_id` on the job and returns what it moved, or None when the
# job was not in a state that allows the move (someone else moved it first).
Transition = Callable[[str], T | None]
# Called with the job id and what the transition returned, once the transition has committed.
AfterCommit = Callable[[str, object], None]


class MessageQueue(Protocol):
    """Where messages go: Redis in production, a list in unit tests."""

    def publish(self, job_id: str, message_id: str, delay_s: float = 0.0) -> bool:
        """Send one message; False when the queue is unreachable (recovery republishes later)."""
        ...

    def publish_many(self, messages: Sequence[tuple[str, str]]) -> bool:
        """Send a `publish(job_id, message_id)` for each pair at once; False when the queue could
        not be reached (some may have gone out: recovery asks which before it republishes)."""
        ...

    def held(self, message_ids: Sequence[str]) -> list[bool]:
        """For each message id: is it still waiting, delayed or being worked on?"""
        ...

    def reclaim(self) -> None:
        """Give back to the queue the messages that dead workers had taken: a held message may be
        held by a worker that is gone, and the broker returns those only now and then."""
        ...


@dataclass(frozen=True)
class Dispatched(Generic[T]):
    """What a dispatched transition moved (None: nothing), and whether its message went out."""

    moved: T | None
    sent: bool


def new_message_id() -> str:
    # The same form Dramatiq gives its own message ids.
    return str(uuid.uuid4())


def _always(_moved: object) -> bool:
    return True


@dataclass
class Dispatcher:
    """Runs the transitions of a job's life, publishes the messages they record, and tells
    listeners after each commit."""

    queue: MessageQueue
    after_commit: list[AfterCommit] = field(default_factory=list)

    def on_commit(self, hook: AfterCommit) -> None:
        """Call `hook(job_id, moved)` after every transition run through `move` or `record` commits.

        The hook point for anything that reacts to a state change (live updates, say): it runs
        after the message is published, and a failing hook is logged, never undoes the move.
        """
        self.after_commit.append(hook)

    def move(
        self,
        job_id: str,
        transition: Transition[T],
        *,
        delay_s: float = 0.0,
        sends: Callable[[T], bool] = _always,
    ) -> Dispatched[T]:
        """Record a new message id through `transition`, then publish it if `sends(moved)`."""
        message_id = new_message_id()
        moved = transition(message_id)
        if moved is None:
            return Dispatched(None, sent=False)
        sent = sends(moved) and self.queue.publish(job_id, message_id, delay_s)
        self.committed(job_id, moved)
        return Dispatched(moved, sent)

    def move_many(self, count: int, transition: Callable[[list[str]], Sequence[T]]) -> Dispatched[list[T]]:
        """`move` for many new jobs at once: `transition` records `count` fresh message ids (one per
        job, in order) in one transaction and returns the jobs it moved, each with a `job_id` of its own
        as `id`; after its commit their messages go out together and the hooks hear of each."""
        message_ids = [new_message_id() for _ in range(count)]
        moved = list(transition(message_ids))
        if not moved:
            return Dispatched(moved, sent=False)
        pairs = [(_job_id(item), message_id) for item, message_id in zip(moved, message_ids, strict=True)]
        sent = self.queue.publish_many(pairs)
        self.committed_many([(job_id, item) for (job_id, _), item in zip(pairs, moved, strict=True)])
        return Dispatched(moved, sent)

    def record(self, job_id: str, transition: Callable[[], T | None]) -> T | None:
        """Run a transition that sends no message (claim, complete, dead-letter, cancel, ...) and
        tell the after-commit hooks when it moved the job, so they hear of every state change."""
        moved = transition()
        if moved is not None:
            self.committed(job_id, moved)
        return moved

    def committed(self, job_id: str, moved: object) -> None:
        """Tell the after-commit hooks about a transition that committed."""
        for hook in self.after_commit:
            try:
                hook(job_id, moved)
            except Exception:
                log.exception("an after-commit hook failed for job %s", job_id)

    def committed_many(self, moves: Sequence[tuple[str, object]]) -> None:
        """Tell the after-commit hooks about many transitions that committed together: a hook with a
        `many` method hears them in one call (a Redis pipeline, one query), others one by one."""
        for hook in self.after_commit:
            many: Callable[[Sequence[tuple[str, object]]], None] | None = getattr(hook, "many", None)
            try:
                if many is not None:
                    many(moves)
                    continue
            except Exception:
                log.exception("an after-commit hook failed for %d jobs", len(moves))
                continue
            for job_id, moved in moves:
                try:
                    hook(job_id, moved)
                except Exception:
                    log.exception("an after-commit hook failed for job %s", job_id)

    def held(self, message_ids: Sequence[str]) -> list[bool]:
        return self.queue.held(message_ids) if message_ids else []

    def reclaim(self) -> None:
        self.queue.reclaim()


def _job_id(moved: object) -> str:
    job_id = getattr(moved, "id", None)
    if not isinstance(job_id, str):
        raise TypeError(f"a moved job without an id: {moved!r}")
    return job_id


@dataclass(frozen=True)
class Message:
    job_id: str
    message_id: str
    delay_s: float


@dataclass
class InMemoryQueue:
    """A queue in a list, for unit tests of the service, runner and recovery without Redis.

    `reachable = False` makes every publish fail as an unreachable Redis would; `lose()` drops a
    held message as a Redis restart without persistence would.
    """

    messages: list[Message] = field(default_factory=list)
    reachable: bool = True
    reclaims: int = 0

    def publish(self, job_id: str, message_id: str, delay_s: float = 0.0) -> bool:
        if not self.reachable:
            return False
        self.messages.append(Message(job_id, message_id, delay_s))
        return True

    def publish_many(self, messages: Sequence[tuple[str, str]]) -> bool:
        if not self.reachable:
            return False
        self.messages.extend(Message(job_id, message_id, 0.0) for job_id, message_id in messages)
        return True

    def held(self, message_ids: Sequence[str]) -> list[bool]:
        present = {m.message_id for m in self.messages}
        return [message_id in present for message_id in message_ids]

    def reclaim(self) -> None:
        """Only counted (`reclaims`): no worker takes a message out of this list and dies with it."""
        self.reclaims += 1

    def take(self) -> Message:
        """Deliver the oldest message, as a worker's consumer would."""
        return self.messages.pop(0)

    def lose(self, message_id: str) -> None:
        self.messages = [m for m in self.messages if m.message_id != message_id]
