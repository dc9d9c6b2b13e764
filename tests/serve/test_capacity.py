"""A deployment's capacity, and how an open-loop load compares with it (serve.simulate)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.iteration import prefill_pairs
from chipwise.serve.simulate import Pool, ServingSetup, capacity, load_against_capacity, run_job
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving import LengthDist, Load, ServingJob

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
    # closed loops and offline runs take what the deployment gives: nothing to compare
    assert load_against_capacity(_job(llama8b, Load("closed", concurrency=8)), setup) is None
    assert load_against_capacity(_job(llama8b, Load("offline")), setup) is None
