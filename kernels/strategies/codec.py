"""A shard's parameters written down and read back: the one codec between a strategy's typed `Params`
(kernels/strategies/base.py) and the text a run keeps (the `params` of each shard summary, in the
shard file's metadata and in the shards table).

The form, what bmn has always written: a JSON object, keys sorted, the parameters by name, a nested
value as an object, a tuple as a list, a field left unsaid at its default left out (so the shards of
runs made before that field was added keep their parameters, and those runs resume). There is one
form, so nothing names it; a second one would be told apart by a key of the summary.

`decode` is strict: a strategy's parameters, every value of its declared type, or a ValueError of one
sentence. A form of earlier runs that nested a strategy's table keys (`ShardParams.flattened`) is read
flat. `read`, for what a run kept, never fails: parameters that do not read back as exactly the text
they were written as, or as their earlier form flattened (another bmn's, another strategy's, a value of
the wrong type, a form no plan of this bmn makes) are kept `Unread`, as written, with that sentence:
such a shard is never this run's (its plan's parameters are typed), and its summary writes them out
unchanged.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from .base import ShardParams, Strategy


class Unread(NamedTuple):
    """Parameters a run kept that this bmn does not read as its strategy's: the text as written, and why."""

    text: str
    why: str


def encode(params: ShardParams | Unread) -> str:
    """The parameters as the run keeps them."""
    if isinstance(params, Unread):
        return params.text
    return json.dumps(params.to_json(), sort_keys=True)


def decode(strategy: Strategy, text: str | dict) -> ShardParams:
    """A strategy's parameters as a run kept them (the text, or its JSON object). A text that is not the
    strategy's parameters (not JSON, a key it does not know or lacks, a value of the wrong type) is a
    ValueError of one sentence."""
    try:
        values = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as error:
        raise ValueError(f"the {strategy.name} strategy's shard parameters are not JSON ({error})") from None
    try:
        return strategy.Params.from_json(values)
    except (ValueError, TypeError) as error:  # (TypeError: a value its own checks refuse)
        raise ValueError(f"not the {strategy.name} strategy's shard parameters: {error}") from None


def read(strategy: Strategy | None, text: str) -> ShardParams | Unread:
    """The parameters a run kept (a shard summary's): typed where they read back as exactly this text,
    else `Unread` (a strategy this bmn does not know: None)."""
    if strategy is None:
        return Unread(text, "a strategy this bmn does not know")
    try:
        params = decode(strategy, text)
    except ValueError as error:
        return Unread(text, str(error))
    values = json.loads(text)
    flat = strategy.Params.flat(values)  # (an earlier form, its nested keys spread: as this bmn writes it)
    written = text if flat is values else json.dumps(flat, sort_keys=True)
    return params if encode(params) == written else Unread(text, f"written as {text}, not as {encode(params)}")
