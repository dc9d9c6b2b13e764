"""What a serving request asks for, checked and read (by `chipwise predict` and `plan serve` alike): the SLO
targets, the engine family and the hardware it runs on, the weight and KV-cache precisions, and the speculative
decoding and its drafter (whose tp is checked against the replica plan once one is chosen: check_drafter_tp)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.economics.energy import check_region
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.hardware.objects import Chip, System
from chipwise.serve.engine import (
    EngineProfile,
    check_capability,
    check_engine_model,
    check_engine_name,
    check_engine_vendor,
    default_engine,
    engine_vendors,
    served_as,
)
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import (
    KV_PRECISIONS,
    RELEASED,
    PrecisionUnsupportedError,
    as_loaded,
    check_precision,
    check_weight_precision,
    default_kv_precision,
    float8_fallback,
    holds_fp8_kv,
)
from chipwise.serve.speculation import Drafting, drafter, eagle_prior_applies, parse_speculation
from chipwise.workload.counts import is_count
from chipwise.workload.lengths import LengthDist, check_context
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serve_scenario import ServeScenario, speculation_asked
from chipwise.workload.slo import parse_slo, read_slo

#: a lifecycle plan's serving targets where none are given (`plan lifecycle --slo`, the Python API's `slo`)
LIFECYCLE_SLO = "ttft_p99=2s,tpot_p99=50ms"


class Targets(dict[str, float]):
    """SLO targets in seconds that check_slo has read: passed on as they are (read again, a TPOT of 1.5 s given
    with its unit met the bare-number check as a bare 1.5 and was refused)."""


def check_slo(slo: str | Mapping[str, Any] | None, required: bool = False) -> Targets:
    """The SLO in seconds, read as a scenario's is (workload.slo: one line naming the problem and the fix
    otherwise): text with units, 'ttft_p99=2s,tpot_p99=50ms' (as --slo takes it: parse_slo), or a mapping of keys to
    seconds (numbers) or to times with units ({'ttft_p99': 2.0, 'tpot_p99': '50ms'}: read_slo). Targets already read
    pass through. `required`: the command needs targets (plan fleet), so text naming none is not told to leave
    --slo out."""
    if isinstance(slo, Targets):
        return slo
    if slo is None:
        return Targets()
    if isinstance(slo, str):
        return Targets(parse_slo(slo, required))
    return Targets(read_slo(slo))


def check_tpot_target(targets: Mapping[str, float], longest_answer: int) -> None:
    """Refuse a TPOT target where no answer has a second token (`longest_answer` <= 1): TPOT times the gaps between
    output tokens, and a target of 1 us on answers of one token had been reported met."""
    tpot = [k for k in targets if k.startswith("tpot")]
    if tpot and longest_answer <= 1:
        raise ChipwiseError(
            f"{', '.join(tpot)} times the gaps between output tokens, and every answer here is one token long: there "
            "is no gap to time. Fix: drop the TPOT target, or give answers of 2 or more output tokens."
        )


def engine_for(system: System, engine: str | None, model: ModelSpec) -> str:
    """The engine family that serves `model` on `system`: the one asked for (vLLM as its plugin where the vendor's
    chips run it through one, serve.engine.served_as), else the vendor's default."""
    name = check_engine_name(engine or default_engine(system.chip.vendor))  # 'VLLM' is vllm
    name = served_as(name, system.chip.vendor)
    check_engine_model(name, model)
    return name


def precisions(
    precision: str, kv_precision: str | None, eng: EngineProfile, model: ModelSpec, system: System
) -> tuple[str, str]:
    """The checked weight precision and the KV-cache one (stated, or the engine's default for those weights). An
    fp4 (NVFP4) KV cache is an engine feature of NVIDIA's Blackwell chips alone (its NVFP4 KV-cache blog, 2025-12-08:
    dequantised to FP8 for attention there, perf.serving.ATTENTION_PRECISION), none sourced elsewhere; fp8 and fp4
    weights on a chip without units for them run only where the engine has a fallback (quant.float8_fallback, whose
    note predict_serving shows). 'auto' is the checkpoint as the engine loads it (quant.as_loaded: gpt-oss's MXFP4
    experts dequantised to bf16 by Neuron, vLLM on TPU v6e and earlier or on Gaudi, on a chip without FP4 units);
    mxfp4 asked for there is refused."""
    weight = check_weight_precision(precision, model)
    if precision.strip().lower() == RELEASED:
        weight = as_loaded(weight, eng.engine, system.chip)
    kv = (
        check_precision(kv_precision, KV_PRECISIONS, "KV-cache")
        if kv_precision
        else default_kv_precision(weight, eng.quantised_kv, eng.engine, system.chip)
    )
    if kv == "fp4" and not (system.chip.vendor == "nvidia" and "fp4" in system.chip.flops):
        raise PrecisionUnsupportedError(
            f"an fp4 (NVFP4) KV cache runs on NVIDIA's Blackwell chips alone, and {system.chip.id} is not one",
            f"use {held_kv(eng.engine, system.chip)} KV cache",
        )
    if kv == "int8" and eng.engine in NO_INT8_KV:
        # an int8 cache had been priced at half bf16's bytes for engines that cannot hold one (twice the tokens)
        trtllm = ", or engine: trtllm for an int8 one" * (system.chip.vendor == "nvidia")
        raise PrecisionUnsupportedError(
            f"{eng.engine} has no int8 KV cache (its --kv-cache-dtype takes 16-bit and fp8 formats)",
            f"use {held_kv(eng.engine, system.chip)} KV cache{trtllm}",
        )
    float8_fallback(eng.engine, system.chip, weight, kv)  # refuses what the engine cannot run (predict notes the rest)
    return weight, kv


