"""Serving-engine profiles: the catalog's `engines` figures for one engine family on one chip family.

Resolution: engines.default, then the engine's base families (a text figure `base`, followed up the chain:
optimum-neuron on vllm-neuron on neuron), the farthest first, then engines.<engine>, then each of their
chips.<chip family> in the same order, figure by figure.
The profile also builds the serving view of a rank (`serving_device`): the chip family's efficiencies (fitted on
training, efficiency.yaml) scaled by the engine's compute and memory factors, with the engine's kernel overhead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import Figure
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.build import ref
from chipwise.hardware.objects import FigureRef
from chipwise.perf.device import Device
from chipwise.types import Array, ArrayLike, IntArray
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import FrontEnd

#: the catalog figure an engine profile's per-kernel launch time comes from (EngineProfile.launch_figure)
LaunchFigure = Literal["eager_launch", "uncaptured_launch"]

ENGINES: tuple[str, ...] = (
    "trtllm",
    "trtllm-engine",
    "vllm",
    "sglang",
    "neuron",
    "vllm-neuron",
    "optimum-neuron",
    "fastertransformer",
)
#: The catalog's base level of engine figures (engines.default), which every engine's figures start from: no engine
#: a user names ('engine: default', read as "whatever the default is", had priced this pseudo-engine, not the chip
#: vendor's), but the profile validation prices a published row with whose engine chipwise does not know.
BASE_PROFILE = "default"
ADMISSIONS: tuple[str, ...] = ("reserve", "on_demand")


def has_engine_build(engine: str, model: ModelSpec) -> bool:
    """False where `engine` is TensorRT-LLM's engine builds and `model` has none: TensorRT-LLM runs MLA models
    (DeepSeek-V3/R1) on its PyTorch back end only."""
    return not (engine == "trtllm-engine" and model.attention.kind == "mla")


def check_engine_name(engine: str) -> str:
    """The engine family named, in lower case ('VLLM' is vllm, as chip ids are read in any case); a one-line error
    for one chipwise does not know."""
    name = engine.strip().lower()
    if name not in ENGINES:
        raise UnknownNameError(
            "serving engine",
            engine,
            ENGINES,
            hint=f"use one of {', '.join(ENGINES)}, or name none for the chip vendor's",
        )
    return name


def check_engine_model(engine: str, model: ModelSpec) -> None:
    """Raise a one-line error for an engine family the catalog does not know, or one that cannot run `model`
    (has_engine_build). BASE_PROFILE passes: validation prices rows of unknown engines with it."""
    if engine != BASE_PROFILE:
        check_engine_name(engine)
    if not has_engine_build(engine, model):
        raise ChipwiseError(
            f"TensorRT-LLM has no TensorRT engine build of {model.name} (MLA models run on its PyTorch back end only). "
            "Fix: use engine trtllm."
        )


#: Engine families NVIDIA Dynamo has workers for (dynamo.vllm, dynamo.sglang, dynamo.trtllm), on the only chips its
#: support matrix lists: NVIDIA Ampere, Ada Lovelace, Hopper and Blackwell GPUs (docs.nvidia.com/dynamo, resources/
#: support-matrix)
DYNAMO_ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "trtllm-engine")
DYNAMO_VENDORS: tuple[str, ...] = ("nvidia",)

#: Engine a vendor's chips are served with when the scenario names none.
DEFAULT_ENGINE_BY_VENDOR: Mapping[str, str] = {"nvidia": "trtllm", "amd": "vllm", "aws": "neuron"}

#: vLLM on a vendor's chips through a hardware plugin the catalog fits as an engine family of its own: on AWS's
#: Trainium and Inferentia vLLM runs as vllm-neuron, whose figures (and compiled batches) it had skipped for vLLM's
#: GPU defaults, 35-60% faster than its fitted self
VLLM_PLUGINS: Mapping[str, str] = {"aws": "vllm-neuron"}


def served_as(engine: str, vendor: str) -> str:
    """The engine family `engine` runs as on `vendor`'s chips: vLLM as its plugin where the vendor's chips run it
    through one (VLLM_PLUGINS), any other as named. predict, plan serve and `catalog engine` read it alike: `catalog
    engine vllm --chip trn2` had shown GPU vLLM's figures (2.0 ms a step, max_batch 1,024, no static batch) beside a
    prediction priced with vllm-neuron's (compiled batches, its Trainium 2 fit)."""
    return VLLM_PLUGINS.get(vendor.lower(), engine) if engine == "vllm" else engine


_MAX_MATMUL_FRACTION = 0.98


