"""A serving row's parallelism, read from its plan text: the per-replica plan and replica count, a disaggregated
row's prefill and decode pools, and the chip count where the row's num_chips cell is blank."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import (
    cores_per_chip,
    lookup,
    lookup_int,
    parse_int,
    reconcile_plan_with_chips,
    stated_cell,
    strip_parentheses,
)


def is_disaggregated(*texts: str) -> bool:
    """True when prefill and decode run on separate pools (PD disaggregation)."""
    text = " ".join(texts)
    pattern = r"disaggregat|\bPD\b|prefill\s*:.*decode\s*:|decode nodes|prefill/decode"
    return bool(re.search(pattern, text, re.IGNORECASE))


@dataclass(frozen=True)
class RowPlan:
    """A serving row's per-replica plan as its text states it: tp, pp and ep, the replica count dp, whether attention
    runs data-parallel, whether the sizes count NeuronCores rather than chips, and whether the row gives a plan at all
    (`given`; without one, tp = pp = ep = dp = 1)."""

    tp: int
    pp: int
    ep: int
    dp: int
    attention_dp: bool
    counts_cores: bool
    given: bool


#: Other spellings of a serving plan, rewritten into 'TPn EPn DPn x n' terms before it is read: TensorRT-LLM's and
#: InferenceX's DEPn (attention data-parallel + expert-parallel over n GPUs) and TEPn (tensor + expert parallel),
#: 'n x TPm', 'TPmxn', launcher flags ('--tp-size 8', 'tensor_parallel_size=8') and spelled-out names.
_PLAN_SPELLINGS: Final[tuple[tuple[str, str], ...]] = (
    (r"(?<![A-Za-z])((?:DEP|TEP|ADP|TP|PP|EP|DP)\s*\d+)\s*x(?=\s*\d)", r"\1 x "),  # replicas glued on: 'TP2x4'
    (r"\bDEP\s*(\d+)", r"TP\1 EP\1 attention DP"),
    (r"\bTEP\s*(\d+)", r"TP\1 EP\1"),
    (r"\bADP\s*(\d+)", r"DP\1 attention DP"),
    (r"\b(\d+)[- ]way\s+(tensor|pipeline|expert)", r"\2 parallel \1"),
    (r"\b(\d+)\s*x\s*TP\s*(\d+)", r"TP\2 x \1"),
    (r"\btensor[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"TP\1"),
    (r"\bpipeline[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"PP\1"),
    (r"\bexpert[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"EP\1"),
    (r"\b(tp|pp|ep|dp)[-_]size\s*[=:]?\s*(\d+)", r"\1 \2"),
    (r"(?<=\d)(?=(?:tp|pp|ep|dp)\d)", " "),  # glued names: 'tp8ep8dp8'
)
_ATTENTION_DP = r"attention[-_ ]*DP|DP[-_ ]*att(?:entio)?n\b|\bADP\b"


def _respell_plan(text: str) -> str:
    for pattern, repl in _PLAN_SPELLINGS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return text


def parse_serving_plan(text: str, chip: str, num_chips: int | None, arch: str, notes: list[str]) -> RowPlan:
    """Per-replica tp/pp/ep and replica count dp from text such as 'TP2 x 4 instances'."""
    text = _respell_plan(text)
    decode = lookup(r"decode\s*:\s*([^;]*)", text)
    if decode is not None:
        notes.append("prefill/decode split; decode-phase parallelism used")
    core = strip_parentheses(decode if decode is not None else text)
    sizes = {key: lookup_int(rf"\b{key}\s*[=:]?\s*(\d+)", core) for key in ("TP", "PP", "EP", "DP")}
    replicas = lookup_int(r"\bx\s*(\d+)\s*(?:instances?|replicas?|copies)?\s*(?:$|[;,])", core.strip())
    if replicas is None:
        replicas = lookup_int(r"(\d+)\s*(?:replicas|model copies|instances)\b", text)
    attention_dp = bool(re.search(_ATTENTION_DP, text, re.IGNORECASE))
    ep_size = sizes["EP"]
    if arch == "moe" and ep_size and ep_size > 1 and not sizes["TP"] and (attention_dp or sizes["DP"] == ep_size):
        # vLLM's and SGLang's 'DP n + EP n' on an MoE model: attention data-parallel over the n expert-parallel ranks
        sizes["TP"], sizes["DP"], attention_dp = ep_size, None, True
        notes.append(f"DP{ep_size} with EP{ep_size} on an MoE model read as attention DP over {ep_size} ranks")
    ranks_stated = (num_chips or 0) * cores_per_chip(chip, text)
    tp_dp = (sizes["TP"] or 0) * (sizes["DP"] or 0)
    if arch == "moe" and sizes["TP"] and sizes["DP"] == sizes["TP"] and (attention_dp or tp_dp > ranks_stated > 0):
        # SGLang's '--tp n --dp n --enable-dp-attention': the DP ranks are the attention replicas inside the TP group
        sizes["DP"], attention_dp = None, True
        notes.append(f"DP{sizes['TP']} inside TP{sizes['TP']} on an MoE model read as attention DP over its ranks")
    given = any(v is not None for v in sizes.values()) or replicas is not None
    tp, pp = sizes["TP"] or 1, sizes["PP"] or 1
    dp = sizes["DP"] or replicas
    if given and dp is None and re.search(r"per instance", text, re.IGNORECASE):
        ranks = (num_chips or 0) * cores_per_chip(chip, text)
        if ranks and ranks % (tp * pp) == 0:
            dp = ranks // (tp * pp)
            notes.append(f"'per instance' plan: dp = {dp} instances from chip count")
    ep = sizes["EP"] or 1
    if sizes["EP"] is None and arch == "moe" and re.search(r"EP size[^;)]*not stated", text, re.IGNORECASE):
        ep = tp
        notes.append("EP size not stated; assumed EP = TP")
    if not given and num_chips == 1:
        notes.append("parallelism not stated; single chip implies tp=pp=ep=dp=1")
        given = True
    elif not given:
        notes.append("parallelism not stated")
    if not given:
        return RowPlan(1, 1, 1, 1, False, False, False)
    plan: dict[str, int | str | bool] = {"tp": tp, "pp": pp}
    if dp is not None:
        plan["dp"] = dp
    counts_cores = reconcile_plan_with_chips(
        plan, chip=chip, num_chips=num_chips, text=text, notes=notes, sizes=("tp", "pp", "dp")
    )
    return RowPlan(tp, pp, ep, int(plan.get("dp", 1)), attention_dp, counts_cores, True)


#: A chip count written into the hardware text: '8x H200', 'NVIDIA B200 (8x)', '2 x H100 80G', '8 GPUs' (not an
#: instance size such as 'trn2.48xlarge' nor a rack name such as 'NVL72').
_HARDWARE_COUNTS: Final[tuple[str, ...]] = (
    r"\(\s*(\d+)\s*[x\u00d7]\s*\)",
    r"(?<![\w.])(\d+)\s*[x\u00d7]\s*(?=(?:NVIDIA|AMD|Intel|Google|AWS|[A-Z]{1,3}\d))",
    r"(?<![\w.])(\d+)\s+(?:GPUs|chips|accelerators)\b",
)


def row_chip_count(
    raw: Mapping[str, str], chip: str, plan: RowPlan, notes: list[str], prefill_chips: int = 0
) -> int | None:
    """The row's chip count, or when the column is empty the one its hardware text or GPU plan states (with a
    disaggregated row's prefill pool, `prefill_chips`)."""
    stated = chip_count_cell(raw.get("num_chips", ""))
    if stated is not None or stated_cell(raw, "num_chips") is not None:
        return stated  # a cell that states no chip count is the row's problem (cell_problem), not a blank one
    hardware_text = raw.get("hardware", "")
    for pattern in _HARDWARE_COUNTS:
        found = lookup_int(pattern, hardware_text)
        if found:
            notes.append(f"num_chips not stated; {found} from the hardware text")
            return found
    if plan.given and cores_per_chip(chip, "") == 1 and not plan.counts_cores:
        found = plan.tp * plan.pp * plan.dp + prefill_chips
        pools = " of both pools" if prefill_chips else ""
        notes.append(f"num_chips not stated; {found} from the plan{pools} (TP x PP x replicas)")
        return found
    return None