def held_kv(engine: str, chip: Chip) -> str:
    """The 8-bit KV-cache formats `engine` holds on `chip`, as a refusal's fix names them ('an fp8 or int8'): fp8
    where it holds one there (quant.holds_fp8_kv), int8 where it has one (not NO_INT8_KV); else 'a bf16'. The fixes
    had read 'use an fp8 KV cache' wherever an fp4 or int8 one was refused, an fp8 cache the next run refused on a
    TPU v6e or an A100 (where TensorRT-LLM's int8 one goes unnamed)."""
    formats = ["fp8"] * holds_fp8_kv(engine, chip) + ["int8"] * (engine not in NO_INT8_KV)
    return f"an {' or '.join(formats)}" if formats else "a bf16"


#: Engines whose KV-cache formats leave int8 out: vLLM's --kv-cache-dtype takes auto, bfloat16 and the fp8 ones
#: (docs.vllm.ai engine arguments; its quantized-KV-cache page covers FP8 alone), SGLang's auto, fp8_e5m2, fp8_e4m3
#: (and fp4); TensorRT-LLM has an INT8 KV cache (QuantConfig.kv_cache_quant_algo INT8).
NO_INT8_KV = ("vllm", "sglang", "vllm-neuron", "optimum-neuron")  # vLLM's Neuron platform takes vLLM's formats


def drafting_for(catalog: Catalog, model: ModelSpec, speculative: str | None) -> Drafting | None:
    """The speculative decoding a scenario or `--speculative` asks for, with its drafter's model ('none': None)."""
    speculative = speculation_asked(speculative)
    if not speculative:
        return None
    spec = parse_speculation(speculative, catalog)
    if spec.method == "mtp" and not model.mtp_layers:
        # no model-specific draft example: llama-3.2-1b, once given, was refused for Qwen3 and Kimi K2 (another
        # vocabulary); eagle:K at the prior runs on the models it was measured on only (speculation.drafter)
        k = spec.draft_tokens
        eagle = f"eagle:{k}" + ("" if eagle_prior_applies(model) else "@0.7")
        raise ChipwiseError(
            f"{model.display} has no multi-token-prediction head (its config.json has no num_nextn_predict_layers). "
            f"Fix: use {eagle} or draft:MODEL:{k}@0.7 with a smaller model of {model.name}'s family."
        )
    return Drafting(spec, drafter(catalog, model, spec))


def check_engine_features(catalog: Catalog, engine: str, system: System, sc: ServeScenario) -> None:
    """What the scenario asks of a pool's engine beyond its figures, refused in one line where the engine lacks it on
    the pool's chips (serve.engine.CAPABILITIES), as a scheduler setting it lacks is: a prefix cache for
    prefix_hit_rate and prompt_pool's repeats, a KV-cache hand-over for a disaggregated plan. transformers-neuronx on
    trn1 had read a TTFT of 252.0 ms at prefix_hit_rate 0.5 where it encodes every prompt whole (501.5 ms), and
    optimum-neuron on inf2 had been split into prefill and decode pools."""
    family, vendor = system.chip.family, system.chip.vendor
    cached = [f"prefix_hit_rate {sc.prefix_hit_rate:g}"] * (sc.prefix_hit_rate > 0)
    cached += [f"prompt_pool {sc.prompt_pool}"] * (sc.prompt_pool > 0)
    if cached:
        keys = " and ".join(k.split()[0] for k in cached)
        asked = f"{' and '.join(cached)} serve{'s' * (len(cached) == 1)} prompt tokens from a prefix cache"
        check_capability(catalog, engine, family, vendor, "prefix_cache", asked, f"drop {keys}")
    if sc.plan is not None and sc.plan.disaggregated:
        asked = "plan.disaggregated hands each prompt's KV cache from the prefill pool to the decode pool"
        check_capability(catalog, engine, family, vendor, "kv_handover", asked, "serve colocated (drop disaggregated)")


