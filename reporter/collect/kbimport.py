"""`reporter import kernelbench`: KernelBench run folders into traces, as an importer (`collect.importer`).

The conversion of one run folder is `kernelbench.import_kernelbench`; this module checks the whole request first
(run folders found, none sharing an output folder, every problem file there), records the problem set the
leaderboards divide by, and imports each folder.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from ..core import limits
from ..core.errors import ConfigError, printable
from ..core.gitread import files_at
from ..core.rules import kernelbench_rules_on, rules_named
from . import kernelbench as kb
from . import problemset
from .imported import same_names
from .importer import Imported, Option, Progress, Request
from .refversion import import_note

OPTIONS = (
    Option("problems", "KernelBench's problem folder (holds level1/, level2/, ...).", "folder", required=True),
    Option("model", "Model name (default: generation_config.yaml's model_name, else the folder name)."),
    Option("configuration", "Prompt / harness settings shared by these runs (optional)."),
    Option("gpu", "The GPU the runs were timed on (default: eval_results.json's hardware)."),
    Option("baseline", "KernelBench's results/timing/<hardware>/baseline_time_torch.json: the reference times (ms).", "file"),
    Option("baseline-compile", "The torch.compile baseline file (baseline_time_torch_compile_*.json).", "file"),
    Option("rules", "The rule set these runs were scored under (kernelbench-2025: the public leaderboard, before "
           "2025-11-04; kernelbench-2025-11: since). Default: inferred from eval_results.json's date, which a copy may change."),
    Option("kernelbench-commit", "Read the problem files as of this commit of the KernelBench checkout --problems is in: "
           "a commit id, a branch or tag, or a date YYYY-MM-DD (the last commit on or before it). Default: the files "
           "as they are on disk."),
    Option("note", "A caveat added to every imported run's source note (shown on its page)."),
    Option("allow-missing-reference", "Import kernels whose problem file is not under --problems (they cannot be "
           "re-validated).", "flag"),
    Option("force", "Replace traces under OUT that no import wrote or that were edited since, and let run folders of "
           "the same name share one output folder (the later one's traces win).", "flag"),
)


class KernelBenchImporter:
    name = "kernelbench"
    summary = "KernelBench run folders (kernels + eval_results.json) into traces"
    help = ("Convert KernelBench run folders (kernels + eval_results.json), or a runs/ root holding them, into traces "
            "under OUT.\n\n--problems is KernelBench's problem folder (KernelBench/KernelBench in its checkout, holding "
            "level1/, level2/, ...): each kernel's problem file becomes the run's reference, which re-validation runs "
            "against.")
    sources = "RUN_DIR..."
    options = OPTIONS

    def run(self, request: Request, progress: Progress) -> Imported:
        problems = request.path("problems")
        if problems is None:
            raise ConfigError("reporter import kernelbench needs --problems (KernelBench's folder holding level1/, ...)")
        if (rev := request.text("kernelbench_commit")) is None:
            return self._import(request, problems, progress)
        with tempfile.TemporaryDirectory(prefix="reporter-kernelbench-") as tmp:
            at = checkout_at(problems, rev, Path(tmp))

            def named(message: str) -> str:  # the folder the user gave, at its commit, never the temporary copy
                return message.replace(tmp, f"{problems}@{at[0][:12]}")
            try:
                done = self._import(request, Path(tmp), progress, (problems, at))
            except ConfigError as exc:
                raise ConfigError(named(exc.message)) from None
            return replace(done, messages=tuple(map(named, done.messages)))

    def _import(self, request: Request, problems: Path, progress: Progress,
                at: tuple[Path, tuple[str, str]] | None = None) -> Imported:
        out, force = request.out, request.flag("force")
        folders = kb.run_dirs(list(request.sources))
        if not folders:
            raise ConfigError(f"no KernelBench run folder (level_L_problem_P_sample_S_kernel.py files or eval_results.json) "
                              f"in {', '.join(map(str, request.sources))} or directly inside it")
        if not force and (clash := same_names(folders)):
            raise ConfigError(clash + "; nothing was written")
        missing = missing_references(folders, problems)
        if missing and not request.flag("allow_missing_reference"):
            raise ConfigError(missing + "; nothing was written")
        today, messages = problemset.scan(problems)  # the universe of the leaderboards' denominators
        if at is not None:  # read from a commit: the set is that commit's, named by the folder the user gave
            today = replace(today, source=printable(at[0].name), commit=at[1][0])
        drift = problemset.record(out, today)[1]
        baseline, compiled = request.path("baseline"), request.path("baseline_compile")
        if (rules := request.text("rules")) is not None:
            try:
                rules = rules_named(rules).name
            except KeyError as exc:
                raise ConfigError(f"--rules: {exc.args[0]}; nothing was written") from None
        opts = kb.ImportOptions(request.text("model"), request.text("configuration"), request.text("gpu"),
                                kb.read_baseline(baseline) if baseline else None,
                                kb.read_baseline(compiled) if compiled else None, _note(request.text("note"), at), drift,
                                force, rules)
        done, total = [0], sum(len(kb.kernel_files(f)) for f in folders)

        def step() -> None:
            done[0] += 1
            progress("importing kernels", done[0], total)

        written = 0
        for folder in folders:
            rules, why = rules_inferred(folder, opts.rules)
            report = kb.import_kernelbench(folder, problems, out, options=replace(opts, rules=rules, rules_from=why), step=step)
            messages += report.messages
            if (note := import_note(folder, report.written, out)) is not None:
                messages.append(note)
            written += len(report.written)  # attempted failures (an eval entry with no kernel file) too
        return Imported(written, len(folders), tuple(messages))


KERNELBENCH = KernelBenchImporter()


_PROBLEM_PATH = re.compile(r"level\d+/\d+_[^/\\\x00]*\.py")


def checkout_at(problems: Path, rev: str, into: Path) -> tuple[str, str]:
    """KernelBench's problem files as of `rev` written under `into` (levelN/P_name.py), read from the git checkout
    that holds `problems` (it, or one or two folders up) as data; (commit id, commit date)."""
    for root in (problems, *list(problems.resolve().parents)[:2]):
        if (root / ".git").exists():
            break
    else:
        raise ConfigError(f"--kernelbench-commit: {problems} is not inside a git checkout (looked in it and two folders "
                          "up); without it, the files on disk are read")
    under = problems.resolve().relative_to(root.resolve()).as_posix()
    try:
        sha, when, files = files_at(root, rev, "" if under == "." else under, limits.MAX_TRACE_BYTES, _PROBLEM_PATH.fullmatch)
    except (ValueError, KeyError) as exc:
        raise ConfigError(f"--kernelbench-commit: {exc}; nothing was written") from None
    for name, blob in files.items():
        if _PROBLEM_PATH.fullmatch(name):  # levelN/P_name.py and nothing else: a tree entry is anyone's name
            level, file = name.split("/")
            (into / level).mkdir(exist_ok=True)
            (into / level / file).write_bytes(blob)
    return sha, when


def _note(note: str | None, at: tuple[Path, tuple[str, str]] | None) -> str | None:
    if at is None:
        return note
    read = f"Problem files read from KernelBench commit {at[1][0][:12]} ({at[1][1]}) of {printable(at[0].name)}."
    return f"{read} {note}" if note else read


def rules_inferred(run_dir: Path, given: str | None) -> tuple[str | None, str | None]:
    """(rule set, what it was inferred from) for a run folder's runs: the user's --rules, else the KernelBench rules
    in force on eval_results.json's date (a file's date, which a copy may have changed: the page says so)."""
    if given is not None:
        return given, "given to reporter import (--rules)"
    try:
        when = datetime.fromtimestamp((run_dir / "eval_results.json").stat().st_mtime, UTC).date().isoformat()
    except OSError:
        return None, None
    return (kernelbench_rules_on(when).name,
            f"inferred from eval_results.json's date, {when} (a copy's date may be the copy's: pass --rules to say)")



def missing_references(folders: list[Path], problems: Path) -> str | None:
    """Why some kernels would be imported without their reference (problem file), naming the folders
    searched; None when every kernel's problem file is there."""
    missing = sorted({(int(m.group(1)), int(m.group(2))) for f in folders for m, _ in kb.kernel_files(f)
                      if kb.problem_file(problems, int(m.group(1)), int(m.group(2))) is None})
    if not missing:
        return None
    levels = sorted({lv for lv, _ in missing})
    searched = "; ".join(f"level {lv}: " + ", ".join(str(f) for f in kb.problem_folders(problems, lv)) for lv in levels)
    shown = ", ".join(f"L{lv} {pid}_*.py" for lv, pid in missing[:6]) + (", ..." if len(missing) > 6 else "")
    own = kb.LEVEL_FOLDER.fullmatch(problems.name)
    if own is not None:
        found = f"{problems} is level {own.group(1)}'s folder, and problem ids restart at 1 in every level, so it is never searched for another level's runs. "
    elif any(problems.glob("*_*.py")):
        found = (f"{problems} holds problem files but does not say their level (no level1/, level2/, ... folder), and problem "
                 "ids restart at 1 in every level, so they are not taken. ")
    else:
        found = ""
    return (f"no problem file for {len(missing)} problem{'s' if len(missing) != 1 else ''} ({shown}); searched {searched}. {found}"
            "--problems must be KernelBench's problem folder, the one holding level1/, level2/, ... "
            "(KernelBench/KernelBench in a KernelBench checkout). Without the problem file a run has no reference, "
            "so it cannot be re-validated; pass --allow-missing-reference to import such runs anyway")


def problems_near(data: Path) -> Path | None:
    """A KernelBench problem folder (one holding level1/) at or beside DATA, for a message to suggest: DATA, its
    parent and grandparent, each as is or as a KernelBench checkout (KernelBench/, KernelBench/KernelBench/).
    Only folders are looked at; nothing is read or run."""
    data = data.absolute()
    for base in (data, *list(data.parents)[:2]):
        for rel in ("", "KernelBench", "KernelBench/KernelBench"):
            folder = base / rel if rel else base
            if (folder / "level1").is_dir() and not folder.is_symlink():
                return folder
    return None