@dataclass(frozen=True)
class EngineProfile:
    """Fixed costs and policies of one serving engine on one chip family (SI units)."""

    engine: str
    chip_family: str
    step_overhead_s: float
    layer_overhead_s: float
    kernel_overhead_s: float
    collective_latency_s: float
    #: latency of one small all-reduce or expert dispatch whose group spans scale-up domains (multi-node TP/EP)
    network_collective_latency_s: float
    compute_scale: float
    moe_scale: float
    memory_scale: float
    memory_fraction: float
    memory_basis: str
    block_tokens: int
    admission: str
    max_batch: int
    max_tokens: int
    chunked_prefill: bool
    mixed_batching: bool
    prefill_batch: int
    quantised_kv: bool
    static_batch: bool
    moe_compiled: bool
    provenance: Mapping[str, FigureRef] = field(default_factory=dict)
    #: fixed time of an iteration that encodes prompts, on top of step_overhead (a separately compiled
    #: context-encoding graph on Neuron); 0 where a prefill iteration is an ordinary iteration
    prefill_overhead_s: float = 0.0
    #: multiplies moe_scale for a compiled context encoding's blockwise expert pass (NxD's blockwise matmul kernel,
    #: beside token generation's all-experts and selective-loading matmuls); 1 where it runs as they do
    moe_block_scale: float = 1.0
    #: where a deployment samples on the host instead of on the device: host time per logit of each row the graph
    #: returns (the device-to-host copy; a compiled graph returns every slot's), and of each row the CPU sampler
    #: samples (the live sequences' only)
    host_logits_s_per_logit: float = 0.0
    host_sampling_s_per_logit: float = 0.0
    #: the deployment samples on the host (the logits of every returned slot go to the CPU each iteration)
    host_sampling: bool = False
    #: an iteration that encodes prompts first runs the token-generation step of the decoding sequences, then the
    #: context encoding (two compiled graphs one after the other: optimum-neuron's vLLM runner)
    decode_first: bool = False
    #: prompts one context-encoding pass takes; an iteration that carries more runs them in turn (1: NxD continuous
    #: batching's context graph of one sequence; 0: all of an iteration's prompt tokens in one pass)
    context_batch: int = 0
    #: the engine raises the token budget to the longest sequence it serves (optimum-neuron's vLLM platform sets
    #: max_num_batched_tokens to at least max_model_len)
    budget_covers_sequence: bool = False
    #: attention-DP context balancing (TensorRT-LLM attention_dp_config.enable_balance): while every rank is
    #: generating, new prompts wait until each attention-DP rank has one, or a counter of iterations (which restarts
    #: at each release) reaches this many (0 = off)
    adp_balance_timeout_iters: int = 0
    #: with attention DP every rank schedules its own max_batch / max_tokens (TensorRT-LLM, vLLM); False where the
    #: limits are the replica's, shared by its ranks (SGLang)
    adp_budget_per_rank: bool = True
    #: with attention DP each rank's engine loop does the per-sequence host work of its own requests (SGLang, vLLM);
    #: False where one rank does every rank's (TensorRT-LLM gathers the responses to rank 0)
    adp_host_loops: bool = True
    #: host time per sequence an iteration samples (the engine loop's per-request work: appending the token, stop
    #: checks, detokenising and streaming it), on an x86 DGX-class host
    sequence_overhead_s: float = 0.0
    #: the deployment's host CPU time relative to an x86 DGX host (System.host_overhead); multiplies the host-side
    #: costs: per-sequence, prefill-graph, host-sampling and per-request front-end overheads, and the host share of
    #: the eager launches (eager_host_share); not the fixed per-step cost (see host_step_s)
    host_factor: float = 1.0
    #: host time per kernel an iteration launches eagerly (no CUDA graph): iterations that carry prompt tokens on
    #: engines that capture graphs for decode batches only (SGLang) take at least their launches' host time
    #: (serve.iteration.eager_launches); 0 where prefill is compiled or graphed, or not measured
    eager_launch_s: float = 0.0
    #: host time per kernel where a deployment runs its prompt iterations without CUDA graphs (uncaptured_launch:
    #: vLLM's cudagraph_mode FULL_DECODE_ONLY; an engine that launches them eagerly by default, its eager_launch_s);
    #: 0 for engines that run them only as compiled graphs (TensorRT engines, Neuron)
    uncaptured_launch_s: float = 0.0
    #: the catalog figure eager_launch_s holds: 'eager_launch', or 'uncaptured_launch' where a deployment turned
    #: off the engine's prompt graphs (prompt_graphs)
    launch_figure: LaunchFigure = "eager_launch"
    #: the share of eager_launch_s that scales with the host's CPU (host_factor); the rest takes as long on any host
    eager_host_share: float = 1.0
    #: the vendor of the chip family the profile is for ('' where the catalog holds no chip of it)
    vendor: str = ""
    #: largest decode batch the engine replays in a captured CUDA graph by default (0: every batch; decode_graph_batch)
    graph_max_batch: int = 0
    #: time a request spends in the serving front end outside the engine loop (HTTP, tokenising, the hop to the
    #: engine process and back for its first token), on an x86 host: part of TTFT and end-to-end latency that
    #: occupies no accelerator
    request_overhead_s: float = 0.0
    #: as a split's decode engine: it pulls a prompt's KV cache when it admits the request, the prefill replica
    #: holding it until then (vLLM's NIXL connector); False where the prefill replica pushes it once the prompt is
    #: encoded (SGLang, TensorRT-LLM)
    kv_pull: bool = False

    def mixes(self, adp: ArrayLike) -> NDArray[np.bool_]:
        """Whether an iteration that carries prompts also advances the decodes, for attention-DP flags `adp`
        (broadcasts): the engine mixes them (mixed_batching), or its attention-DP ranks each schedule their own
        requests (adp_host_loops: SGLang's scheduler per rank), so one rank's prompts ride the pass in which the
        others decode."""
        adp_ranks = np.asarray(adp) > 0
        return np.asarray(self.mixed_batching | (adp_ranks & self.adp_host_loops), dtype=bool)

    def as_deployed(
        self, memory_fraction: float = 0.0, mixed_batching: bool | None = None, front_end: FrontEnd = "engine"
    ) -> EngineProfile:
        """This profile as a deployment states its settings: its KV-cache share (0: the engine's default), whether it
        mixes prompts into decode iterations (None: the engine's default), and what takes its requests ('dynamo':
        Dynamo's front end, which hands the engine token ids, so the engine's own server time is not in the path)."""
        eng = self
        if memory_fraction > 0:
            eng = replace(eng, memory_fraction=memory_fraction)
        if mixed_batching is not None:
            eng = replace(eng, mixed_batching=mixed_batching)
        if front_end == "dynamo":
            self._check_dynamo()
            eng = replace(eng, request_overhead_s=0.0)
        return eng

    def _check_dynamo(self) -> None:
        """A one-line error where Dynamo has no worker for this engine on this chip family (DYNAMO_ENGINES on
        DYNAMO_VENDORS' GPUs): front_end: dynamo had taken vLLM's 30 ms front end off any engine on any chip (vLLM on
        a Gaudi 3, 128-token prompt: TTFT 38.0 ms had read 8.0 ms), and printed Dynamo's line for Neuron's."""
        if self.engine in DYNAMO_ENGINES and self.vendor in (*DYNAMO_VENDORS, ""):
            return
        where = f"{self.engine} on {self.chip_family} chips"
        raise ChipwiseError(
            f"plan.front_end is dynamo, but Dynamo has no worker for {where} (it runs {', '.join(DYNAMO_ENGINES)} "
            "on NVIDIA GPUs). Fix: leave front_end out (the engine's own server), or serve on NVIDIA GPUs with one of "
            "those engines."
        )

    def check_graph_batch(self, graph_batch: int) -> None:
        """A one-line error for a stated decode graph batch (plan.graph_batch) where the engine's decode steps run
        only as compiled graphs on this chip family (uncaptured_launch_s 0: no CUDA graphs to size)."""
        if graph_batch > 0 and self.uncaptured_launch_s <= 0:
            raise ChipwiseError(
                f"plan.graph_batch is {graph_batch}, but {self.engine} runs its decode steps only as compiled graphs "
                f"on {self.chip_family} chips: there are no CUDA graphs to size. Fix: leave graph_batch out of the "
                "plan."
            )

    def prompt_graphs(self, captured: bool | None) -> EngineProfile:
        """This profile as a deployment runs its prompt iterations: replayed from captured CUDA graphs (True: no
        eager-launch floor), launched kernel by kernel (False: the engine's eager time per kernel, or where its
        default captures them its uncaptured one), or as the engine does by default (None)."""
        if captured is None:
            return self
        if self.uncaptured_launch_s <= 0:
            raise ChipwiseError(
                f"plan.piecewise_graphs is {str(captured).lower()}, but {self.engine} runs its prompt iterations only "
                f"as compiled graphs on {self.chip_family} chips: there are no CUDA graphs to turn on or off. Fix: "
                "leave piecewise_graphs out of the plan."
            )
        if not captured and self.eager_launch_s > 0:
            return self  # an engine that launches them eagerly anyway
        if captured:
            return replace(self, eager_launch_s=0.0)
        return replace(self, eager_launch_s=self.uncaptured_launch_s, launch_figure="uncaptured_launch")

    def on_host(self, factor: float) -> EngineProfile:
        """This profile on a host whose CPU work takes `factor` times an x86 DGX host's (idempotent)."""
        return self if factor == self.host_factor else replace(self, host_factor=factor)

    @property
    def host_step_s(self) -> float:
        """Fixed time of an iteration, on any host. The engines prepare the next iteration on the CPU while the GPU
        runs this one (TensorRT-LLM's and SGLang's overlap schedulers), so a slower host lengthens an iteration only
        where its host work outgrows the GPU's, which is the per-sequence work of thousands of sequences
        (host_sequence_s, scaled), not this fixed part: scaled too, GB200's TensorRT-LLM perf-overview runs were
        under-predicted by 2-8 points more each (docs/serving.md, section 1)."""
        return self.step_overhead_s

    @property
    def host_sequence_s(self) -> float:
        """Host time per sampled sequence of an iteration on this profile's host."""
        return self.sequence_overhead_s * self.host_factor

    @property
    def host_request_s(self) -> float:
        """Front-end time per request on this profile's host."""
        return self.request_overhead_s * self.host_factor

    @property
    def host_eager_launch_s(self) -> float:
        """Time per eagerly launched kernel on this profile's host: its host share (eager_host_share) takes
        host_factor times as long, the rest as long as on an x86 host."""
        return self.eager_launch_s * (1.0 + self.eager_host_share * (self.host_factor - 1.0))

    @property
    def host_decode_launch_s(self) -> float:
        """Host time per kernel of a decode step larger than the largest batch replayed in a CUDA graph
        (graph_max_batch, plan.graph_batch) on this profile's host: the engine's uncaptured launch whatever a
        deployment does with its prompt graphs (vLLM's piecewise graphs are captured at the sizes of its decode
        graphs, so a larger batch runs outside both), its host share scaled as host_eager_launch_s's is; 0 where
        decode steps run only as compiled graphs (TensorRT engines, Neuron, vLLM on TPU and Gaudi)."""
        return self.uncaptured_launch_s * (1.0 + self.eager_host_share * (self.host_factor - 1.0))

    @property
    def host_prefill_s(self) -> float:
        """Fixed host time of an iteration that encodes prompts, beyond the step's, on this profile's host."""
        return self.prefill_overhead_s * self.host_factor


