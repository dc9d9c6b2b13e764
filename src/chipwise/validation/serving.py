"""Predict published serving measurements: each ground-truth row becomes a serving job (model, lengths, load) and
a deployment (replica plan x replicas on the row's chip), which the simulator runs; the predicted output
tokens/s per chip, TTFT and TPOT are compared with the measured ones, statistic for statistic.

Scenarios as the sources define them:
- offline (MLPerf Offline, trtllm-bench max throughput, "infinite request rate"): every request at t = 0;
- server / interactive (MLPerf Server): Poisson arrivals at the measured request rate; TTFT and TPOT are means
  (or the percentiles the row gives);
- rate: Poisson arrivals at the stated rate; closed_loop: a fixed number of concurrent users (or a static batch);
- single: one request at a time.
Assumptions a row forces are written into its notes: an unstated input length is taken equal to the mean output
length (MLPerf rows state only the output); an unstated plan is searched for the best throughput per chip.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.serve.build import setup_replica
from chipwise.serve.engine import ENGINES, EngineProfile, engine_profile, token_budget
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import WEIGHT_PRECISIONS, default_kv_precision
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.validation.groundtruth import (
    SKIP_DISAGGREGATED,
    InferenceRow,
    kv_precision_stated,
    parse_positive,
    read_inference,
)
from chipwise.validation.report import RowResult, summarise
from chipwise.workload.model import ModelSpec, from_hf_config
from chipwise.workload.presets import load_model, preset_id
from chipwise.workload.serving import LengthDist, Load, ServingJob

SKIP_SPECULATIVE = "speculative decoding (not modelled)"
SKIP_NO_LENGTHS = "input and output lengths not stated"

#: OPT shapes (Zhang et al. 2022, "OPT: Open Pre-trained Transformer Language Models", Table 1; vocabulary 50272,
#: 2048 learned positions, as in the Hugging Face facebook/opt-* configs).
OPT_SHAPES: Mapping[str, tuple[int, int, int, int]] = {
    "opt-13b": (40, 5120, 40, 20480),
    "opt-30b": (48, 7168, 56, 28672),
    "opt-66b": (64, 9216, 72, 36864),
}
#: Models served in the data whose architecture equals a preset's (what differs does not change the cost).
ARCH_EQUIVALENT: Mapping[str, tuple[str, str]] = {
    "codellama-13b": ("llama-2-13b", "CodeLlama-13B has Llama 2 13B's shape (vocabulary 32016 vs 32000)"),
    "llama-3-70b": ("llama-3.1-70b", "Llama 3 70B has Llama 3.1 70B's shape (8k context)"),
    "llama3-70b": ("llama-3.1-70b", "Llama 3 70B has Llama 3.1 70B's shape (8k context)"),
    "mistral-7b-instruct-v0.2": ("mistral-7b", "Mistral 7B v0.2 priced with the v0.1 preset (v0.2 drops the window)"),
}
_SUFFIXES = ("-instruct-2507", "-instruct", "-2507", "-hf", "-chat", "-0324", "-0528")

#: Requests simulated per row, by load (enough for a steady window, few enough to validate quickly).
MAX_REQUESTS = 30000
MIN_REQUESTS = 240


def _candidates(name: str) -> list[str]:
    base = name.strip()
    out = [base, base.split(" (")[0].strip(), base.split("/")[0].strip(), base.replace(" ", "-")]
    more: list[str] = []
    for c in out:
        low = c.lower()
        changed = True
        while changed:
            changed = False
            for suf in _SUFFIXES:
                if low.endswith(suf):
                    low = low[: -len(suf)]
                    more.append(low)
                    changed = True
    return list(dict.fromkeys(out + more))


def model_for(catalog: Catalog, name: str) -> tuple[ModelSpec, str]:
    """The ModelSpec of a row's model name: a preset, an architecture-equivalent preset, or a published shape."""
    for cand in _candidates(name):
        pid = preset_id(catalog, cand)
        if pid is not None:
            return load_model(catalog, pid), f"preset {pid}"
        key = cand.lower()
        if key in ARCH_EQUIVALENT:
            pid, why = ARCH_EQUIVALENT[key]
            return load_model(catalog, pid), why
        if key in OPT_SHAPES:
            layers, hidden, heads, ffn = OPT_SHAPES[key]
            cfg = {
                "model_type": "opt",
                "num_hidden_layers": layers,
                "hidden_size": hidden,
                "num_attention_heads": heads,
                "ffn_dim": ffn,
                "vocab_size": 50272,
                "max_position_embeddings": 2048,
            }
            return from_hf_config(cfg, key, source="OPT paper Table 1"), f"{key} shape from the OPT paper"
    raise ChipwiseError(f"model '{name}' has no preset and no published shape in chipwise")


