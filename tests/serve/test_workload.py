"""Serving scenarios, length distributions, traces (a trace replayed in part is its first requests, their load,
lengths and price) and arrival processes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.sim.arrivals import arrival_times, offered_request_rate, open_loop_times
from chipwise.workload.lengths import LengthDist, LengthSpec
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.serving_job import serving_job
from chipwise.workload.traces import read_trace
from cli_run import run_error, run_json
from scenario_kinds import serve_scenario

BASE = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\n"


def test_design_contract_scenario_parses() -> None:
    sc = load_scenario(
        "kind: serve\nmodel: llama-2-70b\nhardware: h200\nchips: 8\nprecision: fp8\ninput_tokens: 1024\n"
        "output_tokens: 1024\narrival_rate: 20\nrequests: 10000\nslo: {ttft_p99_s: 2.0, tpot_p99_s: 0.05}\n"
        "plan: {tp: 8, pp: 1, ep: 1, max_batch: 256, disaggregated: false}\n"
    )
    assert isinstance(sc, ServeScenario)
    assert sc.arrival_rate == 20 and sc.slo is not None and sc.slo.targets() == {"ttft_p99": 2.0, "tpot_p99": 0.05}
    assert sc.plan is not None and sc.plan.tp == 8


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("input_tokens: 100\noutput_tokens: 10\narrival_rate: -3\n", "arrival_rate"),
        ("input_tokens: 100\noutput_tokens: 10\n", "give a load"),
        ("input_tokens: 100\noutput_tokens: 10\noffline: true\nconcurrency: 4\n", "one of"),
        ("input_tokens: 100\noutput_tokens: 10\noffline: true\ncolour: red\n", "unknown key"),
        ("input_tokens: {dist: lognormal}\noutput_tokens: 10\noffline: true\n", "mean"),
        # keys a distribution does not use were dropped silently (a uniform length of mean 190 simulated 150)
        (
            "input_tokens: {dist: uniform, min: 100, max: 200, mean: 190}\noutput_tokens: 10\noffline: true\n",
            "a uniform length has no mean (it is set by min and max): drop mean",
        ),
        (
            "input_tokens: {dist: exponential, mean: 100, std: 50}\noutput_tokens: 10\noffline: true\n",
            "an exponential length has no std",
        ),
        # a load key the load does not use was ignored (burstiness beside users, duration_s beside a trace)
        ("output_tokens: 8\nconcurrency: 8\nburstiness: 4\n", "burstiness shapes an arrival_rate's gaps"),
        ("output_tokens: 8\noffline: true\nburstiness: 4\n", "burstiness shapes an arrival_rate's gaps"),
        ("output_tokens: 8\nconcurrency: 8\nduration_s: 10\n", "duration_s sets how long an arrival_rate lasts"),
        ("output_tokens: 8\narrival_rate: 2\nseed: -1\n", "seed"),  # it crashed the simulator ('internal error')
        # a word where a count goes was read as a trace path (an assertion failed), a huge run ran out of memory
        ("output_tokens: lots\narrival_rate: 2\n", "output_tokens 'lots' is not a token count"),
        ("input_tokens: lots\noutput_tokens: 8\narrival_rate: 2\n", "input_tokens 'lots' is not a token count"),
        ("output_tokens: 8\narrival_rate: 2\nrequests: 1e12\n", "at most 1,000,000 are simulated"),
        ("output_tokens: 8\narrival_rate: 2\nduration_s: 1e12\n", "arrival_rate x duration_s asks for"),
        ("output_tokens: 8\nconcurrency: 8\nprompt_pool: -100\n", "prompt_pool"),
    ],
)
def test_bad_scenarios_are_one_line_errors(extra: str, needle: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(BASE + extra)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("slo: {ttft_p99: 2s}\n", "slo.ttft_p99: unknown key. Fix: use 'ttft_p99_s'"),
        ("arival_rate: 3\n", "arival_rate: unknown key. Fix: use 'arrival_rate'"),
        ("rate: 3\n", "rate: unknown key. Fix: use 'arrival_rate'"),  # plan serve's --rate (difflib said 'trace')
        ("plan: {max_bacth: 4}\n", "plan.max_bacth: unknown key. Fix: use 'max_batch'"),
        ("colour: red\n", "colour: unknown key. Fix: use one of the serve keys: kind, model, hardware, chips"),
        # pydantic's union branch ('input_tokens.int') is not a key of the scenario
        ("input_tokens: 100.5\n", "input_tokens: Input should be a valid integer, got a number with a fractional "
         "part. Fix: give a whole number"),
        ("arrival_rate: fast\n", "arrival_rate: Input should be a valid number, unable to parse string as a number. "
         "Fix: give a number"),
        ("arrival_rate: -3\n", "arrival_rate: Input should be greater than 0. Fix: give a positive number"),
        # a bare TPOT of a second or more is a unit slip: 50 meant 50 ms (with its unit, '1.5s' stands)
        ("arrival_rate: 1\nslo: {tpot_p99_s: 50}\n", "slo.tpot_p99_s: 50 s per output token is not a plausible"),
        ('arrival_rate: 1\nslo: {tpot_p99_s: "50"}\n', "slo.tpot_p99_s: 50 s per output token is not a plausible"),
    ],
)  # fmt: skip
def test_scenario_errors_name_the_key_and_the_fix(extra: str, message: str) -> None:
    """A mistyped key is answered with the nearest one (or the keys there are); a bad value with what to give."""
    with pytest.raises(ChipwiseError) as exc:
        load_scenario("kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\noutput_tokens: 10\n" + extra)
    assert message in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ChipwiseError, match=r"seqlen: unknown key. Fix: use 'seq_len'"):
        load_scenario("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nseqlen: 4096\n")


def test_inline_scenarios_in_json_or_yaml_flow_style() -> None:
    flow = load_scenario(
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, offline: true, input_tokens: 100,"
        " output_tokens: 10}"
    )
    assert isinstance(flow, ServeScenario) and flow.offline
    js = load_scenario(
        '{"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "offline": true,'
        ' "input_tokens": 100, "output_tokens": 10, "requests": 1e3}'
    )
    assert isinstance(js, ServeScenario) and js.requests == 1000  # JSON's 1e3, which YAML 1.1 reads as text
    with pytest.raises(ChipwiseError, match=r"not valid YAML or JSON \(line 1\)"):
        load_scenario("{kind: serve, model: [llama")
    # a key given twice is an error, not the last value silently (YAML and JSON alike)
    with pytest.raises(ChipwiseError, match=r"line 4\): found duplicate key 'hardware'"):
        load_scenario("kind: serve\nhardware: h100-sxm\nmodel: llama-3.1-8b\nhardware: b200\n")
    with pytest.raises(ChipwiseError, match=r"found duplicate key 'model'. Fix: give each key once"):
        load_scenario('{"kind": "serve", "model": "llama-3.1-8b", "model": "llama-3.1-70b"}')


def test_length_distributions_have_their_mean() -> None:
    rng = np.random.default_rng(0)
    for spec in (
        LengthSpec(dist="lognormal", mean=500, std=250),
        LengthSpec(dist="normal", mean=500, std=50),
        LengthSpec(dist="exponential", mean=500),
        LengthSpec(dist="uniform", min=100, max=900),
    ):
        d = LengthDist.of(spec)
        x = d.sample(20000, rng)
        assert x.min() >= 1 and abs(x.mean() - 500) < 25, spec.dist
    assert (LengthDist.of(64).sample(5, rng) == 64).all()


def test_poisson_and_bursty_gaps() -> None:
    rng = np.random.default_rng(0)
    t = open_loop_times(Load("rate", rate=10.0), 50000, rng)
    gaps = np.diff(t)
    assert t[0] == 0 and gaps.mean() == pytest.approx(0.1, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.05)
    bursty = np.diff(open_loop_times(Load("rate", rate=10.0, burstiness=3.0), 50000, rng))
    assert bursty.mean() == pytest.approx(0.1, rel=0.05)
    assert bursty.std() / bursty.mean() == pytest.approx(3.0, rel=0.1)
    assert (open_loop_times(Load("offline"), 10, rng) == 0).all()


@pytest.mark.parametrize("burstiness", [1.0, 0.01, 0.5, 2.0, 4.0, 100.0])
def test_every_burstiness_offers_the_rate_asked_for(burstiness: float) -> None:
    """2,000 arrivals at 10 req/s span 1,999 / 10 = 199.9 s whatever the gaps' shape, so that a burstiness sweep
    changes only the shape. Poisson gaps had been left as drawn: 202.35 s for this seed (and 4.89 req/s through
    predict at 5 asked), where every other burstiness read 199.9 s."""
    t = open_loop_times(Load("rate", rate=10.0, burstiness=burstiness), 2000, np.random.default_rng(0))
    assert t[0] == 0 and t[-1] == pytest.approx(199.9, rel=1e-12)


def test_trace_csv_and_jsonl(tmp_path: Path, catalog: Catalog) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("arrival_s,input_tokens,output_tokens\n0.0,200,20\n0.5,100,10\n1.5,300,30\n")
    tr = read_trace(str(csv))
    assert tr.arrival.tolist() == [0.0, 0.5, 1.5] and tr.input.tolist() == [200, 100, 300]
    jl = tmp_path / "t.jsonl"
    jl.write_text(
        '{"timestamp": 3, "prompt_tokens": 5, "completion_tokens": 7}\n'
        '{"timestamp": 4, "prompt_tokens": 6, "completion_tokens": 8}\n'
    )
    assert read_trace(str(jl)).output.tolist() == [7, 8]
    sc = serve_scenario(BASE + f"input_tokens: {csv}\n")
    job = serving_job(load_model(catalog, "llama-3.1-8b"), sc)
    assert job.load.kind == "trace" and job.requests == 3
    times = arrival_times(job, 6, np.random.default_rng(0))
    assert times is not None and times.tolist()[:3] == [0.0, 0.5, 1.5] and times[3] > times[2]


def test_a_trace_separated_by_semicolons_or_tabs_reads_as_with_commas(tmp_path: Path) -> None:
    """A spreadsheet's CSV export in a locale whose decimal mark is a comma separates by ';' (or a tab): read as one
    column, it failed with 'no arrival column'."""
    for sep in (";", "\t"):
        f = tmp_path / "t.csv"
        f.write_text(sep.join(("arrival_s", "input_tokens", "output_tokens")) + "\n" + f"0.5{sep}100{sep}10\n")
        assert read_trace(str(f)).input.tolist() == [100]


def test_trace_with_a_missing_column(tmp_path: Path, catalog: Catalog) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival_s,input_tokens\n0,100\n")
    with pytest.raises(ChipwiseError, match="no output column"):
        read_trace(str(bad))
    sc = serve_scenario(BASE + f"input_tokens: {bad}\n")
    with pytest.raises(ChipwiseError, match="no output column"):
        serving_job(load_model(catalog, "llama-3.1-8b"), sc)


def test_trace_values_no_request_can_have_are_refused(tmp_path: Path) -> None:
    """A token count past any context (1e30 wrapped round the simulator's integers and read as negative) and a JSON
    true (read as one token) are one-line errors."""
    huge = tmp_path / "huge.csv"
    huge.write_text("arrival_s,input_tokens,output_tokens\n0,1e30,10\n")
    with pytest.raises(ChipwiseError, match="data row 1: input_tokens 1e30 is out of range"):
        read_trace(str(huge))
    flag = tmp_path / "flag.jsonl"
    flag.write_text('{"arrival_s": 0, "input_tokens": true, "output_tokens": 10}\n')
    with pytest.raises(ChipwiseError, match="line 1: input_tokens 'True' is not a number"):
        read_trace(str(flag))


def test_requests_longer_than_the_context_are_refused(tmp_path: Path, catalog: Catalog) -> None:
    """Prompt plus answer beyond the model's context (its config.json's max_position_embeddings) is one line: fixed
    lengths, a bounded distribution's maximum, an unbounded one's mean, a trace's longest request."""
    llama2 = load_model(catalog, "llama-2-7b")  # 4,096 tokens
    cases = {
        "input_tokens: 8000\noutput_tokens: 200\n": "input 8,000 + output 200 tokens exceed llama-2-7b's context",
        "input_tokens: {dist: uniform, min: 100, max: 4000}\noutput_tokens: 200\n": "longest request: input 4,000",
        "input_tokens: {dist: lognormal, mean: 5000, std: 100}\noutput_tokens: 10\n": "input 5,000 + output 10",
    }
    for lengths, needle in cases.items():
        sc = serve_scenario(BASE.replace("llama-3.1-8b", "llama-2-7b") + lengths + "offline: true\n")
        with pytest.raises(ChipwiseError, match="Fix: shorten the prompt") as exc:
            serving_job(llama2, sc)
        assert needle in str(exc.value), lengths
    # an unbounded distribution whose mean fits but whose longest draws do not asks for a max within the context
    unbounded = "input_tokens: {dist: lognormal, mean: 2000, std: 600%s}\noutput_tokens: 10\noffline: true\n"
    with pytest.raises(ChipwiseError, match=r"give input_tokens a max within the context \(at most 4,086\)"):
        serving_job(llama2, serve_scenario(BASE + unbounded % ""))
    assert serving_job(llama2, serve_scenario(BASE + unbounded % ", max: 4086")).requests > 0
    # where that max would move the mean (3,000 and 2,000 clipped at 4,086 draw 2,597, which LengthSpec refuses), it
    # asks for a shorter length or a uniform one instead: it had offered the max
    wide = unbounded.replace("mean: 2000, std: 600", "mean: 3000, std: 2000") % ""
    with pytest.raises(ChipwiseError) as exc:
        serving_job(llama2, serve_scenario(BASE + wide))
    assert str(exc.value).endswith(
        "Fix: give input_tokens a smaller mean or std (its draws reach its mean + 4 std), or a uniform length with a "
        "max of at most 4,086 (a max there would draw a mean of 2,597)."
    )
    trace = tmp_path / "long.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n1,4000,100\n")
    with pytest.raises(ChipwiseError, match="longest request: input 4,000 \\+ output 100 tokens exceed"):
        serving_job(llama2, serve_scenario(BASE + f"trace: {trace}\n"))
    assert serving_job(load_model(catalog, "llama-3.1-8b"), serve_scenario(BASE + f"trace: {trace}\n")).requests == 2


