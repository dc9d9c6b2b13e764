"""Layer 3 - workload: model shapes (ModelSpec), training and serving jobs, scenarios and request traces."""

from chipwise.workload.hf_config import from_dims, from_hf_config
from chipwise.workload.model import MLP, Attention, LayerGroup, ModelSpec, MoE
from chipwise.workload.presets import load_model, preset_id

__all__ = [
    "MLP",
    "Attention",
    "LayerGroup",
    "MoE",
    "ModelSpec",
    "from_dims",
    "from_hf_config",
    "load_model",
    "preset_id",
]
