"""reporter: turn LLM-agent CUDA-kernel runs into a static site people can trust."""

__version__ = "0.1.0"