def test_slo_times_in_a_scenario_take_units(catalog: Catalog) -> None:
    """A scenario's SLO is seconds, or text with a unit in any case; a bad one says why."""
    sc = serve_scenario(
        BASE + 'offline: true\noutput_tokens: 8\nslo: {ttft_p99_s: "2s", tpot_p99_s: 50MS, e2e_p99_s: 3}\n'
    )
    assert sc.slo is not None and sc.slo.targets() == {"ttft_p99": 2.0, "tpot_p99": 0.05, "e2e_p99": 3.0}
    for value, needle in (
        ('"-2s"', "-2s: an SLO must be positive"),
        ("2min", "2min: unit 'min' unknown; use s, ms or us"),
    ):
        with pytest.raises(ChipwiseError, match=f"slo.ttft_p99_s: {needle}"):
            load_scenario(BASE + f"offline: true\noutput_tokens: 8\nslo: {{ttft_p99_s: {value}}}\n")


def test_trace_times_in_epoch_milliseconds(tmp_path: Path) -> None:
    """Arrival times start at 0 whatever the epoch; a column named *_ms, or times past 1e12 (epoch milliseconds),
    are milliseconds."""
    epoch_s = tmp_path / "s.csv"
    epoch_s.write_text("timestamp,input_tokens,output_tokens\n1700000000.5,10,5\n1700000002.0,10,5\n")
    assert read_trace(str(epoch_s)).arrival.tolist() == [0.0, 1.5]
    epoch_ms = tmp_path / "ms.csv"
    epoch_ms.write_text("timestamp,input_tokens,output_tokens\n1700000000107,10,5\n1700000000138,10,5\n")
    assert read_trace(str(epoch_ms)).arrival.tolist() == pytest.approx([0.0, 0.031])
    named = tmp_path / "named.jsonl"
    named.write_text('{"arrival_ms": 250, "input_tokens": 10, "output_tokens": 5}\n'
                     '{"arrival_ms": 1250, "input_tokens": 10, "output_tokens": 5}\n')  # fmt: skip
    assert read_trace(str(named)).arrival.tolist() == [0.0, 1.0]


