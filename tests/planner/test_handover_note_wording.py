"""plan serve's note on engines that make no prefill>decode split names the engine option as each interface takes it:
the command line's --engine (unchanged), the web page's field, the Python API's keyword."""

from __future__ import annotations

from chipwise.planner.serving_split import handover_fix, handover_note, worded_for

CLI_LINE = (
    "neuron on trn1 made no prefill>decode split: its engine has no KV-cache hand-over from a prefill to a decode pool "
    "(engines.ENGINE.kv_handover). Fix: --engine vllm-neuron to price such splits"
)


def _note(engines: str) -> dict[str, str]:
    """The note as serving_split._handing_over makes it."""
    fix = handover_fix([e for e in engines.split(", ") if e])
    return {
        "hardware": "splits",
        "system": "",
        "reason": handover_note(["neuron on trn1"], fix),
        "no_handover": "neuron on trn1",
        "handover_engines": engines,
    }


def test_the_command_line_keeps_its_words() -> None:
    assert _note("vllm-neuron")["reason"] == CLI_LINE
    assert handover_fix(["a", "b"]) == ". Fix: --engine a or b to price such splits"
    assert handover_fix([]) == ""


def test_the_web_page_and_the_api_name_their_own_option() -> None:
    """The web page had read 'Fix: --engine vllm-neuron', an option it has no field for."""
    web, api = worded_for([_note("vllm-neuron")], "web")[0], worded_for([_note("vllm-neuron")], "api")[0]
    assert web["reason"] == CLI_LINE.replace("--engine vllm-neuron", 'engine "vllm-neuron"')
    assert api["reason"] == CLI_LINE.replace("--engine vllm-neuron", "engine='vllm-neuron'")
    assert "--engine" not in web["reason"] and "--engine" not in api["reason"]
    both = worded_for([_note("vllm-neuron, neuron")], "api")[0]["reason"]
    assert both.endswith("Fix: engine='vllm-neuron' or 'neuron' to price such splits")


def test_other_lines_and_a_note_without_a_fix_stay_as_they_are() -> None:
    other = {"hardware": "trn1", "system": "trn1.32xlarge", "reason": "Fix: --engine x (another note)"}
    bare = _note("")
    assert worded_for([other, bare], "web") == [other, bare]
    assert bare["reason"].endswith("(engines.ENGINE.kv_handover)")
