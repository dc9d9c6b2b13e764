"""Serving rows of a ground-truth table: precision, engine, plan (or disaggregated pools), load, lengths and the
measured throughput, TTFT and TPOT statistics, read from the text of the cells as their writers spell them (each
by a module of its own: serving_row_precision, serving_row_engine, serving_row_plan, serving_row_load and
serving_row_metrics), put together into one InferenceRow with the reason, if any, that it cannot be used."""

from __future__ import annotations

import re
from collections.abc import Mapping

from chipwise.validation.cells import (
    billions,
    canonical_chip,
    normalize_arch,
    notes_text,
    parse_number,
    parse_params_from_arch,
    precision_problem,
    precision_tokens,
    stated_cell,
)
from chipwise.validation.rows import (
    SKIP_DISAGGREGATED,
    SKIP_MIXED,
    SKIP_NO_CHIPS,
    SKIP_NO_METRIC,
    InferenceRow,
    Measured,
    unknown_chip,
)
from chipwise.validation.serving_row_engine import (
    is_speculative,
    normalize_engine,
    parse_compiled_length,
    parse_recv_interval,
    states_piecewise_graphs,
)
from chipwise.validation.serving_row_load import normalize_scenario, parse_load, parse_request_count, row_request_rate
from chipwise.validation.serving_row_metrics import (
    MAX_MEASURED,
    inference_measured,
    measurement_cell_problem,
    parse_latency_limits,
    parse_length,
)
from chipwise.validation.serving_row_plan import (
    chip_count_cell,
    is_disaggregated,
    parse_pools,
    parse_serving_plan,
    row_chip_count,
)
from chipwise.validation.serving_row_precision import SOURCE_PRECISIONS, parse_kv_precision, parse_weight_precision
from chipwise.workload.bounds import CHIPS, MAX_TOKENS


def _output_len(raw: Mapping[str, str], notes: list[str]) -> float | None:
    stated = parse_length(raw.get("output_len", ""))
    if stated is not None:
        return stated
    total = parse_number(raw.get("output_tokens_per_s_total"))
    requests = parse_number(raw.get("requests_per_s"))
    if total is not None and requests:
        notes.append("output_len = output tokens/s / requests/s")
        return total / requests
    notes.append("output_len not stated")
    return None


def cell_problem(raw: Mapping[str, str], num_chips: int | None, measured: list[Measured]) -> str | None:
    """Why a row's stated cells cannot be used: a chip count below one or past the largest fleet planned (a billion
    chips ran for minutes), a length that is no token count, a measurement that is not a positive number or is past
    any plausible one. Such a row is skipped with this reason, not predicted from nonsense or read as blank."""
    if num_chips is not None and num_chips < 1:
        return f"num_chips {num_chips} is not a chip count"
    if num_chips is not None and (problem := CHIPS.problem(num_chips)) is not None:
        return f"num_chips: {problem}"
    for column in ("input_len", "output_len"):
        text = stated_cell(raw, column)
        length = parse_length(text) if text is not None else None
        if text is not None and (length is None or not 0 < length <= MAX_TOKENS):
            return f"{column} '{text}' is not a token count from 1 to {MAX_TOKENS:,}"
    chips_text = stated_cell(raw, "num_chips")
    if chips_text is not None and chip_count_cell(chips_text) is None:
        return f"num_chips '{chips_text}' is not a whole number of chips"
    if (problem := measurement_cell_problem(raw)) is not None:
        return problem
    if (problem := precision_problem(raw)) is not None:
        return problem  # 'FP3' had been noted 'weight precision not stated' and priced as bf16
    for m in measured:
        if m.value > MAX_MEASURED[m.metric]:
            return f"{m.metric} {m.value:g} is past any plausible measurement (at most {MAX_MEASURED[m.metric]:g})"
    return None


def _inference_skip_reason(
    raw: Mapping[str, str],
    chip: str,
    num_chips: int | None,
    measured: list[Measured],
    known: frozenset[str],
    pools_stated: bool = False,
) -> str | None:
    if chip == "mixed" or "heterogeneous" in raw.get("notes", "").lower():
        return SKIP_MIXED
    if chip not in known:
        return unknown_chip(chip, known)
    if (problem := cell_problem(raw, num_chips, measured)) is not None:
        return problem
    if num_chips is None:
        return SKIP_NO_CHIPS
    disaggregated = is_disaggregated(raw.get("serving_engine", ""), raw.get("parallelism", ""), raw.get("scenario", ""))
    if disaggregated and not pools_stated:
        return SKIP_DISAGGREGATED
    if not measured:
        return SKIP_NO_METRIC
    return None