def test_a_relative_trace_path_is_the_scenario_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`trace: t.csv` in a scenario file names the file beside it, from whatever folder chipwise runs in; an
    absolute path stays as it is."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "t.csv").write_text("arrival_s,input_tokens,output_tokens\n0,10,5\n")
    f = folder / "serve.yaml"
    f.write_text(BASE + "trace: t.csv\n")
    monkeypatch.chdir(tmp_path)
    sc = serve_scenario(str(f))
    assert sc.trace == str(folder / "t.csv") and read_trace(sc.trace).input.tolist() == [10]
    f.write_text(BASE + "input_tokens: t.csv\noffline: true\n")
    assert serve_scenario(str(f)).input_tokens == str(folder / "t.csv")
    absolute = tmp_path / "elsewhere.csv"
    f.write_text(BASE + f"trace: {absolute}\n")
    assert serve_scenario(str(f)).trace == str(absolute)
    assert serve_scenario(BASE + "trace: t.csv\n").trace == "t.csv"  # inline: from the current folder


def test_a_clipped_distribution_is_priced_at_the_mean_it_draws() -> None:
    """A lognormal of mean 1,000 and std 3,000 clipped at 4,096 draws about 755 tokens a request, and the job's
    mean says so (the estimator and the cost per token read it); unclipped, the stated mean stands. (A scenario's
    length that far off its mean is refused, LengthSpec._clipped_mean; validation builds such lengths itself, as
    ShareGPT's bounded replies.)"""
    clipped = LengthDist("lognormal", 1000.0, 3000.0, 1, 4096)
    drawn = clipped.sample(400_000, np.random.default_rng(7)).mean()
    assert clipped.expected == pytest.approx(drawn, rel=0.01) and clipped.expected < 800
    assert LengthDist.of(LengthSpec(dist="normal", mean=1000, std=100)).expected == pytest.approx(1000, abs=1)
    assert LengthDist.fixed(512).expected == 512


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("input_tokens: {dist: lognormal, mean: 5000, std: 100, max: 4096}\noutput_tokens: 10\narrival_rate: 1\n",
         "length mean 5000 lies outside min 1 .. max 4096"),
        ("trace: t.csv\ninput_tokens: 100\n", "a trace gives every request's input and output tokens; input_tokens"),
        ("trace: t.csv\noutput_tokens: 10\narrival_rate: 2\n", "output_tokens would be ignored"),
        ("input_tokens: t.csv\noutput_tokens: 10\n", "output_tokens would be ignored"),
    ],
)  # fmt: skip
def test_lengths_that_would_be_silently_changed_are_errors(extra: str, needle: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(BASE + extra)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_a_spreadsheet_trace_reads_as_written(tmp_path: Path) -> None:
    """A spreadsheet's CSV export opens with a byte-order mark and may capitalise its headers; a missing value says
    which (it read "output_tokens 'None' is not a number")."""
    bom = tmp_path / "bom.csv"
    bom.write_text("Arrival_S,Input_Tokens,Output_Tokens\n0,100,10\n0.5,200,20\n", encoding="utf-8-sig")
    trace = read_trace(str(bom))
    assert trace.input.tolist() == [100, 200] and trace.arrival.tolist() == [0.0, 0.5]
    short = tmp_path / "short.csv"
    short.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200\n")
    with pytest.raises(ChipwiseError, match=r"data row 2 has no output_tokens\. Fix: give every request its"):
        read_trace(str(short))


def test_a_serving_scenario_without_its_kind_says_so() -> None:
    """Read as training (the default kind), its first serving key was an unknown key ('use tokens')."""
    with pytest.raises(
        ChipwiseError, match=r"kind is missing, and arrival_rate, output_tokens are serving keys\. Fix: "
    ):
        load_scenario("model: llama-3.1-8b\nhardware: h100-sxm\noutput_tokens: 10\narrival_rate: 2\n")


def test_a_trace_out_of_time_order_is_refused_naming_the_row(tmp_path: Path) -> None:
    """Rows out of time order (most likely a mis-joined file) were sorted without a word; the first that arrives
    before the one above it is named, with the fix. Rows at one instant are in order."""
    unsorted = tmp_path / "u.csv"
    unsorted.write_text("arrival_s,input_tokens,output_tokens\n0,10,5\n5,20,5\n2,30,5\n")
    with pytest.raises(ChipwiseError) as exc:
        read_trace(str(unsorted))
    message = str(exc.value)
    assert f"trace '{unsorted}' data row 3 arrives at arrival_s 2, before data row 2 (5)" in message
    assert message.endswith("Fix: sort the trace by its arrival time.") and "\n" not in message
    lines = tmp_path / "u.jsonl"
    lines.write_text('{"arrival_s": 3, "input_tokens": 1, "output_tokens": 2}\n{"arrival_s": 1, "input_tokens": 1, '
                     '"output_tokens": 2}\n')  # fmt: skip
    with pytest.raises(ChipwiseError, match=r"u\.jsonl' line 2 arrives at arrival_s 1, before line 1 \(3\)"):
        read_trace(str(lines))
    burst = tmp_path / "b.csv"
    burst.write_text("arrival_s,input_tokens,output_tokens\n1,10,5\n1,20,5\n4,30,5\n")
    assert read_trace(str(burst)).arrival.tolist() == [0.0, 0.0, 3.0]


def test_a_trace_row_with_more_cells_than_its_header_is_refused(tmp_path: Path) -> None:
    """A value with a thousands separator ('1,024') splits in two and shifts the rest: it was read as input 1 and
    output 24 without a word. Blank cells past the header (a trailing separator) are let be."""
    shifted = tmp_path / "s.csv"
    shifted.write_text("arrival_s,input_tokens,output_tokens\n0,10,5\n1,1,024,256\n")
    with pytest.raises(ChipwiseError) as exc:
        read_trace(str(shifted))
    message = str(exc.value)
    assert f"trace '{shifted}' data row 2 has 4 cells where the header names 3. Fix: " in message
    assert "\n" not in message
    trailing = tmp_path / "t.csv"
    trailing.write_text("arrival_s,input_tokens,output_tokens\n0,10,5,\n1,20,6,\n")
    assert read_trace(str(trailing)).output.tolist() == [5, 6]


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "-0.1", "1", "1.5"])
def test_a_prefix_hit_rate_outside_zero_to_one_says_what_it_must_be(value: str) -> None:
    """NaN read 'Input should be less than 1'; every value outside [0, 1) says it must be a finite number in it."""
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(BASE + f"input_tokens: 100\noutput_tokens: 10\narrival_rate: 2\nprefix_hit_rate: {value}\n")
    assert "prefix_hit_rate: must be a finite number in [0, 1), not " in str(exc.value)
    assert load_scenario(BASE + "input_tokens: 100\noutput_tokens: 10\narrival_rate: 2\nprefix_hit_rate: 0.5\n")


