"""jitcep: complex event processing over columnar event tables."""
