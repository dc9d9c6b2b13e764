"""Parallel plans as columns of arrays (one element per candidate plan), their validation and enumeration.

A plan splits `ranks` = chips x cores_per_chip devices as tp x cp x dp x pp (Megatron order, TP innermost);
expert parallelism (ep) for MoE layers re-partitions the tp x cp x dp ranks of a stage (with expert tensor
parallelism 1 the EP group is ep consecutive ranks). Stages need not hold equal layer counts: the critical stage
holds ceil(layers / (pp vpp)) layers per virtual stage, and Megatron-style layouts may give the embedding and the
loss a virtual stage of their own (pp x vpp up to layers + 2). vpp is the number of interleaved (virtual)
pipeline stages per rank, mb the micro-batch size in sequences, zero the ZeRO stage (3 = FSDP), recompute
0/1/2 = none/selective/full, sp whether tensor parallelism shards the sequence too (Korthikanti et al. 2022),
hsdp whether ZeRO-3 shards only within the scale-up domain and replicates across domains (hybrid FSDP).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from chipwise.errors import ChipwiseError
from chipwise.perf import collectives as coll
from chipwise.perf.device import Topology
from chipwise.perf.vector import FACTORIZE_MIN_ROWS, divisors, factorize, largest_divisor_at_most
from chipwise.types import IntArray
from chipwise.workload.model import ModelSpec
from chipwise.workload.plan_knobs import given_knobs
from chipwise.workload.training import RECOMPUTE_MODES, TrainingJob

PLAN_COLUMNS: tuple[str, ...] = ("tp", "pp", "dp", "cp", "ep", "vpp", "mb", "zero", "recompute", "sp", "hsdp")


@dataclass(frozen=True)
class PlanArrays:
    """N candidate plans, one column per knob."""

    tp: IntArray
    pp: IntArray
    dp: IntArray
    cp: IntArray
    ep: IntArray
    vpp: IntArray
    mb: IntArray
    zero: IntArray
    recompute: IntArray
    sp: IntArray
    hsdp: IntArray

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    @property
    def ranks(self) -> IntArray:
        """Each plan's own ranks, tp x pp x dp x cp (expert parallelism runs within them)."""
        return np.asarray(self.tp * self.pp * self.dp * self.cp, dtype=np.int64)

    def take(self, index: IntArray | NDArray[np.bool_] | slice) -> PlanArrays:
        return PlanArrays(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @overload
    def distinct(self, *knobs: str, ranks: IntArray) -> tuple[PlanArrays, IntArray, IntArray | None]: ...
    @overload
    def distinct(self, *knobs: str, ranks: None = None) -> tuple[PlanArrays, None, IntArray | None]: ...
    def distinct(
        self, *knobs: str, ranks: IntArray | None = None
    ) -> tuple[PlanArrays, IntArray | None, IntArray | None]:
        """The plans distinct in the named `knobs` (and in `ranks`, each plan's, broadcast), their ranks, and each
        plan's row among them, `inverse`: a cost that depends on those alone is priced once per distinct row and
        read back with [inverse]. Where the plans are too few for that to pay (FACTORIZE_MIN_ROWS), they come back
        as they are, with no inverse."""
        if len(self) <= FACTORIZE_MIN_ROWS:
            return self, ranks, None
        cols = [getattr(self, k) for k in knobs]
        if ranks is not None:
            ranks = np.broadcast_to(np.asarray(ranks, dtype=np.int64), (len(self),))
            cols.append(ranks)
        inverse, first = factorize(*cols)
        return self.take(first), None if ranks is None else ranks[first], inverse

    def plan(self, i: int) -> dict[str, Any]:
        """Plan i as the scenario's `plan:` mapping."""
        return {
            "tp": int(self.tp[i]),
            "pp": int(self.pp[i]),
            "dp": int(self.dp[i]),
            "cp": int(self.cp[i]),
            "ep": int(self.ep[i]),
            "vpp": int(self.vpp[i]),
            "microbatch": int(self.mb[i]),
            "zero": int(self.zero[i]),
            "recompute": RECOMPUTE_MODES[int(self.recompute[i])],
            "sp": bool(self.sp[i]),
            "hsdp": bool(self.hsdp[i]),
        }

    @staticmethod
    def concat(parts: Iterable[PlanArrays]) -> PlanArrays:
        parts = list(parts)
        return PlanArrays(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(PlanArrays)})


def from_dicts(plans: Iterable[Mapping[str, Any]]) -> PlanArrays:
    """Plans given as mappings (complete ones) to arrays."""
    rows = [normalise(p) for p in plans]
    cols = {
        k: np.array([r[k] for r in rows], dtype=np.int64)
        for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "zero", "sp", "hsdp")
    }
    return PlanArrays(
        mb=np.array([r["microbatch"] for r in rows], dtype=np.int64),
        recompute=np.array([RECOMPUTE_MODES.index(r["recompute"]) for r in rows], dtype=np.int64),
        **cols,
    )


