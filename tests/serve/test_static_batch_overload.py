"""A static-batch engine (Neuron's compiled graphs) past its capacity: inter-token latency against the decode step.

The `neuron` engine runs every admitted prompt's context encoding before the next token-generation step (it does
not mix prompts into decode iterations and does not run the decode graph first; docs/serving.md section 2), and its
token-generation graph runs all compiled slots whatever their occupancy. So:
- no request's TPOT is below one decode step of the compiled batch (at the bucket of its context);
- the steady iteration `chipwise predict` reports for such an engine is that step plus its share of the prompt
  iterations that stall it; a request's TPOT counts only the stalls after its first token.
- Requests of one output length arriving faster than the replica encodes prompts fill the batch in one burst of
  encodings, then decode together and finish in the same step: the batch runs in waves, and the k-th request of a
  wave of N waits for the N - k encodings after its own before its second token. Its TPOT is then
  step + (N - k) P / (O - 1), between one step and step + (N - 1) P / (O - 1), where just below capacity (prompts
  trickling in as slots free) every request sees about N encodings while it decodes. This is why a fixed-length
  run's TPOT median falls from ~1.1x to ~0.65x the steady iteration once arrivals outpace the prompt encoder (Llama
  3.1 70B fp8 on 2 Trn2, 274 slots, 1,024/256 tokens: 410 ms at 2.6 req/s, 265 ms at 5 req/s, a 103 ms decode
  step and 293 ms prompt iterations); the stalls it no longer counts come before the first token, in TTFT.
- With output lengths that vary, completions spread out and each frees one slot, so past capacity every request
  sees about N encodings while it decodes and TPOT levels off rather than falling as the rate rises.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.policies import bucket
from chipwise.serve.sim.run import Deployment, SimOutput, simulate
from chipwise.workload.model import ModelSpec

I, O, SLOTS = 512, 64, 16  # noqa: E741 - prompt and output tokens, compiled batch


@pytest.fixture(scope="module")
def trn2_neuron(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> ReplicaSetup:
    """Llama 3.1 8B on Trn2 under the static-batch `neuron` engine, one prompt a context-encoding iteration (the
    token budget `chipwise predict` gives an unchunked engine: one longest prompt)."""
    plan = ReplicaPlan(tp=8, max_batch=SLOTS, max_tokens=I)
    setup = setup_replica(catalog, llama8b, hw.system("trn2"), "neuron", plan, float(I), float(O), I + 96)
    pol = setup.policy()
    assert pol.static_batch and not pol.mixed_batching and not pol.decode_first and pol.max_tokens == I
    return setup


def _step(setup: ReplicaSetup, live: int, context: int) -> float:
    """One token-generation step with `live` of the compiled slots generating, each over `context` tokens: every
    slot runs, over the bucket of the context; a host sampler samples the live rows only."""
    st = setup.steps
    pol = setup.policy()
    padded = bucket(context, largest=pol.largest_bucket)
    return (
        st.decode_base(pol.max_batch)
        - st.host_sample * (pol.max_batch - live)
        + st.a_decode(pol.max_batch) * pol.max_batch * padded
    )


def _run(setup: ReplicaSetup, rate: float, outputs: np.ndarray, seed: int = 0) -> SimOutput:
    n = outputs.size
    arrivals = np.cumsum(np.random.default_rng(seed).exponential(1.0 / rate, size=n))
    ones = np.ones(n, dtype=np.int64)
    return simulate(Deployment((setup.pool(1),)), ones * I, outputs.astype(np.int64), ones * 0, arrivals)


def _tpot(out: SimOutput) -> np.ndarray:
    r = out.requests
    return (r["finish"] - r["first"]) / (r["output"] - 1)


def _prompt_iteration(setup: ReplicaSetup) -> float:
    """One prompt's context-encoding iteration (its bucket, the graph's fixed cost)."""
    return setup.steps.prompt_alone(I, I, True, setup.policy().largest_bucket)


def _capacity(setup: ReplicaSetup, out_mean: float) -> float:
    """Requests/s of a full batch: each request one prompt iteration and (O - 1) / slots of the decode steps."""
    return 1.0 / (_prompt_iteration(setup) + (out_mean - 1) / SLOTS * _step(setup, SLOTS, I + int(out_mean)))


def test_no_request_decodes_faster_than_one_step_of_the_compiled_batch(trn2_neuron: ReplicaSetup) -> None:
    """Below, at and past capacity, every request's TPOT is at least one decode step of every compiled slot (the
    least of them: one live row to sample, the shortest context bucket it reaches)."""
    least = _step(trn2_neuron, 1, I + 1)
    cap = _capacity(trn2_neuron, O)
    for load in (0.3, 0.9, 1.5, 4.0):
        tpot = _tpot(_run(trn2_neuron, load * cap, np.full(600, O)))
        assert np.isfinite(tpot).all()
        assert tpot.min() >= least * (1 - 1e-9), load


def test_fixed_lengths_past_the_prompt_encoder_run_in_waves(trn2_neuron: ReplicaSetup) -> None:
    """Arrivals four times faster than prompts are encoded: the batch fills in one burst of SLOTS encodings and
    decodes as one. Each request waits for the encodings after its own in its wave: TPOT = step + j P / (O - 1),
    j = 0 .. SLOTS - 1, in equal numbers."""
    prompt = _prompt_iteration(trn2_neuron)
    step = _step(trn2_neuron, SLOTS, I + 1)
    waves = 8
    out = _run(trn2_neuron, 4.0 / prompt, np.full(waves * SLOTS, O))
    r = out.requests
    assert r["first"] - r["started"] == pytest.approx(np.full(waves * SLOTS, prompt), rel=1e-9)
    stalls = (_tpot(out) - step) * (O - 1) / prompt  # prompt iterations between a request's first and last token
    assert stalls == pytest.approx(np.round(stalls), abs=1e-6)
    counts = np.bincount(np.round(stalls).astype(int))
    assert counts.tolist() == [waves] * SLOTS
    # the waves' decode runs: the batch full, every wave finishing in one step
    assert np.unique(np.round(r["finish"], 9)).size == waves


def test_tpot_levels_off_past_capacity_when_lengths_vary(trn2_neuron: ReplicaSetup) -> None:
    """Output lengths of 32-96 tokens: completions spread, each frees one slot and lets one prompt in, so past
    capacity a request decodes beside about SLOTS encodings whatever the rate, and TPOT does not fall as the rate
    rises (within 3%)."""
    outputs = np.random.default_rng(7).integers(32, 97, size=1500)
    cap = _capacity(trn2_neuron, float(outputs.mean()))
    step = _step(trn2_neuron, SLOTS, I + 1)
    prompt = _prompt_iteration(trn2_neuron)
    medians = [float(np.median(_tpot(_run(trn2_neuron, load * cap, outputs)))) for load in (1.2, 2.0, 4.0, 8.0)]
    assert all(b >= 0.97 * a for a, b in pairwise(medians)), medians
    # about SLOTS prompt stalls spread over a mean request's tokens
    assert medians[-1] == pytest.approx(step + SLOTS * prompt / (outputs.mean() - 1), rel=0.25)


def test_one_step_of_the_compiled_batch_whatever_its_occupancy(trn2_neuron: ReplicaSetup) -> None:
    """A lone request and a full batch decode at the same step (every slot runs), so a static engine's TPOT does not
    shrink with a batch that empties: only its context bucket and a host sampler's live rows move it."""
    pool = trn2_neuron.pool(1)
    ones = np.ones(1, dtype=np.int64)
    alone = simulate(Deployment((pool,)), ones * I, ones * O, ones * 0, np.zeros(1)).requests
    full = np.full(SLOTS, 1, dtype=np.int64)
    r = simulate(Deployment((pool,)), full * I, full * O, full * 0, np.zeros(SLOTS)).requests
    # the full batch's requests decode together after the last encoding: O - 1 steps from then
    decode_full = (r["finish"].max() - r["first"].max()) / (O - 1)
    decode_alone = (alone["finish"][0] - alone["first"][0]) / (O - 1)
    assert decode_full == pytest.approx(_step(trn2_neuron, SLOTS, I + 1), rel=1e-9)
    assert decode_alone == pytest.approx(_step(trn2_neuron, 1, I + 1), rel=1e-9)
    assert decode_alone == pytest.approx(decode_full + trn2_neuron.steps.host_sample * (1 - SLOTS), rel=1e-9)