#: engines with no speculative decoding of any kind (FasterTransformer, archived before EAGLE-3 and MTP heads)
NO_SPECULATION_ENGINES: tuple[str, ...] = ("fastertransformer",)


def check_engine_drafts(engine: str | None, drafting: Drafting | None) -> None:
    """Speculative decoding only on an engine that has it: FasterTransformer had been priced with EAGLE (2.95 tokens a
    step for Llama 3.1 8B on an A100) and MTP, neither of which it ever ran."""
    if drafting is not None and engine in NO_SPECULATION_ENGINES:
        raise ChipwiseError(
            f"{engine} has no speculative decoding ({drafting.spec.method}). Fix: drop speculative, or use an engine "
            "that drafts (trtllm, vllm, sglang)."
        )


def check_drafter_tp(drafting: Drafting | None, plan: ReplicaPlan) -> None:
    """A draft model runs on its target's ranks at its tp (serve.kvcache puts its weights there, split as the
    target's are), so its heads must split as a target's (qwen2.5-7b's 28 had run padded over tp=8 under
    qwen2.5-72b, which as a target is refused); an EAGLE or MTP head has its target's attention."""
    if drafting is None or plan.attention_dp or drafting.spec.method != "draft":
        return
    if reason := drafting.model.attention.tp_problem(plan.tp):
        raise ChipwiseError(f"invalid plan for draft model {drafting.model.name}: {reason}, or another draft model.")


def speculation_options(speculative: str | None) -> list[str | None]:
    """`plan serve --speculative` as the options to compare: 'none,mtp:1,mtp:3' -> [None, 'mtp:1', 'mtp:3']; None
    (no option given): [None]. Text that names none ('', ',') is one line: it had run without drafting."""
    if speculative is None:
        return [None]
    parts = [p.strip() for p in speculative.split(",") if p.strip()]
    if not parts:
        raise ChipwiseError(
            f"--speculative '{speculative}' names no option. Fix: give e.g. mtp:3, or none,mtp:1,mtp:3 to compare "
            "(none: no drafting), or leave --speculative out."
        )
    return [speculation_asked(p) for p in parts]


def engine_hardware(
    catalog: Catalog, hardware_ids: Sequence[str], engine: str | None
) -> tuple[list[str], list[dict[str, str]]]:
    """The hardware `engine` runs on, and a 'not ranked' entry for each listed chip it does not run on (plan serve's
    `skipped`); a one-line error when it runs on none of them. No engine named: every chip, with its default."""
    if not engine:
        return list(hardware_ids), []
    hw = hardware(catalog)
    keep: list[str] = []
    skipped: list[dict[str, str]] = []
    for hid in hardware_ids:
        system = hw.system(hid)
        try:
            check_engine_vendor(catalog, engine, system.chip.vendor, system.chip.id)
        except ChipwiseError as exc:
            if len(hardware_ids) == 1:
                raise
            skipped.append({"hardware": system.chip.id, "system": system.id, "reason": str(exc).split(" Fix:")[0]})
        else:
            keep.append(hid)
    if not keep:
        chips = ", ".join(s["hardware"] for s in skipped)
        vendors = ", ".join(engine_vendors(catalog, engine))
        raise ChipwiseError(
            f"{engine} runs on none of the hardware asked for ({chips}): it runs on {vendors} chips only. Fix: add "
            "such a chip to --hardware, or name another engine (or none: each vendor's default)."
        )
    return keep, skipped


def plan_serve_inputs(
    catalog: Catalog,
    model_name: str,
    hardware_ids: Sequence[str],
    input_tokens: int | LengthDist,
    output_tokens: int | LengthDist,
    engine: str | None = None,
    region: str | None = None,
) -> tuple[list[str], list[dict[str, str]]]:
    """What `plan serve` checks before its search (the CLI and the API alike): the region, that a prompt and its
    answer (each a whole count or a length distribution) fit the model's context, and the hardware the engine runs
    on (engine_hardware: the ids to plan, and the 'not ranked' entries of the others)."""
    for name, value in (("input tokens", input_tokens), ("output tokens", output_tokens)):
        if not (isinstance(value, LengthDist) or is_count(value)):
            raise ChipwiseError(f"{name} {value!r} is not a whole number of at least 1. Fix: give e.g. 1024.")
    if region:
        check_region(catalog, region)
    model = load_model(catalog, model_name)
    check_context(model, LengthDist.of(input_tokens), LengthDist.of(output_tokens))
    return engine_hardware(catalog, hardware_ids, engine)
