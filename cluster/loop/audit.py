"""GPU shards audited on CPUs: a deterministic fraction of the shards a GPU played is played again by a CPU
actor and the two results compared, field by field (`audit` in the config).

A cloud GPU without error-correcting memory can be wrong silently, and volunteer-computing projects check
every block twice for the same reason. Which shards are audited is a pure function of the run and the
shard (a hash of the run's fingerprint and the shard's id under `fraction`), so a resumed run audits the
same ones. While its audit runs, a GPU shard's result is held, not written; then the shard is written
with its audit's verdict in its summary: "matched" (the GPU's result, equal to the CPU's), or
"mismatch", when the CPU's result is written instead (the shard is redone on the CPU) and the search
stops with one sentence naming the shard, the GPU worker (its node) and its device. `bmn status` counts
both.
"""

from __future__ import annotations

import hashlib

from ..runs.figures import PlayedShard

MATCHED, MISMATCH = "matched", "mismatch"
# The figures that depend on who played a shard and when, not on what it computed.
CIRCUMSTANCES = ("elapsed_s", "worker", "finished_at")


def chosen(fingerprint: str, shard: int, fraction: float) -> bool:
    """Whether the run audits this shard: its hash with the run's fingerprint, as a fraction, under `fraction`."""
    if fraction <= 0:
        return False
    digest = hashlib.sha256(f"{fingerprint}:{shard}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def difference(gpu: PlayedShard, cpu: PlayedShard) -> str | None:
    """The first thing in which two results of one shard differ (their candidates, then each figure), or None."""
    if (gpu.candidates, gpu.deck, gpu.rank_base) != (cpu.candidates, cpu.deck, cpu.rank_base):
        if len(gpu.candidates) != len(cpu.candidates):
            return f"{len(gpu.candidates)} kept deals against {len(cpu.candidates)}"
        first = next((k for k, (a, b) in enumerate(zip(gpu.candidates, cpu.candidates)) if a != b), None)
        return f"kept deal {first}: {gpu.candidates[first]} against {cpu.candidates[first]}" if first is not None \
            else "the deck or the first rank"
    mine, theirs = gpu.figures.flat(), cpu.figures.flat()
    for name, value in mine.items():
        if name not in CIRCUMSTANCES and value != theirs[name]:
            return f"{name}: {str(value)[:200]} against {str(theirs[name])[:200]}"
    return None


class Audits:
    """A run's audits: which GPU shards it plays again on a CPU, and the GPU results held meanwhile."""

    def __init__(self, fraction: float, fingerprint: str):
        self.fraction = fraction
        self.fingerprint = fingerprint
        self.held: dict[int, PlayedShard] = {}  # shard id -> the GPU's result, while its audit runs

    def wants(self, played: PlayedShard) -> bool:
        """A shard a GPU played that this run audits (and that is not being audited already)."""
        return (played.on_gpu and not played.audit and played.shard.id not in self.held
                and chosen(self.fingerprint, played.shard.id, self.fraction))

    def back(self, cpu: PlayedShard) -> tuple[PlayedShard, str | None, str | None]:
        """A shard's audit back (its held GPU result let go): (the played shard to write, its mark, what differs).
        The GPU's, matched, when the CPU's equals it; the CPU's, mismatch, with the first difference, when not;
        the GPU's unmarked when the audit could not be played."""
        gpu = self.held.pop(cpu.shard.id)
        if not cpu.done:
            return gpu, None, None
        what = difference(gpu, cpu)
        if what is None:
            return gpu, MATCHED, None
        return cpu._replace(attempts=gpu.attempts), MISMATCH, what