@dataclass(frozen=True)
class Case:
    """A row made predictable: the job, the deployment, what to compare, and the assumptions made."""

    row: InferenceRow
    job: ServingJob
    setup: ServingSetup
    plan_source: str
    notes: tuple[str, ...]
    basis: str = "steady"

    @property
    def group(self) -> tuple[str, str]:
        """(engine, chip family): the level at which serving factors are calibrated."""
        s = self.setup.pools[0].setup
        return s.engine.engine, s.system.chip.family

    def with_profile(self, catalog: Catalog, profile: EngineProfile) -> Case:
        """The same case priced with another engine profile (calibration)."""
        pool = self.setup.pools[0]
        s = pool.setup
        rebuilt = setup_replica(
            catalog,
            self.job.model,
            s.system,
            s.engine.engine,
            s.plan,
            s.typical_prompt,
            s.typical_context - s.typical_prompt,
            longest_request=1,
            profile=profile,
        )
        return replace(self, setup=ServingSetup((Pool(rebuilt, pool.replicas),)))


def _engine(row: InferenceRow) -> str:
    """The engine family: vLLM serving on a Neuron back end (optimum-neuron, the vllm-neuron plugin) is
    'vllm-neuron', native Neuron runtimes (transformers-neuronx, NxD Inference) are 'neuron'."""
    if row.engine == "neuron" and "vllm" in row.raw.get("serving_engine", "").lower():
        return "vllm-neuron"
    return row.engine if row.engine in ENGINES else "default"


def _precision(p: str) -> str:
    return p if p in WEIGHT_PRECISIONS else "bf16"


def _lengths(row: InferenceRow, notes: list[str]) -> tuple[float, float]:
    inp, out = row.input_len, row.output_len
    if inp is None and out is None:
        raise ChipwiseError(SKIP_NO_LENGTHS)
    if inp is None:
        assert out is not None
        notes.append(f"input length not stated; taken equal to the mean output length ({out:.0f})")
        inp = out
    if out is None:
        notes.append(f"output length not stated; taken equal to the input length ({inp:.0f})")
        out = inp
    return float(inp), float(out)


def _load(row: InferenceRow, max_batch: int, notes: list[str]) -> Load:
    latencies = any(m.metric in ("ttft_s", "tpot_s") for m in row.measured)
    if row.scenario == "offline" and latencies:
        notes.append("max-throughput run with latencies: a closed loop that keeps every batch slot busy")
        return Load("closed", concurrency=max_batch)
    if row.scenario in ("server", "interactive", "rate"):
        if row.request_rate:
            # the rate the run achieved when it fell short of the one aimed at: the load the latencies were taken at
            achieved = parse_positive(row.raw.get("requests_per_s"))
            if achieved is not None and achieved < row.request_rate:
                notes.append(
                    f"achieved {achieved:g} of the {row.request_rate:g} req/s aimed at; the achieved rate is used"
                )
                return Load("rate", rate=achieved)
            return Load("rate", rate=float(row.request_rate))
        notes.append("request rate not stated; run as a closed loop of max_batch users")
        return Load("closed", concurrency=max_batch)
    if row.scenario == "single":
        return Load("closed", concurrency=1)
    if row.scenario == "closed_loop":
        users = row.concurrency or max_batch
        if row.concurrency is None:
            notes.append(f"concurrency not stated; {users} users (the batch limit)")
        elif users > max_batch:
            # sweeps that saturate a server with more users than it has batch slots (guidellm's throughput
            # mode) report TTFTs of the served requests, not of a queue of the surplus users
            notes.append(f"{users} users for {max_batch} batch slots: the load generator holds the surplus")
            users = max_batch
        return Load("closed", concurrency=users)
    return Load("offline")


