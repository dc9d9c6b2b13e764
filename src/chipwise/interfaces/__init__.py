"""Layer 9 - interfaces: CLI, Python API, reports, plots and the web page."""
