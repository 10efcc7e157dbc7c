"""The what-if simulator: the production scheduler core on a simulated clock and cluster."""
