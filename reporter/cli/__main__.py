"""`python -m reporter.cli`: the `reporter` command."""

from . import run

run()
