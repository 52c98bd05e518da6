"""`reporter init-workflow` pins the reporter that wrote it, under our own distribution name (kernel-reporter):
from a clone (`pip install .`), the clone's remote and a commit a runner can fetch; `--install` only an exact
build of ours that a runner can reach.

GitHub is never contacted: a clone's remote is https://github.com/acme/kernel-reporter.git, and git's
`url.<base>.insteadOf` (in a private global config) sends that URL to a bare repository in tmp_path, so a push
and pip's clone of the workflow's own requirement both work offline, exactly as written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from conftest import DATA, ROOT
from reporter.core import DISTRIBUTION
from reporter.core.errors import ConfigError
from reporter.publish import install

GITHUB = "https://github.com/acme/kernel-reporter.git"
COMMIT = "0123456789abcdef" * 2 + "01234567"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare repository standing in for GITHUB, and a git configuration of this test's own that sends GITHUB there."""
    bare = tmp_path / "github.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{bare.as_uri()}"]\n\tinsteadOf = {GITHUB}\n[user]\n\temail = t@example.org\n\tname = t\n'
                      "[protocol \"file\"]\n\tallow = always\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return bare


def clone_of_reporter(tmp_path: Path, files: tuple[str, ...] = ("README.md",)) -> Path:
    """A git repository holding `files` of this checkout, whose origin is GITHUB; committed, not yet pushed."""
    src = tmp_path / "reporter-clone"
    src.mkdir()
    for name in files:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, src / name)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "reporter")
    git(src, "remote", "add", "origin", GITHUB)
    return src


@pytest.mark.parametrize("spec", [
    f"{DISTRIBUTION}==1.2.0", f"{DISTRIBUTION}[gpu]==1.2.0", "Kernel_Reporter==1.2.0",
    f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter@{COMMIT}",
    f"{DISTRIBUTION} @ git+https://token@github.com/acme/kernel-reporter.git@{COMMIT}",
])
def test_install_takes_an_exact_build_of_ours(spec: str) -> None:
    assert install.install_spec(spec) == spec


