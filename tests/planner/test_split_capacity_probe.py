"""A split's capacity, as plan serve's check probes it, is what it delivers with its decode pool full: the window of
its offline probe from the prompt that fills the decode pool to the last prompt encoded. Timed whole, the probe had
counted the decode pool's wait for its first prompts and its final drain as capacity the fleet lacks, and read
gpt-oss-120b's trn2 split of 8 prefill and 6 decode replicas at 105% of it where simulate.capacity reads 77%."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.planner.serving_check import _utilisation
from chipwise.planner.serving_deployment import kv_path
from chipwise.planner.serving_outcome import MAX_CHECK_LOAD
from chipwise.serve.build import setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.simulate import Pool, ServingSetup, load_against_capacity
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob

PROMPT, ANSWER, RATE = 4096, 1024, 20.0


def _split(catalog: Catalog, prefill: int, decode: int) -> tuple[ServingSetup, ServingJob]:
    """gpt-oss-120b on trn2.48xlarge (neuron, bf16): `prefill` TP16 EP16 attention-DP replicas of batch 64 feeding
    `decode` TP64 EP64 attention-DP replicas of batch 512 (plan serve's pools for this load), at 20 req/s of
    4,096-token prompts and 1,024-token answers."""
    model = load_model(catalog, "gpt-oss-120b")
    system = hardware(catalog).system("trn2.48xlarge")
    pre_plan = ReplicaPlan(tp=16, ep=16, attention_dp=True, max_batch=64, max_tokens=4096)
    dec_plan = ReplicaPlan(tp=64, ep=64, attention_dp=True, max_batch=512, max_tokens=4096)
    pre = setup_replica(catalog, model, system, "neuron", pre_plan, float(PROMPT), 1.0, PROMPT + ANSWER)
    dec = setup_replica(catalog, model, system, "neuron", dec_plan, float(PROMPT), float(ANSWER), PROMPT + ANSWER)
    setup = ServingSetup(
        (Pool(pre, prefill, "prefill"), Pool(dec, decode, "decode")),
        transfer=kv_path(catalog, model, pre, prefill, dec, decode),
    )
    job = ServingJob(model, LengthDist.fixed(PROMPT), LengthDist.fixed(ANSWER), Load("rate", rate=RATE), 2000)
    return setup, job


@pytest.mark.parametrize(
    ("prefill", "decode", "sustains"),
    [
        (8, 6, "its decode pool paces it: 0.77 of it, where the whole probe read 1.05"),
        (4, 6, "its prefill pool paces it: 0.87 of it, where the whole probe read 1.23"),
    ],
)
def test_a_splits_probe_reads_what_it_sustains(catalog: Catalog, prefill: int, decode: int, sustains: str) -> None:
    """The check's utilisation of a split is the load over what simulate.capacity finds it sustains (Poisson loads
    past it), within 3%, whichever pool paces it."""
    setup, job = _split(catalog, prefill, decode)
    probed = _utilisation(job, setup)
    sustained = load_against_capacity(job, setup)
    assert probed is not None and sustained is not None, sustains
    assert probed == pytest.approx(sustained["utilisation"], rel=0.03), sustains


def test_the_split_plan_serve_chose_passes_under_the_check_load(catalog: Catalog) -> None:
    """8 prefill and 6 decode replicas (128 chips) take under MAX_CHECK_LOAD of what they sustain, so the check
    keeps them (it had grown the decode pool to 8, 160 chips); 5 decode replicas do not pass."""
    setup, job = _split(catalog, 8, 6)
    assert (_utilisation(job, setup) or 0.0) < MAX_CHECK_LOAD
    fewer, _ = _split(catalog, 8, 5)
    assert (_utilisation(job, fewer) or 0.0) > MAX_CHECK_LOAD
