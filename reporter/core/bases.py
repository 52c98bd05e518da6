"""When a timing basis cannot be the call's time: a graph or wall figure far below the device basis, or a wall
figure beside a patched timer (issue 31, item 5). Applied where stored results are read (`collect.validation`),
so no page, table or board shows such a figure as a speedup; standard library only."""

from __future__ import annotations

from dataclasses import replace

from .schema import Basis, TimingFigures

# A graph replays the call's kernels back to back, and wall time brackets them with events on the caller's
# stream, so neither can fall far below their summed device time: when one does, it left work out (a kernel on
# a stream the caller does not wait for, one launched outside the capture) or its clock was tampered with.
BELOW_DEVICE = 0.8


def doubtful_basis(fig: TimingFigures, basis: Basis) -> str | None:
    """Why a graph or wall figure cannot be the call's time (it disagrees with the device basis), or None."""
    got = fig.on(basis)
    if got is None or fig.device is None or got.median_ms >= BELOW_DEVICE * fig.device.median_ms:
        return None
    how = "the graph replayed" if basis == Basis.GRAPH else "the eager call measured"
    return (f"not used: {how} in {got.median_ms * 1e3:.3g} µs, below the {fig.device.median_ms * 1e3:.3g} µs its "
            f"kernels take one after another on the device (under {BELOW_DEVICE:g}×), so this basis leaves work out "
            "(a kernel on a stream the caller does not wait for, or launched outside the captured stream) or its timer "
            "was tampered with")


def checked_bases(fig: TimingFigures, timers_patched: str | None = None) -> TimingFigures:
    """`fig` without the graph or wall figure that disagrees with the device basis, and without the wall figure
    when the kernel replaces a timer (`timers_patched`: where the static scan saw it); each note says why."""
    if (why := doubtful_basis(fig, Basis.GRAPH)) is not None:
        fig = replace(fig, graph=None, graph_note=why)
    if fig.wall is not None and timers_patched:
        return replace(fig, wall=None, wall_note=f"not used: {fig.wall.median_ms * 1e3:.3g} µs measured, but the kernel "
                                                 f"replaces a timer ({timers_patched}), which fakes wall time measured in its "
                                                 "process; the device basis (CUPTI) is not affected")
    if (why := doubtful_basis(fig, Basis.WALL)) is not None:
        fig = replace(fig, wall=None, wall_note=why)
    return fig
