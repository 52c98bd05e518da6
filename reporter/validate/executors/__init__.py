"""Executors: who compiles and checks the pipeline's work items (this machine, or a Ray cluster)."""
