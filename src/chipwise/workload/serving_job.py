"""The ServingJob the serving model and simulator consume: the model, request lengths (drawn, or a trace's), the
load and how many requests; and serving_job, which builds it from a serving scenario (reading its trace file)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from chipwise.errors import ChipwiseError
from chipwise.types import IntArray
from chipwise.workload.bounds import MAX_SIMULATED
from chipwise.workload.lengths import LengthDist, check_context
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import DEFAULT_ROUTER, ServeScenario
from chipwise.workload.traces import Trace, read_trace


@dataclass(frozen=True)
class ServingJob:
    """What to serve: the model, request lengths, the load, how many requests, the prefix-cache hit rate, and the
    router that spreads the requests over the replicas (serve.sim.policies.ROUTERS)."""

    model: ModelSpec
    input: LengthDist
    output: LengthDist
    load: Load
    requests: int
    duration_s: float | None = None
    prefix_hit_rate: float = 0.0
    trace: Trace | None = field(default=None, repr=False)
    router: str = DEFAULT_ROUTER
    #: distinct prompts the load generator cycles through (0: every prompt is new). A load generator that draws its
    #: requests from a fixed set (AIPerf's synthetic dataset holds 100 entries unless given --num-dataset-entries)
    #: repeats each prompt once a cycle, and an engine that keeps a prefix cache serves the repeat from it
    prompt_pool: int = 0

    @property
    def mean_input(self) -> float:
        return float(np.mean(self.trace.input)) if self.trace is not None else self.input.expected

    @property
    def mean_output(self) -> float:
        return float(np.mean(self.trace.output)) if self.trace is not None else self.output.expected

    @property
    def max_input(self) -> int:
        return int(self.trace.input.max()) if self.trace is not None else self.input.maximum

    @property
    def max_output(self) -> int:
        return int(self.trace.output.max()) if self.trace is not None else self.output.maximum

    def input_quantile(self, q: float) -> float:
        """The prompt length below which a share `q` of the requests fall (the trace's, or the distribution's)."""
        return float(np.quantile(self.trace.input, q)) if self.trace is not None else self.input.quantile(q)

    def answer_spread(self, probabilities: np.ndarray) -> tuple[float, ...]:
        """The answer lengths at `probabilities` over their mean (the trace's, or the distribution's); empty where
        every answer is of one length."""
        if self.trace is not None:
            out = self.trace.output
            spread = np.quantile(out, probabilities) / float(np.mean(out)) if out.min() < out.max() else None
        elif self.output.kind != "fixed":
            spread = self.output.quantiles(probabilities) / self.output.expected
        else:
            spread = None
        return () if spread is None else tuple(float(x) for x in spread)

    def lengths(self, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
        """Input and output lengths of n requests (the trace's, cycled, when there is one)."""
        if self.trace is not None:
            idx = np.arange(n) % self.trace.input.size
            return self.trace.input[idx], self.trace.output[idx]
        return self.input.sample(n, rng), self.output.sample(n, rng)


DEFAULT_REQUESTS = 2000


def serving_job(model: ModelSpec, sc: ServeScenario) -> ServingJob:
    """The ServingJob of a scenario (reads its trace file, if any)."""
    trace = read_trace(p) if (p := sc.trace_path()) is not None else None
    if sc.arrival_rate is not None:
        load = Load("rate", rate=float(sc.arrival_rate), burstiness=sc.burstiness)
    elif sc.concurrency is not None:
        load = Load("closed", concurrency=int(sc.concurrency))
    elif sc.offline:
        load = Load("offline")
    else:
        load = Load("trace")
    if sc.requests is not None:
        n = int(sc.requests)
    elif sc.duration_s is not None and load.kind == "rate":
        n = max(1, round(load.rate * float(sc.duration_s)))
    elif trace is not None:
        n = int(trace.input.size)
        if n > MAX_SIMULATED:
            raise ChipwiseError(
                f"trace '{trace.path}' holds {n:,} requests; at most {MAX_SIMULATED:,} are simulated (a million "
                f"takes about a minute). Fix: give requests: {MAX_SIMULATED} to replay its first ones, or split it."
            )
    else:
        n = DEFAULT_REQUESTS
    if trace is not None:
        if n < trace.input.size:
            # the job is its first n requests, those replayed: its offered load, capacity share, price per token and
            # length means are theirs (a 200-request trace whose first 100 came at 100 req/s and the rest 1 s apart,
            # replayed as requests: 100, had read 2.1% of the 93.5 req/s one H100 sustains, at the whole trace's
            # 1.96 req/s, and $7.58 per M output tokens where its 100 req/s were 107% of it, at $0.266)
            trace = Trace(trace.arrival[:n], trace.input[:n], trace.output[:n], trace.path)
        inp = LengthDist("fixed", float(np.mean(trace.input)), 0.0, int(trace.input.min()), int(trace.input.max()))
        out = LengthDist("fixed", float(np.mean(trace.output)), 0.0, int(trace.output.min()), int(trace.output.max()))
    else:
        assert not isinstance(sc.input_tokens, str) and sc.output_tokens is not None
        assert not isinstance(sc.output_tokens, str)
        inp, out = LengthDist.of(sc.input_tokens), LengthDist.of(sc.output_tokens)
    check_context(model, inp, out, trace)
    return ServingJob(
        model=model,
        input=inp,
        output=out,
        load=load,
        requests=n,
        duration_s=float(sc.duration_s) if sc.duration_s is not None else None,
        prefix_hit_rate=float(sc.prefix_hit_rate),
        trace=trace,
        router=sc.plan.router if sc.plan else DEFAULT_ROUTER,
        prompt_pool=sc.prompt_pool,
    )
