"""The request lengths a serving row is priced at: its stated means, or where it leaves one out the benchmark
dataset's mean prompt (MLPerf) or the other length; what its requests generated where that differs from what they
asked for; the prompt as the server tokenised it; and the spread its load generator drew the lengths from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from chipwise.errors import ChipwiseError
from chipwise.validation.cells import parse_positive, parse_time
from chipwise.validation.harness import SHAREGPT_REPLY_CV, Harness, sharegpt, sharegpt_replies
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_row_metrics import latency_stats
from chipwise.workload.lengths import LengthDist

SKIP_NO_LENGTHS = "input and output lengths not stated"


@dataclass(frozen=True)
class BenchmarkDataset:
    """What an MLPerf Inference benchmark's dataset says about prompt lengths (MLPerf logs give only the mean
    output). `mean_input` is None when no source gives it; `long_prompts` marks datasets whose prompts are known
    to be much longer than their answers, where taking input = output would be badly wrong; `max_input` is the
    longest prompt a source states, past which no mean (and so no input = output) can lie."""

    dataset: str
    mean_input: float | None
    status: str
    source: str
    long_prompts: bool = False
    max_input: float | None = None


#: MLPerf Inference datasets by benchmark model (the MLPerf row's model, lower-cased, without punctuation).
#: Mean prompt lengths marked "estimate" are the mean of the token counts MLPerf's own preprocessed dataset stores
#: per sample (tok_input_length / tok_input_len), as summarised sample by sample in github
#: openshift-psap/performance-dashboard mlperf-data/summaries/*.csv (mlperf-data/original/generate_dataset_summaries.py
#: copies the columns); those files hold every sample (24,576, 15,000 and 8,313 rows) and their Mixtral and Llama
#: 3.1 405B output columns reproduce MLPerf's reference tokens per sample exactly (144.84, 684.68).
_PER_SAMPLE = "github openshift-psap/performance-dashboard mlperf-data/summaries/"
MLPERF_DATASETS: Mapping[str, BenchmarkDataset] = {
    "llama270b": BenchmarkDataset(
        "OpenOrca (GPT-4 part), 24,576 samples, prompts and answers each limited to 1,024 tokens",
        222.3,
        "estimate",
        "derivation: mean of tok_input_length over the 24,576 samples of open_orca_gpt4_tokenized_llama."
        f"sampled_24576.pkl.gz ({_PER_SAMPLE}llama2-70b-99.csv @7cd1065; median 152, p90 519); github "
        "mlcommons/inference language/llama2-70b/README.md (processorca.py --seqlen_limit=1024)",
    ),
    "mixtral8x7b": BenchmarkDataset(
        "OpenOrca + GSM8K + MBXP, 5,000 samples each",
        427.4,
        "estimate",
        "derivation: mean of tok_input_len over the 15,000 samples of 09292024_mixtral_15k_mintoken2_v1.pkl "
        f"({_PER_SAMPLE}mixtral-8x7b.csv @67033ba; median 283, p90 701); github mlcommons/inference "
        "docs/benchmarks/language/get-mixtral-8x7b-data.md",
    ),
    "llama3.18b": BenchmarkDataset(
        "CNN-DailyMail 3.0.0 validation (13,368 articles), prompt = 'Summarize this article' + the article",
        930.0,
        "estimate",
        "derivation: CNN/DailyMail articles are 781 (PTB) tokens long on average (Nallapati et al. 2016 split, "
        "github sebastianruder/NLP-progress english/summarization.md); the Llama 3 tokenizer cuts English news into "
        "about 1.15 BPE tokens per PTB token (contractions and punctuation are single PTB tokens, rare words split), "
        "and the chat template adds about 30 (github mlcommons/inference language/llama3.1-8b/PREPROCESSING.md): "
        "781 x 1.15 + 30 = 930",
    ),
    "llama3.1405b": BenchmarkDataset(
        "long-context mix (summarisation, needle-in-a-haystack, long-document QA; contexts up to 128K tokens), "
        "8,313 samples",
        9428.6,
        "estimate",
        "derivation: mean of tok_input_len over the 8,313 samples of mlperf_llama3.1_405b_dataset_8313_processed_"
        f"fp16_eval.pkl ({_PER_SAMPLE}llama3-1-405b.csv @739352b; median 10,112, p10 3,678, p90 14,156); "
        "mlcommons.org/2025/04/llm-inference-v5; github mlcommons/inference language/llama3.1-405b/README.md",
        long_prompts=True,
    ),
    # a reasoning set: short questions, answers thousands of tokens long (an input taken equal to the mean output,
    # 3,657-3,748 on the v5.1 rows, would be longer than the set's longest prompt)
    "deepseekr1": BenchmarkDataset(
        "MMLU-Pro 2,410 + AIME 1983-2024 932 + MATH-500 499 + LiveCodeBench 349 + GPQA 198 = 4,388 samples",
        803.8,
        "estimate",
        "derivation: mean of tok_input_len over the 4,388 samples of mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl "
        "(github openshift-psap/performance-dashboard datasets/summaries/deepseek-r1.csv @c402a31, written by its "
        "datasets/generate_summaries.py; median 902, p90 1,281, longest 3,140; its output column's mean, 4,043.45, "
        "is the reference mean-output-tok-len of github mlcommons/inference language/deepseek-r1/README.md); "
        "NVIDIA's MLPerf Inference v5.1 'Bandwidth specs of datacenter systems': DeepSeek-R1 max_input_len = 3136",
        max_input=3140.0,
    ),
}
SKIP_UNKNOWN_PROMPTS = "input length not stated and the benchmark's prompts are long (mean not published)"
SKIP_UNPUBLISHED_MEAN = "input length not stated and the benchmark's mean prompt length is not published"


def _benchmark_dataset(row: InferenceRow) -> BenchmarkDataset | None:
    if not row.source_family.lower().startswith("mlperf"):
        return None
    key = re.sub(r"[^a-z0-9.]", "", row.model_name.lower().split("(")[0])
    return MLPERF_DATASETS.get(key)


def row_lengths(row: InferenceRow, notes: list[str]) -> tuple[float, float]:
    """The mean input and output lengths a row is priced at, each assumption noted (ChipwiseError where the row
    states neither, or where its unstated input cannot be told)."""
    inp, out = row.input_len, row.output_len
    if inp is None and out is None:
        raise ChipwiseError(SKIP_NO_LENGTHS)
    if inp is None:
        assert out is not None
        data = _benchmark_dataset(row)
        if data is not None and data.mean_input is not None:
            notes.append(f"input length from the benchmark's dataset ({data.dataset}): {data.mean_input:.0f}")
            inp = data.mean_input
        elif data is not None and data.long_prompts:
            raise ChipwiseError(f"{SKIP_UNKNOWN_PROMPTS}: {data.dataset}")
        elif data is not None and data.max_input is not None and out > data.max_input:
            raise ChipwiseError(
                f"{SKIP_UNPUBLISHED_MEAN}: {data.dataset}; an input equal to the mean output ({out:.0f}) would be "
                f"longer than its longest prompt ({data.max_input:.0f})"
            )
        else:
            notes.append(f"input length not stated; taken equal to the mean output length ({out:.0f})")
            inp = out
    if out is None:
        notes.append(f"output length not stated; taken equal to the input length ({inp:.0f})")
        out = inp
    served = served_output(row, out)
    if served != out:
        notes.append(f"output length: the run generated {served:.0f} tokens a request where {out:.0f} were asked for")
    return float(inp), float(served)


def served_output(row: InferenceRow, out: float) -> float:
    """The mean output a row's requests produced: what the run generated where that differs from the asked-for
    `out` by more than GENERATED_TOLERANCE, else `out`."""
    generated = generated_length(row)
    if generated is not None and abs(generated / out - 1.0) > GENERATED_TOLERANCE:
        return generated
    return out


#: A run's measured mean output replaces the requested length when they differ by more than this share.
GENERATED_TOLERANCE = 0.02
_REQUESTED = re.compile(r"~|emulated|request|max[_ ]?tokens|up to|\bvar\b", re.IGNORECASE)


def _significant_digits(text: str) -> int:
    found = re.search(r"\d[\d.,]*", text.replace(",", ""))
    return len(found.group(0).replace(".", "").lstrip("0")) if found else 0


def generated_length(row: InferenceRow) -> float | None:
    """The mean tokens a run's requests generated, where the row states a requested length (a target its requests
    could stop short of, at an end-of-sequence token: '~250 (emulated, var 20)') and measures what they produced:
    from its mean end-to-end latency, TTFT and TPOT (e2e = TTFT + (O - 1) TPOT), else from its output tokens/s over
    its requests/s when that rate has three significant digits. None otherwise."""
    if not _REQUESTED.search(row.raw.get("output_len", "")):
        return None
    e2e = parse_time(row.raw.get("e2e_latency_s"), "e2e_latency_s")
    stats = latency_stats(row)
    ttft, tpot = stats.get("ttft_s", {}), stats.get("tpot_s", {})
    stat = "mean" if "mean" in ttft and "mean" in tpot else ("value" if "value" in ttft and "value" in tpot else None)
    if e2e is not None and stat is not None and tpot[stat] > 0 and e2e > ttft[stat]:
        return 1.0 + (e2e - ttft[stat]) / tpot[stat]
    total = parse_positive(row.raw.get("output_tokens_per_s_total"))
    rate_text = row.raw.get("requests_per_s", "")
    rate = parse_positive(rate_text)
    if total is not None and rate is not None and _significant_digits(rate_text) >= 3:
        return total / rate
    return None


def _job_lengths(gen: Harness | None, text: str, stated: float) -> LengthDist:
    """The lengths a row's requests had: its load generator's sampler where that spreads a stated length."""
    if gen is not None and gen.length_floor < 1.0:
        return gen.lengths(stated)
    return _length_dist(text, stated)


def _length_dist(text: str, mean: float) -> LengthDist:
    """A fixed length, or for guidellm's emulated data ('~1500 (emulated, var 150)') the uniform spread it draws
    from: mean + randint(-var, var) tokens (guidellm EmulatedRequestGenerator, github neuralmagic/guidellm
    src/guidellm/request/emulated.py)."""
    found = re.search(r"emulated[^)]*\bvar\s*(\d+)", text, re.IGNORECASE)
    spread = int(found.group(1)) if found else 0
    n = max(1, round(mean))
    if spread <= 0 or spread >= n:
        return LengthDist.fixed(n)
    return LengthDist("uniform", float(n), 0.0, n - spread, n + spread)


def served_prompt(
    row: InferenceRow, gen: Harness | None, engine: str, model: str, stated_in: float, notes: list[str]
) -> float:
    """The mean prompt as the server tokenised it: the stated length, scaled where the row's load generator and the
    `engine` image it ran tokenise the prompt differently (harness.Harness.tokenizer_mismatch_of)."""
    image_and_date = (row.raw.get("serving_engine", ""), row.raw.get("date_or_version", ""))
    mismatch = gen.tokenizer_mismatch_of(engine, model, *image_and_date) if gen is not None else None
    if gen is None or mismatch is None:
        return stated_in
    notes.append(
        f"prompts as the server tokenised them: {mismatch.factor:.2f} x the stated length ({gen.name}: {mismatch.why})"
    )
    return stated_in * mismatch.factor


def request_lengths(
    row: InferenceRow, gen: Harness | None, served_in: float, stated_out: float, notes: list[str]
) -> tuple[LengthDist, LengthDist]:
    """The input and output lengths a row's requests had: ShareGPT's reply lengths where the row sampled ShareGPT,
    else the stated means as its load generator's sampler spreads them (_job_lengths)."""
    if sharegpt(row):
        output = sharegpt_replies(max(1.0, stated_out), served_in)
        notes.append(f"ShareGPT replies: lognormal lengths, mean {stated_out:.0f}, CV {SHAREGPT_REPLY_CV:g}")
    else:
        output = _job_lengths(gen, row.raw.get("output_len", ""), max(1.0, stated_out))
    return _job_lengths(gen, row.raw.get("input_len", ""), served_in), output
