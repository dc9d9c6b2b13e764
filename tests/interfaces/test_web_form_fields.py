"""The web page's forms send what the API, the README and the notes rely on: the Training tab's region, utilisation
(owned pricing), sequence length and global batch; the Serving plan tab's pricing, KV cache, engine and a load of
concurrent users or offline; TPOT in ms on both serving tabs. The sensitivity's note gives no run count of its own."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces.web.routes import GET_ROUTES, POST_ROUTES, Settings, plan_serve, plan_train
from chipwise.interfaces.web.server import page

from .test_web import DOM, _node, _script, needs_node

#: a fetch that records each POST's body and answers an empty result
RECORD = (
    "const sent = [];\n"
    "globalThis.fetch = (path, opts) => { sent.push([path, JSON.parse(opts.body)]); return Promise.resolve({ ok: true, "
    "status: 200, json: async () => ({ results: [], skipped: [], search: { evaluated: 0, feasible: 0, seconds: 0 } }) "
    "}); };\n"
)


def _sent(call: str, form: dict[str, str], chips: Sequence[str] = ()) -> Any:
    """The body the page's `call` POSTs for `form`."""
    js = (
        _script()
        + DOM
        + f"Object.assign(FORM, {json.dumps(form)}); CHECKED.push(...{json.dumps(list(chips))});\n"
        + RECORD
        + f"Promise.resolve({call}({{ preventDefault() {{}} }})).then(() => console.log(JSON.stringify(sent)));"
    )
    ((_, body),) = json.loads(_node(js)[-1])
    return body


TRAIN = {"model": "llama-3.1-8b", "chips": "64", "precision": "bf16", "objective": "time", "tokens": "1T"}


@needs_node
def test_the_training_tab_sends_its_new_fields() -> None:
    form = {**TRAIN, "pricing": "owned", "region": "eu-west-1", "utilisation": "0.5", "seq_len": "4096",
            "global_batch_tokens": "2M"}  # fmt: skip
    body = _sent("runTrain", form, ["h100-sxm"])
    assert body == {"model": "llama-3.1-8b", "chips": 64, "hardware": ["h100-sxm"], "precision": "bf16",
                    "objective": "time", "pricing": "owned", "tokens": "1T", "region": "eu-west-1",
                    "global_batch_tokens": "2M", "seq_len": 4096, "utilisation": 0.5}  # fmt: skip


@needs_node
def test_the_training_tab_sends_utilisation_for_owned_pricing_only() -> None:
    body = _sent("runTrain", {**TRAIN, "pricing": "on-demand", "utilisation": "0.5", "seq_len": ""}, ["h100-sxm"])
    assert "utilisation" not in body and "seq_len" not in body and body["pricing"] == "on-demand"


def test_the_api_takes_utilisation_and_refuses_it_for_rentals() -> None:  # as plan serve's route and the API
    """Owned at utilisation 0.5: the idle hours' record says so; a rental is told the fields to set, not a flag."""
    body = {"model": "llama-3.1-8b", "chips": 8, "hardware": "h100-sxm", "tokens": "10G", "pricing": "owned"}
    (row,) = plan_train({**body, "utilisation": 0.5}, Settings())["results"]
    assert row["owned_idle_hours"]["utilisation"] == 0.5
    line = (
        "utilisation 0.5 prices owned chips (their cost per hour of paid work), but pricing is on-demand: rented "
        'chips are paid by the hour used, at the provider\'s rate. Fix: add "pricing": "owned", or drop utilisation.'
    )
    with pytest.raises(ChipwiseError, match=f"^{re.escape(line)}$"):
        plan_train({**body, "pricing": "on-demand", "utilisation": 0.5}, Settings())


PLAN = {"model": "llama-3.1-8b", "rate": "20", "input_tokens": "1024", "output_tokens": "256", "ttft_p99": "2",
        "tpot_p99_ms": "50", "precision": "auto", "hardware": "h100-sxm", "disaggregated": "yes",
        "router": "least_loaded"}  # fmt: skip


