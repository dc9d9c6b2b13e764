"""Layer 6 - reliability: failure rates at scale, checkpoints (size, write time, Young-Daly interval), goodput."""

from chipwise.reliability.goodput import RECOVERIES, RunReliability, assess_run, goodput, reliability_inputs
from chipwise.reliability.rates import FailureRates, chips_per_host, failure_rates, interruption_rate

__all__ = [
    "RECOVERIES",
    "FailureRates",
    "RunReliability",
    "assess_run",
    "chips_per_host",
    "failure_rates",
    "goodput",
    "interruption_rate",
    "reliability_inputs",
]