#: a pool's name, with an optional 'pool'/'workers'/... after it
_POOL_WORD = r"(?:[ _-]?(?:pool|workers?|servers?|instances?|nodes?))?"
_PREFILL_NAME = rf"\b(?:prefill|context|ctx){_POOL_WORD}"
_DECODE_NAME = rf"\b(?:decode|generation|gen){_POOL_WORD}"
#: the start of a plan: a shape such as TP4, TEP8, DEP16, EP8 or ADP8, perhaps after 'N x', 'N workers' or '('
_WORKERS = r"(?:x|workers?|instances?|servers?|replicas?)"
_SHAPE_AHEAD = rf"(?=\s*[(\[]?\s*(?:\d+\s*{_WORKERS}\s*)?(?:TP|TEP|DEP|DP|EP|PP|ADP)\s*\d)"
#: Dynamo's and SGLang's 'xPyD': x prefill and y decode workers of one shape.
_XPYD = r"\b(\d+)\s*P\s*(\d+)\s*D\b"


def _pool_sections(text: str) -> str:
    """The pools of a row's parallelism text spelt one way: 'prefill: SHAPE x N; decode: SHAPE x N'. Reads
    'ctx'/'context' and 'gen'/'generation', a name without a colon ('prefill TP8, decode DEP8'), 'N prefill (TP4)',
    'N workers TP4', 'N x TP4', 'P: TP4 / D: DEP8' and InferenceX's 'PTP4x3/DTP16x1'."""
    pool = {"P": "prefill", "D": "decode"}
    text = re.sub(r"\b([PD])TP(\d+)\s*x\s*(\d+)", lambda m: f"{pool[m[1]]}: TP{m[2]} x {m[3]};", text)
    text = re.sub(r"\b([PD])\s*:", lambda m: f"{pool[m[1]]}:", text)
    text = re.sub(rf"\b(\d+)\s*({_PREFILL_NAME}|{_DECODE_NAME})\s*\(([^)]*)\)", r"\2: \3 x \1", text,
                  flags=re.IGNORECASE)  # fmt: skip
    text = re.sub(rf"{_PREFILL_NAME}\s*(?:[:=]|{_SHAPE_AHEAD})", "prefill:", text, flags=re.IGNORECASE)
    text = re.sub(rf"{_DECODE_NAME}\s*(?:[:=]|{_SHAPE_AHEAD})", "decode:", text, flags=re.IGNORECASE)
    parts = re.split(r"(prefill:|decode:)", text)
    out = [parts[0].strip(" ([,;")]
    for name, raw in zip(parts[1::2], parts[2::2], strict=False):
        body = raw.strip().strip("()[]").strip(" ,;/+|")
        shape = re.sub(rf"^(\d+)\s*{_WORKERS}\s*(?:of\s*)?(.+)$", r"\2 x \1", body)  # 'N workers TP4' -> 'TP4 x N'
        out.append(f"{name} {shape};")
    return " ".join(out).strip()


