"""A deployment's capacity, and how an open-loop load compares with it (serve.simulate)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.iteration import prefill_pairs
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.run import Deployment, simulate
from chipwise.serve.simulate import Pool, ServingSetup, capacity, load_against_capacity, phase_ramp, run_job
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

I, O = 512, 128  # noqa: E741 - prompt and output tokens, as in test_sim


def _job(model: ModelSpec, load: Load, n: int = 2000) -> ServingJob:
    return ServingJob(model=model, input=LengthDist.fixed(I), output=LengthDist.fixed(O), load=load, requests=n)


def test_capacity_of_one_batch_slot_by_hand(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """With one batch slot a replica serves one request at a time: a prefill, then O - 1 decode steps."""
    one = replace(h100_setup, plan=replace(h100_setup.plan, max_batch=1))
    st_ = one.steps
    k = O - 1
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    decode = k * st_.decode_base(1) + st_.a * (k * (I + 1) + k * (k - 1) / 2)
    by_hand = O / (prefill + decode)
    got = capacity(_job(llama8b, Load("rate", rate=1.0), n=300), ServingSetup((Pool(one, 1),)))
    assert got == pytest.approx(by_hand, rel=0.02)


def test_load_against_capacity(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    setup = ServingSetup((Pool(h100_setup, 2),))
    cap = capacity(_job(llama8b, Load("rate", rate=1.0)), setup) / O
    light = load_against_capacity(_job(llama8b, Load("rate", rate=0.5 * cap)), setup)
    assert light is not None
    assert light["capacity_requests_per_s"] == pytest.approx(cap)
    assert light["utilisation"] == pytest.approx(0.5)
    # a load past the capacity is served at about the capacity, and only it is reported over 100%
    over = _job(llama8b, Load("rate", rate=1.3 * cap))
    summary, _ = run_job(over, setup)
    assert summary["output_tokens_per_s"] == pytest.approx(cap * O, rel=0.05)
    report = load_against_capacity(over, setup)
    assert report is not None and report["utilisation"] > 1.0
    # what a deployment sustains does not depend on how bursty the load is (a burstiness of 100 read a quarter)
    bursty = load_against_capacity(_job(llama8b, Load("rate", rate=0.5 * cap, burstiness=100.0)), setup)
    assert bursty is not None and bursty["capacity_requests_per_s"] == pytest.approx(cap)
    # closed loops and offline runs take what the deployment gives: nothing to compare
    assert load_against_capacity(_job(llama8b, Load("closed", concurrency=8)), setup) is None
    assert load_against_capacity(_job(llama8b, Load("offline")), setup) is None


def test_a_lone_prompt_is_what_the_simulator_charges(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """StepModel.prompt_alone is a lone request's TTFT in the simulator: chunked on a GPU engine, whole and padded
    to its bucket on a compiled-shape Neuron engine (a power of two, at most the compiled sequence length: 5,016
    tokens here, not 8,192)."""
    cases = [
        (
            "h100-sxm",
            "trtllm",
            ReplicaPlan(tp=1, max_batch=8, max_tokens=2048, weight_precision="fp8", kv_precision="fp8"),
        ),
        ("trn1", "neuron", ReplicaPlan(tp=8, max_batch=4, max_tokens=131072, chunked_prefill=False)),
    ]
    for chip, engine, plan in cases:
        setup = setup_replica(catalog, llama8b, hw.system(chip), engine, plan, 5000.0, 16.0)
        ones = np.ones(1, dtype=np.int64)
        out = simulate(Deployment((setup.pool(1),)), ones * 5000, ones * 16, ones * 0, np.zeros(1))
        ttft = float(out.requests["first"][0] - out.requests["arrival"][0])
        chunk = plan.max_tokens if plan.chunked_prefill else 5000
        largest = setup.policy().largest_bucket
        assert largest == (5016 if engine == "neuron" else 0)
        alone = setup.steps.prompt_alone(5000, chunk, setup.engine.static_batch, largest)
        assert alone == pytest.approx(ttft, rel=1e-9), chip
        if engine == "neuron":
            assert setup.steps.prompt_alone(5000, chunk, True) > 1.3 * alone  # padded to 8,192


def test_a_closed_loop_is_measured_in_its_steady_state(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """64 users started together stay in step with requests of one length: every wave's prompts arrive at once,
    which the plain summary's TTFT p99 carries. Steady (predict, plan serve): the users start one after another
    over about one request's latency (phase_ramp) and the ramp and the last 64 requests are left out: the p99 is
    then a prompt that met one other (3.8 s against 145 ms), and at least 1,000 - 3 x 64 requests are measured."""
    setup = ServingSetup((Pool(h100_setup, 1),))
    job = replace(_job(llama8b, Load("closed", concurrency=64), n=1000), input=LengthDist.fixed(4096))
    burst, _ = run_job(job, setup)
    steady, _ = run_job(job, setup, steady_latencies=True)
    ramp = phase_ramp(setup, job)
    assert burst["ttft_s"]["p99"] > 10.0 * steady["ttft_s"]["p99"]
    assert steady["ttft_s"]["p99"] <= 2.0 * steady["ttft_s"]["p50"]
    assert 1000 - 3 * 64 <= steady["latency_requests"] < burst["latency_requests"] == 1000
    assert steady["window_s"][0] == pytest.approx(ramp) and burst["window_s"][0] == 0.0
    # about one request's latency: the users' first requests end around the ramp's end
    assert steady["e2e_s"]["p50"] == pytest.approx(ramp, rel=0.2)


def test_a_large_pool_is_measured_on_a_slice(
    h100_setup: ReplicaSetup, llama8b: ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saturated replicas of one pool deliver alike: 24 replicas measured on 8 and scaled read what the whole pool
    does (a 600-chip fleet spent 47 s measuring itself whole)."""
    import chipwise.serve.simulate as sim

    setup = ServingSetup((Pool(h100_setup, 24),))
    job = _job(llama8b, Load("rate", rate=1.0), n=600)
    sliced = capacity(job, setup)
    monkeypatch.setattr(sim, "CAPACITY_REPLICAS", 64)
    whole = capacity(job, setup)
    assert sliced == pytest.approx(whole, rel=0.03)
    assert sliced == pytest.approx(3 * capacity(job, ServingSetup((Pool(h100_setup, 8),))), rel=1e-9)


def test_a_large_split_is_measured_on_a_slice_of_both_pools(
    h100_setup: ReplicaSetup, llama8b: ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A split of 12 prefill and 20 decode replicas is measured on 8 and 13 (20 x 8 / 12 = 13.3, rounded) and
    scaled by the lesser ratio, 12 / 8 = 1.5 (not 20 / 13 = 1.54): what the whole split delivers, never more (a
    split of half a million B200s had measured 130,000 requests a run on a 97-replica slice)."""
    import chipwise.serve.simulate as sim

    def split(pre: int, dec: int) -> ServingSetup:
        return ServingSetup((Pool(h100_setup, pre, "prefill"), Pool(h100_setup, dec, "decode")))

    job = _job(llama8b, Load("rate", rate=1.0), n=600)
    sliced = capacity(job, split(12, 20))
    assert sliced == pytest.approx(1.5 * capacity(job, split(8, 13)), rel=1e-9)
    monkeypatch.setattr(sim, "CAPACITY_REPLICAS", 64)
    whole = capacity(job, split(12, 20))
    assert whole * 0.95 <= sliced <= whole * 1.005
