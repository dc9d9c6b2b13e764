"""The command line: JSON contracts, and one-line errors with exit code 2 for bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_error, run_json


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.startswith("chipwise ")


def test_catalog_list_json_has_every_chip(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["catalog", "list", "--json"])
    ids = {c["id"] for c in data["chips"]}
    assert {"trn1", "trn4", "h100-sxm", "gb300", "mi355x", "tpu-v7", "gaudi3", "rtx-pro-6000d"} <= ids
    trn4 = next(c for c in data["chips"] if c["id"] == "trn4")
    assert trn4["projected"] and trn4["figures"]["flops.fp8"]["status"] == "projected"


def test_catalog_show_prints_ratios_bare(capsys: pytest.CaptureFixture[str]) -> None:
    """An efficiency of 0.8 reads '0.8', not '0.8 1' (its unit is the ratio's '1'); latencies keep their units."""
    assert run(["catalog", "show", "efa-v2"]) == 0
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in capsys.readouterr().out.splitlines()
            if line.count("│") >= 4}  # fmt: skip
    assert rows["bus_efficiency"] == "0.8" and rows["latency"] == "10 us"


def test_catalog_show_with_sources(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["catalog", "show", "p5", "--json"])
    assert data["kind"] == "system" and data["chip"] == "h100-sxm" and data["prices"]
    # a system's own prices per system-hour and its chip's per chip-hour (from any provider), each with its source
    bases = {(p["provider"], p["basis"]) for p in data["prices"]}
    assert ("aws", "system-hour") in bases and ("lambda", "chip-hour") in bases
    assert all(p["source_text"] or p.get("derivation") for p in data["prices"])
    # a chip's prices: a Gaudi 3 has only an estimate per chip-hour, which it shows with its derivation
    gaudi = run_json(capsys, ["catalog", "show", "gaudi3", "--json"])
    assert [(p["basis"], p["status"]) for p in gaudi["prices"]] == [("chip-hour", "estimate")]
    assert run(["catalog", "show", "gaudi3", "--sources"]) == 0
    assert "price: on-demand neocloud us $2.27/chip-hour (2026-09, estimate): ESTIMATE" in capsys.readouterr().out