def normalise(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A complete plan mapping with defaults for the knobs not given (and unknown knobs rejected)."""
    g = given_knobs(plan)
    tp, zero = g.get("tp", 1), g.get("zero", 1)
    return {
        "tp": tp,
        "pp": g.get("pp", 1),
        "dp": g.get("dp", 1),
        "cp": g.get("cp", 1),
        "ep": g.get("ep", 1),
        "vpp": g.get("vpp", 1),
        "microbatch": g.get("microbatch", 1),
        "zero": zero,
        "recompute": g.get("recompute", "selective"),
        "sp": int(g.get("sp", True) and tp > 1),
        "hsdp": int(g.get("hsdp", False) and zero == 3),
    }


def left_to_search(plan: Mapping[str, Any], model: ModelSpec, domain_ranks: int | None = None) -> list[str]:
    """The knobs a plan leaves for the search to choose (none: the plan is complete, 'given').

    Always tp, pp, dp, microbatch, zero and recompute; cp unless tp, pp and dp are all given (cp is then 1); vpp
    unless pp is 1; ep on a mixture of experts; hsdp with zero 3, unless `domain_ranks` (the ranks of one scale-up
    domain) shows the plan's tp, cp and dp leave hybrid sharding nothing to choose (hybrid_applies): TP1 DP8 Z3 on
    8 H100 had read 'partial' for want of an hsdp the search never picks there. sp is no choice of the search's (on
    wherever tp > 1 unless the plan turns it off)."""
    g = given_knobs(plan)
    left = [k for k in ("tp", "pp", "dp") if k not in g]
    if "cp" not in g and left:
        left.append("cp")
    if "ep" not in g and model.moe is not None:
        left.append("ep")
    if "vpp" not in g and g.get("pp") != 1:
        left.append("vpp")
    left += [k for k in ("microbatch", "zero", "recompute") if k not in g]
    if "hsdp" not in g and g.get("zero") == 3 and _hsdp_open(g, domain_ranks):
        left.append("hsdp")
    return left


def _hsdp_open(g: Mapping[str, Any], domain_ranks: int | None) -> bool:
    """Whether the search may still choose hybrid sharding for these given knobs: always, unless the domain is known
    and tp, cp and dp are fixed (cp given, or 1 beside a given pp) at a data-parallel group hybrid_applies refuses."""
    if domain_ranks is None or not ({"tp", "dp"} <= set(g) and ("cp" in g or "pp" in g)):
        return True
    return bool(hybrid_applies(g["tp"], g["dp"], g.get("cp", 1), domain_ranks))


def hsdp_shard_group(tp: IntArray | int, dp: IntArray | int, cp: IntArray | int, domain_ranks: int) -> IntArray:
    """The ranks hybrid FSDP shards ZeRO-3's state over: perf.collectives.split_group's in-domain part of the dp x cp
    data-parallel group, tp ranks apart, as train.data_parallel.shards takes it (split_group reads only the domain's
    rank count of the topology it is given)."""
    domain = Topology(domain_ranks, "switched", (domain_ranks,), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return coll.split_group(np.asarray(dp) * np.asarray(cp), tp, domain)[0]


def hybrid_applies(tp: IntArray | int, dp: IntArray | int, cp: IntArray | int, domain_ranks: int) -> NDArray[np.bool_]:
    """Whether hybrid FSDP is a plan of its own for each tp, dp and cp: the tp x cp x dp ranks span more than one
    scale-up domain (within one it is plain ZeRO-3) and shard within a domain over two ranks at least
    (hsdp_shard_group). Over one it is DDP holding all of ZeRO-3's 16 bytes a parameter, more memory than ZeRO-1
    and slower: TP8 DP128 on 1,024 GB200 (72-rank racks hold 9 of the tp-8 data-parallel ranks, sharing no factor
    with 128) had been priced so, Llama-3.1-70B at 150.7 GiB a chip where ZeRO-1 holds 68.9 GiB."""
    tp, dp, cp = np.asarray(tp), np.asarray(dp), np.asarray(cp)
    return np.asarray((tp * cp * dp > domain_ranks) & (hsdp_shard_group(tp, dp, cp, domain_ranks) >= 2))


def check_plan(plan: Mapping[str, Any], model: ModelSpec, job: TrainingJob, ranks: int) -> None:
    """Raise a one-line error naming what makes a complete plan invalid for this model, job and rank count."""
    p = normalise(plan)
    # a plan the search returns may leave ranks idle (1,000 H100 run Llama-3.1-70B's TP2 PP7 DP16 CP4 on 896 of
    # them): given back, it had been refused for a product short of the rank count
    reason = invalid_reason(p, model, job) or rank_use_problem(p, job.global_batch, ranks)
    if reason:
        raise ChipwiseError(f"invalid plan: {reason}.")


def check_partial_plan(
    plan: Mapping[str, Any], model: ModelSpec, job: TrainingJob, ranks: int, domain_ranks: int | None = None
) -> None:
    """Reject what is already wrong in a partial plan (the search completes the rest), in the words check_plan
    would use for the complete plan. `domain_ranks`, the ranks of one scale-up domain, lets it judge hsdp."""
    g = given_knobs(plan)  # unknown keys, bad recompute, zero or flag values
    if not g:
        return
    if g.get("hsdp") and g.get("zero", 3) != 3:
        # normalise drops hsdp below zero 3, and the search then found no plan: a generic error with a dict in it
        raise ChipwiseError(
            f"invalid plan: hsdp needs zero 3 (hybrid FSDP shards ZeRO-3's state within the scale-up domain), got "
            f"zero {g['zero']}. Fix: set zero to 3 or hsdp to false."
        )
    if g.get("hsdp") and domain_ranks is not None and (reason := _hsdp_problem(g, ranks, domain_ranks, job)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if {"tp", "pp", "dp"} <= set(g):
        p = normalise({**g, "cp": g.get("cp", 1)})
        # the micro-batch and interleaving the search still chooses: the plan idles ranks the batch could use only if
        # it does at each of them (TP8 PP4 DP1 of a 4-sequence batch on 512 H100 had been refused, judged at mb 1 and
        # v 1, while mb 4 or v 2 leaves the batch no sequence for a larger dp, and either knob given was accepted)
        mbs = [] if "microbatch" in g else microbatch_options(job.global_batch)
        vpps = [] if "vpp" in g else vpp_options(model.layers, p["pp"])
        if reason := invalid_reason(p, model, job) or rank_use_problem(p, job.global_batch, ranks, mbs, vpps):
            raise ChipwiseError(f"invalid plan: {reason}.")
        return
    given = 1
    for key in ("tp", "pp", "dp", "cp"):
        given *= g.get(key, 1)
    if given > ranks:
        # a product that does not divide the ranks leaves some idle, as the search's own plans may (rank_use_problem):
        # pp=7 on 1,000 H100 runs Llama 3.1 70B on 896 (it had been refused, though the search chose that plan)
        raise ChipwiseError(
            f"the plan's fixed degrees multiply to {given}, more than the {ranks} ranks. "
            "Fix: choose degrees whose product is at most the rank count (chips x cores per chip)."
        )
    if "microbatch" in g:
        mb = g["microbatch"]
        if job.global_batch % mb:  # a micro-batch past the batch had left no data-parallel degree: an IndexError
            raise ChipwiseError(
                f"plan.microbatch {mb:,} does not divide the global batch of {job.global_batch:,} sequences. "
                "Fix: give a micro-batch that divides the batch (e.g. 1), or a larger batch."
            )
    # a dp the batch cannot split had found no plan, in a generic line with a Python dict ({dp: 8} of 100 sequences)
    if "dp" in g and (reason := _batch_problem(g["dp"], g.get("microbatch"), job.global_batch)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if "tp" in g and (reason := model.attention.tp_problem(g["tp"])):
        raise ChipwiseError(f"invalid plan: {reason}.")
    # a cp not dividing the sequence had been priced in a partial plan ({cp: 3} at 8,192 tokens) and refused in a
    # complete one
    if "cp" in g and (reason := _cp_problem(g["cp"], job)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    # cp 1, the most lenient, where the search still chooses cp
    if "tp" in g and (reason := _sp_problem(g["tp"], g.get("cp", 1), g.get("sp", True), job)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if "pp" in g and (reason := _pipeline_problem(g["pp"], g.get("vpp", 1), model)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if "zero" in g and (reason := _zero_pipeline_problem(g["zero"], g.get("pp", 0), g.get("vpp", 1))):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if g.get("vpp", 1) > 1 and (reason := _interleave_problem(g, job.global_batch, model.layers, ranks)):
        raise ChipwiseError(f"invalid plan: {reason}.")
    if "ep" in g and g["ep"] > 1 and model.moe is None:
        raise ChipwiseError(f"invalid plan: ep={g['ep']} on a dense model. Fix: set ep to 1.")
    if "ep" in g and (reason := _ep_experts_problem(g["ep"], model) or _ep_span_problem(g, ranks)):
        # the search took a fixed ep as given: ep=16 over Mixtral's 8 experts priced half an expert a rank
        raise ChipwiseError(f"invalid plan: {reason}.")
    if reason := _ep_sp_problem(g.get("tp", 1), g.get("ep", 1), g.get("sp", True)):
        raise ChipwiseError(f"invalid plan: {reason}.")


def _interleave_problem(g: Mapping[str, Any], batch: int, layers: int, ranks: int) -> str:
    """Why an interleaved pipeline of the given pp (and dp and micro-batch, where given) cannot split the batch into a
    multiple of pp micro-batches ('' when some completion can): {pp: 3, vpp: 2} of a 512-sequence batch had found no
    plan, in a generic line. Where pp is left to the search, every depth from 2 the layers and ranks allow is tried:
    {tp: 2, vpp: 2} of a 1-sequence batch had found no plan, with a Python dict in the line."""
    dp, mb, vpp = g.get("dp", 1), g.get("microbatch", 1), g["vpp"]
    fixed = g.get("tp", 1) * dp * g.get("cp", 1)
    most = min((layers + 2) // vpp, ranks // fixed)
    if "pp" not in g and most < 2:  # a given pp is _pipeline_problem's and the rank count's to judge
        bound = (
            f"pp x vpp may not exceed the {layers + 2} pipeline stages {layers} layers allow"
            if (layers + 2) // vpp < 2
            else f"the {ranks:,} ranks over the fixed tp x dp x cp = {fixed:,} leave room for pp 1 only"
        )
        return f"vpp {vpp} needs pp > 1, and {bound}. Fix: set vpp to 1, or free ranks for a pipeline"
    depths = [g["pp"]] if "pp" in g else list(range(2, most + 1))
    if any(batch % (dp * mb * pp) == 0 for pp in depths):
        return ""
    given = [f"{k} {g[k]}" for k in ("dp", "microbatch") if k in g]
    over = f" over {' and '.join(given)}" if given else ""
    pp = f"pp ({g['pp']})" if "pp" in g else f"pp (any of 2 to {most} here)"
    return (
        f"interleaved pipelines need micro-batches to be a multiple of {pp}, and the global batch of {batch:,} "
        f"sequences{over} splits into no such count. Fix: change vpp, pp or the batch"
    )


def _ep_span_problem(g: Mapping[str, Any], ranks: int) -> str:
    """Why a given ep cannot divide the tp x dp x cp ranks of a stage ('' when some completion lets it): they are at
    most the ranks over pp, and fixed where tp, dp and cp are given. ep=128 on 64 H100 had found no plan, in a
    generic line."""
    ep = g["ep"]
    if {"tp", "dp", "cp"} <= set(g):
        span = g["tp"] * g["dp"] * g["cp"]
        if span % ep:
            return f"ep={ep} must divide tp x dp x cp = {span:,}. Fix: choose such an ep"
        return ""
    most = ranks // g.get("pp", 1)
    if ep > most:
        bound = f"the {ranks:,} ranks over pp {g['pp']}, {most:,}" if "pp" in g else f"the {ranks:,} ranks"
        return f"ep={ep} must divide tp x dp x cp, at most {bound}. Fix: use an ep of at most {most:,}"
    return ""


def _hsdp_problem(g: Mapping[str, Any], ranks: int, domain_ranks: int, job: TrainingJob) -> str:
    """Why hybrid FSDP cannot apply to a plan with these knobs given ('' when it can), as enumerate_plans keeps it:
    it shards within a scale-up domain and replicates across domains, so it needs tp x cp x dp ranks beyond one
    domain and two data-parallel ranks at least inside one (the search had dropped every plan silently, leaving a
    generic 'no valid parallel plan'), and a shard group of two at least (hybrid_applies), judged where tp, cp and dp
    are fixed, or where tp tiles the domain and no dp x cp the batch allows shares a factor with its share of it."""
    tp = g.get("tp", 1)
    if domain_ranks < 2:
        return "hsdp shards within a scale-up domain, and this system's holds one rank. Fix: set hsdp to false"
    if domain_ranks // tp < 2:
        return (
            f"hsdp shards within a scale-up domain of {domain_ranks:,} ranks, which tp {tp} fills, leaving no "
            f"second data-parallel rank in it to shard over. Fix: set hsdp to false, or use a tp of at most "
            f"{domain_ranks // 2:,}"
        )
    spread = ranks // g.get("pp", 1)  # the most a stage's tp x cp x dp can take
    fixed = {"tp", "dp"} <= set(g) and ("cp" in g or "pp" in g)  # tp, pp and dp given leave cp at 1 (left_to_search)
    if fixed:
        spread = tp * g["dp"] * g.get("cp", 1)
    if spread <= domain_ranks:
        more = "a larger dp" if "dp" in g else "more chips"
        return (
            f"hsdp replicates FSDP across scale-up domains of {domain_ranks:,} ranks, and this plan's tp x cp x dp "
            f"is at most {spread:,}, within one (there it is plain zero 3). Fix: set hsdp to false, or use {more}"
        )
    if fixed and hsdp_shard_group(tp, g["dp"], g.get("cp", 1), domain_ranks) < 2:
        size = g["dp"] * g.get("cp", 1)
        held = domain_ranks // tp
        if domain_ranks % tp:
            return _one_rank_shard(tp, domain_ranks, f"the plan's dp x cp = {size:,} has no divisor from 2 to {held:,}")
        return _one_rank_shard(tp, domain_ranks, f"the plan's dp x cp = {size:,} shares no factor with {held:,}")
    if not fixed and "tp" in g and domain_ranks % tp == 0 and _no_shared_factor(g, domain_ranks // tp, job, ranks):
        return _one_rank_shard(tp, domain_ranks, f"{_any_group(g, job)} shares a factor with {domain_ranks // tp:,}")
    return ""


def _no_shared_factor(g: Mapping[str, Any], held: int, job: TrainingJob, ranks: int) -> bool:
    """Whether no dp x cp the search may still choose shares a factor with the `held` data-parallel ranks a domain
    holds, the shard group split_group takes where tp tiles the domain (gcd(dp x cp, held)): dp divides the batch
    where it is not given, and cp is one of cp_options, powers of two, where it is not."""
    span = g.get("dp", job.global_batch) * g.get("cp", 1)
    if "cp" not in g and max(cp_options(job, ranks)) > 1:
        span *= held & -held  # the powers of two in held: some cp takes them
    return math.gcd(span, held) < 2


def _any_group(g: Mapping[str, Any], job: TrainingJob) -> str:
    """The data-parallel groups a partial plan leaves the search, in words."""
    dp = f"dp {g['dp']:,}" if "dp" in g else f"a dp dividing the global batch of {job.global_batch:,} sequences"
    cp = f"cp {g['cp']:,}" if "cp" in g else "a cp the search tries (powers of two)"
    return f"no dp x cp of {dp} and {cp}"


def _one_rank_shard(tp: int, domain_ranks: int, why: str) -> str:
    """The hsdp problem of data-parallel groups, tp apart, that no shard of two ranks or more tiles a domain with
    (hsdp_shard_group 1), `why` saying of which. hsdp true had been priced as DDP labelled ZeRO-3 (TP8 DP128 on
    1,024 GB200: Llama-3.1-70B at 150.7 GiB a chip, where hsdp false holds 20.3 GiB and zero 1 68.9 GiB)."""
    held = domain_ranks // tp
    share = f"{domain_ranks:,} / tp {tp} = {held:,}" if domain_ranks % tp == 0 else f"{held:,}"
    return (
        f"hsdp shards ZeRO-3's state within a scale-up domain, and a {domain_ranks:,}-rank domain holds {share} "
        f"data-parallel ranks: {why}, so it would shard over one rank, plain DDP holding all of the fp32 state, more "
        "memory than zero 1. Fix: set hsdp to false, or use a tp whose share of a domain (domain ranks / tp) shares a "
        "factor with dp x cp"
    )


def _cp_problem(cp: int, job: TrainingJob) -> str:
    """Why context parallelism of degree cp cannot split the job's sequences ('' when it can). Causal attention
    balances its load by giving each rank two of 2 cp equal chunks (Megatron's get_batch_on_this_cp_rank,
    TransformerEngine's context parallelism), so the sequence must split into 2 cp: seq_len 8,190 at cp 2 had been
    priced, where Megatron refuses it."""
    if job.seq_len % cp:
        return f"cp={cp} does not divide seq_len {job.seq_len}. Fix: use a cp dividing the sequence length"
    if cp > 1 and job.seq_len % (2 * cp):
        return (
            f"cp={cp} needs seq_len {job.seq_len:,} to split into 2 x cp = {2 * cp} equal chunks (load-balanced causal "
            "context parallelism gives each rank two), and it does not. Fix: use a cp with seq_len a multiple of 2 x cp"
        )
    return ""


def _sp_problem(tp: int, cp: int, sp: bool | int, job: TrainingJob) -> str:
    """Why sequence parallelism cannot split a rank's sequence over tp ranks ('' when it can, or sp is off): each
    rank holds seq_len / cp tokens (_cp_problem), which Megatron's scatter to the sequence-parallel region splits
    evenly over tp. seq_len 4,097 with TP2 and sp had been priced, where Megatron refuses it."""
    if not sp or tp == 1 or job.seq_len % cp:  # a cp not dividing the sequence is _cp_problem's
        return ""
    local = job.seq_len // cp
    if local % tp == 0:
        return ""
    held = f"each rank's {local:,} tokens (seq_len {job.seq_len:,} over cp {cp})" if cp > 1 else f"the {local:,} tokens"
    return (
        f"sequence parallelism splits {held} over tp {tp}, which does not divide them. "
        "Fix: use a tp that divides them, set sp to false, or change seq_len"
    )


def _ep_sp_problem(tp: int, ep: int, sp: bool | int) -> str:
    """Why expert parallelism cannot run beside tensor parallelism without sequence parallelism ('' when it can):
    Megatron-Core's TransformerConfig refuses it ("When using expert parallelism and tensor parallelism, sequence
    parallelism must be used"), and the step prices the tokens each rank dispatches as the tp-th of a micro-batch
    that sequence parallelism leaves it. TP8 EP8 with sp false had been accepted and priced as with sp."""
    if tp > 1 and ep > 1 and not sp:
        return (
            f"ep {ep} with tp {tp} needs sequence parallelism (Megatron-Core refuses expert and tensor parallelism "
            "without it), and the plan sets sp to false. Fix: set sp to true, or tp or ep to 1"
        )
    return ""


def _batch_problem(dp: int, mb: int | None, batch: int) -> str:
    """Why dp data-parallel ranks of mb-sequence micro-batches cannot split the batch ('' when they can); mb None is a
    micro-batch the search still chooses, of which 1 is the most lenient."""
    if batch % (dp * (mb or 1)) == 0:
        return ""
    if mb is None:
        return (
            f"global batch {batch} sequences is not a multiple of dp = {dp}, at any micro-batch. "
            "Fix: change the batch or dp"
        )
    return (
        f"global batch {batch} sequences is not a multiple of dp x microbatch = {dp * mb}. "
        "Fix: change the batch, dp or micro-batch size"
    )


def _zero_pipeline_problem(zero: int, pp: int, vpp: int = 1) -> str:
    """Why ZeRO stage `zero` cannot run with pp pipeline stages ('' when it can). ZeRO-2 keeps only its shard of
    the gradients, and a pipeline accumulates every micro-batch's gradients in full until the step's last backward:
    DeepSpeed's PipelineEngine asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
    (deepspeedai/DeepSpeed #823, #1629, #3589), Colossal-AI's HybridParallelPlugin that "zero stage must be 0 or 1
    when using pipeline parallelism", and Megatron's distributed optimizer is ZeRO-1. ZeRO-3 with a pipeline stays,
    as torchtitan runs FSDP + PP (data_parallel.py). The search had recommended ZeRO-2 with pipelines (405B on
    16,384 H100: TP4 PP8 v16 DP256 CP2 Z2, 6.18 s a step; the fastest plan a framework runs reads 6.61 s). A partial
    plan's vpp above 1 (pp 0 here: not given) asks for a pipeline too."""
    if zero == 2 and (pp > 1 or (pp == 0 and vpp > 1)):
        where = f"pp {pp}" if pp else f"vpp {vpp} (interleaving needs pp > 1)"
        return (
            f"zero 2 with {where}: no framework shards gradients across a pipeline (DeepSpeed's pipeline engine and "
            "Colossal-AI refuse ZeRO-2 with pp > 1; Megatron's distributed optimizer is ZeRO-1). "
            "Fix: use zero 1 (or 3, torchtitan's FSDP + PP) with pipelining, or pp 1 with zero 2"
        )
    return ""


def _pipeline_problem(pp: int, vpp: int, model: ModelSpec) -> str:
    """Why pp stages of vpp virtual stages each cannot hold the model's layers ('' when they can)."""
    if pp * vpp > model.layers + 2:
        # pp 82 runs Llama-3.1-70B's 80 layers: a stage may hold the embedding or the loss alone (module docstring)
        return (
            f"pp x vpp = {pp * vpp} exceeds the {model.layers + 2} pipeline stages {model.layers} layers allow (one "
            f"a layer, and one each for the embedding and the loss). Fix: use at most {model.layers + 2}"
        )
    if vpp > 1 and pp == 1:
        return "vpp > 1 needs pipeline parallelism (pp > 1). Fix: set vpp to 1 or pp above 1"
    return ""


def _ep_experts_problem(ep: int, model: ModelSpec) -> str:
    """Why ep cannot split the model's routed experts ('' when it can): each EP rank holds whole experts."""
    moe = model.moe
    if moe is None or moe.experts % ep == 0:
        return ""
    return f"ep={ep} must divide the {moe.experts} experts. Fix: choose an ep that divides them"


def invalid_reason(p: Mapping[str, Any], model: ModelSpec, job: TrainingJob) -> str:
    tp, pp, cp, ep, vpp, dp, mb = p["tp"], p["pp"], p["cp"], p["ep"], p["vpp"], p["dp"], p["microbatch"]
    if reason := model.attention.tp_problem(tp):
        return reason
    if reason := _pipeline_problem(pp, vpp, model):
        return reason
    if reason := _zero_pipeline_problem(p["zero"], pp):
        return reason
    if reason := _cp_problem(cp, job) or _sp_problem(tp, cp, p["sp"], job):
        return reason
    moe = model.moe
    if ep > 1 and moe is None:
        return f"ep={ep} on a dense model. Fix: set ep to 1"
    if reason := _ep_experts_problem(ep, model):
        return reason
    if moe is not None and (tp * dp * cp) % ep:
        return f"ep={ep} must divide tp x dp x cp = {tp * dp * cp}. Fix: choose such an ep"
    if reason := _ep_sp_problem(tp, ep, p["sp"]):
        return reason
    if reason := _batch_problem(dp, mb, job.global_batch):
        return reason
    m = job.global_batch // (dp * mb)
    if vpp > 1 and m % pp:
        return (
            f"interleaved pipelines need micro-batches ({m}) to be a multiple of pp ({pp}). "
            "Fix: change vpp or the batch"
        )
    return ""


def stage_layers(layers: int, pp: IntArray, vpp: IntArray) -> NDArray[np.float64]:
    """Layers on the most loaded pipeline stage: ceil(layers / (pp vpp)) per virtual stage, vpp of them."""
    return np.asarray(np.ceil(layers / (pp * vpp)) * vpp, dtype=np.float64)


def stage_group_layers(model: ModelSpec, pp: IntArray, vpp: IntArray) -> list[NDArray[np.float64]]:
    """Layers of each of model.groups on the most loaded pipeline stage (stage_layers of them): whole MoE layers,
    ceil of the stage's share of them, the rest dense; within the MoE and within the dense layers, each group by its
    share. That is the most MoE layers a stage holds whether the dense layers sit together (DeepSeek-V3's first
    three: at pp 16 every stage after the first holds 4 MoE layers) or alternate with the MoE ones (Llama 4
    Maverick's); the share alone had priced DeepSeek-V3's PP16 stages with 3.80 MoE layers and 5% fewer experts."""
    on_stage = stage_layers(model.layers, pp, vpp)
    moe_layers = sum(g.count for g in model.groups if g.moe is not None)
    dense_layers = model.layers - moe_layers
    if moe_layers == 0 or dense_layers == 0:
        return [g.count / model.layers * on_stage for g in model.groups]
    # the 1e-9 keeps a share that is whole in exact arithmetic (24 of 48 layers on 4) from rounding up
    moe_on = np.minimum(on_stage, np.ceil(moe_layers / model.layers * on_stage - 1e-9))
    dense_on = on_stage - moe_on
    return [g.count * (moe_on / moe_layers if g.moe is not None else dense_on / dense_layers) for g in model.groups]


def _pow2_upto(n: int) -> list[int]:
    out, v = [], 1
    while v <= n:
        out.append(v)
        v *= 2
    return out


#: Plans that leave more than this share of the ranks idle are not priced, unless the batch leaves them no more
#: data parallelism to use (batch_bound). Half, so that a fleet's search holds every plan of a power-of-two subset of
#: it: at three quarters, 1,000 H100 found only plans that the 512-sequence batch ran badly (27.6 days for
#: Llama-3.1-70B, where 512 chips took 22.7).
MIN_RANK_USE = 0.5


#: Pipeline depths up to this are all searched; deeper ones as balanced depths (balanced_depths), powers of two and
#: divisors of the ranks or layers.
PP_EVERY_UPTO = 8

#: interleaving degrees (virtual stages per rank) the search tries at every depth, besides those that split the
#: stage's layers evenly (vpp_options)
VPP_OPTIONS: tuple[int, ...] = (1, 2, 3, 4, 6, 8)


def vpp_options(layers: int, pp: int) -> list[int]:
    """The interleaving degrees the search tries at pipeline depth pp: VPP_OPTIONS and every divisor of the stage's
    ceil(layers / pp) layers, the degrees that add no layer to the critical stage (ceil(layers / (pp v)) v stays
    ceil(layers / pp)) while cutting the bubble (pp - 1) / v and the in-flight activations 1 + (pp - 1) / (pp v).
    Only VPP_OPTIONS had been tried: Llama-3.1-70B's 80 layers at pp 4 balance at 5, 10 and 20, and the search
    took v4 at 0.998 s a step on 4,096 MI355X where v10 ran 0.951 s in less memory. At most layers + 2 virtual
    stages in all (the embedding and the loss may take one each), none at pp 1."""
    if pp == 1:
        return [1]
    return sorted({v for v in (*VPP_OPTIONS, *divisors(-(-layers // pp))) if pp * v <= layers + 2})


def batch_bound(dp: IntArray, mb: IntArray, pp: IntArray, vpp: IntArray, batch: int) -> NDArray[np.bool_]:
    """Whether each plan's dp is all the batch allows at its micro-batch (interleaved, with micro-batches a multiple
    of pp): the ranks it leaves idle have no sequences to take. Such plans are kept whatever share of the fleet they
    idle (MIN_RANK_USE), so that a larger fleet holds the plans a smaller one did: a 1-sequence batch of
    Llama-3.1-8B had found no plan on 544 H100, and run 8% slower on 512 (TP8 PP32) than on 32 (TP8 PP4)."""
    per_dp = np.where((vpp > 1) & (pp > 1), mb * pp, mb)
    return np.asarray(dp * per_dp == batch)


def rank_use_problem(
    plan: Mapping[str, Any], batch: int, ranks: int, microbatches: Sequence[int] = (), vpps: Sequence[int] = ()
) -> str:
    """Why a plan cannot run on `ranks` ranks ('' when it can): its degrees may not multiply to more, and may leave
    idle more than MIN_RANK_USE of them only where the batch gives no more data parallelism to use, the rule the
    search keeps its own plans to (so a plan it returns can be given back). The batch bound is judged at the plan's
    micro-batch and vpp, or at each of `microbatches` and `vpps` where the search still chooses them (enough that
    one leaves the batch no sequence for the idle ranks)."""
    tp, pp, dp, cp = plan["tp"], plan["pp"], plan["dp"], plan["cp"]
    product = tp * pp * dp * cp
    degrees = f"tp x pp x dp x cp = {tp} x {pp} x {dp} x {cp} = {product:,}"
    if product > ranks:
        return (
            f"{degrees}, more than the job's {ranks:,} ranks. "
            "Fix: make the product at most the rank count (chips x cores per chip)"
        )
    mb, vpp = (a.ravel() for a in np.meshgrid(microbatches or [plan["microbatch"]], vpps or [plan["vpp"]]))
    one = np.ones_like(mb)
    bound = bool(batch_bound(dp * one, mb, pp * one, vpp, batch).any())
    if product < MIN_RANK_USE * ranks and not bound:
        return (
            f"{degrees} leaves {ranks - product:,} of the job's {ranks:,} ranks idle, more than half, while "
            "the batch has sequences for a larger dp. Fix: raise dp (or tp, pp, cp), or use fewer chips"
        )
    return ""


#: The fewest tokens of a sequence a context-parallel rank holds: the search tries no cp that splits it finer.
MIN_CP_TOKENS = 512


def cp_options(job: TrainingJob, ranks: int) -> list[int]:
    """The context-parallel degrees the search tries: powers of two up to the ranks that split the sequence into 2 x
    cp chunks (_cp_problem) of MIN_CP_TOKENS a rank at least. They had stopped at 64, which binds only from 65,536
    tokens: Llama-3.1-405B at 1,048,576 tokens on 16,384 H100 (a 16-sequence batch) had run TP8 DP16 CP64 on 8,192
    of them at 225.3 s a step; it now runs TP2 DP16 CP512 on all of them at 87.4 s. Past 64 they add plans only to
    such sequences (that search 32,670 plans to 48,039, in 0.024 s to 0.034 s)."""
    return [c for c in _pow2_upto(ranks) if not _cp_problem(c, job) and job.seq_len // c >= MIN_CP_TOKENS] or [1]


def cp_split(seq_len: int, ranks: int) -> tuple[int, int]:
    """The largest cp the sequence splits into (seq_len a multiple of 2 x cp: _cp_problem) and the largest its length
    and the ranks would take (MIN_CP_TOKENS a rank), both powers of two as cp_options tries them."""
    reach = _pow2_upto(max(1, min(ranks, seq_len // MIN_CP_TOKENS)))[-1]
    split = max(c for c in _pow2_upto(reach) if c == 1 or seq_len % (2 * c) == 0)
    return split, reach


def cp_split_reason(seq_len: int, ranks: int) -> str:
    """Why the sequence leaves context parallelism a smaller cp than its length and the ranks would take ('' where it
    does not). seq_len 131,070 had turned context parallelism off with no word: Llama-3.1-70B on 1,024 H100 ran TP2
    PP40 DP8 at 6.5 min a step, where 131,072 runs TP1 DP32 CP32 at 16.4 s."""
    split, reach = cp_split(seq_len, ranks)
    if split == reach:
        return ""
    allowed = "no cp above 1" if split == 1 else f"cp up to {split:,}"
    return (
        f"context parallelism needs seq_len a multiple of 2 x cp, and seq_len {seq_len:,} allows {allowed} of the "
        f"{reach:,} its length and the {ranks:,} ranks would take"
    )


def cp_split_fix(seq_len: int, ranks: int) -> str:
    """The seq_len that lets context parallelism take the cp the length and the ranks would (cp_split): the nearest
    multiples of 2 x that cp either side, '' where seq_len is one already."""
    split, reach = cp_split(seq_len, ranks)
    if split == reach:
        return ""
    step = 2 * reach
    down, up = seq_len // step * step, -(-seq_len // step) * step
    return (
        f"give a seq_len that is a multiple of {step:,}, e.g. {down:,} or {up:,}, to split sequences over context "
        "parallelism"
    )


def microbatch_options(batch: int) -> list[int]:
    """The micro-batch sizes the search tries: powers of two up to 16 that divide the batch."""
    return [b for b in _pow2_upto(min(batch, 16)) if batch % b == 0]


def balanced_depths(layers: int, vpps: Iterable[int] = VPP_OPTIONS) -> set[int]:
    """Every pipeline depth that is the fewest stages holding at most c layers a virtual stage, for some c and
    interleaving degree v: ceil(ceil(layers / v) / c). A deeper pipeline with as many layers on its critical stage
    adds bubble, hand-offs, micro-batches in flight and ranks and saves nothing, so these are the depths worth
    pricing; none depends on the rank count, so a fleet's search holds every depth a smaller fleet's did.

    About 2 sqrt(layers) of them: Llama-3.1-405B's 126 layers give 1-14, 16, 18, 21, 26, 32, 42, 63 and 126. Searching
    only divisors of the ranks had left out pp=11 at 1,448 H100 (TP4 PP21, 4% slower than 1,408 chips' TP4 PP11)."""
    out: set[int] = set()
    for v in vpps:
        per_v = -(-layers // v)
        out |= {-(-per_v // c) for c in range(1, per_v + 1)}
    return out


def _cross(a: dict[str, IntArray], b: dict[str, IntArray]) -> dict[str, IntArray]:
    """Cartesian product of two column sets."""
    na, nb = len(next(iter(a.values()))), len(next(iter(b.values())))
    out = {k: np.repeat(v, nb) for k, v in a.items()}
    out.update({k: np.tile(v, na) for k, v in b.items()})
    return out


def _grid(**axes: list[int]) -> dict[str, IntArray]:
    mesh = np.meshgrid(*[np.asarray(v, dtype=np.int64) for v in axes.values()], indexing="ij")
    return {k: m.ravel() for k, m in zip(axes, mesh, strict=True)}


def enumerate_plans(
    model: ModelSpec,
    job: TrainingJob,
    ranks: int,
    domain_ranks: int,
    fixed: Mapping[str, Any] | None = None,
) -> PlanArrays:
    """Every valid plan for the model, job and rank count (knobs in `fixed` held at the given value), vectorised.

    tp ranges over divisors of the heads up to the scale-up domain; pp over 1..layers (every depth up to
    PP_EVERY_UPTO, beyond it balanced depths, powers of two and divisors of the ranks or of the layers); vpp over
    VPP_OPTIONS and the degrees that split a stage's layers evenly (vpp_options); cp over powers of two up to the
    ranks with >= MIN_CP_TOKENS per rank (seq_len a multiple of 2 cp: cp_options); ep over divisors of the experts;
    micro-batch over powers of two; zero over 0-3 (ZeRO-2 at pp 1 only, FSDP with pp > 1 only when zero is fixed);
    recompute over none/selective/full; hybrid sharding for FSDP across domains; sequence parallelism on whenever
    tp > 1 (it only saves memory and time; a tp not dividing each rank's tokens is skipped: _sp_problem; where a plan
    turns it off, tp and ep are not both above 1: _ep_sp_problem). dp is the largest data-parallel degree that fits
    the ranks and divides the batch (into a multiple of pp micro-batches where the pipeline interleaves), so an
    awkward chip count (a million chips, say) leaves a few ranks idle as spares rather than having no plan; plans
    idling more than half of the ranks (MIN_RANK_USE) are dropped unless the batch has no sequences for the idle ones
    (batch_bound).
    """
    # by their PLAN_KEYS names, values checked: mb, vp and sequence_parallel had been ignored here, and a recompute
    # of 'Full' had failed in RECOMPUTE_MODES.index
    fixed = given_knobs(fixed or {})
    if {"tp", "pp", "dp"} <= fixed.keys():
        # cp is then 1 (left_to_search, the guide), as check_partial_plan checked it: cp had still been searched, and
        # TP8 PP4 DP4 on 512 H100 priced as CP4 on all 512 chips, labelled 'given'
        fixed.setdefault("cp", 1)
    att = model.attention
    moe = model.moe
    layers = model.layers

    def choice(key: str, options: list[int]) -> list[int]:
        return [int(fixed[key])] if key in fixed else options

    tp_opts = [t for t in divisors(att.heads) if t <= max(domain_ranks, 1)]
    tp_opts = [t for t in tp_opts if att.kind == "mla" or att.kv_heads % t == 0 or t % att.kv_heads == 0]
    pows = set(_pow2_upto(layers))
    balanced = balanced_depths(layers)
    # every depth up to PP_EVERY_UPTO and every balanced one: with idle ranks allowed a depth need not divide the
    # ranks (1,000 H100s had not tried pp=7 and ran Llama-3.1-70B 19% slower than 896 did)
    pp_opts = sorted(
        p
        for p in range(1, min(layers, 256) + 1)
        if p <= PP_EVERY_UPTO or p in balanced or p in pows or ranks % p == 0 or layers % p == 0
    )
    cp_opts = cp_options(job, ranks)
    ep_opts = [e for e in divisors(moe.experts) if e <= ranks] if moe else [1]
    mb_opts = microbatch_options(job.global_batch)
    rec_opts = [RECOMPUTE_MODES.index(fixed["recompute"])] if "recompute" in fixed else [0, 1, 2]
    hsdp_opts = [int(fixed["hsdp"])] if "hsdp" in fixed else [0, 1]

    # (pp, vpp) pairs: the interleaving degrees worth trying depend on the depth (vpp_options)
    depths = choice("pp", pp_opts)
    stages = [(p, v) for p in depths for v in ([int(fixed["vpp"])] if "vpp" in fixed else vpp_options(layers, p))]
    pairs = {k: np.array(col, dtype=np.int64) for k, col in zip(("pp", "vpp"), zip(*stages, strict=True), strict=True)}
    g = _cross(pairs, _grid(tp=choice("tp", tp_opts), cp=choice("cp", cp_opts), mb=choice("microbatch", mb_opts)))
    inner = g["tp"] * g["pp"] * g["cp"]
    ok = (g["pp"] * g["vpp"] <= layers + 2) & ((g["vpp"] == 1) | (g["pp"] > 1)) & (inner <= ranks)
    g = {k: v[ok] for k, v in g.items()}
    inner = inner[ok]
    batch = job.global_batch
    if "dp" in fixed:
        dp = np.full(inner.shape, int(fixed["dp"]), dtype=np.int64)
    else:
        # the largest dp that fits the ranks and splits the batch into whole micro-batches, a multiple of pp of them
        # where the pipeline interleaves: the largest dp alone had left m % pp and dropped the interleaved plan a
        # smaller fleet ran (TP8 PP4v8 DP4 CP4 of a 16-sequence batch: 1,024 H100 took CP8 instead, slower than 512)
        per_dp = np.where(g["vpp"] > 1, g["mb"] * g["pp"], g["mb"])
        dp = np.zeros_like(inner)
        for n in np.unique(per_dp):
            sel = per_dp == n
            if batch % int(n) == 0:
                dp[sel] = largest_divisor_at_most(batch // int(n), ranks // inner[sel])
    used = dp * inner
    ok = (
        (dp > 0)
        & (used <= ranks)
        & ((used >= MIN_RANK_USE * ranks) | batch_bound(dp, g["mb"], g["pp"], g["vpp"], batch))
        & (batch % np.maximum(dp * g["mb"], 1) == 0)
    )
    m = job.global_batch // np.maximum(dp * g["mb"], 1)
    ok &= (g["vpp"] == 1) | (m % g["pp"] == 0)
    g = {k: v[ok] for k, v in g.items()}
    g["dp"] = dp[ok]
    if not len(g["dp"]):
        return PlanArrays(**{k: np.zeros(0, dtype=np.int64) for k in PLAN_COLUMNS})
    g = _cross(g, _grid(ep=choice("ep", ep_opts)))
    # a fixed ep bypasses ep_opts: it too must split the experts whole (check_partial_plan says so first)
    ok = ((g["tp"] * g["dp"] * g["cp"]) % g["ep"] == 0) & ((moe.experts if moe else 1) % g["ep"] == 0)
    g = {k: v[ok] for k, v in g.items()}
    if not len(g["dp"]):
        return PlanArrays(**{k: np.zeros(0, dtype=np.int64) for k in PLAN_COLUMNS})
    # hybrid sharding needs ZeRO-3, ranks beyond one domain (else it is plain FSDP) and a shard group of two ranks
    # at least (hybrid_applies; over one it is DDP with fp32 state, labelled ZeRO-3 while holding more memory than
    # ZeRO-1). Only tp filling the domain had been excluded: TP8 DP128 on 72-rank racks, whose shard group is
    # gcd(128, 72 / 8) = 1, had been offered. Judged before the knobs below multiply the rows (24 times over)
    g["hybrid"] = hybrid_applies(g["tp"], g["dp"], g["cp"], domain_ranks).astype(np.int64)
    g = _cross(g, _grid(zero=choice("zero", [0, 1, 2, 3]), recompute=rec_opts, hsdp=hsdp_opts))
    # FSDP with pipelining is priced as torchtitan runs it (data_parallel.py): ZeRO-1's traffic with the stage's
    # weights and gradients held unsharded, never faster nor smaller than ZeRO-1, so only a plan that asks for it
    # prices it (torchtitan's 405B FSDP8 x TP8 x PP8 run had found no plan; searching it by default cost 50% more
    # plans for none chosen)
    ok = ("zero" in fixed) | (g["zero"] < 3) | (g["pp"] == 1)
    # hsdp asks for ZeRO-3 as much as zero 3 does: {hsdp: true, pp: 4} had found no plan, in a generic line
    ok |= bool(fixed.get("hsdp")) & (g["zero"] == 3)
    ok &= (g["zero"] != 2) | (g["pp"] == 1)  # no framework runs ZeRO-2 with a pipeline (_zero_pipeline_problem)
    ok &= (g["hsdp"] == 0) | ((g["zero"] == 3) & (g["hybrid"] == 1))
    g = {k: v[ok] for k, v in g.items()}
    sp_wanted = fixed.get("sp", True)
    g["sp"] = ((g["tp"] > 1) & sp_wanted).astype(np.int64)
    # sequence parallelism splits each rank's seq_len / cp tokens over tp (_sp_problem); with sp turned off, tp and ep
    # do not run together (_ep_sp_problem)
    ok = (g["sp"] == 0) | ((job.seq_len // g["cp"]) % g["tp"] == 0)
    ok &= (g["sp"] == 1) | (g["tp"] == 1) | (g["ep"] == 1)
    g = {k: v[ok] for k, v in g.items()}
    return PlanArrays(**{k: np.ascontiguousarray(g[k], dtype=np.int64) for k in PLAN_COLUMNS})
