"""Measure the serving primitives of chipwise's iteration model on a real GPU, and whole decode and prefill steps.

    python scripts/measure_serving_gpu.py --out serving-kernels.json [--smoke]

Needs PyTorch with CUDA (Triton for the fused elementwise kernels; without it the step falls back to PyTorch ops and
says so). What it times, each inside one captured CUDA graph replayed five times after a warm-up (the median; CUDA
events), with random bf16 inputs and every weight or KV cache rotated over copies several times the L2, as a
decoder's layers each read their own:

- ceilings: HBM read (a sum over 4 GiB) and copy bandwidth, the 8192^3 bf16 and fp8 GEMM rates;
- weight-streaming GEMMs (`gemm`): Llama-3.1-8B's fused projections at TP1, Llama-3.1-70B's at TP8 and the 8B LM
  head, at 1 to 8,192 rows, bf16 (torch.matmul) and fp8 e4m3 per-tensor (torch._scaled_mm);
- decode attention (`decode_attention`): one query per sequence over B x L cached bf16 tokens, GQA packed as vLLM
  and FlashInfer pack it (a KV head's query heads as rows of one flash-attention call);
- prefill attention (`prefill_attention`): causal flash attention over a whole prompt;
- whole steps (`decode_step`, `prefill_step`) of a Llama-3.1-8B-shaped decoder (random weights, 32 layers, the LM
  head and a greedy sample), the elementwise work fused as the serving engines fuse it (add + RMSNorm, RoPE,
  SiLU x up; three Triton kernels here), in bf16 and with fp8 weights.

`chipwise validate --data serving-kernels.json` prices every measurement with chipwise's device model
(chipwise.validation.kernels); docs/accuracy.md's "Kernels timed on an H200" section is the built-in one's.
Everything is written to --out after each section, so a run cut short keeps its measurements. --smoke runs tiny
shapes (CPU included) to check the script itself.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812 (PyTorch's own name for it)

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - the device machine has Triton
    triton = None

Call = Callable[[], Any]
REPEATS = 5
ROTATE_BYTES = 1.5e9  # every rotated operand's copies together: 30 x the H200's 50 MB L2

if triton is not None:

    @triton.jit
    def _add_rmsnorm(x_ptr, res_ptr, w_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        """res += x; out = rmsnorm(res) * w (one row a program): vLLM's fused_add_rms_norm."""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        s = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        s += tl.load(res_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(res_ptr + row * n + cols, s.to(res_ptr.dtype.element_ty), mask=mask)
        inv = tl.rsqrt(tl.sum(s * s, axis=0) / n + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n + cols, (s * inv * w).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _silu_mul(gu_ptr, out_ptr, f, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        """out = silu(gate) * up of one row's [gate | up]: vLLM's silu_and_mul."""
        row = tl.program_id(0)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < f
        g = tl.load(gu_ptr + row * 2 * f + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(gu_ptr + row * 2 * f + f + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * f + cols, (g / (1.0 + tl.exp(-g)) * u).to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def _rope(qkv_ptr, cos_ptr, sin_ptr, stride, HALF: tl.constexpr):  # type: ignore[no-untyped-def]
        """Rotate one head of one row of the fused qkv in place (NeoX halves): vLLM's rotary_embedding."""
        row = tl.program_id(0)
        base = qkv_ptr + row * stride + tl.program_id(1) * 2 * HALF
        i = tl.arange(0, HALF)
        a = tl.load(base + i).to(tl.float32)
        b = tl.load(base + HALF + i).to(tl.float32)
        c = tl.load(cos_ptr + row * HALF + i)
        s = tl.load(sin_ptr + row * HALF + i)
        tl.store(base + i, (a * c - b * s).to(qkv_ptr.dtype.element_ty))
        tl.store(base + HALF + i, (b * c + a * s).to(qkv_ptr.dtype.element_ty))

    @triton.jit
    def _combine(o_ptr, lse_ptr, out_ptr, splits, group, o0, o1, o2, l0, l1, l2,  # type: ignore[no-untyped-def]
                 D: tl.constexpr, SB: tl.constexpr):  # fmt: skip
        """Flash-decoding's combine: one (sequence, query head) row of out = sum over the KV splits of each split's
        output weighted by softmax(its log-sum-exp). o (B*S, kv heads, group, D) and lse (B*S, kv heads, group) by
        strides; out (B, kv heads * group, D) contiguous."""
        pid = tl.program_id(0)
        rows = tl.num_programs(1)
        b = pid
        r = tl.program_id(1)
        h = r // group
        g = r % group
        s = tl.arange(0, SB)
        ms = s < splits
        lse = tl.load(lse_ptr + (b * splits + s) * l0 + h * l1 + g * l2, mask=ms, other=-float("inf"))
        w = tl.exp(lse - tl.max(lse, axis=0))
        w = w / tl.sum(w, axis=0)
        d = tl.arange(0, D)
        o = tl.load(o_ptr + (b * splits + s[:, None]) * o0 + h * o1 + g * o2 + d[None, :], mask=ms[:, None], other=0.0)
        y = tl.sum(o.to(tl.float32) * w[:, None], axis=0)
        tl.store(out_ptr + (b * rows + r) * D + d, y.to(out_ptr.dtype.element_ty))


class Bench:
    """Times a list of calls run back to back: one CUDA graph of them all (on the CPU, a plain loop)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def capture(self, calls: list[Call]) -> Call:
        """A replay of `calls` back to back: one captured CUDA graph of them all, after a warm-up (cuBLAS
        workspaces, Triton compilation, flash-attention heuristics); on the CPU, a plain loop."""
        if not self.cuda:

            def loop() -> None:
                for c in calls:
                    c()

            return loop
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for c in calls:
                c()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for c in calls:
                c()
        return graph.replay

    def seconds(self, calls: list[Call], repeats: int = REPEATS) -> float:
        """Median seconds of one pass over `calls` (CUDA events around a graph replay)."""
        replay = self.capture(calls)
        replay()
        self.sync()
        times = []
        for _ in range(repeats):
            if self.cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                replay()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                replay()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def power(self, replay: Call, seconds: float) -> dict[str, float]:
        """Board power (nvidia-smi power.draw, sampled every ~0.2 s) and SM clock while `replay` runs in a loop for
        `seconds`, the first second dropped (ramp-up)."""
        samples: list[tuple[float, float, float]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                got = nvidia_smi("power.draw,clocks.sm").split(",")
                with contextlib.suppress(ValueError):
                    samples.append((time.time(), float(got[0]), float(got[1])))
                time.sleep(0.2)

        thread = threading.Thread(target=sample, daemon=True)
        t0 = time.time()
        thread.start()
        runs = 0
        while time.time() - t0 < seconds:
            for _ in range(10):
                replay()
            self.sync()
            runs += 10
        stop.set()
        thread.join()
        kept = [s for s in samples if s[0] > t0 + 1.0]
        return {
            "seconds": time.time() - t0,
            "replays": runs,
            "power_w": statistics.fmean(s[1] for s in kept) if kept else float("nan"),
            "sm_clock_mhz": statistics.fmean(s[2] for s in kept) if kept else float("nan"),
            "samples": len(kept),
        }


def copies_for(nbytes: float, most: int = 64) -> int:
    """Copies of an operand of `nbytes` that together exceed ROTATE_BYTES (at least 2, at most `most`)."""
    return max(2, min(most, math.ceil(ROTATE_BYTES / max(nbytes, 1.0))))


def nvidia_smi(query: str) -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True, text=True, check=False, timeout=20,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


class Fp8:
    """fp8 e4m3 weights with per-tensor scales of 1, multiplied by torch._scaled_mm (bf16 out)."""

    dtype = torch.float8_e4m3fn

    def __init__(self, device: torch.device) -> None:
        self.one = torch.ones((), device=device, dtype=torch.float32)
        #: rows _scaled_mm's first operand must be a multiple of (16 on some PyTorch releases: padded, and said)
        self.row_multiple = 1
        try:
            self.mm(torch.zeros(1, 32, device=device).to(self.dtype), self.weight(32, 32, device))
        except RuntimeError:
            self.row_multiple = 16

    def padded(self, x: torch.Tensor) -> torch.Tensor:
        """x with zero rows added up to the row multiple _scaled_mm takes."""
        extra = -x.shape[0] % self.row_multiple
        return F.pad(x, (0, 0, 0, extra)) if extra else x

    def weight(self, k: int, n: int, device: torch.device) -> torch.Tensor:
        """A (k x n) weight, column-major as _scaled_mm takes its second operand."""
        return (torch.randn(n, k, device=device) * 0.05).to(self.dtype).t()

    def mm(self, x8: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch._scaled_mm(x8, w, scale_a=self.one, scale_b=self.one, out_dtype=torch.bfloat16)


def bandwidths(bench: Bench, n: int) -> dict[str, float]:
    """HBM read (a sum) and copy bandwidth over `n` bf16 elements (the tensors are freed on return)."""
    src = torch.randn(n, device=bench.device, dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    read = bench.seconds([lambda: src.sum(dtype=torch.float32)])
    copy = bench.seconds([lambda: dst.copy_(src)])
    return {"read_bandwidth_Bps": 2 * n / read, "copy_bandwidth_Bps": 4 * n / copy}


def ceilings(bench: Bench, smoke: bool, fp8: Fp8 | None) -> dict[str, float]:
    dev = bench.device
    n = 2**20 if smoke else 2**31  # bf16 elements: 4 GiB
    out = bandwidths(bench, n)
    s = 256 if smoke else 8192
    a = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
    b = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
    out["bf16_gemm_flops"] = 2 * s**3 * 10 / bench.seconds([lambda: a @ b] * 10)  # ten products a replay
    if fp8 is not None:
        a8 = a.to(fp8.dtype)
        b8 = b.t().contiguous().to(fp8.dtype).t()
        out["fp8_gemm_flops"] = 2 * s**3 * 10 / bench.seconds([lambda: fp8.mm(a8, b8)] * 10)
    return out


#: (name, n, k) of the weight-streaming GEMMs: x (m x k) @ W (k x n)
GEMM_SHAPES = [
    ("llama-3.1-8b qkv", 6144, 4096),
    ("llama-3.1-8b o", 4096, 4096),
    ("llama-3.1-8b gate_up", 28672, 4096),
    ("llama-3.1-8b down", 4096, 14336),
    ("llama-3.1-8b lm_head", 128256, 4096),
    ("llama-3.1-70b tp8 qkv", 1280, 8192),
    ("llama-3.1-70b tp8 o", 8192, 1024),
    ("llama-3.1-70b tp8 gate_up", 7168, 8192),
    ("llama-3.1-70b tp8 down", 8192, 3584),
]
GEMM_ROWS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]


def gemms(bench: Bench, smoke: bool, fp8: Fp8 | None) -> list[dict[str, Any]]:
    dev = bench.device
    rows: list[dict[str, Any]] = []
    shapes = [(name, n // 64, k // 64) for name, n, k in GEMM_SHAPES[:3]] if smoke else GEMM_SHAPES
    for name, n, k in shapes:
        for precision in ("bf16", "fp8") if fp8 is not None else ("bf16",):
            count = copies_for(n * k * (2 if precision == "bf16" else 1))
            if precision == "bf16":
                ws = [torch.randn(k, n, device=dev, dtype=torch.bfloat16) * 0.05 for _ in range(count)]
            else:
                assert fp8 is not None
                ws = [fp8.weight(k, n, dev) for _ in range(count)]
            for m in GEMM_ROWS[:6] if smoke else GEMM_ROWS:
                x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                if precision == "bf16":
                    calls: list[Call] = [lambda x=x, w=w: x @ w for w in ws]
                else:
                    assert fp8 is not None
                    x8 = fp8.padded(x).to(fp8.dtype)
                    calls = [lambda x8=x8, w=w: fp8.mm(x8, w) for w in ws]
                t = bench.seconds(calls) / count
                rows.append({"shape": name, "m": m, "n": n, "k": k, "precision": precision, "seconds": t})
                print(f"  gemm {name:<26} {precision} m={m:<5} {t * 1e6:9.1f} us", flush=True)
            del ws
    return rows


#: (name, kv heads, query heads per kv head, head dim) of decode attention
ATTENTION_LAYOUTS = [("llama-3.1-8b", 8, 4, 128), ("llama-3.1-70b tp8", 1, 8, 128)]
DECODE_GRID = [(1, 1024), (1, 8192), (1, 32768), (1, 131072), (8, 2048), (8, 8192), (32, 2048), (32, 8192),
               (128, 1024), (128, 4096), (256, 2048)]  # fmt: skip


def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def compute_units() -> int:
    """The GPU's multiprocessors (132 on an H100 or H200 SXM; the CPU smoke run takes that)."""
    return torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 132


def kv_splits(batch: int, kv_heads: int, context: int, units: int = 132) -> int:
    """Splits of each sequence's cache that give a decode step about two thread blocks a multiprocessor (flash-
    decoding; FlashAttention-2's split-KV heuristic fills the machine alike), each split at least 256 tokens."""
    want = max(1, 2 * units // max(1, batch * kv_heads))
    splits = 1 << (want.bit_length() - 1)  # a power of two, at most `want`
    while splits > 1 and (context % splits or context // splits < 256):
        splits //= 2
    return splits


def with_lse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention output and its log-sum-exp (flash attention's own, on CUDA)."""
    if q.is_cuda:
        got = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v)
        return got[0], got[1]
    scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    return (scores.softmax(-1) @ v.float()).to(q.dtype), scores.logsumexp(-1)


def split_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, splits: int) -> torch.Tensor:
    """Flash-decoding: q (B, kv heads, group, D) over a cache held as (B * splits, kv heads, L / splits, D), each
    split attended apart, then combined by their log-sum-exps; (B, kv heads * group * D)."""
    b, kvh, group, d = q.shape
    if splits == 1:
        return sdpa(q, k, v).reshape(b, kvh * group * d)
    qs = q.unsqueeze(1).expand(b, splits, kvh, group, d).reshape(b * splits, kvh, group, d)
    o, lse = with_lse(qs, k, v)
    if triton is not None and q.is_cuda:
        out = torch.empty(b, kvh * group, d, device=q.device, dtype=q.dtype)
        _combine[(b, kvh * group)](o, lse, out, splits, group, o.stride(0), o.stride(1), o.stride(2),
                                   lse.stride(0), lse.stride(1), lse.stride(2), D=d,
                                   SB=max(2, triton.next_power_of_2(splits)))  # fmt: skip
        return out.reshape(b, kvh * group * d)
    w = lse.view(b, splits, kvh, group).softmax(1)
    out = (o.view(b, splits, kvh, group, d).float() * w[..., None]).sum(1)
    return out.to(q.dtype).reshape(b, kvh * group * d)


def split_decode_attention(bench: Bench, smoke: bool) -> list[dict[str, Any]]:
    """decode_attention with each sequence's cache split as flash-decoding splits it (kv_splits)."""
    dev = bench.device
    rows: list[dict[str, Any]] = []
    grid = [(1, 1024), (2, 512)] if smoke else DECODE_GRID
    for name, kvh, group, d in ATTENTION_LAYOUTS:
        for b, ctx in grid:
            splits = kv_splits(b, kvh, ctx, compute_units())
            nbytes = 2 * b * kvh * ctx * d * 2
            count = copies_for(nbytes)
            q = torch.randn(b, kvh, group, d, device=dev, dtype=torch.bfloat16)
            shape = (b * splits, kvh, ctx // splits, d)
            kv = [
                (torch.randn(shape, device=dev, dtype=torch.bfloat16),
                 torch.randn(shape, device=dev, dtype=torch.bfloat16))
                for _ in range(count)
            ]  # fmt: skip
            calls: list[Call] = [functools.partial(split_decode, q, k, v, splits) for k, v in kv]
            t = bench.seconds(calls) / count
            rows.append({"layout": name, "kv_heads": kvh, "group": group, "head_dim": d, "batch": b, "context": ctx,
                         "splits": splits, "kv_bytes": nbytes, "seconds": t})  # fmt: skip
            print(f"  split decode attention {name:<18} B={b:<4} L={ctx:<7} S={splits:<3} {t * 1e6:9.1f} us "
                  f"({nbytes / t / 1e12:.2f} TB/s)", flush=True)  # fmt: skip
            del kv, calls
    return rows


def decode_attention(bench: Bench, smoke: bool) -> list[dict[str, Any]]:
    dev = bench.device
    rows: list[dict[str, Any]] = []
    grid = [(1, 64), (4, 128)] if smoke else DECODE_GRID
    for name, kvh, group, d in ATTENTION_LAYOUTS:
        for b, ctx in grid:
            nbytes = 2 * b * kvh * ctx * d * 2  # K and V, bf16
            count = copies_for(nbytes)
            q = torch.randn(b, kvh, group, d, device=dev, dtype=torch.bfloat16)
            kv = [
                (torch.randn(b, kvh, ctx, d, device=dev, dtype=torch.bfloat16),
                 torch.randn(b, kvh, ctx, d, device=dev, dtype=torch.bfloat16))
                for _ in range(count)
            ]  # fmt: skip
            t = bench.seconds([lambda q=q, k=k, v=v: sdpa(q, k, v) for k, v in kv]) / count
            rows.append({"layout": name, "kv_heads": kvh, "group": group, "head_dim": d, "batch": b, "context": ctx,
                         "kv_bytes": nbytes, "seconds": t})  # fmt: skip
            print(f"  decode attention {name:<18} B={b:<4} L={ctx:<7} {t * 1e6:9.1f} us "
                  f"({nbytes / t / 1e12:.2f} TB/s)", flush=True)  # fmt: skip
            del kv
    return rows


def prefill_attention(bench: Bench, smoke: bool) -> list[dict[str, Any]]:
    dev = bench.device
    rows: list[dict[str, Any]] = []
    heads, d = (4, 64) if smoke else (32, 128)
    for length in [64, 128] if smoke else [512, 1024, 2048, 4096, 8192, 16384, 32768]:
        q, k, v = (torch.randn(1, heads, length, d, device=dev, dtype=torch.bfloat16) for _ in range(3))
        t = bench.seconds([lambda q=q, k=k, v=v: sdpa(q, k, v, causal=True)] * 3) / 3
        flops = 4.0 * heads * d * length * (length + 1) / 2
        rows.append({"heads": heads, "head_dim": d, "length": length, "seconds": t, "flops": flops})
        print(f"  prefill attention L={length:<6} {t * 1e3:8.3f} ms ({flops / t / 1e12:.0f} TFLOP/s)", flush=True)
    return rows


class Decoder:
    """A Llama-3.1-8B-shaped decoder with random weights: the kernels of a serving engine's step."""

    def __init__(self, device: torch.device, smoke: bool, fp8: Fp8 | None) -> None:
        if smoke:
            self.layers, self.hidden, self.heads, self.kv_heads, self.head_dim, self.ffn, self.vocab = (
                2, 256, 8, 2, 32, 512, 1000)  # fmt: skip
        else:
            self.layers, self.hidden, self.heads, self.kv_heads, self.head_dim, self.ffn, self.vocab = (
                32, 4096, 32, 8, 128, 14336, 128256)  # fmt: skip
        self.device = device
        self.fp8 = fp8
        self.fused = triton is not None and device.type == "cuda"
        h, f, d = self.hidden, self.ffn, self.head_dim
        self.qkv_width = (self.heads + 2 * self.kv_heads) * d

        def w(k: int, n: int) -> torch.Tensor:
            return torch.randn(k, n, device=device, dtype=torch.bfloat16) * 0.02

        self.w = [
            {"qkv": w(h, self.qkv_width), "o": w(self.heads * d, h), "gate_up": w(h, 2 * f), "down": w(f, h),
             "ln1": torch.ones(h, device=device, dtype=torch.bfloat16),
             "ln2": torch.ones(h, device=device, dtype=torch.bfloat16)}
            for _ in range(self.layers)
        ]  # fmt: skip
        self.w8: list[dict[str, torch.Tensor]] = []
        if fp8 is not None:
            names = ("qkv", "o", "gate_up", "down")
            self.w8 = [{name: layer[name].t().contiguous().to(fp8.dtype).t() for name in names} for layer in self.w]
        self.norm = torch.ones(h, device=device, dtype=torch.bfloat16)
        self.lm_head = w(h, self.vocab)

    # the elementwise kernels, fused (Triton) where it runs, else PyTorch's ops
    def add_rmsnorm(self, x: torch.Tensor, res: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        if self.fused:
            out = torch.empty_like(x)
            _add_rmsnorm[(x.shape[0],)](x, res, weight, out, x.shape[1], 1e-5,
                                        BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)  # fmt: skip
            return out
        res.add_(x)
        s = res.float()
        return (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * weight

    def silu_mul(self, gu: torch.Tensor) -> torch.Tensor:
        f = gu.shape[1] // 2
        if self.fused:
            out = torch.empty(gu.shape[0], f, device=gu.device, dtype=gu.dtype)
            _silu_mul[(gu.shape[0], triton.cdiv(f, 1024))](gu, out, f, BLOCK=1024, num_warps=4)
            return out
        return F.silu(gu[:, :f]) * gu[:, f:]

    def rope(self, qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> None:
        half = self.head_dim // 2
        rotated = self.heads + self.kv_heads
        if self.fused:
            _rope[(qkv.shape[0], rotated)](qkv, cos, sin, qkv.stride(0), HALF=half, num_warps=1)
            return
        x = qkv[:, : rotated * self.head_dim].view(qkv.shape[0], rotated, 2, half)
        a, b = x[:, :, 0].clone(), x[:, :, 1].clone()
        c, s = cos[:, None, :].to(qkv.dtype), sin[:, None, :].to(qkv.dtype)
        x[:, :, 0] = a * c - b * s
        x[:, :, 1] = b * c + a * s

    def linear(self, x: torch.Tensor, i: int, name: str, fp8: bool) -> torch.Tensor:
        if fp8:
            assert self.fp8 is not None
            return self.fp8.mm(self.fp8.padded(x).to(self.fp8.dtype), self.w8[i][name])[: x.shape[0]]
        return x @ self.w[i][name]

    def step(self, x: torch.Tensor, res: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
             caches: list[tuple[torch.Tensor, torch.Tensor]] | None, fp8: bool) -> torch.Tensor:  # fmt: skip
        """One iteration: decode (caches given: one new token a sequence, attending over the cache) or the prefill
        of one prompt (x holds its tokens; causal attention over them); the LM head and a greedy sample of the last
        row of each sequence."""
        n = x.shape[0]
        hd, kvh, qh = self.head_dim, self.kv_heads, self.heads
        res.zero_()
        h = self.add_rmsnorm(x, res, self.w[0]["ln1"])
        for i in range(self.layers):
            if i > 0:
                h = self.add_rmsnorm(h, res, self.w[i]["ln1"])
            qkv = self.linear(h, i, "qkv", fp8)
            self.rope(qkv, cos, sin)
            q, k, v = qkv.split([qh * hd, kvh * hd, kvh * hd], dim=1)
            if caches is not None:
                kc, vc = caches[i]
                splits = kc.shape[0] // n  # the cache held in flash-decoding's splits (split_decode)
                last = (slice(None), splits - 1, slice(None), -1)
                kc.view(n, splits, kvh, -1, hd)[last].copy_(k.view(n, kvh, hd))
                vc.view(n, splits, kvh, -1, hd)[last].copy_(v.view(n, kvh, hd))
                a = split_decode(q.view(n, kvh, qh // kvh, hd), kc, vc, splits)
            else:
                qt = q.view(n, qh, hd).transpose(0, 1).unsqueeze(0)
                kt = k.view(n, kvh, hd).transpose(0, 1).repeat_interleave(qh // kvh, dim=0).unsqueeze(0)
                vt = v.view(n, kvh, hd).transpose(0, 1).repeat_interleave(qh // kvh, dim=0).unsqueeze(0)
                a = sdpa(qt, kt, vt, causal=True)[0].transpose(0, 1).reshape(n, qh * hd)
            o = self.linear(a, i, "o", fp8)
            h = self.add_rmsnorm(o, res, self.w[i]["ln2"])
            h = self.linear(self.silu_mul(self.linear(h, i, "gate_up", fp8)), i, "down", fp8)
        h = self.add_rmsnorm(h, res, self.norm)
        last = h if caches is not None else h[-1:]
        return torch.argmax(last @ self.lm_head, dim=-1)


DECODE_STEPS = [(1, 1024), (1, 8192), (1, 32768), (1, 131072), (8, 2048), (8, 8192), (32, 2048), (64, 2048),
                (128, 2048), (256, 2048), (64, 8192), (128, 4096)]  # fmt: skip
FP8_DECODE_STEPS = [(1, 1024), (1, 8192), (32, 2048), (128, 2048), (256, 2048)]
#: --small-steps: the steps whose caches flash-decoding splits (few sequences), and no prefill or power
SMALL_DECODE_STEPS = [(1, 1024), (1, 8192), (1, 32768), (1, 131072), (8, 2048), (8, 8192)]
SMALL_FP8_DECODE_STEPS = [(1, 1024), (1, 8192)]
PREFILL_STEPS = [128, 512, 2048, 8192]


def steps(
    bench: Bench, smoke: bool, fp8: Fp8 | None, result: dict[str, Any], save: Callable[[], None], small: bool = False
) -> None:
    dev = bench.device
    model = Decoder(dev, smoke, fp8)
    result["step_model"] = {"layers": model.layers, "hidden": model.hidden, "heads": model.heads,
                            "kv_heads": model.kv_heads, "head_dim": model.head_dim, "ffn": model.ffn,
                            "vocab": model.vocab, "fused_elementwise": model.fused}  # fmt: skip
    half = model.head_dim // 2

    def inputs(n: int) -> tuple[torch.Tensor, ...]:
        angle = torch.rand(n, half, device=dev) * 6.28
        x = torch.randn(n, model.hidden, device=dev, dtype=torch.bfloat16)
        return x, torch.empty_like(x), angle.cos(), angle.sin()

    result["decode_step"], result["prefill_step"] = [], []
    decode = [(1, 512), (4, 16)] if smoke else SMALL_DECODE_STEPS if small else DECODE_STEPS
    fp8_decode = decode[:1] if smoke else SMALL_FP8_DECODE_STEPS if small else FP8_DECODE_STEPS
    for precision, grid in (("bf16", decode), ("fp8", fp8_decode if fp8 is not None else [])):
        for b, ctx in grid:
            x, res, cos, sin = inputs(b)
            splits = kv_splits(b, model.kv_heads, ctx, compute_units())
            shape = (b * splits, model.kv_heads, ctx // splits, model.head_dim)
            caches = [
                (torch.randn(shape, device=dev, dtype=torch.bfloat16),
                 torch.randn(shape, device=dev, dtype=torch.bfloat16))
                for _ in range(model.layers)
            ]  # fmt: skip
            run = functools.partial(model.step, x, res, cos, sin, caches, precision == "fp8")
            t = bench.seconds([run])
            result["decode_step"].append(
                {"batch": b, "context": ctx, "precision": precision, "kv_splits": splits, "seconds": t}
            )
            print(f"  decode step {precision} B={b:<4} L={ctx:<6} S={splits:<3} {t * 1e3:8.3f} ms", flush=True)
            del caches, run  # (the call holds the caches too)
            if bench.cuda:
                torch.cuda.empty_cache()
            save()
    for precision in ("bf16", "fp8") if fp8 is not None and not small else () if small else ("bf16",):
        for length in [16, 32] if smoke else PREFILL_STEPS:
            x, res, cos, sin = inputs(length)
            t = bench.seconds([functools.partial(model.step, x, res, cos, sin, None, precision == "fp8")])
            result["prefill_step"].append({"length": length, "precision": precision, "seconds": t})
            print(f"  prefill step {precision} L={length:<6} {t * 1e3:8.3f} ms", flush=True)
            save()
    if not bench.cuda or smoke or small:
        return
    # board power: idle, decoding (memory-bound) and encoding a prompt (compute-bound), bf16
    b, ctx, length = 64, 2048, 2048
    x, res, cos, sin = inputs(b)
    caches = [
        (torch.randn(b, model.kv_heads, ctx, model.head_dim, device=dev, dtype=torch.bfloat16),
         torch.randn(b, model.kv_heads, ctx, model.head_dim, device=dev, dtype=torch.bfloat16))
        for _ in range(model.layers)
    ]  # fmt: skip
    decode_replay = bench.capture([lambda: model.step(x, res, cos, sin, caches, False)])
    px, pres, pcos, psin = inputs(length)
    prefill_replay = bench.capture([lambda: model.step(px, pres, pcos, psin, None, False)])
    result["power"] = {
        "limit_w": nvidia_smi("power.limit"),
        "idle": bench.power(lambda: time.sleep(0.02), 6.0),
        f"decode_step bf16 B={b} L={ctx}": bench.power(decode_replay, 15.0),
        f"prefill_step bf16 L={length}": bench.power(prefill_replay, 15.0),
    }
    print(f"  power {result['power']}", flush=True)
    save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="serving-kernels.json")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, to check the script (CPU included)")
    parser.add_argument(
        "--sections", default="ceilings,gemm,decode_attention,split_decode_attention,prefill_attention,steps"
    )
    parser.add_argument("--small-steps", action="store_true", help="only the decode steps of few sequences")
    parser.add_argument("--chip", default="", help="the catalog chip id (default: chipwise matches the device name)")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    bench = Bench(device)
    fp8 = Fp8(device) if device.type == "cuda" and hasattr(torch, "_scaled_mm") else None
    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if bench.cuda else "cpu",
        **({"chip": args.chip} if args.chip else {}),
        "torch": torch.__version__,
        "triton": getattr(triton, "__version__", None),
        "cuda": torch.version.cuda,
        "date": time.strftime("%Y-%m-%d"),
        "method": "median of 5 replays of one captured CUDA graph after a warm-up; random bf16 inputs; weights and "
        "KV caches rotated over copies of at least 1.5 GB together (at most 64 copies: the smallest operands stay "
        "under 50 MB, launch-bound)",
        "fp8_row_multiple": fp8.row_multiple if fp8 is not None else None,
        "clocks_before": nvidia_smi("clocks.sm,clocks.mem,power.limit,temperature.gpu"),
    }

    def save() -> None:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)

    sections = set(args.sections.split(","))
    t0 = time.time()
    torch.manual_seed(0)
    for name, run in (
        ("ceilings", lambda: ceilings(bench, args.smoke, fp8)),
        ("gemm", lambda: gemms(bench, args.smoke, fp8)),
        ("decode_attention", lambda: decode_attention(bench, args.smoke)),
        ("split_decode_attention", lambda: split_decode_attention(bench, args.smoke)),
        ("prefill_attention", lambda: prefill_attention(bench, args.smoke)),
    ):
        if name in sections:
            print(f"{name} ({time.time() - t0:.0f} s)", flush=True)
            try:
                result[name] = run()
            except Exception as exc:  # keep the other sections' measurements
                result[f"{name}_error"] = repr(exc)
                print(f"  {name} failed: {exc!r}", file=sys.stderr, flush=True)
            save()
            if bench.cuda:
                torch.cuda.empty_cache()
    if "steps" in sections:
        print(f"steps ({time.time() - t0:.0f} s)", flush=True)
        try:
            steps(bench, args.smoke, fp8, result, save, args.small_steps)
        except Exception as exc:
            result["steps_error"] = repr(exc)
            print(f"  steps failed: {exc!r}", file=sys.stderr, flush=True)
    result["clocks_after"] = nvidia_smi("clocks.sm,clocks.mem,power.limit,temperature.gpu")
    result["wall_s"] = time.time() - t0
    save()
    print(f"done in {time.time() - t0:.0f} s: {args.out}", flush=True)


if __name__ == "__main__":
    main()