def test_catalog_engine_shows_each_figure_and_where_it_comes_from(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """optimum-neuron on Trn2 takes its fit's factors, its own budget, vllm-neuron's decode-first steps, neuron's
    compiled shapes and neuron's memory policy: each figure names the level it comes from."""
    data = run_json(capsys, ["catalog", "engine", "optimum-neuron", "--chip", "trn2", "--json"])
    assert data["chip_family"] == "trainium2" and data["fitted"] and data["carried_from"] is None
    figs = data["figures"]
    assert figs["moe_block_scale"]["level"] == "optimum-neuron on trainium2" and figs["moe_block_scale"]["derivation"]
    assert (figs["max_tokens"]["value"], figs["max_tokens"]["level"]) == (2048, "optimum-neuron")
    assert figs["decode_first"]["level"] == "vllm-neuron" and figs["static_batch"]["level"] == "neuron"
    # Neuron's own entry: TensorRT-LLM's default carried to it as an estimate (it had read TensorRT-LLM's as spec)
    assert (figs["memory_fraction"]["value"], figs["memory_fraction"]["level"]) == (0.9, "neuron")
    assert figs["memory_fraction"]["status"] == "estimate"
    assert "base" not in figs
    # and how far the engine's predictions have been from its published runs on the family
    assert {r["scope"] for r in data["track_record"].values()} == {"optimum-neuron on trainium2"}
    # a family named directly, and a family whose figures are carried from another's fit
    trn3 = run_json(capsys, ["catalog", "engine", "vllm-neuron", "--chip", "trainium3", "--json"])
    assert trn3["carried_from"] == "vllm-neuron on trainium2"
    # the eager launches' share, with its derivation; the table prints it too
    grace = run_json(capsys, ["catalog", "engine", "sglang", "--chip", "gb200", "--json"])["figures"]
    assert grace["eager_host_share"]["value"] == 0.36 and "Fitted (stop 45)" in grace["eager_host_share"]["derivation"]
    monkeypatch.setenv("COLUMNS", "240")  # wide enough that no figure's name folds
    assert run(["catalog", "engine", "sglang", "--chip", "gb200", "--sources"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines()
            if line.count("│") >= 5 and line.split("│")[1].strip()}  # fmt: skip
    assert rows["eager_host_share"] == "0.36" and rows["eager_launch"] == "69.0 us"
    assert "Track record: chipwise against published runs (sglang on blackwell" in out
    assert rows["TPOT"] == "239"


def test_catalog_engine_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown serving engine 'nope'" in run_error(capsys, ["catalog", "engine", "nope"])
    assert "neuron does not run on hopper chips" in run_error(capsys, ["catalog", "engine", "neuron", "--chip", "h100"])
    assert "unknown chip, system or chip family 'zzz'" in run_error(
        capsys, ["catalog", "engine", "vllm", "--chip", "zzz"]
    )


def test_plan_train_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The training ranking prints in two tables that fit an 80-column terminal (time and money, then the plans),
    every figure whole, the options in the JSON's order in both."""
    monkeypatch.setenv("COLUMNS", "80")  # a terminal 80 columns wide
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--tokens", "1T", "--hardware", "h100-sxm,trn2,b200,trn4"]
    order = [r["hardware"] for r in run_json(capsys, [*argv, "--json"])["results"]]
    assert run(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in "".join(lines)
    rows = [line.split() for line in lines if line[:2].strip().isdigit()]
    assert [r[1] for r in rows] == order + order
    # trn2 and trn4 are priced by catalog estimates (no on-demand offer): marked, and said so
    assert any(r[1] == "trn2" and "§" in r for r in rows)
    assert "§ trn4, trn2: priced by an estimate, not a published on-demand price" in "\n".join(lines)
    assert any("trn4 *" in line for line in lines) and any(line.startswith("Their plans") for line in lines)


def test_catalog_list_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chip and system id stays whole at the start of its row on an 80-column terminal, figures in the unit
    their header names (H100: 0.989 bf16 PFLOP/s, 79.6 GiB measured, 3.35 TB/s), projected systems starred."""
    monkeypatch.setenv("COLUMNS", "80")  # a terminal 80 columns wide
    data = run_json(capsys, ["catalog", "list", "--json"])
    assert run(["catalog", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in "".join(lines)
    firsts = {line.split()[0] for line in lines if line.strip()}
    assert {c["id"] for c in data["chips"]} | {s["id"] for s in data["systems"]} <= firsts
    h100 = next(line.split() for line in lines if line.startswith("h100-sxm "))
    assert h100[2:6] == ["-", "1.98", "0.989", "79.6"] and h100[6] == "3.35"
    assert any(line.startswith("trn4-ultraserver *") for line in lines)


def test_model_list_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every preset's id stays whole at the start of its row on an 80-column terminal (names and aliases wrap)."""
    monkeypatch.setenv("COLUMNS", "80")  # a terminal 80 columns wide
    ids = [m["id"] for m in run_json(capsys, ["model", "list", "--json"])["models"]]
    assert run(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in "".join(lines)
    firsts = {line.split()[0] for line in lines if line.strip()}
    assert set(ids) <= firsts


def test_model_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "show", "deepseek-v3", "--json", "--seq-len", "4096"])
    assert data["params_total"] == pytest.approx(671e9, rel=0.01)
    assert data["params_active"] == pytest.approx(37e9, rel=0.02)
    assert data["seq_len"] == 4096 and data["flops_per_token_fwd"] > 0 and data["kv_bytes_per_token"] > 0


def test_model_show_says_the_context_length(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, ["model", "show", "llama-2-7b", "--json"])["context_tokens"] == 4096
    assert run(["model", "show", "llama-3.1-8b"]) == 0
    assert any("context length" in line and "131,072 tokens" in line for line in capsys.readouterr().out.splitlines())


def test_output_to_a_file_or_pipe_is_not_cut_to_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where stdout is not a terminal and $COLUMNS is unset, tables and help print wide, every cell and help line
    whole; $COLUMNS, where set, is the width."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert run(["plan", "serve", "--help"]) == 0
    assert any("A model preset or a path to a config.json." in line for line in capsys.readouterr().out.splitlines())
    assert run(["plan", "train", "--model", "llama-3.1-70b", "--tokens", "1T", "--hardware", "h100-sxm,trn2"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(len(line) for line in out.splitlines()) > 80
    monkeypatch.setenv("COLUMNS", "60")
    assert run(["plan", "serve", "--help"]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 60


def test_a_mistyped_command_ends_its_question_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert "Did you mean 'plan'? Fix: run 'chipwise --help'." in run_error(capsys, ["plna"])


def test_predict_training_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "train.yaml"
    sc.write_text(
        "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 1024\nprecision: bf16\nseq_len: 8192\n"
        "global_batch_tokens: 4194304\ntokens: 15e12\nplan: {tp: 8}\n"
    )
    data = run_json(capsys, ["predict", str(sc), "--json"])
    for key in (
        "step_time_s",
        "tokens_per_s",
        "tflops_per_chip",
        "mfu",
        "memory_per_chip_gib",
        "plan",
        "breakdown",
        "time_to_train_s",
        "cost_usd",
        "energy_j",
        "co2e_kg",
    ):
        assert key in data, key
    assert data["plan"]["tp"] == 8
    assert data["plan_source"] == "partial"


def test_plan_train_json_carries_search_stats(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        [
            "plan",
            "train",
            "--model",
            "llama-3.1-8b",
            "--tokens",
            "1T",
            "--chips",
            "64",
            "--hardware",
            "h100-sxm,trn2,tpu-v5p",
            "--json",
        ],
    )
    assert {"evaluated", "feasible", "seconds"} <= set(data["search"])
    assert len(data["results"]) == 3
    # each row quotes the published training runs of its chip family (Trn2 has too few: the AWS chips')
    scopes = {r["hardware"]: r["track_record"]["tokens_per_s_per_chip"]["scope"] for r in data["results"]}
    assert scopes == {"h100-sxm": "hopper", "trn2": "aws chips", "tpu-v5p": "tpu-v5p"}
    times = [r["time_to_train_s"] for r in data["results"]]
    assert times == sorted(times)


LIFECYCLE_8B = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["model", "show", "lama-3.1-70b"], "Did you mean"),
        (["catalog", "show", "h100-sxn"], "Did you mean"),
        (["plan", "train", "--model", "llama-3.1-8b", "--hardware", "h1OO"], "unknown chip or system"),
        (["plan", "train", "--model", "llama-3.1-8b", "--tokens", "-5"], "not a positive finite number"),
        # 1e400 overflows to inf ('$inf' costs, exit 0); a mistyped provider matched no price (every cost '-')
        (["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1e400"], "not a positive finite number"),
        (["plan", "train", "--model", "llama-3.1-8b", "--provider", "ibm"], "unknown provider 'ibm'"),
        (["plan", "train", "--model", "llama-3.1-8b", "--chips", "abc"], "chips"),
        (["plan", "train", "--model", "llama-3.1-8b", "--pricing", "cheap"], "unknown pricing mode"),
        (["plan", "train", "--model", "llama-3.1-8b", "--recovery", "foo"], "unknown recovery"),
        (["plan", "train", "--model", "llama-3.1-8b", "--pricing", "owned", "--utilisation", "1.5"], "0.01 to 1"),
        (["catalog", "list", "--set", "trn3.hbm_bandwidth=-6e12"], "negative"),
        (["catalog", "list", "--set", "trn3.hbm_bandwidth=abc"], "not a number"),
        (
            ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "nope.yaml", "--slo", "ttft_p99=2s"],
            "does not exist",
        ),
        (
            [
                "plan",
                "fleet",
                "--model",
                "llama-3.1-8b",
                "--workload",
                "examples/chat-mix.yaml",
                "--slo",
                "ttft_p99=2s",
                "--limits",
                "h100-sxm=lots",
            ],
            "TYPE=CHIPS",
        ),
        (
            ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "-3"],
            "--serve-rate",
        ),
        (["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "-1", "--serve-rate", "3"], "train-tokens"),
        # infinite months priced every pair at inf and read 'Cross-vendor wins: - less cost'
        (
            [
                "plan",
                "lifecycle",
                "--model",
                "llama-3.1-8b",
                "--train-tokens",
                "1T",
                "--serve-rate",
                "3",
                "--serve-months",
                "inf",
            ],
            "--serve-months must be positive and finite",
        ),
        # a system of one chip type read 'holds , not h100-sxm, trn2'; 1e30 months and 2e9 requests/s were priced
        (
            ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "h100-sxm=8,trn2=16", "--hybrid", "p5.48xlarge"],
            "'p5.48xlarge' is not a hybrid system",
        ),
        (
            [*LIFECYCLE_8B, "--serve-rate", "5", "--serve-months", "1e30"],
            "--serve-months 1e+30 is more than 600",
        ),
        (
            [*LIFECYCLE_8B, "--serve-rate", "2e9"],
            "--serve-rate 2e+09 requests/s is more than",
        ),
        # NaN had reached pydantic's own error: 'internal error: PydanticCustomError', exit 1 (text now, as --rate
        # is read as a count: 2k)
        (
            ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "nan"],
            "--rate 'nan' is not a positive number of requests/s. Fix: give e.g. 20.",
        ),
        # 1e12 chips had been planned as DP137438953472 at $inf an hour (a million plans: test_training_economics)
        (
            ["plan", "train", "--model", "llama-3.1-8b", "--chips", "1e12", "--hardware", "h100-sxm"],
            "a fleet of 1,000,000,000,000 chips is past the largest fleet planned (at most 1,000,000). Fix:",
        ),
        # a NaN figure ranked a chip at 'nan tok/s', exit 0
        (
            ["plan", "train", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--set", "h100-sxm.flops.bf16=nan"],
            "--set h100-sxm.flops.bf16: value nan is not a finite number. Fix: give a finite number.",
        ),
        (
            ["plan", "train", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--pue", "inf"],
            "PUE inf is not a finite number. Fix: give a PUE >= 1",
        ),
        # 1e400 seconds read as infinity, refused as 'must be positive'
        (
            ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--slo", "ttft_p99=1e400s"],
            "SLO ttft_p99=1e400s: not a finite time. Fix:",
        ),
        (["catalog", "engine", "vllx"], "unknown serving engine 'vllx'. Did you mean 'vllm'?"),
        # an empty --workload had read as "cannot read '.': Is a directory"
        (
            ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "", "--slo", "ttft_p99=2s"],
            "the workload file's path is empty. Fix: give a YAML bucket mix or a CSV/JSONL trace",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    assert needle in run_error(capsys, argv)


def test_malformed_yaml_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("chips: {h100-sxm: [")
    assert "not valid YAML" in run_error(capsys, ["catalog", "list", "--catalog", str(bad)])


@pytest.mark.parametrize(
    ("scenario", "needle"),
    [
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\nplan: {tp: 8, pp: 4, dp: 4}\n", "ranks"),
        (
            "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\nplan: {tp: 128, pp: 1, dp: 1}\n",
            "ranks|heads",
        ),
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\nplan: {recompute: often}\n", "recompute"),
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: -4\n", "chips"),
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\ncolour: red\n", "unknown key"),
        ("kind: bake\n", "kind"),
        # true and false are not numbers (pydantic read them as 1): 'chips: true' ran one chip
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: true\n", "chips: true is not a number"),
        (
            "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\noutput_tokens: 64\nconcurrency: yes\n",
            "concurrency: true is not a number",
        ),
        (
            "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\noutput_tokens: 64\narrival_rate: 2\n"
            "plan: {tp: true}\n",
            "plan: tp: true is not a number",
        ),
        # a flag is true or false ('lora: "yes"' and 'offline: 1' read as true), and a name is not a flag
        ("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nlora: 'yes'\n", "lora: 'yes' is not true"),
        (
            "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\noutput_tokens: 64\noffline: 1\n",
            "offline: 1 is not true or false",
        ),
        ("kind: train\nmodel: llama-3.1-8b\nhardware: true\nchips: 8\n", "hardware: true is not text"),
        # a batch of less than one sequence became one sequence; a sequence past the model's context was priced
        (
            "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\nseq_len: 8192\n"
            "global_batch_tokens: 100\n",
            "less than one 8,192-token sequence",
        ),
        (
            "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\nseq_len: 1000000\n",
            "longer than llama-3.1-70b's context of 131,072 tokens",
        ),
        # an infinite or undefined count: '$inf' costs, or 'should be greater than 0' for .nan
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\ntokens: .inf\n", "finite number"),
        ("kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 64\ntokens: .nan\n", "finite number"),
        # a micro-batch past the 128-sequence batch was an IndexError (exit 1)
        (
            "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\nplan: {microbatch: 129}\n",
            r"plan.microbatch 129 does not divide the global batch of 128 sequences\. Fix:",
        ),
        # an unknown draft model had been told to state its acceptance
        (
            "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\noutput_tokens: 64\narrival_rate: 2\n"
            "speculative: 'draft:nomodel:3'\n",
            r"unknown model 'nomodel'\.",
        ),
    ],
)
def test_bad_scenarios(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, needle: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(scenario)
    import re

    assert re.search(needle, run_error(capsys, ["predict", str(f)]))


def test_unreadable_files_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is a folder" in run_error(capsys, ["predict", str(tmp_path)])
    # a folder had been 'does not exist' everywhere else
    assert f"model config '{tmp_path}' is a folder with no config.json in it. Fix:" in run_error(
        capsys, ["model", "show", str(tmp_path)]
    )
    assert f"catalog file '{tmp_path}' is a folder. Fix: name a catalog file in it." in run_error(
        capsys, ["catalog", "list", "--catalog", str(tmp_path)]
    )
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", str(tmp_path), "--slo", "ttft_p99=2s"]
    assert f"workload file '{tmp_path}' is a folder. Fix: name a workload file in it." in run_error(capsys, argv)
    binary = tmp_path / "s.yaml"
    binary.write_bytes(bytes(range(128, 256)))
    assert "not UTF-8 text" in run_error(capsys, ["predict", str(binary)])


def test_example_scenarios_predict(capsys: pytest.CaptureFixture[str]) -> None:
    """Each example predicts, with the track record of its scope: Trn2 has too few published training runs of its
    own, so the AWS chips' are quoted; TensorRT-LLM on Hopper has its own serving runs."""
    scopes = {"train-llama70b-trn2.yaml": {"aws chips"}, "serve-llama70b-h200.yaml": {"trtllm on hopper"}}
    for name, scope in scopes.items():
        assert run(["predict", f"examples/{name}", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["plan"]
        assert {r["scope"] for r in out["track_record"].values()} == scope
        assert all(r["n"] >= 10 and r["median_ape_pct"] <= r["p80_ape_pct"] for r in out["track_record"].values())
    assert run(["predict", "examples/serve-llama70b-h200.yaml"]) == 0
    text = capsys.readouterr().out
    assert "Track record: chipwise against published runs (trtllm on hopper" in text
    assert re.search(r"TPOT\s+\S\s+749\s", text)


def test_config_json_missing_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096}))
    assert "lacks" in run_error(capsys, ["model", "show", str(cfg)])


def test_plan_lifecycle_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifecycle ranking prints every figure whole on an 80-column terminal, in the JSON's order, and says which
    row is the best pair and which the best single-vendor plan."""
    monkeypatch.setenv("COLUMNS", "80")  # a terminal 80 columns wide
    argv = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "100G", "--serve-rate", "5",
            "--hardware", "h100-sxm,trn2,mi300x", "--train-chips", "128"]  # fmt: skip
    data = run_json(capsys, [*argv, "--json"])
    assert run(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in "".join(lines)
    rows = [line for line in lines if line.startswith("#") and line[1:2].isdigit() and " is the best" not in line]
    pairs = [(p["train"]["hardware"], p["serve"]["hardware"]) for p in data["top"][:6]]
    assert len(rows) == len(pairs)
    for line, (train, serve) in zip(rows, pairs, strict=True):
        # a chip on carried or default engine figures is marked as plan serve marks it ('trn2 ‡ x2')
        assert line.split()[1] == train and re.search(rf" {serve}( [†‡]+)? x", line), line
    assert any(line.startswith("#1 is the best pair") for line in lines)


def test_plan_lifecycle_counts_a_large_load_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    """2e6 requests/s was printed as '2e+06 req/s'; the fleet's chips are counted in full too (whole replicas: a
    split's checks of slices of 130,000 chips had taken most of a minute)."""
    argv = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "2e6",
            "--hardware", "h100-sxm", "--no-disaggregated"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())  # as one line, however wide the terminal
    assert "serve 2,000,000 req/s for 12 months" in out and "e+" not in out
    assert re.search(r"h100-sxm x\d{1,3}(,\d{3})+", out)


def test_plan_lifecycle_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        [
            "plan",
            "lifecycle",
            "--model",
            "llama-3.1-8b",
            "--train-tokens",
            "100G",
            "--serve-rate",
            "5",
            "--serve-months",
            "3",
            "--hardware",
            "h100-sxm,trn2",
            "--train-chips",
            "128",
            "--json",
        ],
    )
    assert data["kind"] == "plan-lifecycle"
    assert data["best"]["cost_usd"] == min(p["cost_usd"] for p in data["top"])


def test_hetero_and_lifecycle_mark_estimated_prices(capsys: pytest.CaptureFixture[str]) -> None:
    """§ marks a price that is a catalog estimate in plan hetero and plan lifecycle, as in plan train and serve."""
    argv = ["plan", "hetero", "--model", "llama-3.1-70b", "--fleet", "trn4=36,gb300=36", "--hybrid",
            "trn4-gb300-fusion-rack", "--tokens", "1T"]  # fmt: skip
    assert run(argv) == 0
    out = capsys.readouterr().out
    said = "§ trn4, gb300: priced by an estimate, not a published on-demand price"
    assert "§" in out and said in " ".join(out.split())
    argv = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1e11", "--train-chips", "256",
            "--serve-rate", "10", "--hardware", "h100-sxm,mi355x"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "§" in out and "§ mi355x: priced by an estimate, not a published on-demand price" in out


def test_input_files_that_cannot_be_read_are_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A missing scenario without an extension read as inline text; a file not in UTF-8 was 'an input file'."""
    missing = str(tmp_path / "sc" / "base_typo")
    assert f"scenario file '{missing}' does not exist" in run_error(capsys, ["predict", missing])
    trace = tmp_path / "t.csv"
    trace.write_bytes("arrival_s,input_tokens,output_tokens\n0,10,5 caf\xe9\n".encode("latin-1"))
    scenario = f"{{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, trace: {trace}}}"
    assert f"trace '{trace}' is not UTF-8 text" in run_error(capsys, ["predict", scenario])
    table = tmp_path / "gt.csv"
    table.write_bytes("id,model,chip,ttft_ms\nX1,caf\xe9,h100-sxm,5\n".encode("latin-1"))
    assert f"data file '{table}' is not UTF-8 text" in run_error(capsys, ["validate", "--data", str(table)])


def test_plan_serve_refuses_a_draft_no_engine_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """--speculative eagle:100000 answered 433 H100s."""
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--hardware", "h100-sxm"]
    assert "k from 1 to 16" in run_error(capsys, [*argv, "--speculative", "eagle:100000"])


def test_a_split_quotes_each_metric_by_its_own_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """B200 prefill beside H200 decode: TTFT quotes TensorRT-LLM's published runs on Blackwell, TPOT and throughput
    those on Hopper, and the table names each row's scope."""
    sc = tmp_path / "split.yaml"
    sc.write_text(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: h200\nchips: 3\nprecision: fp8\ninput_tokens: 2048\n"
        "output_tokens: 128\narrival_rate: 2\nrequests: 200\n"
        "plan: {disaggregated: true, prefill: {hardware: b200, tp: 1}, decode: {hardware: h200, tp: 2}}\n"
    )
    data = run_json(capsys, ["predict", str(sc), "--json"])
    scopes = {m: r["scope"] for m, r in data["track_record"].items()}
    assert scopes == {
        "output_tokens_per_s_per_chip": "trtllm on hopper",
        "tpot_s": "trtllm on hopper",
        "ttft_s": "trtllm on blackwell",
    }
    monkeypatch.setenv("COLUMNS", "240")  # wide enough that no title or scope folds
    assert run(["predict", str(sc)]) == 0
    text = capsys.readouterr().out
    assert "Track record: chipwise against published runs like it" in text and "trtllm on blackwell" in text


def test_a_search_that_ranks_nothing_exits_1_after_its_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3-0.6B's 4M-token batch on one TPU v5e fits no plan: the reason is printed and the exit code is 1, not 0
    (a script read an empty ranking as an answer); with a second chip that fits, the answer exits 0."""
    argv = ["plan", "train", "--model", "qwen3-0.6b", "--tokens", "1e9", "--chips", "1", "--hardware", "tpu-v5e"]
    assert run(argv) == 1
    assert "does not fit on 1 x tpu-v5e" in capsys.readouterr().out
    assert run([*argv[:-1], "tpu-v5e,h100-sxm"]) == 0


def test_a_run_without_tokens_labels_its_figures_per_hour(capsys: pytest.CaptureFixture[str]) -> None:
    """No --tokens: cost, energy and CO2e are of one hour (JSON economics_basis), which the tables printed as bare
    '$7,200' and '1.33 MWh', read as the run's totals."""
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "1024", "--hardware", "h100-sxm"]
    assert run(argv) == 0
    hourly = capsys.readouterr().out
    assert run([*argv, "--tokens", "1T"]) == 0
    assert "/hour" in hourly and "/hour" not in capsys.readouterr().out


def test_a_training_prediction_names_where_its_price_is_listed_and_marks_an_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """region: eu-north-1 lists no H100 price: the row read 'price (on-demand, eu-north-1) $6.880', the us-east-1
    rate under the asked region's name; and Trn2's estimated price went unmarked where plan train marks it."""
    sc = tmp_path / "eu.yaml"
    sc.write_text(
        "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 1024\ntokens: 1e12\nregion: eu-north-1\n"
    )
    assert run(["predict", str(sc)]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    # the label's cell wraps at a narrow console width: its words, in order
    assert re.search(r"price \(on-demand, us-east-1, none .*listed .*in .*eu-north-1\)", out), out
    assert run(["predict", "examples/train-llama70b-trn2.yaml"]) == 0
    assert "§ (a catalog estimate" in " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_a_hybrid_rack_is_two_chip_types_in_the_list_and_for_a_training_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Trainium4 + GB300 NVLink Fusion rack listed as 'trn4, 72 chips', and plan train ran it as 72 Trainium4:
    the list names both types, and a training search of one chip type points to plan hetero."""
    assert run(["catalog", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("trn4-gb300-fusion-rack"))
    assert line.split()[2] == "trn4+gb300"
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "72", "--hardware", "trn4-gb300-fusion-rack"]
    assert "plan hetero --fleet trn4=36,gb300=36 --hybrid trn4-gb300-fusion-rack" in run_error(capsys, argv)


def test_plan_fleet_refuses_a_nan_rate_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """rate: .nan ended in 'internal error: PydanticCustomError' (exit 1)."""
    mix = tmp_path / "mix.yaml"
    mix.write_text("buckets:\n  - {name: chat, input_tokens: 512, output_tokens: 256, rate: .nan}\n")
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", str(mix), "--slo", "ttft_p99=2s"]
    assert "bucket 1: rate nan is not a non-negative number. Fix: " in run_error(capsys, argv)


def test_plan_fleet_shows_a_traces_rates_to_three_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trace's bucket rates (its counts over its span) were printed to six figures, '0.931177/s'."""
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{i * 1.07},500,100\n" for i in range(60)))
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", str(trace), "--slo", "ttft_p99=2s",
            "--hardware", "h100-sxm", "--no-replay"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 60 arrivals 1.07 s apart: 59 gaps over 63.13 s, 0.93458/s
    assert "in1-out1 500/100 tok at 0.935/s" in out and "0.93458" not in out


@pytest.mark.parametrize("chips", ["1e5", "100k", "100000"])
def test_plan_train_reads_chips_as_a_count(capsys: pytest.CaptureFixture[str], chips: str) -> None:
    """--chips 1e5 was 'Invalid value for --chips' while --tokens took 15e12."""
    out = run_json(capsys, ["plan", "train", "--model", "llama-3.1-8b", "--chips", chips, "--hardware", "h100-sxm",
                            "--json"])  # fmt: skip
    assert out["chips"] == 100_000


def test_precisions_and_engines_read_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    """plan serve took --precision FP8 where plan train refused it; catalog engine refused VLLM while chip ids are
    read in any case."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm", "--precision",
            "FP8", "--json"]  # fmt: skip
    assert run_json(capsys, argv)["precision"] == "fp8"
    assert run(["catalog", "engine", "VLLM", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "vllm"
    err = run_error(capsys, ["plan", "train", "--model", "llama-3.1-8b", "--precision", "fp6"])
    near = "Did you mean 'fp16', 'fp8', 'fp4'?"
    assert f"unknown precision 'fp6'. {near} Fix: use one of fp32, tf32, bf16, fp16, fp8, int8, fp4." in err


@pytest.mark.parametrize("chips", ["1.5", "0", "-3", "many"])
def test_plan_train_refuses_chips_that_are_not_a_whole_count(capsys: pytest.CaptureFixture[str], chips: str) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", chips, "--hardware", "h100-sxm"]
    assert f"--chips '{chips}' is not a positive finite whole number" in run_error(capsys, argv)
