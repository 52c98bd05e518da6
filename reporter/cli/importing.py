"""`reporter import`: other tools' results into traces."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from ..core.errors import LOGGER, ConfigError
from .app import DATA, State


@click.group("import")
def import_group() -> None:
    """Convert other tools' results into traces."""


@import_group.command("kernelbench")
@click.argument("run_dirs", nargs=-1, required=True, type=DATA)
@click.option("--problems", type=DATA, required=True, help="KernelBench's problem folder (holds level1/, level2/, ...).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The data folder to write into.")
@click.option("--model", default=None, help="Model name (default: generation_config.yaml's model_name, else the folder name).")
@click.option("--configuration", default=None, help="Prompt / harness settings shared by these runs (optional).")
@click.option("--gpu", default=None, help="The GPU the runs were timed on (default: eval_results.json's hardware).")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="KernelBench's results/timing/<hardware>/baseline_time_torch.json: the reference times (ms).")
@click.option("--baseline-compile", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The torch.compile baseline file (baseline_time_torch_compile_*.json).")
@click.option("--note", default=None, help="A caveat added to every imported run's source note (shown on its page).")
@click.option("--allow-missing-reference", is_flag=True,
              help="Import kernels whose problem file is not under --problems (they cannot be re-validated).")
@click.option("--force", is_flag=True, help="Replace traces under OUT that no import wrote or that were edited since, and "
              "let run folders of the same name share one output folder (the later one's traces win).")
@click.pass_obj
def import_kernelbench(state: State, run_dirs: tuple[Path, ...], problems: Path, out: Path, model: str | None,
                       configuration: str | None, gpu: str | None, baseline: Path | None, baseline_compile: Path | None,
                       note: str | None, allow_missing_reference: bool, force: bool) -> None:
    """Convert KernelBench run folders (kernels + eval_results.json), or a runs/ root holding them, into traces under OUT.

    --problems is KernelBench's problem folder (KernelBench/KernelBench in its checkout, holding level1/,
    level2/, ...): each kernel's problem file becomes the run's reference, which re-validation runs against.
    """
    from ..collect import kernelbench as kb
    from ..collect.imported import same_names
    folders = kb.run_dirs(list(run_dirs))
    if not folders:
        raise ConfigError(f"no KernelBench run folder (level_L_problem_P_sample_S_kernel.py files or eval_results.json) "
                          f"in {', '.join(map(str, run_dirs))} or directly inside it")
    if not force and (clash := same_names(folders)):
        raise ConfigError(clash + "; nothing was written")
    missing = kb.missing_references(folders, problems)
    if missing and not allow_missing_reference:
        raise ConfigError(missing + "; nothing was written")
    from ..collect import problemset
    today, messages = problemset.scan(problems)  # the universe of the leaderboards' denominators
    drift = problemset.record(out, today)[1]
    opts = kb.ImportOptions(model, configuration, gpu, kb.read_baseline(baseline) if baseline else None,
                            kb.read_baseline(baseline_compile) if baseline_compile else None, note, drift, force)
    done, total = [0], sum(len(kb.kernel_files(f)) for f in folders)

    def step() -> None:
        done[0] += 1
        state.bar("importing kernels", done[0], total)

    for folder in folders:
        messages += kb.import_kernelbench(folder, problems, out, options=opts, step=step).messages
    written = done[0]
    for msg in messages:
        logging.getLogger(LOGGER).warning(msg)
    click.echo(f"wrote {written} traces from {len(folders)} run folders under {out} ({len(messages)} messages)")