# A fixed length's mean is whole, a length error with no max prints none, and a sparse open loop whose steady window
# holds no completion is measured to the run's end.


INLINE_BASE = "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, requests: 50, arrival_rate: 2, "


@pytest.mark.parametrize("mean", [1.5, 2.5, 100.5])
def test_a_fixed_length_needs_a_whole_mean(mean: float) -> None:
    """{dist: fixed, mean: 1.5} had been reported as a mean of 1.5 and simulated as 2 tokens (2.5 as 2)."""
    with pytest.raises(ValidationError, match=f"a fixed length is a whole number of tokens, got mean {mean:g}"):
        LengthSpec(dist="fixed", mean=mean)


def test_a_whole_fixed_mean_is_what_is_simulated() -> None:
    dist = LengthDist.of(LengthSpec(dist="fixed", mean=2.0))
    assert dist.expected == 2.0
    assert dist.sample(3, np.random.default_rng(0)).tolist() == [2, 2, 2]


def test_predict_refuses_a_fractional_fixed_mean(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(
        capsys, ["predict", INLINE_BASE + "input_tokens: {dist: fixed, mean: 1.5}, output_tokens: 128}", "--json"]
    )
    assert "input_tokens: a fixed length is a whole number of tokens, got mean 1.5; give a whole number" in line


def test_a_mean_below_min_with_no_max_names_no_max() -> None:
    """It had read 'lies outside min 200 .. max None'."""
    with pytest.raises(ValidationError, match="length mean 100 lies below min 200: clipping") as err:
        LengthSpec(dist="normal", mean=100, std=10, min=200)
    assert "None" not in str(err.value)
    with pytest.raises(ValidationError, match=r"length mean 5000 lies outside min 1 \.\. max 4096: clipping"):
        LengthSpec(dist="normal", mean=5000, std=10, max=4096)


def test_a_two_request_trace_is_measured_to_the_runs_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two requests 0.5 s apart of 10 / 5 tokens, each done in about 46 ms: the window from the fill (46 ms) to the
    last arrival (0.5 s) held no completion and read 0 output tok/s and 0 req/s. Run on to the end, it holds the
    second request alone over 0.5 s: 1 / 0.5 = 2 req/s, 5 / 0.5 = 10 output and 10 / 0.5 = 20 input tok/s."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"timestamp": 1700000000000, "input_length": 10, "output_length": 5}\n'
        '{"timestamp": 1700000000500, "input_length": 10, "output_length": 5}\n'
    )
    data = run_json(
        capsys,
        ["predict", f"{{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, trace: '{trace}'}}", "--json"],
    )
    lo, hi = data["simulation"]["window_s"]
    assert hi == pytest.approx(data["simulation"]["makespan_s"], rel=1e-12)
    assert hi - lo == pytest.approx(0.5, rel=1e-9)
    assert data["requests_per_s"] == pytest.approx(2.0, rel=1e-9)
    assert data["output_tokens_per_s"] == pytest.approx(10.0, rel=1e-9)
    assert data["input_tokens_per_s"] == pytest.approx(20.0, rel=1e-9)


