"""A serving replica's configuration: parallelism, precisions and batch limits, and its checks."""

from __future__ import annotations

from dataclasses import dataclass

from chipwise.errors import ChipwiseError
from chipwise.serve.quant import check_weight_precision
from chipwise.serve.speculation import Speculation
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import FrontEnd


@dataclass(frozen=True)
class ReplicaPlan:
    """One model replica: tp x pp ranks (ep of the tp ranks hold different experts; attention_dp splits the
    batch of attention over the tp ranks instead of its heads), its batch and token limits, and precisions.

    max_tokens: tokens one iteration may carry (prefill chunks plus one per decoding sequence): the engine's
    max_num_tokens, which with attention DP is each rank's on engines that give every rank its own scheduler
    (TensorRT-LLM, vLLM; engines.*.adp_budget_per_rank), the replica's on SGLang, and with pipeline parallelism each
    micro-batch's (engine.budgets). max_batch is the replica's.
    speculation: speculative decoding (serve.speculation), or None.
    recv_interval: decode iterations between the scheduler's polls for new requests (SGLang's
    --scheduler-recv-interval; 1 = every iteration, every engine's default).
    batch_wait_iters, batch_wait_ratio: batch waiting (TensorRT-LLM batch_wait_timeout_iters and
    batch_wait_max_tokens_ratio): while requests generate, new prompts wait until an iteration would carry
    batch_wait_ratio x max_tokens tokens, for at most batch_wait_iters iterations (0: off).
    piecewise_graphs: True, iterations that carry prompt tokens replay captured CUDA graphs (TensorRT-LLM's
    torch_compile_config.enable_piecewise_cuda_graph, SGLang's --enable-piecewise-cuda-graph) instead of launching
    their kernels one by one from Python: the engine's eager-launch floor does not apply. False, they launch them
    one by one where the engine would capture them (vLLM's cudagraph_mode FULL_DECODE_ONLY): such an iteration
    takes at least its launches' host time (engines.*.uncaptured_launch). None: the engine's default.
    adp_balance: with attention_dp, the engine's context balancing is on (TensorRT-LLM's
    attention_dp_config.enable_balance; engines.*.adp_balance_timeout_iters): while every rank generates, a prompt
    waits until each rank has one. False turns it off; engines without it ignore it.
    graph_batch: the largest decode batch replayed in a captured CUDA graph (SGLang's --cuda-graph-max-bs); a larger
    one launches eagerly. 0: the engine's default (engine.decode_graph_batch).
    memory_fraction: the engine's share of memory for its KV cache (vLLM --gpu-memory-utilization, SGLang
    --mem-fraction-static, TensorRT-LLM free_gpu_memory_fraction; each on its engine's memory_basis, serve.kvcache).
    0: the engine's default.
    mixed_batching: prompt chunks ride in decode iterations (SGLang's --enable-mixed-chunk) or, False, run in
    iterations of their own while the decodes wait. None: the engine's default (engines.*.mixed_batching).
    front_end: 'engine', the engine's own HTTP server takes the requests (engines.*.request_overhead a request), or
    'dynamo', Dynamo's front end does and hands the engine token ids (no engine front-end time).
    """

    tp: int = 1
    pp: int = 1
    ep: int = 1
    attention_dp: bool = False
    max_batch: int = 256
    max_tokens: int = 8192
    chunked_prefill: bool = True
    weight_precision: str = "bf16"
    kv_precision: str = "bf16"
    speculation: Speculation | None = None
    recv_interval: int = 1
    batch_wait_iters: int = 0
    batch_wait_ratio: float = 0.0
    piecewise_graphs: bool | None = None
    adp_balance: bool = True
    graph_batch: int = 0
    memory_fraction: float = 0.0
    mixed_batching: bool | None = None
    front_end: FrontEnd = "engine"

    @property
    def ranks(self) -> int:
        return self.tp * self.pp

    def label(self) -> str:
        spec = self.speculation
        return plan_label(
            self.tp, self.pp, self.ep, self.attention_dp, self.max_batch,
            f"{spec.method.upper()}{spec.draft_tokens}" if spec is not None else "",
            self.recv_interval, self.batch_wait_iters, self.batch_wait_ratio, self.piecewise_graphs,
            self.adp_balance,
        )  # fmt: skip