@needs_node
def test_the_serving_plan_tab_sends_pricing_kv_cache_engine_and_its_load() -> None:
    """README's `plan serve ... --kv-precision fp8` can be asked on the page; concurrent users or offline replace the
    rate."""
    form = {**PLAN, "kv_precision": "fp8", "engine": "vllm", "pricing": "spot", "region": "us-east-1"}
    body = _sent("runServePlan", form)
    assert body["kv_precision"] == "fp8" and body["engine"] == "vllm" and body["pricing"] == "spot"
    assert body["region"] == "us-east-1" and body["rate"] == 20 and "concurrency" not in body
    assert body["slo"] == {"ttft_p99": 2, "tpot_p99": "50ms"}
    users = _sent("runServePlan", {**PLAN, "concurrency": "64"})
    assert users["concurrency"] == 64 and "rate" not in users and "kv_precision" not in users
    offline = _sent("runServePlan", {**PLAN, "concurrency": "64", "offline": "yes"})
    assert offline["offline"] is True and "rate" not in offline and "concurrency" not in offline


@needs_node
def test_one_deployment_takes_tpot_in_ms() -> None:
    form = {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": "1", "precision": "fp8", "input_tokens": "512",
            "output_tokens": "128", "arrival_rate": "5", "requests": "200", "tpot_p99_ms": "50"}  # fmt: skip
    body = _sent("runServe", form)
    assert body["slo"] == {"tpot_p99_s": 0.05}
    assert 'name="tpot_p99_ms"' in page().decode() and 'name="tpot_p99_s"' not in page().decode()


def test_the_catalog_offers_the_kv_formats_and_engines() -> None:
    answer = GET_ROUTES["/api/catalog"](Settings())
    assert answer["kv_precisions"] == ["bf16", "fp16", "fp8", "int8", "fp4"]
    assert "vllm" in answer["engines"] and "default" not in answer["engines"]


def test_the_sensitivity_note_gives_no_count_of_its_own() -> None:
    """'57 runs ... some 12 s' had drifted from the answer's 55: the count is the answer's, said when done."""
    html = page().decode()
    assert "57 runs" not in html and "12 s on two idle cores" not in html
    assert "when done it says how many runs it made and how long they took" in " ".join(html.split())


@needs_node
def test_both_plan_tabs_send_a_provider_and_the_serving_tab_an_owned_utilisation() -> None:
    train = _sent("runTrain", {**TRAIN, "provider": "gcp"}, ["h100-sxm"])
    assert train["provider"] == "gcp"
    owned = _sent("runServePlan", {**PLAN, "pricing": "owned", "utilisation": "0.5", "provider": ""})
    assert owned["utilisation"] == 0.5 and "provider" not in owned
    rented = _sent("runServePlan", {**PLAN, "pricing": "on-demand", "utilisation": "0.5", "provider": "aws"})
    assert "utilisation" not in rented and rented["provider"] == "aws"


def test_the_api_takes_a_provider_and_names_its_fields_when_refusing_one() -> None:
    """plan train's and plan serve's --provider on the page: a price of that cloud; a region of another cloud, or a
    provider of owned chips, is refused naming the request's fields, not the command line's flags."""
    body = {"model": "llama-3.1-8b", "chips": 8, "hardware": "h100-sxm", "tokens": "10G"}
    (row,) = plan_train({**body, "provider": "gcp"}, Settings())["results"]
    assert row["price_source"]["provider"] == "gcp"
    with pytest.raises(ChipwiseError) as err:
        plan_train({**body, "provider": "gcp", "region": "us-east-1"}, Settings())
    assert str(err.value) == (
        "us-east-1 is an AWS region; provider is gcp. Fix: give a gcp region such as us-central1, or drop provider."
    )
    one = {"model": "llama-3.1-8b", "rate": 1, "output_tokens": 64, "hardware": "h100-sxm", "disaggregated": False}
    checked = plan_serve({**one, "provider": "gcp", "top": 1}, Settings())["verified"]
    assert [v["providers"] for v in checked] == [["gcp"]]
    serve = {"model": "llama-3.1-8b", "rate": 1, "hardware": "h100-sxm", "pricing": "owned", "provider": "aws"}
    with pytest.raises(ChipwiseError, match=r"^provider aws chooses whom chips are rented from, .* Fix: drop provider"):
        plan_serve(serve, Settings())


