"""What generation gives back: results, their timings, streamed token events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from . import _core


class TokenLogprob(NamedTuple):
    """A token and its log-probability (an alternative at one position, with top_logprobs)."""

    id: int
    logprob: float


@dataclass(frozen=True)
class Timings:
    """Where one result's time went, in milliseconds, from when its call started."""

    queued_ms: float
    prefill_ms: float  #: the prompt through the model
    first_token_ms: float  #: until the first generated token
    decode_ms_per_token: float  #: mean time between later tokens
    total_ms: float
    prompt_tokens: int
    cached_prompt_tokens: int
    generated_tokens: int


@dataclass(frozen=True)
class Result:
    """One generated result.

    text: the continuation (prompt excluded), cut before a stop string; ids: the generated ids
    (an end-of-text or stop id included when it ended the text); finish_reason: "eos", "stop",
    "length", "callback" (a stream closed early) or "cancelled"; logprobs: log p(id) per id
    (with logprobs=True, else None); top_logprobs: per id the most likely alternatives (with
    top_logprobs=N, else None); score: beam search's score of the hypothesis, else the sum of the
    logprobs when asked for; seed: the seed used (the one given, or the one drawn); index: the
    prompt it answers; sample: which of that prompt's results (sample or beam rank); timings:
    where its time went (not compared: two Results are equal when they hold the same generation).
    """

    text: str
    ids: list[int]
    finish_reason: str
    logprobs: Optional[list[float]]
    top_logprobs: Optional[list[list[TokenLogprob]]]
    score: float
    seed: int
    index: int
    sample: int
    timings: Timings = field(compare=False)  # a measurement: equal Results hold the same generation


@dataclass(frozen=True)
class TokenEvent:
    """One step of a stream: the text that `token` of result `sample` of prompt `index` makes visible.

    text may be empty (an incomplete character or a possible stop string is held back); at the
    end of a result, held-back text comes with token = -1. The texts of one result concatenate to
    its Result.text. logprob / top_logprobs are set when asked for.
    """

    index: int
    sample: int
    token: int
    text: str
    logprob: Optional[float]
    top_logprobs: Optional[list[TokenLogprob]]


def timings_of(t: _core.Timings) -> Timings:
    return Timings(t.queued_ms, t.prefill_ms, t.first_token_ms, t.decode_ms_per_token, t.total_ms, t.prompt_tokens,
                   t.cached_prompt_tokens, t.generated_tokens)


def result_of(r: _core.Result, logprobs: bool, top_logprobs: bool) -> Result:
    top = [[TokenLogprob(*a) for a in at] for at in r.top_logprobs] if top_logprobs else None
    return Result(r.text, r.ids, r.finish_reason, r.logprobs if logprobs else None, top, r.score, r.seed, r.index,
                  r.sample, timings_of(r.timings))
