"""Measure a real GPU to calibrate chipwise: GEMM rate by shape, copy bandwidth, idle and busy power.

    python scripts/measure_gpu.py --out measurements.json [--power-seconds 70]

Needs PyTorch with CUDA and nvidia-smi. Prints a table and writes JSON; the figures it produces are the
`measured` entries whose source is CHIPWISE_CAL_* in the catalog (e.g. the H200 idle and busy power fractions in
datacenter.yaml). Method (docs/research/efficiency-evidence.md, section 1): warm up, time with CUDA events, take
the median of repeats, random (never zero) inputs, rotate buffers larger than L2 for bandwidth.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import threading
import time
from typing import Any

GEMM_SHAPES = [
    (8192, 8192, 8192),  # large square: the ceiling
    (16384, 4096, 4096),  # attention projection, TP=1
    (16384, 14336, 4096),  # Llama-3 8B MLP up
    (16384, 4096, 14336),  # Llama-3 8B MLP down
    (8192, 1024, 8192),  # a tensor-parallel slice
    (4096, 2048, 768),  # a small MoE expert
    (128, 8192, 8192),  # decode-like (memory-bound)
]


def _power_sampler(samples: list[float], stop: threading.Event) -> None:
    while not stop.is_set():
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=power.draw", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        with contextlib.suppress(ValueError, IndexError):
            samples.append(float(out.stdout.strip().splitlines()[0]))
        time.sleep(0.5)


def main() -> None:
    import torch  # imported here: chipwise itself never needs PyTorch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="measurements.json")
    parser.add_argument("--power-seconds", type=float, default=70.0)
    parser.add_argument("--idle-seconds", type=float, default=25.0)
    args = parser.parse_args()
    dev = torch.device("cuda")
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "gemm": []}

    def timed(fn: Any, repeats: int = 20) -> float:
        for _ in range(3):
            fn()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return statistics.median(times)

    for m, n, k in GEMM_SHAPES:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        t = timed(lambda a=a, b=b: a @ b)
        result["gemm"].append(
            {"m": m, "n": n, "k": k, "dtype": "bf16", "seconds": t, "tflops": 2 * m * n * k / t / 1e12}
        )
    src = torch.randn(2**28, device=dev, dtype=torch.float32)  # 1 GiB, far beyond L2
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src))
    result["copy_bandwidth_Bps"] = 2 * src.numel() * 4 / t  # bytes read plus bytes written

    samples: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_power_sampler, args=(samples, stop), daemon=True)
    torch.cuda.synchronize()
    sampler.start()
    time.sleep(args.idle_seconds)
    idle = list(samples)
    samples.clear()
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    end_at = time.time() + args.power_seconds
    count = 0
    while time.time() < end_at:
        for _ in range(50):
            a @ b
        torch.cuda.synchronize()
        count += 50
    stop.set()
    busy = samples[4:]  # drop the ramp-up
    limit = subprocess.run(
        ["nvidia-smi", "--query-gpu=power.limit", "--format=csv,noheader,nounits", "-i", "0"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    result["power"] = {
        "limit_w": float(limit) if limit else None,
        "idle_mean_w": statistics.fmean(idle) if idle else None,
        "busy_mean_w": statistics.fmean(busy) if busy else None,
        "busy_tflops": 2 * 8192**3 * count / args.power_seconds / 1e12,
    }
    for g in result["gemm"]:
        print(f"{g['m']:>6} x {g['n']:>6} x {g['k']:>6} bf16: {g['tflops']:8.1f} TFLOP/s")
    print(f"copy bandwidth: {result['copy_bandwidth_Bps'] / 1e12:.2f} TB/s; power {result['power']}")
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