@needs_node
def test_the_serving_plan_tab_sends_lengths_as_counts_or_distributions() -> None:
    """The tab's lengths are what plan serve's --input-tokens takes: a plain number is sent as one, a count with a
    suffix or a distribution as its text, which the server reads (the fields had been numbers only)."""
    form = {**PLAN, "input_tokens": "lognormal:mean=2k,std=1.5k,max=16k", "output_tokens": "4k"}
    body = _sent("runServePlan", form)
    assert body["input_tokens"] == "lognormal:mean=2k,std=1.5k,max=16k" and body["output_tokens"] == "4k"
    assert _sent("runServePlan", PLAN)["input_tokens"] == 1024


def test_the_serving_plan_route_reads_length_distributions() -> None:
    """/api/plan/serve takes distributions as the command line and the API do, as text or a scenario's mapping, and
    says the lengths as the command line heads its table; a true or a null is one line naming the field."""
    one = {"model": "llama-3.1-8b", "rate": 2, "hardware": "h100-sxm", "disaggregated": False, "top": 1}
    text = plan_serve({**one, "input_tokens": "lognormal:mean=2k,std=1.5k,max=16k", "output_tokens": 128}, Settings())
    assert text["input_lengths"] == {"dist": "lognormal", "mean": 2000.0, "std": 1500.0, "max": 16000}
    assert text["lengths"] == "lognormal 2,000 (std 1,500, max 16,000) in / 128 out"
    mapping = plan_serve({**one, "output_tokens": {"dist": "uniform", "min": 64, "max": 1000}}, Settings())
    assert mapping["lengths"] == "1,024 in / uniform 64-1,000 out", mapping["lengths"]
    with pytest.raises(ChipwiseError, match=r"^serve plan request: input_tokens: true is not a number\. Fix: give a"):
        plan_serve({**one, "input_tokens": True}, Settings())
    with pytest.raises(ChipwiseError, match=r"^output_tokens is None\. Fix: give a whole number or a distribution"):
        plan_serve({**one, "output_tokens": None}, Settings())
    with pytest.raises(ChipwiseError, match=r"^input_tokens 'lognormal:mean': 'mean' is not KEY=NUMBER\. Fix: write"):
        plan_serve({**one, "input_tokens": "lognormal:mean"}, Settings())


@needs_node
def test_one_deployment_sends_a_length_distribution_the_route_reads() -> None:
    form = {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": "1", "precision": "bf16",
            "input_tokens": "lognormal:mean=2k,std=1k", "output_tokens": "128", "arrival_rate": "2",
            "requests": "100"}  # fmt: skip
    body = _sent("runServe", form)
    assert body["input_tokens"] == "lognormal:mean=2k,std=1k" and body["output_tokens"] == 128
    load = POST_ROUTES["/api/predict"](body, Settings())["load"]
    assert 1900 < load["input_tokens_mean"] < 2100 and load["output_tokens_mean"] == 128


@needs_node
def test_the_serving_plan_tab_asks_for_splits_where_a_load_sizes_them() -> None:
    """'try them' asks for splits under a rate and under concurrent users, none under an offline batch (which has no
    load to size them by: the server refused the page's own default); 'no' refuses them."""
    assert _sent("runServePlan", PLAN)["disaggregated"] is True
    assert _sent("runServePlan", {**PLAN, "concurrency": "64"})["disaggregated"] is True
    assert "disaggregated" not in _sent("runServePlan", {**PLAN, "offline": "yes"})
    assert _sent("runServePlan", {**PLAN, "offline": "yes", "disaggregated": "no"})["disaggregated"] is False
