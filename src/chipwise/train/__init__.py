"""Layer 5 - train: step time, memory and MFU of parallel plans, and the plan search."""