def parse_pools(text: str, chip: str, arch: str, notes: list[str]) -> tuple[str, RowPlan | None]:
    """A disaggregated row's plan text for its decode pool, and its prefill pool when the row states one
    ('prefill: TP4 EP4 x 2; decode: DEP8', 'ctx: 2 x TEP4, gen: 1 x DEP16', '1P2D, TP8 each',
    '2P1D (prefill TP4, decode DEP8)', '4 prefill (TP4) + 1 decode (DEP16)')."""
    counts = re.search(_XPYD, text)
    text = _pool_sections(re.sub(_XPYD, " ", text) if counts else text)
    if counts and "decode:" not in text:
        shape = text.strip(" ,;")
        text = f"prefill: {shape} x {counts.group(1)}; decode: {shape} x {counts.group(2)};"
    elif counts:
        # the xPyD counts name the workers of the shapes the text gives per pool
        for name, n in (("prefill", counts.group(1)), ("decode", counts.group(2))):
            body = lookup(rf"{name}: ([^;]*);", text)
            if body is not None and not re.search(r"\bx\s*\d", body):
                text = text.replace(f"{name}: {body};", f"{name}: {body} x {n};", 1)
    section = lookup(r"prefill:\s*([^;]*)", text)
    if section is None or "decode:" not in text:
        return text, None
    prefill = parse_serving_plan(section, chip, None, arch, [])
    if not prefill.given:
        return text, None
    notes.append(f"disaggregated: prefill pool {prefill.dp} x TP{prefill.tp}")
    return text, prefill


def chip_count_cell(text: str) -> int | None:
    """The chips a num_chips cell counts: '8', '1,024', or the GPUs of '1 node (8 GPUs)'."""
    devices = lookup_int(r"(\d+)\s*(?:x\s*)?(?:gpus?|chips?|accelerators?|devices?)\b", text)
    return devices if devices is not None else parse_int(text)
