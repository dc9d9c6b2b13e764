"""The simulated requests: lengths in, timestamps and counters out. Plain lists while simulating (indexing a
list is several times faster than a NumPy array from Python), arrays when summarising."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

NAN = math.nan


class RequestTable:
    """Per request: input/output tokens, prefix-cached tokens, arrival, start (the first iteration that encodes its
    prompt), first-token and finish times (s), the replica that served it, how often it was preempted, whether it
    was dropped; in a split, when its prefill replica encoded its prompt (`prefilled`) and the seconds its KV cache
    took from there to its decode replica (`transfer`: the link's time and latency, booked when the decode replica
    admits it), NaN elsewhere."""

    __slots__ = (
        "arrival",
        "cached",
        "dropped",
        "finish",
        "first",
        "generated",
        "input",
        "n",
        "output",
        "preempted",
        "prefilled",
        "replica",
        "started",
        "transfer",
    )

    def __init__(self, inputs: NDArray[np.int64], outputs: NDArray[np.int64], cached: NDArray[np.int64]) -> None:
        n = int(inputs.size)
        self.n = n
        self.input: list[int] = inputs.tolist()
        self.output: list[int] = outputs.tolist()
        self.cached: list[int] = cached.tolist()
        self.arrival: list[float] = [NAN] * n
        self.started: list[float] = [NAN] * n
        self.first: list[float] = [NAN] * n
        self.finish: list[float] = [NAN] * n
        self.prefilled: list[float] = [NAN] * n
        self.transfer: list[float] = [NAN] * n
        self.replica: list[int] = [-1] * n
        self.preempted: list[int] = [0] * n
        self.generated: list[int] = [0] * n
        self.dropped: list[bool] = [False] * n

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        return {
            "arrival": np.asarray(self.arrival, dtype=np.float64),
            "started": np.asarray(self.started, dtype=np.float64),
            "first": np.asarray(self.first, dtype=np.float64),
            "finish": np.asarray(self.finish, dtype=np.float64),
            "prefilled": np.asarray(self.prefilled, dtype=np.float64),
            "transfer": np.asarray(self.transfer, dtype=np.float64),
            "input": np.asarray(self.input, dtype=np.float64),
            "output": np.asarray(self.output, dtype=np.float64),
            "preempted": np.asarray(self.preempted, dtype=np.float64),
            "dropped": np.asarray(self.dropped, dtype=np.float64),
            "replica": np.asarray(self.replica, dtype=np.float64),
        }