@pytest.mark.parametrize("spec, why", [
    ("reporter==0.1.0", "on the package index, 'reporter' is an unrelated project"),
    (f"reporter @ git+https://github.com/acme/kernel-reporter@{COMMIT}", "not this tool's distribution 'kernel-reporter'"),
    (f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter@main", "'main' is not a commit but a branch or tag"),
    (f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter@{COMMIT[:12]}", "is not a commit but a branch or tag"),
    (f"{DISTRIBUTION} @ git+file:///home/me/kernel-reporter@{COMMIT}", "runners cannot reach file:///home/me/kernel-reporter"),
    (f"{DISTRIBUTION} @ git+ssh://git@github.com/acme/kernel-reporter@{COMMIT}", "runners cannot reach ssh://"),
    (f"{DISTRIBUTION} @ https://example.org/kernel_reporter-1.0-py3-none-any.whl", "is not a git URL pinned to a commit"),
    (f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter", "is not a git URL pinned to a commit"),
    (f"{DISTRIBUTION}>=0.1", "not pinned to one version"), (DISTRIBUTION, "not pinned to one version"),
    (f"{DISTRIBUTION}==1.*", "not pinned to one version"), (".", "not a requirement pip understands"),
])
def test_install_refuses_what_a_runner_cannot_install_as_checked(spec: str, why: str) -> None:
    with pytest.raises(ConfigError, match="--install") as err:
        install.install_spec(spec)
    assert why in err.value.message and f"--install '{DISTRIBUTION} @ git+https://github.com/OWNER/REPO@COMMIT'" in err.value.message


def test_a_clone_is_pinned_to_its_remote_and_a_pushed_commit(tmp_path: Path, github: Path) -> None:
    src = clone_of_reporter(tmp_path)
    with pytest.raises(ConfigError) as err:  # committed, never pushed: a runner could not fetch it
        install.from_clone(src)
    head = git(src, "rev-parse", "HEAD")
    assert f"is at commit {head[:12]}, which is on no branch of origin ({GITHUB})" in err.value.message
    assert f"git -C {src} push origin HEAD:refs/heads/BRANCH" in err.value.message
    git(src, "push", "-q", "origin", "main")
    assert install.from_clone(src) == f"{DISTRIBUTION} @ git+{GITHUB}@{head}"
    git(src, "remote", "set-url", "origin", "git@github.com:acme/kernel-reporter.git")  # ssh, as https for a runner
    git(src, "update-ref", "refs/remotes/origin/main", head)
    assert install.from_clone(src) == f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter.git@{head}"
    git(src, "remote", "set-url", "origin", str(github))
    with pytest.raises(ConfigError, match="which GitHub's runners cannot clone"):
        install.from_clone(src)


def test_pip_s_record_of_a_folder_install_names_the_clone(tmp_path: Path) -> None:
    doc = {"url": (tmp_path / "my clone").as_uri(), "dir_info": {}}
    assert install.installed_from(doc) == tmp_path / "my clone"
    assert install.installed_from({"url": "https://github.com/acme/x", "vcs_info": {"vcs": "git"}}) is None
    vcs = {"url": "https://github.com/acme/kernel-reporter", "vcs_info": {"vcs": "git", "commit_id": "ab" * 20}}
    assert install.from_direct_url(vcs) == f"{DISTRIBUTION} @ git+https://github.com/acme/kernel-reporter@" + "ab" * 20
    assert install.from_direct_url({**vcs, "url": "file:///home/me/kernel-reporter"}) is None


def _venv(where: Path) -> tuple[Path, dict[str, str]]:
    """A fresh Python that sees this machine's installed dependencies, but neither this checkout nor its install."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    (next((where / "lib").glob("python*/site-packages")) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{where / 'bin'}{os.pathsep}{env['PATH']}"
    return where / "bin" / "python", env


def _pip_install(python: Path, env: dict[str, str], requirement: str, cwd: Path) -> None:
    # offline: the dependencies are the deps.pth ones and setuptools is this machine's (the workflow's runner has both)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-build-isolation", requirement], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (requirement, proc.stdout[-2000:], proc.stderr[-2000:])


@pytest.mark.slow
def test_readme_install_then_init_workflow_then_the_workflow_s_own_install_line(tmp_path: Path, github: Path) -> None:
    # 1. `pip install .` in a fresh Python, from a clone whose origin is on GitHub and whose commit is pushed
    src = clone_of_reporter(tmp_path, ("pyproject.toml", "README.md", "reporter", "templates", "static"))
    git(src, "push", "-q", "origin", "main")
    python, env = _venv(tmp_path / "user")
    _pip_install(python, env, ".", src)
    # run from tmp_path: from the checkout, its editable build's kernel_reporter.egg-info (in the working folder, first
    # on sys.path) would be the distribution found, and it holds no direct_url.json
    recorded = subprocess.run([str(python), "-c", f"from importlib import metadata; print(metadata.distribution({DISTRIBUTION!r})"
                               ".read_text('direct_url.json'))"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=True).stdout
    assert json.loads(recorded)["url"] == src.as_uri()  # pip recorded the clone's folder, nothing else
    # 2. `reporter init-workflow`, no options, in a repository that holds only data/
    pages = tmp_path / "pages-repo"
    for name in ("seed-000-l2-p10", "validation"):
        shutil.copytree(DATA / name, pages / "data" / name)
    git(pages, "init", "-q", "-b", "main")
    made = subprocess.run(["reporter", "init-workflow"], cwd=pages, env=env, capture_output=True, text=True, timeout=300)
    pin = f"{DISTRIBUTION} @ git+{GITHUB}@{git(src, 'rev-parse', 'HEAD')}"
    assert made.returncode == 0 and f"installs {pin}" in made.stdout, made.stdout + made.stderr
    steps = [s["run"] for s in yaml.safe_load((pages / ".github/workflows/pages.yml").read_text())["jobs"]["build"]["steps"]
             if "run" in s]
    assert steps == [f"pip install '{pin}'", "reporter build data site --no-validate --strict"]
    # 3. the workflow's own steps, by hand, in another fresh Python as a runner's: its requirement exactly as written
    runner, runner_env = _venv(tmp_path / "runner")
    _pip_install(runner, runner_env, pin, pages)
    built = subprocess.run(steps[1], shell=True, cwd=pages, env=runner_env, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert (pages / "site" / "index.html").is_file() and (pages / "site" / "runs" / "seed-000-l2-p10.html").is_file()
    where = subprocess.run([str(runner), "-c", "import reporter; print(reporter.__file__)"], cwd=pages, env=runner_env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(tmp_path / "runner"))  # the site was built by the installed pin, not a checkout


# `reporter` as something to install: `pip install reporter`, 'reporter[gpu]', reporter==1.0, reporter @ git+...
OTHER_REPORTER = re.compile(r"""(?<![\w./-])reporter(?:\[[\w,]+\])?\s*(?:==|>=|~=| @ )|pip install\s+['"]?reporter\b(?![\w./-])""")


def other_reporter(text: str) -> list[str]:
    return [m.group(0) for m in OTHER_REPORTER.finditer(text)]


def test_no_message_doc_or_workflow_installs_the_index_s_other_reporter() -> None:
    files = [*ROOT.glob("reporter/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("examples/*/README.md"),
             ROOT / ".ci" / "run", ROOT / "pyproject.toml"]
    found = {str(p.relative_to(ROOT)): hits for p in files if (hits := other_reporter(p.read_text(encoding="utf-8")))}
    assert found == {}
    assert other_reporter("pip install 'reporter[gpu]' · reporter==0.1.0 · reporter @ git+https://x@y · pip install reporter") \
        == ["pip install 'reporter", "reporter==", "reporter @ ", "pip install reporter"]
    assert other_reporter("pip install 'kernel-reporter[gpu]' · kernel-reporter==1 · reporter build data/ site/") == []
