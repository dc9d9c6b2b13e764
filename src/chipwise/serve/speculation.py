"""Speculative decoding: a cheap drafter proposes k tokens per sequence, the target model verifies all k + 1
positions in one forward pass and keeps the longest accepted prefix plus one token of its own.

With each drafted token accepted with probability alpha given that the ones before it were (the chain model of
Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1), one verification step
yields on average

    tau = (1 - alpha^(k + 1)) / (1 - alpha)

tokens per sequence (tau = k + 1 at alpha = 1). A step costs a target pass over n (k + 1) tokens, whose
weights are read once as for n tokens, plus k drafter passes over n tokens. Drafters:
- mtp:   the model's own multi-token-prediction module (DeepSeek-V3), one decoder layer of the target's shape
         run k times (SGLang and TensorRT-LLM reuse the one module for every draft position);
- eagle: an EAGLE-3 head, one dense decoder layer at the target's width with its own LM head over a 32,000-token
         draft vocabulary, run k times;
- draft: a separate small model of the same tokenizer (a preset name), run k times.

Acceptance is a property of the model pair and the text, not of the hardware: it is taken from the row or the
user, else from the priors below (for MTP a measured profile by position instead of a chain), and every output
that uses a prior says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from chipwise.workload.model import MLP, LayerGroup, ModelSpec
from chipwise.workload.presets import is_builtin_preset, load_model, preset_id

METHODS = ("mtp", "eagle", "draft")
#: Acceptance priors (estimates). EAGLE: vLLM's EAGLE-3 tutorial for Llama 3.1 8B measured 74.1% acceptance over 3
#: drafted tokens, a mean acceptance length of 3.22 (aws-neuron-sdk vllm-neuron/docs/tutorials/tutorial-eagle3-
#: speculative-decoding-llama-3-1.md), i.e. alpha = 0.86 in the chain model. Separate draft models: no prior.
ACCEPTANCE_PRIOR = {"eagle": 0.86}
#: Targets whose EAGLE head was measured for the prior above (RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3 in
#: that tutorial): another model's eagle:K states its acceptance (a head trained for it is another measurement; the
#: prior had priced MPT-7B, for which none is published, 1.85x faster). Built-in presets, matched by their config
#: (eagle_prior_applies), not by a name.
EAGLE_PRIOR_MODELS = frozenset({"llama-3.1-8b"})
#: An EAGLE-3 head samples a draft vocabulary of its own, mapped to the target's tokens (draft_vocab_size: 32,000 in
#: vllm-project/speculators' Eagle3SpeculatorConfig and SpecForge's configs, e.g. llama4-scout-17B-16E-eagle3.json
#: over a 202,048-token target; vLLM's llama_eagle3.py builds its lm_head of that size).
EAGLE_DRAFT_VOCAB = 32_000
#: The head's MLP width for a target with no dense layer to copy, in hidden sizes: SpecForge's heads for MoE targets
#: are one dense Llama layer of 6 x hidden (gpt-oss-120B-eagle3.json 17,280 = 6 x 2,880; qwen3-30B-A3B-eagle3
#: 12,288 = 6 x 2,048). A target with dense layers lends their width (Llama 3.1 8B's 14,336, as its head has).
EAGLE_FFN_PER_HIDDEN = 6
#: MTP: DeepSeek-V3 trains one MTP module, for the second token (85-90% acceptance there, arXiv:2412.19437 section
#: 5.4.3); engines reuse it for every drafted position, and deeper positions are accepted less often. The prior is
#: vLLM's measured profile for DeepSeek-V3 with the module reused for 8 drafted tokens (github vllm-project/vllm
#: pull 48892, gsm8k at temperature 0): the share of steps that accept position i, unconditionally (acceptance
#: length 4.50). Beyond 8 positions the last ratio carries on.
MTP_POSITIONS = (0.7617, 0.6158, 0.5125, 0.4243, 0.3640, 0.3094, 0.2722, 0.2365)
#: The most tokens drafted per step. Deployments draft a handful in a chain: the ground truth's rows 1 to 3
#: (num_nextn_predict_layers 3, num_speculative_tokens=3), the EAGLE-3 tutorial above 3, the vLLM MTP profile 8. 16
#: leaves room for longer chains, whose deeper positions are almost never accepted (the profile's 8th 24%, falling
#: 13% a position); eagle:100000 was priced, at hundreds of chips.
MAX_DRAFT_TOKENS = 16


@dataclass(frozen=True)
class Speculation:
    """k drafted tokens per step by `method`, each accepted with probability `acceptance` (given the ones before)."""

    method: str
    draft_tokens: int
    acceptance: float
    draft_model: str = ""  # preset name, for method 'draft'
    acceptance_source: str = "stated"
    #: measured share of steps that accept each drafted position (unconditional), in place of the chain of
    #: `acceptance`; `acceptance` is then the first position's
    positions: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ChipwiseError(f"unknown speculative method '{self.method}'. Fix: use one of {', '.join(METHODS)}.")
        if self.draft_tokens < 1:
            raise ChipwiseError(
                f"speculation needs at least 1 drafted token, got {self.draft_tokens}. Fix: give k >= 1."
            )
        if self.draft_tokens > MAX_DRAFT_TOKENS:
            raise ChipwiseError(
                f"speculation drafts {self.draft_tokens:,} tokens a step; engines draft a handful, and chipwise at "
                f"most {MAX_DRAFT_TOKENS}. Fix: give k from 1 to {MAX_DRAFT_TOKENS} (e.g. eagle:3)."
            )
        if not 0.0 <= self.acceptance <= 1.0:
            raise ChipwiseError(
                f"acceptance {self.acceptance:g} is not a probability. Fix: give a value between 0 and 1 (e.g. 0.8)."
            )
        if self.method == "draft" and not self.draft_model:
            raise ChipwiseError(
                "speculation with a draft model needs its name. Fix: write draft:MODEL:K, e.g. draft:llama-3.2-1b:4."
            )

    @property
    def tokens_per_step(self) -> float:
        """tau: tokens one verification step yields per sequence, on average."""
        a, k = self.acceptance, self.draft_tokens
        if self.positions:
            return 1.0 + sum(self.positions[:k])
        return float(k + 1) if a >= 1.0 else (1.0 - a ** (k + 1)) / (1.0 - a)

    def text(self) -> str:
        """The form parse_speculation reads back: 'mtp:3', 'draft:MODEL:4@0.75' (a stated acceptance only; a
        prior or a measured profile is the method's own)."""
        head = f"draft:{self.draft_model}" if self.method == "draft" else self.method
        return f"{head}:{self.draft_tokens}" + (f"@{self.acceptance!r}" if self.acceptance_source == "stated" else "")

    def record(self) -> dict[str, object]:
        """The JSON form beside the label: method, drafted tokens, acceptance and where it came from, the by-position
        profile, tokens a step, and the text that asks for it again (a consumer had read tokens a step out of the
        label's 'EAGLE k=3, acceptance 0.80 (2.95 tokens/step)')."""
        return {
            "method": self.method,
            "draft_tokens": self.draft_tokens,
            "draft_model": self.draft_model or None,
            "acceptance": self.acceptance,
            "acceptance_source": self.acceptance_source,
            "acceptance_by_position": list(self.positions) or None,
            "tokens_per_step": self.tokens_per_step,
            "text": self.text(),
        }

    def label(self) -> str:
        head = f"draft {self.draft_model}" if self.method == "draft" else self.method.upper()
        prior = ", the method's prior" if self.acceptance_source == "prior" else ""
        shown = (
            "/".join(f"{p:.2f}" for p in self.positions) + " by position"
            if self.positions
            else f"{self.acceptance:.2f}"
        )
        return f"{head} k={self.draft_tokens}, acceptance {shown}{prior} ({self.tokens_per_step:.2f} tokens/step)"


def acceptance_for_length(tau: float, k: int) -> float:
    """The per-position acceptance alpha whose chain yields a mean acceptance length `tau` with k drafted tokens."""
    if not 1.0 <= tau <= k + 1:
        raise ChipwiseError(
            f"a mean acceptance length of {tau:g} is impossible with {k} drafted tokens. "
            f"Fix: give 1 <= length <= {k + 1}."
        )
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if Speculation("mtp", k, mid).tokens_per_step < tau:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def with_prior(method: str, k: int, draft_model: str = "") -> Speculation:
    """A speculation whose acceptance is the method's prior (ChipwiseError when it has none)."""
    if method == "mtp":
        ratio = MTP_POSITIONS[-1] / MTP_POSITIONS[-2]
        profile = list(MTP_POSITIONS)
        while len(profile) < k:
            profile.append(profile[-1] * ratio)
        return Speculation(method, k, profile[0], acceptance_source="prior", positions=tuple(profile[:k]))
    prior = ACCEPTANCE_PRIOR.get(method)
    if prior is None:
        raise ChipwiseError(
            f"no acceptance prior for speculation with a {method} model. Fix: state it, e.g. "
            f"{method}:{draft_model or 'MODEL'}:{k}@0.7."
        )
    return Speculation(method, k, prior, draft_model, acceptance_source="prior")


def parse_speculation(text: str, catalog: Catalog | None = None) -> Speculation:
    """'mtp:3', 'eagle:3@0.8', 'draft:llama-3.2-1b:7@0.75' (method, [draft model,] drafted tokens, [acceptance]);
    with a `catalog`, a draft model is looked up first (an unknown one had been told to state its acceptance)."""
    body, sep, acc = text.strip().partition("@")
    parts = [p.strip() for p in body.split(":")]
    method = parts[0].lower()
    if method not in METHODS:
        raise ChipwiseError(
            f"unknown speculative method '{parts[0]}'. Fix: use one of {', '.join(METHODS)} (e.g. mtp:3)."
        )
    try:
        if method == "draft" and len(parts) == 3:
            model, k = parts[1], int(parts[2])
        elif method != "draft" and len(parts) == 2:
            model, k = "", int(parts[1])
        else:
            raise ValueError
        if model and catalog is not None:
            load_model(catalog, model)  # its own one line: the presets it was likely meant to be
        if sep and not acc.strip():
            raise ValueError  # 'eagle:3@': the acceptance was lost, not left to the prior
        if acc:
            return Speculation(method, k, float(acc), model)
    except ValueError:
        raise ChipwiseError(
            f"cannot read speculation '{text}'. Fix: write mtp:K, eagle:K or draft:MODEL:K, optionally @ACCEPTANCE "
            "(e.g. mtp:3@0.85)."
        ) from None
    return with_prior(method, k, model)


@dataclass(frozen=True)
class DraftHead(ModelSpec):
    """An EAGLE or MTP head: one decoder layer that reads the target's embedding, which the serving engines share
    rather than load again (vLLM load_eagle_model in v1/worker/gpu/spec_decode/eagle/utils.py). Its own weights are
    the layer, two norms and, for EAGLE-3, an LM head over its draft vocabulary (`own_lm_head`; `vocab` is then
    EAGLE_DRAFT_VOCAB); an MTP module samples with the target's LM head, shared too (DeepSeek-V3's MTP module is "a
    shared embedding layer, a shared output head, a Transformer block and a projection matrix M in R^(d x 2d)" over
    two RMSNorms, arXiv:2412.19437 section 2.2). A drafting pass multiplies by the head it samples with
    (iteration.lm_head_cost prices it from vocab and embed_width). The d x 2d projection (EAGLE-3's fc, 3d x d) is
    left out, in memory as in time: 0.10 B of DeepSeek-V3's 11.5 B MTP parameters, 0.05 B beside Llama 3.1 8B's
    0.22 B layer."""

    own_lm_head: bool = False

    @property
    def embedding_params(self) -> int:
        return 0

    @property
    def lm_head_params(self) -> int:
        return self.vocab * self.embed_width if self.own_lm_head else 0


def _eagle_layer(target: ModelSpec) -> LayerGroup:
    """An EAGLE-3 head's decoder layer: dense and of full attention whatever the target's (LlamaForCausalLMEagle3,
    num_hidden_layers 1, in SpecForge's heads for gpt-oss, Qwen3-30B-A3B and DeepSeek-V3 alike), its MLP as wide as
    the target's dense layers, else EAGLE_FFN_PER_HIDDEN hidden sizes. Only DeepSeek's MTP module is an MoE layer:
    a copy of the target's MoE layer had priced gpt-oss-120b's head at 3.2 B parameters, 128 experts, for 0.3 B."""
    dense = next((g.mlp for g in target.groups if g.mlp is not None), None)
    return LayerGroup(count=1, mlp=dense or MLP(EAGLE_FFN_PER_HIDDEN * target.hidden))


def drafter(catalog: Catalog, target: ModelSpec, spec: Speculation) -> ModelSpec:
    """The model a drafting pass runs: the target's head (mtp, eagle; DraftHead) or the draft model, which must
    cost less a token than its target (active parameters: an MoE target touches a fraction of its own) and read its
    tokens (a vocabulary within 0.5% of the target's: padded embeddings of one tokenizer, Qwen2.5's 151,936 and
    152,064). An EAGLE head at the method's prior needs a target it was measured on (eagle_prior_applies)."""
    if spec.method == "draft":
        draft = load_model(catalog, spec.draft_model)
        if abs(draft.vocab - target.vocab) > 0.005 * target.vocab:
            raise ChipwiseError(
                f"draft model {draft.name} has a vocabulary of {draft.vocab:,} tokens and {target.name} one of "
                f"{target.vocab:,}: a draft model proposes the target's tokens. Fix: use a draft of the target's "
                "family."
            )
        if draft.params_active >= target.params_active:
            raise ChipwiseError(
                f"draft model {draft.name} is not smaller than {target.name} ({draft.params_active / 1e9:.2f} B "
                f"against {target.params_active / 1e9:.2f} B parameters active a token): drafting would cost more "
                "than it saves. Fix: use a smaller model of the target's family."
            )
        return draft
    fields = {f.name: getattr(target, f.name) for f in dataclass_fields(ModelSpec) if f.name != "groups"}
    fields.update(
        name=f"{target.name} {spec.method} head",
        norm_params_per_layer=target.norm_params_per_layer + 2 * target.hidden,  # its enorm and hnorm
    )
    if spec.method == "mtp":
        return DraftHead(**fields, groups=(replace(target.groups[-1], count=1),))
    if spec.acceptance_source == "prior" and not eagle_prior_applies(target):
        raise ChipwiseError(
            f"no EAGLE head with a measured acceptance is known for {target.name}{_not_the_preset(target)} (the "
            f"prior, {ACCEPTANCE_PRIOR['eagle']:.2f}, is Llama 3.1 8B's EAGLE-3 head). Fix: state its acceptance, "
            f"e.g. eagle:{spec.draft_tokens}@0.7."
        )
    fields.update(vocab=min(target.vocab, EAGLE_DRAFT_VOCAB), embed_dim=0, tied_embeddings=False)
    return DraftHead(**fields, groups=(_eagle_layer(target),), own_lm_head=True)


def eagle_prior_applies(target: ModelSpec) -> bool:
    """Whether the EAGLE prior was measured on `target`: a built-in preset of EAGLE_PRIOR_MODELS by what it is
    (presets.is_builtin_preset), not by its name. The name had decided: a byte copy of Llama 3.1 8B's config in
    snap/Meta-Llama-3.1-8B-Instruct/ was told to state its acceptance, and a 64-layer 15 B config in a folder named
    llama-3.1-8b was priced at Llama 3.1 8B's measured 0.86; the copy now reads the prior, the 15 B model does not."""
    return any(is_builtin_preset(target, pid) for pid in EAGLE_PRIOR_MODELS)


def _not_the_preset(target: ModelSpec) -> str:
    """Where `target` is named like a preset of EAGLE_PRIOR_MODELS but is not it, what it was read from instead."""
    pid = preset_id(load_catalog(), target.name)
    return f" as read from {target.source}, not the built-in {pid} preset's config" if pid in EAGLE_PRIOR_MODELS else ""


def check_drafter_context(draft: ModelSpec, longest: int) -> None:
    """One line where the draft model's context is shorter than the longest request: it encodes every prompt and
    attends over the whole context (Llama 3 8B, 8,192 tokens, had been priced drafting 30,256-token requests for
    Llama 3.1 70B, which it cannot hold). An MTP or EAGLE head has its target's context."""
    if 0 < draft.max_seq_len < longest:
        raise ChipwiseError(
            f"the draft model {draft.name} has a context of {draft.max_seq_len:,} tokens, shorter than the "
            f"{longest:,}-token requests it drafts for. Fix: pick a draft model with a longer context (or MTP / "
            "EAGLE), or shorten the requests."
        )


@dataclass(frozen=True)
class Drafting:
    """A speculation and the model its drafting passes run (what the steady-state estimate prices)."""

    spec: Speculation
    model: ModelSpec