@pytest.mark.parametrize(("users", "slots"), [(1, 1), (16, 16)])
def test_a_searched_compiled_batch_seats_a_closed_loops_users(users: int, slots: int) -> None:
    """Every decode step of a compiled batch runs all its slots: the search had given one user of Llama-3.1-8B on a
    trn2 the 386 slots its KV cache holds (TPOT 71 ms, where one slot's step is 15 ms), preferring the fleet its load
    keeps least busy; a closed loop's users never fill spare slots."""
    import chipwise.api as cw

    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "trn2", "precision": "bf16",
                "input_tokens": 1000, "output_tokens": 500, "concurrency": users, "requests": 40}  # fmt: skip
    result = cw.predict(scenario)
    assert result["plan"]["max_batch"] == slots
    assert result["tpot_s"]["p50"] < 0.03


@pytest.mark.parametrize(
    ("load", "slo", "shape"),
    [
        ({"arrival_rate": 2}, {"ttft_p99_s": 2}, (4, 16, 1)),  # no TPOT target: by speed, not spare slots
        ({"arrival_rate": 2}, {"ttft_p99_s": 2, "tpot_p99_s": 0.1}, (2, 64, 2)),  # a TPOT target: the headroom kept
        ({"concurrency": 16}, {"tpot_p99_s": 0.1}, (4, 16, 1)),  # a closed loop: its users' seats
    ],
)
def test_spare_compiled_slots_rank_first_only_under_a_tpot_target(
    load: dict[str, float], slo: dict[str, float], shape: tuple[int, int, int]
) -> None:
    """An open load with only a TTFT target had taken TP2 b195 x2 on trn2 (TPOT p99 81 ms) for the headroom, where TP4
    b16 runs 20 ms steps; under a TPOT target the least busy fleet still ranks first (plan serve's check gives the
    headroom back), and a closed loop's spare seats stay empty whatever its targets."""
    import chipwise.api as cw

    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "trn2", "precision": "bf16",
                "input_tokens": 1000, "output_tokens": 200, "requests": 300, **load, "slo": slo}  # fmt: skip
    plan = cw.predict(scenario)["plan"]
    assert (plan["tp"], plan["max_batch"], plan["replicas"]) == shape
