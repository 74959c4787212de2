"""Counter-based random deals: deal j of shard s of seed k is a pure function of (k, s, j).

No generator state is carried between deals, so a shard can be cut, resumed or replayed anywhere
with the same deals, and streams of different shards or seeds are independent.

- `stream_key(seed, shard)` mixes the two numbers with SplitMix64's finaliser;
- deal j draws its random words from SplitMix64 started at mix(key ^ (j * GAMMA2));
- bounded draws use Lemire's multiply-shift on 32-bit halves, with the rejection step, so every
  value in range is exactly equally likely;
- a deal is a partial Fisher-Yates shuffle that picks, in order, a distinct random position for
  each penalty card of the deck (plain cards fill the rest). The ordered tuple of positions is
  uniform, so every distinct deal is equally likely. Only as many draws as penalty cards are
  needed (16 for the standard deck, not 51);
- a trick-boundary state (the `states` strategy) is a deal followed by one more bounded draw from
  the same SplitMix64 state: where the deck is cut between hand 1 (leading) and hand 2.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

GAMMA = np.uint64(0x9E3779B97F4A7C15)
GAMMA2 = np.uint64(0xD1B54A32D192ED03)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
MASK32 = np.uint64(0xFFFFFFFF)
U32 = np.uint64(32)
U1 = np.uint64(1)
U0 = np.uint64(0)


@kernel(inline="always")
def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * M1
    z = (z ^ (z >> np.uint64(27))) * M2
    return z ^ (z >> np.uint64(31))


def stream_key(seed: int, shard: int) -> np.uint64:
    """The key of one shard's stream (plain Python so it is the same everywhere)."""
    mask = (1 << 64) - 1

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    return np.uint64(mix((mix(seed & mask) + (shard & mask) * 0x9E3779B97F4A7C15) & mask))


@kernel(inline="always")
def deal_state(key, index):
    """The SplitMix64 state from which deal `index` of stream `key` draws."""
    return mix64(key ^ (np.uint64(index) * GAMMA2))


@kernel(inline="always")
def next_word(state):
    state += GAMMA
    return state, mix64(state)


@kernel(inline="always")
def bounded(u32, r):
    """(value in [0, r), accepted) from a 32-bit random number by Lemire's method."""
    prod = u32 * r
    low = prod & MASK32
    if low < r:
        threshold = ((MASK32 + U1) - r) % r
        if low < threshold:
            return U0, False
    return prod >> U32, True


@kernel(inline="always")
def random_positions(state, positions, n_penalty, total):
    """Where the deck's first n_penalty penalty cards go in the deal drawn from this SplitMix64 state,
    into positions[:n_penalty] (`random_deal` writes the deal from them; the GPU's sweep turns them
    straight into the hands' words). Returns the state after the draws.

    A partial Fisher-Yates shuffle over positions[i] = i, without filling the array first: a bit of
    `touched` says which entries were written, and an untouched entry is read as its index, so only
    the entries a draw touches cost anything (not the 52 of the deck: a GPU thread's stores and loads)."""
    touched = U0
    t = 0
    word = U0
    have = 0
    while t < n_penalty:
        if have == 0:
            state, word = next_word(state)
            have = 2
        u = word & MASK32
        word >>= U32
        have -= 1
        j, ok = bounded(u, np.uint64(total - t))
        if not ok:
            continue
        k = t + np.int64(j)
        pk = np.uint8(k) if ((touched >> np.uint64(k)) & U1) == U0 else positions[k]
        pt = np.uint8(t) if ((touched >> np.uint64(t)) & U1) == U0 else positions[t]
        positions[k] = pt
        positions[t] = pk
        touched |= (U1 << np.uint64(k)) | (U1 << np.uint64(t))
        t += 1
    return state


@kernel(inline="always")
def random_deal(state, positions, penalties, seq):
    """Fill `seq` with a uniformly random deal; `penalties` lists the deck's penalty cards.

    `positions` is scratch space of len(seq); positions[t] is left holding where penalty card t went.
    Returns the SplitMix64 state after the draws."""
    for i in range(seq.shape[0]):
        seq[i] = 0
    state = random_positions(state, positions, penalties.shape[0], seq.shape[0])
    for t in range(penalties.shape[0]):
        seq[positions[t]] = penalties[t]
    return state


@kernel(inline="always")
def random_cut(state, total):
    """A cut in 1..total-1, uniform, drawn from the SplitMix64 state that `random_deal` returned: hand 1
    holds the first `cut` cards of the deal (a random trick-boundary state, both hands holding cards)."""
    while True:
        state, word = next_word(state)
        c, ok = bounded(word & MASK32, np.uint64(total - 1))
        if ok:
            return np.int64(c) + 1
