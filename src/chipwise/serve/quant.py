"""Quantisation of weights and of the KV cache: bytes per element stored, and the precision the matmuls run in.

Bytes per stored element, scales included:
    bf16/fp16 2;  fp8/int8 1;
    fp4 (NVFP4): 4-bit E2M1 values with one FP8 scale per 16 elements -> (16 x 4 + 8) / 16 / 8 = 0.5625 B
        (NVIDIA, "Introducing NVFP4", 2025);
    mxfp4 (OCP microscaling, gpt-oss's MoE experts): 4-bit E2M1 values with one 8-bit scale per 32 elements
        -> (32 x 4 + 8) / 32 / 8 = 0.53125 B;
    int4 (AWQ/GPTQ, group 128 with an fp16 scale) -> (128 x 4 + 16) / 128 / 8 = 0.516 B;
    w8a16 (AWQ/GPTQ 8-bit, bitsandbytes LLM.int8 weights) 1, its scales left out as int8's are.
Weight-only formats (int4, w8a16, int8 on chips without int8 matmuls in the engine) dequantise in the kernel and
multiply in bf16 (int8 is W8A8: activations quantised too, the int8 rate where the chip has it); fp8 and fp4
(NVFP4, whose activations are quantised too) run natively where the chip has units for them. Without them the
engines that run them at all run them weight-only, the matmuls in bf16 (WEIGHT_ONLY_FLOATS): NVFP4 on Hopper is
Marlin's W4A16 in vLLM and SGLang, priced as int4, not as fp8 matmuls (no engine multiplies FP8 activations by
NVFP4 weights off Blackwell; ModelOpt's support matrix lists FP4 weights and activations from Blackwell on).
mxfp4 is the gpt-oss checkpoint format: MXFP4 MoE experts, everything else (attention, router, shared layers) in
bf16 (config.json quantization_config: mxfp4, modules_to_not_convert self_attn, router, embed_tokens, lm_head).
Its activations stay wider than the weights: the engines multiply MXFP8 activations by MXFP4 experts where the
chip has 4-bit matrix units (the fp8 rate: Blackwell's mixed-input f8f6f4 MMA) and bf16 activations by dequantised
experts elsewhere (TensorRT-LLM gpt-oss deployment guide, MoE backend support matrix: B200/GB200/B300/GB300
MXFP8 x MXFP4, H200 BF16 x MXFP4; vLLM's bf16 x mxfp4 MoE kernels on Hopper).
"""

from __future__ import annotations

from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.objects import Chip
from chipwise.workload.model import ModelSpec

WEIGHT_PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "w8a16", "fp4", "mxfp4", "int4")
KV_PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "fp4")

#: Weight formats whose checkpoints may carry an fp8 KV cache (default_kv_precision).
QUANTISED: tuple[str, ...] = ("fp8", "fp4", "mxfp4")

STORED_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "w8a16": 1.0,
    "fp4": 0.5625,
    "mxfp4": 0.53125,
    "int4": 0.516,
}