#: the scenario the part-replayed trace runs under: Llama 3.1 8B in fp8 on one H100
TRACE_SCENARIO = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100\nchips: 1\nprecision: fp8\nplan: {tp: 1}\n"


def _burst(tmp_path: Path) -> Path:
    """200 requests: the first 100 at 0, 0.01, ..., 0.99 s (100 req/s) of 512 in / 128 out, then 100 more 1 s apart
    (to 100 s) of 1,024 in / 256 out."""
    rows = [f"{i / 100:.2f},512,128" for i in range(100)] + [f"{i - 99},1024,256" for i in range(100, 200)]
    path = tmp_path / "burst.csv"
    path.write_text("arrival_s,input_tokens,output_tokens\n" + "\n".join(rows) + "\n")
    return path


def test_a_trace_replayed_in_part_is_its_first_requests(tmp_path: Path, catalog: Catalog) -> None:
    """requests: 100 of the 200 replays the first 100, which arrive at 100 / (0.99 + 0.01) = 100 req/s (the trace's
    own n / (last + mean gap)) with 512 / 128 tokens; the whole trace's 200 / (100 + 100 / 199) = 1.990 req/s and
    768 / 192 tokens had been read for them."""
    trace = _burst(tmp_path)
    model = load_model(catalog, "llama-3.1-8b")
    job = serving_job(model, serve_scenario(TRACE_SCENARIO + f"trace: {trace}\nrequests: 100\n"))
    assert job.requests == 100 and job.trace is not None and job.trace.arrival.size == 100
    assert offered_request_rate(job) == pytest.approx(100.0, rel=1e-12)
    assert (job.mean_input, job.mean_output, job.max_input, job.max_output) == (512.0, 128.0, 512, 128)
    assert (job.input.mean, job.output.mean, job.input.maximum) == (512.0, 128.0, 512)
    times = arrival_times(job, 100, np.random.default_rng(0))
    assert times is not None and times[-1] == pytest.approx(0.99)
    whole = serving_job(model, serve_scenario(TRACE_SCENARIO + f"trace: {trace}\n"))
    assert offered_request_rate(whole) == pytest.approx(200 / (100 + 100 / 199), rel=1e-12)
    assert (whole.mean_input, whole.mean_output) == (768.0, 192.0)
    # more requests than the trace holds cycle it whole, at its own rate
    more = serving_job(model, serve_scenario(TRACE_SCENARIO + f"trace: {trace}\nrequests: 400\n"))
    assert more.trace is not None and more.trace.arrival.size == 200
    assert offered_request_rate(more) == offered_request_rate(whole)