def _named_lineage(catalog: Catalog, engine: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """The engine's catalog node after its base families' (a text figure `base`, followed up the chain: optimum-
    neuron builds on vllm-neuron, which builds on neuron), the farthest first, each with its name; the chain ends at
    a name the catalog lacks or at a node already in it."""
    tree = catalog.engines
    chain: list[tuple[str, Mapping[str, Any]]] = []
    name = engine
    while name:
        node = tree.get(name, {})
        if not node or any(node is seen for _, seen in chain):
            break
        chain.append((name, node))
        base_fig = node.get("base")
        name = str(base_fig.value) if isinstance(base_fig, Figure) else ""
    return tuple(reversed(chain))


def _lineage(catalog: Catalog, engine: str) -> tuple[Mapping[str, Any], ...]:
    """The nodes of _named_lineage."""
    return tuple(node for _, node in _named_lineage(catalog, engine))


def _chips(node: Mapping[str, Any], chip_family: str) -> Mapping[str, Any] | None:
    """A node's figures for one chip family (None where it has none)."""
    found = (node.get("chips") or {}).get(chip_family)
    return found if isinstance(found, Mapping) else None


def engine_figures(catalog: Catalog, engine: str, chip_family: str) -> dict[str, tuple[Figure, str]]:
    """Every figure of `engine` on `chip_family` with the catalog level that gives it: 'default', an engine family
    (the engine's or a base's), or 'ENGINE on FAMILY' (a fit); each level overrides the ones before it (module
    docstring of engines.yaml: default, the bases, the engine, then the family's figures in the same order)."""
    lineage = _named_lineage(catalog, engine)
    levels = (
        (BASE_PROFILE, catalog.engines.get(BASE_PROFILE, {})),
        *lineage,
        *((f"{name} on {chip_family}", _chips(node, chip_family)) for name, node in lineage),
    )
    merged: dict[str, tuple[Figure, str]] = {}
    for label, level in levels:
        for key, value in (level or {}).items():
            if isinstance(value, Figure) and key != "base":
                merged[key] = (value, label)
    return merged


def _merged(catalog: Catalog, engine: str, chip_family: str) -> dict[str, Any]:
    return {key: fig for key, (fig, _) in engine_figures(catalog, engine, chip_family).items()}


def _vendors(fig: Any) -> tuple[str, ...]:
    return tuple(v.strip().lower() for v in str(fig.value).split(",") if v.strip()) if isinstance(fig, Figure) else ()


def engine_vendors(catalog: Catalog, engine: str) -> tuple[str, ...]:
    """The chip vendors `engine` runs on (engines.<engine>.vendors, or its base family's); () where it names none."""
    return _vendors(_merged(catalog, engine, "").get("vendors"))


def engine_runs_on(catalog: Catalog, engine: str, vendor: str) -> bool:
    """Whether `engine` runs on chips of `vendor`: one its `vendors` list, or one no engine lists (a hypothetical
    chip's), or any where the engine names none."""
    vendors = engine_vendors(catalog, engine)
    listed = {v for name in catalog.engines for v in _vendors(catalog.engines[name].get("vendors"))}
    return not vendors or vendor.lower() in vendors or vendor.lower() not in listed


def check_engine_vendor(catalog: Catalog, engine: str, vendor: str, chip: str) -> None:
    """Raise a one-line error where `engine` does not run on `chip` (a part of `vendor`), naming those that do."""
    if engine_runs_on(catalog, engine, vendor):
        return
    others = [e for e in ENGINES if engine_vendors(catalog, e) and engine_runs_on(catalog, e, vendor)]
    runs = ", ".join(engine_vendors(catalog, engine))
    raise ChipwiseError(
        f"{engine} does not run on {chip} ({vendor}; {engine} runs on {runs} chips only). Fix: use "
        f"{'one of ' + ', '.join(others) if others else 'another engine'} there, or name no engine (the vendor's "
        "default)."
    )


#: figures a chips node may hold as the engine's own launch defaults on that platform (vLLM's token budget, batch
#: limit and KV block on TPUs, Gaudi and A100s, and the CUDA graphs it has none of on TPUs and Gaudi:
#: engines.vllm.chips), not as a fit to its serving runs
PLATFORM_DEFAULTS = frozenset({"max_tokens", "max_batch", "block_tokens", "uncaptured_launch"})


def _fit_figures(node: Mapping[str, Any] | None) -> dict[str, Any]:
    """A chips node's figures other than the platform's launch defaults (PLATFORM_DEFAULTS) and what the engine can
    do there (CAPABILITIES), neither of which a serving fit sets."""
    return {k: v for k, v in (node or {}).items() if k not in PLATFORM_DEFAULTS | CAPABILITIES}


#: switches (1 has it, 0 has not) for what an engine can do rather than what it costs, each read per chip family
#: where the engine differs by family (neuron is transformers-neuronx on Trainium 1 and Inferentia 2, NxD Inference
#: from Trainium 2 on): `prefix_cache`, it serves a prompt's cached prefix from its KV cache (prefix_hit_rate,
#: prompt_pool), and `kv_handover`, it hands a prompt's KV cache from a prefill instance to a decode one (a
#: disaggregated split). Both had been priced for every engine: transformers-neuronx on trn1 read a TTFT of 252.0 ms
#: at prefix_hit_rate 0.5 where it encodes every prompt whole (501.5 ms), and optimum-neuron on inf2 split into
#: prefill and decode pools.
CAPABILITIES = frozenset({"prefix_cache", "kv_handover"})

#: what each capability lets a deployment do, as a refusal names it
_CAPABILITY_TEXT = {"prefix_cache": "prefix cache", "kv_handover": "KV-cache hand-over from a prefill to a decode pool"}


def engine_has(catalog: Catalog, engine: str, chip_family: str, capability: str) -> bool:
    """Whether `engine` on `chip_family` has `capability` (one of CAPABILITIES), as its figures resolve
    (engine_figures); a catalog without the figure leaves it on (engines.default)."""
    fig = _merged(catalog, engine, chip_family).get(capability)
    return not isinstance(fig, Figure) or float(fig.si) > 0.5


def engines_with(catalog: Catalog, capability: str, chip_family: str, vendor: str) -> list[str]:
    """The engine families a refusal may offer instead: those that run on `vendor`'s chips as named (not vllm where
    it runs as a plugin there: served_as) and have `capability` on `chip_family`."""
    return [
        e
        for e in ENGINES
        if served_as(e, vendor) == e
        and engine_runs_on(catalog, e, vendor)
        and engine_has(catalog, e, chip_family, capability)
    ]


def check_capability(
    catalog: Catalog, engine: str, chip_family: str, vendor: str, capability: str, asked: str, drop: str
) -> None:
    """A one-line error where `engine` on `chip_family` lacks `capability` that the deployment `asked` for (text
    naming the scenario's keys), naming the catalog figure, the engines that have it there and the fix that does
    without it (`drop`)."""
    if engine_has(catalog, engine, chip_family, capability):
        return
    level = engine_figures(catalog, engine, chip_family)[capability][1]  # 'neuron on trainium1', 'optimum-neuron'
    where = f"engines.{level.replace(' on ', '.chips.')}.{capability}"
    others = [e for e in engines_with(catalog, capability, chip_family, vendor) if e != engine]
    has = "has" if len(others) == 1 else "have"
    fix = f"use engine: {' or '.join(others)} (which {has} one there), or " if others else ""
    raise ChipwiseError(
        f"{asked}, and {engine} has no {_CAPABILITY_TEXT[capability]} on {chip_family} chips ({where}). "
        f"Fix: {fix}{drop}."
    )


def engine_fitted(catalog: Catalog, engine: str, chip_family: str) -> bool:
    """Whether the catalog holds figures of `engine` on `chip_family` (fitted to serving measurements of the family,
    or carried from a sibling's fit), rather than the engine's defaults alone. A node that holds only the engine's
    launch defaults on the family (PLATFORM_DEFAULTS: vLLM's smaller token budget on a TPU) is no fit: vLLM on a TPU
    would have read as fitted once engines.vllm.chips held its TPU defaults."""
    return any(_fit_figures(_chips(node, chip_family)) for node in _lineage(catalog, engine))


#: A carried figure's derivation opens with the fit it is taken from: 'taken from the ... fit on FAMILY
#: (engines.ENGINE.chips.FAMILY; ...'.
_CARRIED = re.compile(r"taken from the .*? fit on [\w-]+ \(engines\.([\w-]+)\.chips\.([\w-]+)")


def engine_carried_from(catalog: Catalog, engine: str, chip_family: str) -> str | None:
    """'ENGINE on FAMILY': the serving fit every figure of `engine` on `chip_family` is taken from, where no serving
    run of that engine on the family was fitted (Trainium3 and 4 run vLLM-on-Neuron's Trainium2 fit, Blackwell
    Ultra TensorRT-LLM's Blackwell one); None where the family has figures of its own, or none (engine_fitted)."""
    figures = {k: v for node in _lineage(catalog, engine) for k, v in _fit_figures(_chips(node, chip_family)).items()}
    leaders = {
        f"{m.group(1)} on {m.group(2)}" if (m := _CARRIED.match(f.derivation)) else None
        for f in figures.values()
        if isinstance(f, Figure)
    }
    return leaders.pop() if len(leaders) == 1 and None not in leaders else None


def engine_profile(catalog: Catalog, engine: str, chip_family: str) -> EngineProfile:
    """The profile of `engine` on `chip_family`; unknown engines use the default figures. An engine that does not
    run on the family's vendor (engine_runs_on) is a one-line error."""
    figs = _merged(catalog, engine, chip_family)
    family_chips = [c for c in catalog.chips.values() if c.family == chip_family]
    vendor = family_chips[0].vendor if family_chips else ""
    if family_chips:
        check_engine_vendor(catalog, engine, vendor, f"{chip_family} chips")

    def num(key: str) -> float:
        fig = figs.get(key)
        if fig is None:
            raise ChipwiseError(
                f"engine '{engine}' has no figure '{key}'. Fix: add it to the catalog's engines section."
            )
        return float(fig.si)

    def text(key: str) -> str:
        fig = figs.get(key)
        if fig is None:
            raise ChipwiseError(
                f"engine '{engine}' has no figure '{key}'. Fix: add it to the catalog's engines section."
            )
        return str(fig.value)

    admission = text("admission")
    if admission not in ADMISSIONS:
        raise ChipwiseError(
            f"engine '{engine}': admission '{admission}' is not one of {', '.join(ADMISSIONS)}. Fix: correct it."
        )
    basis = text("memory_basis")
    if basis not in MEMORY_BASES:
        raise ChipwiseError(
            f"engine '{engine}': memory_basis '{basis}' is not one of {', '.join(MEMORY_BASES)}. Fix: correct it."
        )
    return EngineProfile(
        engine=engine,
        chip_family=chip_family,
        step_overhead_s=num("step_overhead"),
        layer_overhead_s=num("layer_overhead"),
        kernel_overhead_s=num("kernel_overhead"),
        collective_latency_s=num("collective_latency"),
        network_collective_latency_s=num("network_collective_latency"),
        compute_scale=num("compute_scale"),
        moe_scale=num("moe_scale"),
        memory_scale=num("memory_scale"),
        memory_fraction=num("memory_fraction"),
        memory_basis=basis,
        block_tokens=max(1, round(num("block_tokens"))),
        admission=admission,
        max_batch=max(1, round(num("max_batch"))),
        max_tokens=max(1, round(num("max_tokens"))),
        chunked_prefill=num("chunked_prefill") > 0.5,
        mixed_batching=num("mixed_batching") > 0.5,
        prefill_batch=max(0, round(num("prefill_batch"))),
        quantised_kv=num("quantised_kv") > 0.5,
        static_batch=num("static_batch") > 0.5,
        moe_compiled=num("moe_compiled") > 0.5,
        prefill_overhead_s=num("prefill_overhead"),
        moe_block_scale=num("moe_block_scale"),
        eager_launch_s=num("eager_launch"),
        uncaptured_launch_s=num("uncaptured_launch") or num("eager_launch"),
        eager_host_share=num("eager_host_share"),
        vendor=vendor.lower(),
        graph_max_batch=int(num("graph_max_batch")),
        request_overhead_s=num("request_overhead"),
        host_logits_s_per_logit=num("host_logits_per_logit"),
        host_sampling_s_per_logit=num("host_sampling_per_logit"),
        decode_first=num("decode_first") > 0.5,
        context_batch=max(0, round(num("context_batch"))),
        budget_covers_sequence=num("budget_covers_sequence") > 0.5,
        adp_balance_timeout_iters=max(0, round(num("adp_balance_timeout_iters"))),
        adp_budget_per_rank=num("adp_budget_per_rank") > 0.5,
        adp_host_loops=num("adp_host_loops") > 0.5,
        kv_pull=num("kv_pull") > 0.5,
        sequence_overhead_s=num("sequence_overhead"),
        provenance={k: ref(v) for k, v in figs.items()},
    )


#: how an engine sizes its KV cache: a fraction of the memory left after weights and buffers ('free', TensorRT-LLM's
#: free_gpu_memory_fraction), of all memory with weights and buffers inside it ('total', vLLM's
#: gpu_memory_utilization), or of the memory free at start-up, weights inside it and buffers outside ('static',
#: SGLang's mem_fraction_static; 0 = SGLang's default, sglang_static_fraction)
MEMORY_BASES = ("free", "total", "static")

#: SGLang's defaults by GPU memory (server_args._handle_gpu_memory_settings, github sgl-project/sglang @bcfc2c54;
#: arg_groups/memory_hook.py @a82da8da in 2026): below each bound in GiB, its --chunked-prefill-size and its
#: --cuda-graph-max-bs at tp < 4 and at tp >= 4; from 160 GiB on, the catalog's max_tokens (16,384) and
#: graph_max_batch (512)
SGLANG_MEMORY_TIERS = ((20, 2048, 8, 8), (35, 2048, 24, 80), (60, 4096, 32, 160), (160, 8192, 256, 512))


def _sglang_tier(eng: EngineProfile, memory_bytes: float) -> tuple[int, int, int] | None:
    """SGLang's (chunked-prefill size, graph capture at tp < 4, at tp >= 4) for a GPU of `memory_bytes` (None: not
    SGLang, memory unknown, or the top tier, which the catalog's figures give)."""
    if eng.engine != "sglang" or memory_bytes <= 0:
        return None
    return next(((t, small, large) for gib, t, small, large in SGLANG_MEMORY_TIERS if memory_bytes < gib * 2**30), None)


def sglang_static_fraction(
    memory_bytes: float, chunk: ArrayLike, graph_batch: ArrayLike, ranks: ArrayLike, adp_ranks: ArrayLike, drafted: bool
) -> Array:
    """SGLang's default --mem-fraction-static, the share of a GPU of `memory_bytes` its weights and KV cache take
    (the rest holds activations and CUDA graphs): 1 - reserved / memory, reserved (MiB) = 512 + 1.5 x max(chunk,
    2048) + 2 x graph batch + tp x pp / 8 x 1024, with attention DP over `adp_ranks` ranks 3 x graph batch x ranks
    more (4.5 x from a graph batch above 300), at least 10 GiB on a GPU above 60 GiB, and 2 GiB more for an EAGLE
    or MTP drafter (github sgl-project/sglang python/sglang/srt/server_args.py _handle_gpu_memory_settings, PR
    #10975). `chunk` is the default chunked-prefill size: a launch that raises it sets the fraction too (a
    131,072-token chunk would reserve 192 GiB), and where it is not known the default deployment's share is taken.
    Broadcasts."""
    mib = memory_bytes / 2**20
    graphs = np.asarray(graph_batch, dtype=np.float64)
    adp = np.asarray(adp_ranks, dtype=np.float64)
    reserved_mib = 512.0 + 1.5 * np.maximum(np.asarray(chunk, dtype=np.float64), 2048.0) + 2.0 * graphs
    reserved_mib = reserved_mib + np.asarray(ranks, dtype=np.float64) / 8.0 * 1024.0
    reserved_mib = reserved_mib + np.where(adp > 1, graphs * adp * np.where(graphs > 300, 4.5, 3.0), 0.0)
    if mib > 60 * 1024:
        reserved_mib = np.maximum(reserved_mib, 10 * 1024.0)
    reserved_mib = reserved_mib + (2048.0 if drafted else 0.0)
    return np.asarray(np.round((mib - reserved_mib) / mib, 3), dtype=np.float64)


def default_max_tokens(eng: EngineProfile, memory_bytes: float = 0.0) -> int:
    """The engine's token budget per iteration on a device of `memory_bytes` (0: unknown, the catalog's): SGLang
    sizes its default chunked-prefill size by the GPU's memory (SGLANG_MEMORY_TIERS)."""
    tier = _sglang_tier(eng, memory_bytes)
    return eng.max_tokens if tier is None else min(eng.max_tokens, tier[0])


def token_budget(
    eng: EngineProfile, longest_prompt: float, batch: int = 1, memory_bytes: float = 0.0, sequence: float = 0.0
) -> int:
    """Tokens one iteration may carry: the engine's budget (default_max_tokens on a device of `memory_bytes`, raised
    to the deployment's longest `sequence` on an engine whose budget covers it) when it chunks prompts; otherwise
    whole prompts, since an unchunked prompt runs in one iteration: `prefill_batch` of them, or when that is 0 (no
    limit) the `batch` prompts a static batch encodes together (transformers-neuronx context-encodes its compiled
    batch at once) as far as the budget goes."""
    budget = default_max_tokens(eng, memory_bytes)
    if eng.budget_covers_sequence:
        budget = max(budget, math.ceil(max(sequence, longest_prompt)))
    if eng.chunked_prefill:
        return budget
    prompts = eng.prefill_batch if eng.prefill_batch > 0 else max(1, batch)
    return max(1, min(budget, math.ceil(longest_prompt) * prompts))


def budgets(eng: EngineProfile, tp: ArrayLike, attention_dp: ArrayLike, pp: ArrayLike = 1) -> IntArray:
    """Token budgets of max_tokens that fill one iteration of a replica (a round of its pipeline): the tp
    attention-DP ranks' where the engine gives each rank its own limits (eng.adp_budget_per_rank), else one, in
    each of the pp micro-batches, which the engines schedule as batches of their own (vLLM's batch queue of pp
    in-flight batches, TensorRT-LLM's and SGLang's pipeline micro-batches). Broadcasts."""
    per_rank = np.where((np.asarray(attention_dp) > 0) & eng.adp_budget_per_rank, tp, 1)
    return np.asarray(per_rank * np.asarray(pp), dtype=np.int64)


def prompt_chunk(eng: EngineProfile, max_tokens: ArrayLike, tp: ArrayLike, attention_dp: ArrayLike) -> NDArray[Any]:
    """Tokens of one prompt an iteration may encode: the token budget, or with attention DP on an engine whose ranks
    share one budget (not eng.adp_budget_per_rank), one rank's share of it: SGLang divides its chunked-prefill
    size by the attention-DP size (server_args: chunked_prefill_size // dp_size), each rank encoding its own
    prompts. Broadcasts; in the dtype of `max_tokens` (a whole number where it is an int)."""
    ranks = np.asarray(tp)
    shared = (np.asarray(attention_dp) > 0) & (ranks > 1) & (not eng.adp_budget_per_rank)
    return np.where(shared, np.maximum(np.asarray(max_tokens) // np.maximum(ranks, 1), 1), max_tokens)


def decode_graph_batch(eng: EngineProfile, memory_bytes: float, tp: ArrayLike) -> IntArray:
    """Largest decode batch a replica replays in a captured CUDA graph (0: every batch): a larger one launches its
    kernels eagerly, one by one, and takes at least their host time (as a prompt iteration does). SGLang sizes its
    default by the GPU's memory and tensor parallelism (SGLANG_MEMORY_TIERS), `graph_max_batch` (512) from 160 GiB
    on. Broadcasts over tp."""
    top = eng.graph_max_batch
    tier = _sglang_tier(eng, memory_bytes) if top > 0 else None
    small, large = (top, top) if tier is None else (min(top, tier[1]), min(top, tier[2]))
    return np.asarray(np.where(np.asarray(tp) >= 4, large, small), dtype=np.int64)


def default_engine(vendor: str) -> str:
    """The engine a chip vendor's parts are usually served with (TensorRT-LLM, vLLM on ROCm, Neuron)."""
    return DEFAULT_ENGINE_BY_VENDOR.get(vendor, "vllm")


def serving_device(dev: Device, eng: EngineProfile) -> Device:
    """A rank as the engine sees it: matmul and attention fractions x compute_scale (capped at 0.98 of peak),
    grouped-expert-GEMM fraction x moe_scale (capped at 1), HBM fraction x memory_scale (capped at 0.95), the
    engine's kernel overhead."""
    eff = dev.eff
    matmul = {p: min(_MAX_MATMUL_FRACTION, f * eng.compute_scale) for p, f in eff.matmul.items()}
    served = replace(
        eff,
        matmul=matmul,
        memory=min(0.95, eff.memory * eng.memory_scale),
        moe_gemm=min(1.0, eff.moe_gemm * eng.moe_scale),
        kernel_overhead_s=eng.kernel_overhead_s,
    )
    return replace(dev, eff=served)