#: other names of the formats, as checkpoints and engines spell them
PRECISION_ALIASES = {"nvfp4": "fp4", "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "e4m3": "fp8"}


def check_precision(precision: str, allowed: tuple[str, ...], what: str) -> str:
    p = precision.strip().lower()
    p = PRECISION_ALIASES.get(p, p)
    if p not in allowed:
        # with the near matches a name's look-up offers ('bf61': did you mean 'bf16'?)
        raise UnknownNameError(f"{what} precision", precision, allowed, hint=f"use one of {', '.join(allowed)}")
    return p


#: the weight precision that stands for the model's checkpoint as released (ModelSpec.released_precision)
RELEASED = "auto"


def check_weight_precision(precision: str, model: ModelSpec) -> str:
    """The weight precision, checked against the known formats and the model (mxfp4 needs experts to quantise);
    'auto' is the checkpoint's own."""
    if precision.strip().lower() == RELEASED:
        return model.released_precision
    p = check_precision(precision, (*WEIGHT_PRECISIONS, RELEASED), "weight")
    if p == "mxfp4" and not model.is_moe:
        raise ChipwiseError(
            f"mxfp4 quantises the MoE experts only (the gpt-oss checkpoint format) and {model.display} has none. "
            "Fix: use fp4 for 4-bit weights throughout, or bf16/fp8."
        )
    return p


def stored_bytes(precision: str) -> float:
    """Bytes one weight or KV element takes in memory, block scales included."""
    return STORED_BYTES.get(precision, 2.0)


def matmul_precision(weight_precision: str, chip: Chip) -> str:
    """The precision a chip runs the matmuls of `weight_precision` weights in."""
    if weight_precision in ("int4", "w8a16"):  # weight-only: 16-bit activations (an 8-bit GPTQ had run at int8's rate)
        return chip.native_precision("bf16")
    if weight_precision == "mxfp4":
        return chip.native_precision("fp8" if "fp4" in chip.flops else "bf16")
    if weight_precision in ("int8", "fp8", "fp4") and weight_precision not in chip.flops:
        # no units for the format: the engines that run it at all run it weight-only (float8_fallback for the floats)
        return chip.native_precision("bf16")
    return chip.native_precision(weight_precision)


def layer_precisions(weight_precision: str) -> tuple[str, str]:
    """(precision of the dense weights: attention, dense MLPs, shared experts, router; precision of the routed
    experts). Only mxfp4 checkpoints quantise the experts alone."""
    return ("bf16", "mxfp4") if weight_precision == "mxfp4" else (weight_precision, weight_precision)


#: The float weight formats each engine runs on a chip without matrix units for them (fp8 without FP8 units, fp4
#: without FP4 ones), by chip vendor: weight-only (W8A16, W4A16: dequantised in the kernel, multiplied in 16-bit, as
#: matmul_precision prices them). vLLM: "Turing/Ampere GPUs are supported for W8A16 (weight-only FP8) utilizing Marlin
#: kernels" (docs.vllm.ai features/quantization/fp8), its hardware table lists Marlin (GPTQ/AWQ/FP8/FP4) on Ampere
#: (features/quantization), and NVFP4 falls back to Marlin's W4A16 below SM100 (vllm PR #19563, "Fall-back to marlin
#: for device < 100": "Weight-only FP4 compression will be used leveraging the Marlin kernel"); SGLang turns its FP8
#: Marlin kernels on by itself on SM80-SM88 (sglang python/sglang/srt/layers/quantization/fp8_utils.py
#: can_auto_enable_marlin_fp8) and routes ModelOpt NVFP4 checkpoints on Ampere and Hopper through Marlin W4A16 (sglang
#: PR #25655, run on A100 and H100; after #19652, reverted). TensorRT-LLM lists no FP8 or FP4 on Ampere (its support
#: matrix: FP32, FP16, BF16, INT8, INT4; FP8 from Ada, SM89) and NVFP4 from Blackwell only, and no other engine's
#: fallback is sourced: there the float formats need their own units, as an fp4 KV cache needs Blackwell
#: (planner.serving_inputs.precisions).
WEIGHT_ONLY_FLOATS: dict[str, dict[str, tuple[str, ...]]] = {
    "vllm": {"nvidia": ("fp8", "fp4")},
    "sglang": {"nvidia": ("fp8", "fp4")},
}
#: The same for an fp8 KV cache, kept as storage and read back to 16-bit for attention (as
#: perf.serving.attention_rate prices it): vLLM's "is quantized but upconverted to fp16 for computation" on an A100
#: (vllm issue #3965; PR #24577 measures one on A100).
FP8_KV_STORED: dict[str, tuple[str, ...]] = {"vllm": ("nvidia",)}


#: Vendors whose chips list a narrow float format at no more than a wider one's rate only in a comparison table,
#: without units for it: Google's table lists TPU v5p and v6e FP8 at their BF16 rate (chips.yaml, TPU_7X), and
#: Ironwood (TPU7x) is the first TPU with FP8 in its MXUs. Gaudi 3's FP8 (HC_GAUDI3: "FP8 runs at the BF16 rate")
#: and Trainium1/Inferentia2's cFP8 (NRN_TRN1, NRN_INF2) are units of their own at the BF16 rate, and Trainium3's
#: MXFP4 runs at its MXFP8 rate: those chips keep their 1-byte and 4-bit formats.
NO_UNITS_AT_WIDER_RATE: dict[str, tuple[str, ...]] = {"google": ("fp8", "fp4")}


def has_units(chip: Chip, precision: str) -> bool:
    """Whether `chip` has matrix units for the float format `precision`: it lists the format, and, where its
    vendor lists such formats without units (NO_UNITS_AT_WIDER_RATE), faster than the wider one it falls back to
    (Chip.native_precision, as training decides its compute precision): a TPU v6e's fp8, listed at its bf16 rate,
    is no unit of its own, as a v5e's, not listed, is not."""
    if precision not in chip.flops:
        return False
    return precision not in NO_UNITS_AT_WIDER_RATE.get(chip.vendor, ()) or chip.native_precision(precision) == precision


#: Engines with kernels that keep a gpt-oss MXFP4 checkpoint's experts 4-bit in memory on a chip without FP4 units, by
#: chip vendor, with the units those kernels multiply in. NVIDIA: vLLM, SGLang and TensorRT-LLM multiply bf16
#: activations by MXFP4 experts on Hopper (matmul_precision). AMD's CDNA3 (MI300X, MI325X): vLLM's ROCm back end runs
#: gpt-oss-120b's MXFP4 experts as W4A16 (vllm PR #55934, backend aiter_triton_mxfp4_bf16 on gfx942; ROCm/ATOM PR
#: #220: the triton matmul_ogs MXFP4 MoE path is on for gfx94x), and the published run of gpt-oss-120b on one MI300X
#: (heldout_amd.csv A121, InferenceX gptoss-fp4-mi300x-vllm) fits only 4-bit (217.6 GiB at bf16, 192 GB of HBM);
#: SGLang's mxfp4 "requires CDNA3/CDNA4 with MXFP support (uses Aiter)" (its quantization page, sglang PR #35751).
#: Google: vLLM's TPU back end (vllm-project/tpu-inference) keeps 4-bit experts on TPU7x (Ironwood) alone,
#: multiplying FP8 by FP4 there ("Scoped to TPUv7+ since fp4 isn't supported on v6e", issue #2952; "v6e skipped
#: because FP8xFP4 mixed matmul is not supported in v6e's Mosaic compiler", PR #2427): the chip needs FP8 units.
MXFP4_KEPT: dict[str, dict[str, str]] = {
    "vllm": {"nvidia": "bf16", "amd": "bf16", "google": "fp8"},
    "sglang": {"nvidia": "bf16", "amd": "bf16"},
    "trtllm": {"nvidia": "bf16"},
    "trtllm-engine": {"nvidia": "bf16"},
}
#: Engines sourced to load MXFP4 experts dequantised to bf16 on a chip without FP4 units (or without the units their
#: kernels need, MXFP4_KEPT), by chip vendor; elsewhere (no kernels known, no source either way: a hypothetical chip's
#: vendor) they are read dequantised too, as an estimate the note says. AWS Neuron's engines (NxD Inference, under
#: vllm-neuron and optimum-neuron): the published Neuron run of gpt-oss-120b on trn2 states "BF16 (MXFP4 experts
#: dequantized to BF16 on Trn2)" (groundtruth_inference.csv TI015, aws-neuron-sdk
#: vllm-neuron/docs/tutorials/tutorial-eagle3-speculative-decoding-gpt-oss.md); trn1, inf2 and trn2 list no FP4, and
#: Trainium3 lists MXFP4 at its MXFP8 rate (chips.yaml trn3 fp4), so there, as on any chip with FP4 units, the experts
#: stay MXFP4. vLLM on TPU v6e and earlier: "loading mxfp4 weights ... but dequantize into bf16 for now"
#: (tpu-inference PR #1080, "performance is the same with bf16 version"), and gpt-oss on v6e fails in the grouped
#: matmul with float4_e2m1fn (issue #1425). vLLM on Gaudi (vllm-gaudi): the MXFP4 experts are dequantised to BF16 at
#: load time (vllm-gaudi PR #1328, still open, would keep them packed for single-card gpt-oss-120b).
MXFP4_DEQUANTISED: dict[str, tuple[str, ...]] = {
    "neuron": ("aws",),
    "vllm-neuron": ("aws",),
    "optimum-neuron": ("aws",),
    "vllm": ("google", "intel"),
}


def holds_mxfp4(engine: str, chip: Chip) -> bool:
    """Whether `engine` holds MXFP4 experts as the checkpoint ships them on `chip`: with FP4 units, or with kernels that
    keep them 4-bit there (MXFP4_KEPT). A TPU v6e under vLLM had been priced holding them 4-bit, 1,312,944 tokens of
    KV cache for gpt-oss-120b on four chips, where tpu-inference dequantises them to 217.6 GiB of bf16 weights that do
    not fit 4 x 32 GiB."""
    if has_units(chip, "fp4"):
        return True
    units = MXFP4_KEPT.get(engine, {}).get(chip.vendor)
    return units is not None and has_units(chip, units)


def as_loaded(weight_precision: str, engine: str, chip: Chip) -> str:
    """The precision `engine` holds a checkpoint of `weight_precision` in on `chip`: bf16 for MXFP4 experts it
    dequantises as it loads them (holds_mxfp4), else the checkpoint's own. gpt-oss-120b on one trn2 under
    vllm-neuron had been priced as MXFP4 experts, 724,960 tokens of KV cache at TP4, where its dequantised 54.4 GiB
    of weights do not fit the chip."""
    return "bf16" if weight_precision == "mxfp4" and not holds_mxfp4(engine, chip) else weight_precision


def dequantised_sourced(engine: str, chip: Chip) -> bool:
    """Whether a source says `engine` dequantises MXFP4 experts on `chip`'s vendor's parts without FP4 units
    (MXFP4_DEQUANTISED); else reading them dequantised is an estimate."""
    return chip.vendor in MXFP4_DEQUANTISED.get(engine, ())


def dequantised_note(model_precision: str, weight_precision: str, engine: str, chip: Chip) -> str | None:
    """The line a prediction shows where `engine` holds a released MXFP4 checkpoint as bf16 on `chip` (as_loaded):
    its header had read 'bf16 weights' with no word of why. Where no source says so (dequantised_sourced) the line
    says it is an estimate."""
    if model_precision != "mxfp4" or weight_precision != "bf16" or holds_mxfp4(engine, chip):
        return None
    note = f"the checkpoint's MXFP4 experts are dequantised to bf16 as {engine} loads them on {chip.id}"
    if dequantised_sourced(engine, chip):
        return note
    return f"{note} (status: estimate: {engine} has no known kernels that keep them 4-bit on a chip without FP4 units)"


class PrecisionUnsupportedError(ChipwiseError):
    """An engine that cannot run a precision on one chip (float8_fallback): a refusal of that chip, not of the input,
    so that a search over many (plan serve, plan fleet) skips the chip and says why. `reason` is the line without
    its fix, `fix` the fix alone (plan fleet lists each refusal's once)."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(f"{reason}. Fix: {fix}.")
        self.reason, self.fix = reason, fix


def holds_fp8_kv(engine: str, chip: Chip) -> bool:
    """Whether `engine` holds an fp8 KV cache on `chip`: with FP8 units, or stored in fp8 and read back to 16-bit
    (FP8_KV_STORED)."""
    return has_units(chip, "fp8") or chip.vendor in FP8_KV_STORED.get(engine, ())


def float8_fallback(engine: str, chip: Chip, weight_precision: str, kv_precision: str) -> str | None:
    """On a chip without units for fp8 or fp4 weights, or without FP8 units for an fp8 KV cache: how `engine` runs
    them there (a note, as training says when it computes in the nearest precision the chip has), or one line where
    it has no sourced fallback (WEIGHT_ONLY_FLOATS, FP8_KV_STORED). None where the chip has the units, or for 16-bit
    and integer formats; mxfp4 where `engine` dequantises it as it loads (holds_mxfp4) is refused too."""
    if weight_precision == "mxfp4" and not holds_mxfp4(engine, chip):
        how = (
            "the engine dequantises MXFP4 experts to bf16 as it loads them"
            if dequantised_sourced(engine, chip)
            else "the engine has no known kernels that keep MXFP4 experts 4-bit there"
        )
        raise PrecisionUnsupportedError(
            f"{engine} cannot serve mxfp4 weights on {chip.id}: the chip has no FP4 units, and {how}",
            # as every entry point takes it (--precision, --serve-precision, a scenario's or the API's precision):
            # it had read 'serve bf16 weights (precision: bf16, or auto: ...), or pick a chip with FP4 units (trn3)',
            # the scenario's key at every one, and left out the GPUs, whose engines keep the experts MXFP4
            # (holds_mxfp4); it now names the values and both
            "give the precision bf16 or auto (the checkpoint as the engine loads it), or pick a chip whose engine "
            "keeps MXFP4 experts (trn3, or a GPU)",
        )
    weights = weight_precision in ("fp8", "fp4") and not has_units(chip, weight_precision)
    kv8 = kv_precision == "fp8" and not has_units(chip, "fp8")
    # matmul_precision prices W8A8 weight-only where the catalog gives the chip no INT8 rate: said, not silent (an
    # MI300X int8 prompt had read as bf16's, 0.1306 s against 0.1308, with no word)
    int8 = weight_precision == "int8" and not has_units(chip, "int8")
    if not (weights or kv8 or int8):
        return None
    bad_weights = weights and weight_precision not in WEIGHT_ONLY_FLOATS.get(engine, {}).get(chip.vendor, ())
    bad_kv = kv8 and not holds_fp8_kv(engine, chip)
    if bad_weights or bad_kv:
        asked = " and ".join([f"{weight_precision} weights"] * bad_weights + ["an fp8 KV cache"] * bad_kv)
        missing = "/".join(dict.fromkeys([weight_precision.upper()] * bad_weights + ["FP8"] * bad_kv))
        # fp8 weights are the native alternative to fp4 ones on a chip with FP8 units (Hopper); else 16-bit
        instead = "fp8" if weight_precision == "fp4" and has_units(chip, "fp8") else "bf16"
        fixes = ["serve " + " and ".join([f"{instead} weights"] * bad_weights + ["a bf16 KV cache"] * bad_kv)]
        runs = [
            e
            for e, vendors in WEIGHT_ONLY_FLOATS.items()
            if e != engine
            and (not weights or weight_precision in vendors.get(chip.vendor, ()))
            and (not kv8 or chip.vendor in FP8_KV_STORED.get(e, ()))
        ]
        if runs:
            fixes.append(f"serve with {runs[0]}, which runs them in bf16 there")
        raise PrecisionUnsupportedError(
            f"{engine} cannot run {asked} on {chip.id}: the chip has no {missing} units, and the engine has no known "
            "kernels that run them in bf16",
            f"{', or '.join(fixes)}, or pick a chip with {missing} units",
        )
    notes = [f"{weight_precision} weights run weight-only (dequantised in the kernel, the matmuls in bf16)"] * weights
    notes += ["int8 (W8A8) is priced weight-only (dequantised in the kernel, the matmuls in bf16)"] * int8
    notes += ["the fp8 KV cache is stored in fp8 and read back to bf16 for attention"] * kv8
    units = "/".join(dict.fromkeys([weight_precision.upper()] * (weights or int8) + ["FP8"] * kv8))
    listed = " listed in the catalog" * int8  # an MI300X has INT8 units; the catalog gives no sourced rate of them
    return f"{chip.id} has no {units} units{listed}, so {engine} computes in bf16: " + "; ".join(notes)


def default_kv_precision(
    weight_precision: str, quantised_kv: bool = True, engine: str = "", chip: Chip | None = None
) -> str:
    """KV cache precision when none is given: fp8 for fp8/fp4 checkpoints on engines that quantise the KV cache
    with the weights (catalog engines.<engine>.quantised_kv), else 16-bit; 16-bit too where `engine` cannot hold an
    fp8 cache on `chip` (no FP8 units and no stored-fp8 fallback, FP8_KV_STORED): a default the user never asked for
    had refused gpt-oss-120b with TensorRT-LLM on an A100, which serves it with a bf16 cache."""
    if weight_precision in QUANTISED and quantised_kv and (chip is None or holds_fp8_kv(engine, chip)):
        return "fp8"
    return "fp16" if weight_precision == "fp16" else "bf16"