def test_predict_prices_a_part_replayed_trace_on_its_own_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trace's first 100 requests, 100 req/s on one H100 that sustains 93.5, are 107% of it, over capacity, and
    priced on the tokens the run delivered; the whole trace's 1.96 req/s had read 2.1% load and $7.58 per M output
    tokens ($6.88/h over 252 tok/s) for a run that delivered ~7,000 tok/s."""
    path = tmp_path / "sc.yaml"
    path.write_text(TRACE_SCENARIO + f"trace: {_burst(tmp_path)}\nrequests: 100\n")
    data = run_json(capsys, ["predict", str(path), "--json"])
    assert data["load"]["utilisation"] == pytest.approx(100.0 / data["load"]["capacity_requests_per_s"], rel=1e-9)
    assert data["load"]["utilisation"] > 1.0
    assert data["priced_output_tokens_per_s"] == pytest.approx(data["output_tokens_per_s"], rel=1e-9)
    assert data["load"]["input_tokens_mean"] == 512.0 and data["load"]["output_tokens_mean"] == 128.0


def test_a_mooncake_trace_is_read_in_milliseconds(tmp_path: Path) -> None:
    """Mooncake's format (`timestamp`, `input_length`, `output_length`, `hash_ids`) times its requests in
    milliseconds since the first: 0, 100, 200 ms is 10 req/s, where it had been read as 0, 100, 200 s (0.01 req/s).
    A `timestamp` beside other length columns is still seconds."""
    row = '{{"timestamp": {}, "input_length": 1000, "output_length": 100, "hash_ids": [1]}}\n'
    mooncake = tmp_path / "m.jsonl"
    mooncake.write_text("".join(row.format(100 * i) for i in range(3)))
    assert read_trace(str(mooncake)).arrival.tolist() == pytest.approx([0.0, 0.1, 0.2])
    epoch = tmp_path / "e.jsonl"  # epoch seconds under Mooncake's names stay seconds
    epoch.write_text("".join(row.format(1_700_000_000 + i) for i in range(3)))
    assert read_trace(str(epoch)).arrival.tolist() == [0.0, 1.0, 2.0]
    plain = tmp_path / "p.csv"
    plain.write_text("timestamp,input_tokens,output_tokens\n0,1000,100\n100,1000,100\n")
    assert read_trace(str(plain)).arrival.tolist() == [0.0, 100.0]