def _requests(load: Load, concurrency: int, stated: int | None, out_len: float) -> tuple[int, str]:
    """Requests to simulate and the throughput basis: the run's own request count when it is within a few batches
    (the benchmark's fill and drain then matter, as in its own timing), else several batches' worth, measured
    over the steady window; a few minutes of arrivals for open loops."""
    if load.kind == "closed":
        users = load.concurrency
        n = 4 * users if users > 1 else 12
    elif load.kind == "rate":
        n = int(load.rate * (240.0 + 0.2 * out_len))  # four minutes plus a few request lifetimes
    else:
        n = 6 * concurrency
    n = min(max(n, MIN_REQUESTS if load.kind != "closed" or load.concurrency > 1 else 12), MAX_REQUESTS)
    if stated is not None and stated <= n:
        return stated, "run"
    return n, "steady"


def prepare(catalog: Catalog, row: InferenceRow) -> Case:
    """Turn a row into a Case; raise ChipwiseError with the reason when it cannot be predicted."""
    if row.skip_reason == SKIP_DISAGGREGATED:
        raise ChipwiseError(
            "prefill/decode-disaggregated deployment whose pool sizes and per-pool parallelism the row does not "
            "state (disaggregation itself is simulated: plan.disaggregated)"
        )
    if row.skip_reason:
        raise ChipwiseError(row.skip_reason)
    if row.speculative:
        raise ChipwiseError(SKIP_SPECULATIVE)
    if row.num_chips is None:
        raise ChipwiseError("no chip count")
    notes: list[str] = []
    model, model_note = model_for(catalog, row.model_name)
    notes.append(model_note)
    inp, out = _lengths(row, notes)
    system = hardware(catalog).system(row.chip)
    engine = _engine(row)
    eng = engine_profile(catalog, engine, system.chip.family)
    cores = system.chip.cores_per_chip
    ranks = row.num_chips * cores
    weight = _precision(row.weight_precision)
    kv = row.kv_precision if row.kv_precision in ("bf16", "fp16", "fp8", "fp4", "int8") else "bf16"
    if not kv_precision_stated(row.raw.get("precision", "")):
        kv = default_kv_precision(weight, eng.quantised_kv) if weight in ("fp8", "fp4") else kv
    if row.plan_given:
        tp, pp, ep = row.tp, row.pp, row.ep
        replicas = row.dp if row.dp > 1 else max(1, ranks // (tp * pp))
        plan_source = "given"
    else:
        tp, pp, ep, replicas = _fitting_plan(catalog, model, system, engine, weight, kv, ranks, inp, out)
        plan_source = "searched"
        notes.append(f"plan not stated; smallest fitting TP{tp} x {replicas} replicas")
    if model.moe is not None and ep > tp:
        ep = tp
    if model.moe is not None and ep > 1 and model.moe.experts % ep:
        ep = 1
    adp = row.attention_dp and model.moe is not None and ep == tp
    max_batch = row.max_batch or (row.concurrency if row.scenario in ("closed_loop", "single") else None)
    if adp and row.max_batch and "gpu_batch_size" in row.raw.get("batch_or_concurrency", ""):
        max_batch = row.max_batch * tp  # a per-GPU batch: every attention-DP rank runs its own
        notes.append(f"gpu_batch_size is per attention-DP rank: replica batch {max_batch}")
    if row.scenario == "single":
        max_batch = max_batch or 1
    max_batch = int(max_batch or eng.max_batch)
    if row.concurrency and row.scenario == "closed_loop" and row.max_batch is None:
        max_batch = max(1, min(max_batch, math.ceil(row.concurrency / replicas)))
    plan = ReplicaPlan(
        tp=tp,
        pp=pp,
        ep=ep,
        attention_dp=adp,
        max_batch=max_batch,
        max_tokens=token_budget(eng, inp + 1),
        chunked_prefill=eng.chunked_prefill,
        weight_precision=weight,
        kv_precision=kv,
    )
    setup = setup_replica(catalog, model, system, engine, plan, inp, out, longest_request=int(inp + out))
    load = _load(row, max_batch * replicas, notes)
    per_replica = max(1, min(max_batch, int(setup.kv_tokens // max(1.0, inp + out))))
    n, basis = _requests(load, per_replica * replicas, row.num_requests, out)
    job = ServingJob(
        model=model,
        input=LengthDist.fixed(round(inp)),
        output=LengthDist.fixed(max(1, round(out))),
        load=load,
        requests=n,
    )
    return Case(row, job, ServingSetup((Pool(setup, replicas),)), plan_source, tuple(notes), basis)


def _fitting_plan(
    catalog: Catalog,
    model: ModelSpec,
    system: Any,
    engine: str,
    weight: str,
    kv: str,
    ranks: int,
    inp: float,
    out: float,
) -> tuple[int, int, int, int]:
    """The smallest power-of-two TP that holds the weights and a working KV cache (replicas fill the chips)."""
    from chipwise.serve.search import smallest_fitting_tp

    tp = smallest_fitting_tp(catalog, model, system, engine, weight, kv, ranks, inp, out)
    ep = tp if model.moe is not None else 1
    return tp, 1, ep, max(1, ranks // tp)


_STAT_KEY = {"p50": "p50", "p90": "p90", "p99": "p99", "mean": "mean", "value": "mean"}


#: An open-loop run is saturated when it delivers less than this share of the offered output tokens/s.
SATURATED = 0.95
#: ... and its latencies are then taken at this share of the capacity it did deliver.
EDGE = 0.95


def predict_case(case: Case, seed: int = 0) -> list[RowResult]:
    """Simulate a case and compare each measured metric with its prediction.

    A published open-loop run (MLPerf Server, a fixed request rate) was sustainable: the load generator's rate
    was at most the system's capacity. When the predicted capacity is below that rate, the simulated queue
    grows without bound and its latencies depend only on how long one simulates; the prediction then reports
    the capacity as throughput and the latencies at the edge of it (EDGE x capacity), and says so in the notes.
    """
    row = case.row
    summary, _ = run_job(case.job, case.setup, seed=seed, basis=case.basis)
    latencies = summary
    notes = list(case.notes)
    load = case.job.load
    if load.kind == "rate":
        offered = load.rate * case.job.mean_output
        delivered = float(summary["output_tokens_per_s"])
        if delivered < SATURATED * offered:
            edge = EDGE * delivered / case.job.mean_output
            latencies, _ = run_job(replace(case.job, load=replace(load, rate=edge)), case.setup, seed=seed)
            notes.append(
                f"predicted capacity {delivered / case.job.mean_output:.3g} req/s is below the measured "
                f"{load.rate:.3g} req/s: latencies at {edge:.3g} req/s"
            )
    results: list[RowResult] = []
    chips = row.num_chips or case.setup.chips
    for m in row.measured:
        if m.metric == "output_tokens_per_s_per_chip":
            predicted = float(summary["output_tokens_per_s"]) / float(chips)
        else:
            key = "ttft_s" if m.metric == "ttft_s" else "tpot_s"
            predicted = float(latencies[key][_STAT_KEY.get(m.stat, "mean")])
        if not math.isfinite(predicted) or predicted <= 0:
            continue
        results.append(
            RowResult(
                id=row.id,
                chip=row.chip,
                metric=m.metric,
                measured=m.value,
                predicted=predicted,
                plan_source=case.plan_source,
                source_family=row.source_family,
                notes="; ".join((*notes, row.notes)).strip("; "),
            )
        )
    return results


def predict_row(catalog: Catalog, row: InferenceRow) -> list[RowResult]:
    """Predict every measured metric of one row (ChipwiseError says why a row cannot be predicted)."""
    return predict_case(prepare(catalog, row))


def validate_serving(catalog: Catalog, path: Path) -> dict[str, Any]:
    """`chipwise validate` on a serving ground-truth CSV: one entry per measured metric of each row."""
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    known = frozenset(catalog.chips)
    for row in read_inference(path, known_chips=known):
        try:
            rows = predict_row(catalog, row)
        except ChipwiseError as exc:
            skipped.append((row.id, _one_line(str(exc))))
            continue
        if not rows:
            skipped.append((row.id, "no metric could be predicted"))
            continue
        results.extend(rows)
    return summarise("serve", results, skipped)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
