"""A serving row's load, read from its batch, scenario and notes text: the users of a closed loop, the batch cap, the
arrival rate, the scenario, and the requests a run issued."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import NUM, lookup_float, lookup_int, parse_number


@dataclass(frozen=True)
class RowLoad:
    """A serving row's load as its text states it (None: not stated): the users of a closed loop or a fixed batch,
    the batch cap, and the arrival rate in requests/s."""

    concurrency: int | None
    max_batch: int | None
    request_rate: float | None


_MAX_BATCH_PATTERNS: Final[tuple[str, ...]] = (
    r"max[-_ ]num[-_ ]seqs\s*[=:]?\s*(\d+)",
    r"gpu_batch_size\s*[=:]?\s*(\d+)",
    r"compiled\s+batch(?:[_ ]size)?\s*[=:]?\s*(\d+)",
    r"batch sizes? up to\s*(\d+)",
    r"max(?:imum)?\s+batch(?:[_ ]size)?\s*[=:]?\s*(\d+)",
)


#: How load generators and papers name the users of a closed loop: 'concurrency=64', 'max concurrent users=8',
#: '--max-concurrency 64', 'conc 16', 'c=64', InferenceX's 'c64', 'users=32', '64 concurrent requests', '32 users'.
_CONCURRENCY_PATTERNS: Final[tuple[str, ...]] = (
    r"concurren(?:cy|t users?|t requests?)\s*[=:]?\s*(\d+)",
    r"(?<![\w-])conc\s*[=:]?\s*(\d+)",
    r"(?<![\w-])c\s*=\s*(\d+)",
    r"(?<![\w-])c(\d+)\b",
    r"(?<![\w-])users?\s*[=:]\s*(\d+)",
    r"(?<![\w.])(\d+)\s*(?:concurrent(?:\s+(?:users?|requests?|clients?))?|users\b|clients\b)",
)


#: How they name an open loop's arrival rate: 'rate=4 req/s', '@ 2 req/s', '4 QPS', 'qps=4', 'rps 4', 'Poisson 2 rps'.
_RATE_PATTERNS: Final[tuple[str, ...]] = (
    rf"(?:rate|@)\s*[=:@]?\s*({NUM})\s*req",
    rf"(?<![\w.])({NUM})\s*(?:req(?:uests)?\s*/\s*s(?:ec)?|rps|qps)\b",
    rf"\b(?:qps|rps|request[-_ ]rate)\s*[=:]?\s*({NUM})(?!\s*(?:users?|concurren))",
)


def _concurrency(text: str) -> int | None:
    for pattern in _CONCURRENCY_PATTERNS:
        found = lookup_int(pattern, text)
        if found is not None:
            return found
    return None


def parse_load(batch_text: str, scenario_text: str, notes_text: str) -> RowLoad:
    """Concurrency (fixed batch or users), batch limit and request rate from the load description."""
    max_batch = None
    remaining = batch_text
    for pattern in _MAX_BATCH_PATTERNS:
        found = lookup_int(pattern, remaining)
        if found is not None:
            max_batch = max_batch or found
            remaining = re.sub(pattern, " ", remaining, flags=re.IGNORECASE)
    if max_batch is None:
        max_batch = lookup_int(r"(?:server max batch size|compiled batch_size)\s*[=:]?\s*(\d+)", notes_text)
    concurrency = _concurrency(remaining)
    if concurrency is None:
        concurrency = lookup_int(r"(?<![\w-])(?:batch(?:[-_ ]size)?|bs)\s*[=:]?\s*(\d+)", remaining)
    if concurrency is None:  # a bare count in the batch-or-concurrency column
        concurrency = lookup_int(r"^\s*(\d+)\s*$", remaining)
    if concurrency is None:
        concurrency = _concurrency(scenario_text)
    rate = None
    for text in (batch_text, scenario_text):
        for pattern in _RATE_PATTERNS:
            rate = rate if rate is not None else lookup_float(pattern, text)
    return RowLoad(concurrency, max_batch, rate)


#: a load generator that releases its requests without pacing: 'infinite request rate', '--request-rate inf'
_UNPACED: Final = r"infinite request rate|request[-_ ]rate\s*[=:]?\s*inf\b|all requests (?:queued|released)"


def released_at_once(text: str) -> bool:
    """The text describes requests released together without pacing (a burst), not a paced or capped load."""
    return bool(re.search(rf"{_UNPACED}|\bburst\b", text.lower()))


def normalize_scenario(scenario_text: str, concurrency: int | None) -> str:
    """offline | server | interactive | closed_loop | rate | single, from the scenario text and load."""
    s = scenario_text.lower()
    if re.search(r"\bserver\b", s):
        return "server"
    if "interactiv" in s:
        return "interactive"
    if re.search(r"static[-_ ]batch", s):  # 'static batch', 'static-batch latency', 'static_batch'
        return "single" if concurrency == 1 else "closed_loop"
    unpaced = released_at_once(s)
    if concurrency is not None and unpaced:
        # a load generator that sends without pacing behind a cap on requests in flight: a closed loop of its users
        return "single" if concurrency == 1 else "closed_loop"
    if unpaced or re.search(r"^offline\b", s):
        return "offline"
    if re.search(r"asynchronous@|req/s|poisson|constant[- ]rate|request rate", s):
        return "rate"
    if re.search(r"(?<!a)synchronous|single[- ]stream|single request|(?<![\d.])1 concurrent request|one request", s):
        return "single"
    if "production" in s:
        return "server"
    if re.search(r"max concurrency|concurrent (?:users|requests)|closed[- ]loop|guidellm throughput", s):
        return "closed_loop"
    if re.search(r"throughput|saturat|offline", s) and "optimized" not in s:
        return "offline"
    return "single" if concurrency == 1 else "closed_loop"


#: How a load generator's request count is written: '30000 requests', 'all 274560 queries issued at once', '1500
#: prompts', and as the benchmark flags that set it: vLLM and SGLang bench_serving '--num-prompts 1000' (or
#: num_prompts=1000), GenAI-Perf / AIPerf '--request-count 500', 'num_requests: 200'.
_REQUEST_COUNTS = (
    r"(\d[\d,]*)\s*(?:requests|prompts|queries|reqs)\b",
    r"\b(?:num|number[-_ ]of)[-_ ]?(?:prompts|requests)\s*(?:[=:]\s*|\s+)(\d[\d,]*)",
    r"\brequest[-_ ]count\s*(?:[=:]\s*|\s+)(\d[\d,]*)",
)


def parse_request_count(*texts: str) -> int | None:
    """How many requests a run issued (_REQUEST_COUNTS), from the first text that says."""
    for text in texts:
        for pattern in _REQUEST_COUNTS:
            found = lookup_int(pattern, text)
            if found is not None and found > 0:
                return found
    return None


def row_request_rate(raw: Mapping[str, str], scenario: str, load: RowLoad) -> float | None:
    """The row's request rate: the one its load text states, else a server or interactive run's requests/s."""
    if load.request_rate is not None:
        return load.request_rate
    if scenario in ("server", "interactive"):
        return parse_number(raw.get("requests_per_s"))
    return None