def count_text(count: float) -> str:
    """'8', '2.5', '458,000,000': a whole count written out in full (never 4.58e+08), a fraction as it is."""
    return f"{int(count):,}" if float(count).is_integer() else f"{count:g}"


def chip_count(chips: float) -> str:
    """'1 chip', '8 chips', '2.5 chips', '1,024 chips'."""
    return f"{count_text(chips)} chip{'' if chips == 1 else 's'}"


def plan_label(
    tp: int,
    pp: int,
    ep: int,
    attention_dp: bool,
    max_batch: int,
    speculative: str = "",
    recv_interval: int = 1,
    batch_wait_iters: int = 0,
    batch_wait_ratio: float = 0.0,
    piecewise_graphs: bool | None = None,
    adp_balance: bool = True,
) -> str:
    """A replica plan in one short string, 'TP4 EP4 ADP b256 MTP3 recv30 wait40@0.8 pcg': the shape, the batch limit,
    the drafting (as given) and the scheduler settings that differ from the engine's defaults ('ADP nobal':
    attention DP with the engine's context balancing off; 'pcg' prompt iterations in CUDA graphs, 'nopcg' without)."""
    parts = [f"TP{tp}"]
    if pp > 1:
        parts.append(f"PP{pp}")
    if ep > 1:
        parts.append(f"EP{ep}")
    if attention_dp:
        parts.append("ADP" if adp_balance else "ADP nobal")
    parts.append(f"b{max_batch}")
    if speculative:
        parts.append(speculative)
    if recv_interval > 1:
        parts.append(f"recv{recv_interval}")
    if batch_wait_iters > 0:
        parts.append(f"wait{batch_wait_iters}@{batch_wait_ratio:g}")
    if piecewise_graphs is not None:
        parts.append("pcg" if piecewise_graphs else "nopcg")
    return " ".join(parts)


def check_replica(plan: ReplicaPlan, model: ModelSpec) -> None:
    """Raise a one-line error for a plan that cannot shard the model."""
    for name, value in (
        ("tp", plan.tp),
        ("pp", plan.pp),
        ("ep", plan.ep),
        ("max_batch", plan.max_batch),
        ("recv_interval", plan.recv_interval),
    ):
        if value < 1:
            raise ChipwiseError(f"plan.{name} must be at least 1, got {value}. Fix: give a positive integer.")
    if plan.batch_wait_iters < 0 or not 0.0 <= plan.batch_wait_ratio <= 1.0:
        raise ChipwiseError(
            f"plan.batch_wait_iters {plan.batch_wait_iters} / batch_wait_ratio {plan.batch_wait_ratio} out of range. "
            "Fix: give iterations >= 0 and a ratio of max_tokens in [0, 1]."
        )
    if not 0.0 <= plan.memory_fraction <= 1.0:
        raise ChipwiseError(
            f"plan.memory_fraction {plan.memory_fraction:g} is not a share of memory. Fix: give a value in (0, 1]."
        )
    if plan.max_tokens < 1:
        raise ChipwiseError(f"plan.max_tokens must be at least 1, got {plan.max_tokens}. Fix: give a positive integer.")
    if plan.pp > model.layers:
        raise ChipwiseError(
            f"plan.pp {plan.pp} exceeds the model's {model.layers} layers. Fix: use pp <= {model.layers}."
        )
    check_weight_precision(plan.weight_precision, model)
    if plan.attention_dp and model.moe is None:
        # the engines' data-parallel attention feeds expert-parallel MoE layers: a dense model's had been priced
        # in silence (Llama-3.1-70B TP4 ADP: attention weights replicated, TPOT 24.2 ms against 18.8)
        raise ChipwiseError(
            "plan.attention_dp needs a mixture-of-experts model (the engines' data-parallel attention feeds expert "
            "parallelism). Fix: drop attention_dp, or give replicas for data parallelism."
        )
    if plan.ep > 1:
        moe = model.moe
        if moe is None:
            raise ChipwiseError(f"plan.ep {plan.ep} needs a mixture-of-experts model. Fix: use ep: 1.")
        if plan.tp % plan.ep != 0:
            raise ChipwiseError(
                f"ep {plan.ep} must divide tp {plan.tp} (experts are spread over a replica's tp ranks). "
                "Fix: use an ep that divides tp."
            )
