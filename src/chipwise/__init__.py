"""chipwise: where does an LLM workload run best - time, plan, dollars, energy and carbon across AI accelerators."""

__version__ = "0.1.0"