def parse_inference_row(raw: dict[str, str], known_chips: frozenset[str], aliases: Mapping[str, str]) -> InferenceRow:
    notes: list[str] = []
    name = raw.get("model", "").strip()
    arch_text = raw.get("arch", "")
    total, active = billions(raw.get("params_total_B", "")), billions(raw.get("params_active_B", ""))
    if total is None:
        total, active_from_arch = parse_params_from_arch(arch_text)
        active = active if active is not None else active_from_arch
    arch = normalize_arch(arch_text, name, total, active)
    if not arch_text.strip():
        notes.append(f"arch not stated; inferred {arch}")
    if active is None and arch == "dense":
        active = total
    chip = canonical_chip(raw.get("chip", ""), aliases, notes)
    num_chips = chip_count_cell(raw.get("num_chips", ""))
    precision_text = raw.get("precision", "")
    checkpoint = precision_tokens(raw.get("model", ""))
    if checkpoint and not precision_tokens(precision_text):
        # a quantised checkpoint named by its precision ('Llama-3.1-70B-Instruct-FP8') where the column is silent
        notes.append(f"weight precision taken from the checkpoint name ({checkpoint[0]})")
        precision_text = f"{precision_text} {checkpoint[0]} weights"
    stated = next((v for key, v in SOURCE_PRECISIONS.items() if re.search(key, raw.get("source", ""))), None)
    if stated is not None and precision_text.strip().lower() in stated[1]:
        notes.append(f"precision from the publication: {stated[0]}")
        precision_text = stated[0]
    weight = parse_weight_precision(precision_text, notes)
    plan_text, prefill = parse_pools(raw.get("parallelism", ""), chip, arch, notes)
    prefill_chips = prefill.tp * prefill.pp * prefill.dp if prefill is not None else 0
    decode_chips = num_chips - prefill_chips if num_chips is not None and prefill is not None else num_chips
    plan = parse_serving_plan(plan_text, chip, decode_chips, arch, notes)
    num_chips = row_chip_count(raw, chip, plan, notes, prefill_chips)
    load = parse_load(raw.get("batch_or_concurrency", ""), raw.get("scenario", ""), raw.get("notes", ""))
    scenario = normalize_scenario(raw.get("scenario", ""), load.concurrency)
    if scenario == "closed_loop" and load.concurrency is None and load.request_rate is not None:
        scenario = "rate"
        notes.append(f"an arrival rate ({load.request_rate:g} req/s) and no users: an open loop")
    input_len = parse_length(raw.get("input_len", ""))
    if input_len is None:
        notes.append("input_len not stated")
    ttft_limit, tpot_limit = parse_latency_limits(raw.get("latency_constraint", ""))
    measured = inference_measured(raw, num_chips, notes)
    spec_fields = ("parallelism", "serving_engine", "notes", "scenario")
    return InferenceRow(
        id=raw.get("id", "").strip(),
        source_family=raw.get("source_family", "").strip(),
        model_name=name,
        arch=arch,
        params_total=total,
        params_active=active,
        chip=chip,
        num_chips=num_chips,
        weight_precision=weight,
        kv_precision=parse_kv_precision(precision_text, weight),
        engine=normalize_engine(raw.get("serving_engine", "")),
        tp=plan.tp,
        pp=plan.pp,
        ep=plan.ep,
        dp=plan.dp,
        attention_dp=plan.attention_dp,
        plan_counts_cores=plan.counts_cores,
        plan_given=plan.given,
        scenario=scenario,
        concurrency=load.concurrency,
        max_batch=load.max_batch,
        request_rate=row_request_rate(raw, scenario, load),
        input_len=input_len,
        output_len=_output_len(raw, notes),
        ttft_limit_s=ttft_limit,
        tpot_limit_s=tpot_limit,
        speculative=is_speculative(*(raw.get(f, "") for f in spec_fields)),
        measured=measured,
        skip_reason=_inference_skip_reason(raw, chip, num_chips, measured, known_chips, prefill is not None),
        notes=notes_text(notes),
        raw=raw,
        num_requests=parse_request_count(
            *(raw.get(f, "") for f in ("batch_or_concurrency", "latency_constraint", "scenario", "notes"))
        ),
        recv_interval=parse_recv_interval(*(raw.get(f, "") for f in ("serving_engine", "parallelism", "notes"))),
        compiled_length=parse_compiled_length(*(raw.get(f, "") for f in ("serving_engine", "scenario", "notes"))),
        piecewise_graphs=states_piecewise_graphs(*(raw.get(f, "") for f in ("serving_engine", "parallelism", "notes"))),
        prefill_pool=(prefill.tp, prefill.pp, prefill.ep, prefill.attention_dp, prefill.dp) if prefill else None,
        precision_text=precision_text,
    )
