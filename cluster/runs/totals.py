"""A run's totals from its shard summaries: one rule for the coordinator, `bmn status` and the tables.

The longest games are ordered by cards, longest first, and among equals by their hands (the
smaller string first), so every reader names the same longest game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kernels.tally import Candidate, Counts

from .summary import ShardSummary

KEEP_LONGEST = 5


def longest_key(game: Candidate) -> tuple:
    return (-game.result.cards, game.hands)


class LongestFirst:
    """The longest game of figures that keep their longest games longest first (`longest`)."""

    longest: Sequence[Candidate]

    @property
    def best(self) -> Candidate | None:
        return self.longest[0] if self.longest else None

    @property
    def longest_cards(self) -> int:
        return self.longest[0].result.cards if self.longest else 0


@dataclass
class RunTotals(LongestFirst):
    done: int = 0
    failed: int = 0
    counts: Counts = field(default_factory=Counts)  # the done shards' deals, cards and cycling deals
    longest: list[Candidate] = field(default_factory=list)  # the KEEP_LONGEST longest games, longest first
    cycle_ids: set[str] = field(default_factory=set)
    histogram: dict[int, int] = field(default_factory=dict)  # finite games by length in cards

    def copy(self) -> RunTotals:
        """Totals of their own, equal to these: every field copied (its counts, list, set and dict anew; the games
        in `longest` are values, never changed, and shared)."""
        return RunTotals(done=self.done, failed=self.failed, counts=self.counts.counts(), longest=list(self.longest),
                         cycle_ids=set(self.cycle_ids), histogram=dict(self.histogram))

    @classmethod
    def of(cls, summaries: dict[int, ShardSummary]) -> RunTotals:
        totals = cls()
        for _, summary in sorted(summaries.items()):
            totals.add(summary)
        return totals

    def add(self, summary: ShardSummary) -> None:
        """Count one shard's summary (a failed shard counts as failed, nothing else)."""
        if not summary.done:
            self.failed += 1
            return
        self.done += 1
        figures = summary.figures
        self.counts.add(figures.counts)
        if figures.longest:
            self.longest.append(figures.longest)
            self.longest.sort(key=longest_key)
            del self.longest[KEEP_LONGEST:]
        self.cycle_ids.update(figures.cycle_ids)
        for k, v in figures.histogram.items():
            self.histogram[k] = self.histogram.get(k, 0) + v


@dataclass(frozen=True)
class Snapshot(LongestFirst):
    """The run's figures as the loop left them at the end of a turn: immutable, so the progress thread (and
    anything else off the loop) reads whole figures, never a total while a shard is being added to it."""

    done: int = 0
    failed: int = 0
    deals: int = 0
    cards: int = 0
    new: int = 0  # shards this session wrote done
    session_deals: int = 0  # what the shards this session handed over played
    longest: tuple[Candidate, ...] = ()  # the KEEP_LONGEST longest games, longest first
    cycles: int = 0


@dataclass
class SessionTotals:
    """A session's counters, one value that the run loop alone changes, through these methods (the loop's
    coordinator.py and recorder.py call them; tests/test_totals.py checks that no other module writes them): the
    run's totals (its files' when the session began, and each file written since, counted as the loop takes
    it), the shards it wrote done, and what the shards it handed over to be written played (this session's
    deals: its rate). Off the loop, its `snapshot` is read."""

    run: RunTotals = field(default_factory=RunTotals)
    new: int = 0
    played: Counts = field(default_factory=Counts)

    def start(self, opened: RunTotals) -> None:
        """The run's totals from those of its files when the session opened them (a copy: the loop's own)."""
        self.run = opened.copy()

    def handed(self, summary: ShardSummary) -> None:
        """A shard handed over to be written: what it played, into the session's deals."""
        self.played.add(summary.figures.counts)

    def count(self, summary: ShardSummary) -> None:
        """A shard whose file is written: into the run's totals (and the session's, when it is done)."""
        self.run.add(summary)
        if summary.done:
            self.new += 1

    def tabled(self, done: int, failed: int, cycle_ids: set[str]) -> None:
        """The run's shards done and failed, and its cycles, as the summary tables count them once rebuilt from
        every shard file (cluster/loop/runfiles.py)."""
        self.run.done, self.run.failed, self.run.cycle_ids = done, failed, set(cycle_ids)

    def snapshot(self) -> Snapshot:
        t = self.run
        return Snapshot(done=t.done, failed=t.failed, deals=t.counts.deals, cards=t.counts.cards, new=self.new,
                        session_deals=self.played.deals, longest=tuple(t.longest), cycles=len(t.cycle_ids))
