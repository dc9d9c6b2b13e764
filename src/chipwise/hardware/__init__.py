"""Layer 2 - hardware: typed, validated chips, systems, scale-up domains and fabrics built from the catalog."""

from chipwise.hardware.build import Hardware, hardware
from chipwise.hardware.objects import (
    PRECISION_BYTES,
    Chip,
    Efficiency,
    Fabric,
    FigureRef,
    ScaleUpDomain,
    System,
)
from chipwise.hardware.selection import hardware_ids

__all__ = [
    "PRECISION_BYTES",
    "Chip",
    "Efficiency",
    "Fabric",
    "FigureRef",
    "Hardware",
    "ScaleUpDomain",
    "System",
    "hardware",
    "hardware_ids",
]
