"""Issue 43, item 5: `reporter publish` runs no program that the publishing repository's config names.

Each case writes one such setting into the repository's config (`.git/config`, or a file it includes), naming a
script that appends its name to a marker file, then publishes with `--push` to a real remote (a bare repository
on disk, over a fake ssh, or over HTTP through git-http-backend). The marker must stay absent, and the site
must land: pushed where the remote's transport is file, ssh or http(s); where the repository's config makes the
transport itself a program (ext::, a remote helper, core.gitProxy for git://), the push is refused and the
local branch still holds the site. The user's own settings for pushing (credential helper, ssh command,
askpass: ~/.gitconfig or the environment) still apply, and the tests check that they were used.
"""

from __future__ import annotations

import base64
import http.server
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.publish import publish_site
from reporter.publish.gitenv import git_environment, receive_pack

USER, SECRET = "pages-user", "s3cret-token"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@dataclass
class World:
    tmp: Path
    repo: Path
    bare: Path
    site: Path
    ran: Path  # written by any program the repository's config names
    used: Path  # written by the user's own programs (from ~/.gitconfig or the environment)
    http_url: str
    monkeypatch: pytest.MonkeyPatch

    def payload(self, name: str) -> Path:
        """A program named `name` that records that it ran (and fails, as most hijacked commands would)."""
        return script(self.tmp / "payload" / name, f'echo "{name} $*" >> "{self.ran}"\nexit 1\n')

    def repo_config(self, key: str, value: str) -> None:
        git(self.repo, "config", "--add", key, value)

    def user_config(self, key: str, value: str) -> None:
        subprocess.run(["git", "config", "--global", "--add", key, value], check=True)


class _GitHttp(http.server.BaseHTTPRequestHandler):
    """git-http-backend behind Basic authentication: pushing needs the user's credentials."""

    protocol_version = "HTTP/1.1"
    root = Path()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
            return body
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self) -> None:
        body = self._body()
        expected = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self._reply(401, [("WWW-Authenticate", 'Basic realm="pages"')], b"")
            return
        path, _, query = self.path.partition("?")
        env = {"GIT_PROJECT_ROOT": str(self.root), "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": USER, "REMOTE_ADDR": "127.0.0.1",
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "PATH": os.environ["PATH"], "HOME": str(self.root)}
        backend = Path(git(Path("."), "--exec-path")) / "git-http-backend"
        out = subprocess.run([str(backend)], input=body, env=env, capture_output=True, check=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            else:
                headers.append((name, value.strip()))
        self._reply(status, headers, rest)

    do_GET = do_POST = _serve

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def world(site_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the user's ~/.gitconfig is the test's
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")  # a prompt nobody answers fails instead of waiting
    for var in ("XDG_CONFIG_HOME", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_COUNT",
                "GIT_CONFIG_PARAMETERS", "GIT_ALLOW_PROTOCOL", "GIT_PROXY_COMMAND", "GIT_PAGER", "GIT_EDITOR",
                "GIT_EXTERNAL_DIFF", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(var, raising=False)
    subprocess.run(["git", "config", "--global", "user.name", "t"], check=True)
    subprocess.run(["git", "config", "--global", "user.email", "t@example.org"], check=True)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "README").write_text("source\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "source")
    served = tmp_path / "served"
    bare = served / "pages.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    handler = type("Handler", (_GitHttp,), {"root": served})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield World(tmp_path, repo, bare, site_copy, tmp_path / "ran", tmp_path / "used",
                    f"http://127.0.0.1:{server.server_address[1]}/pages.git", monkeypatch)
    finally:
        server.shutdown()
        server.server_close()


# Each case configures the repository (and the user's own settings) and returns None where the push goes through,
# else what the refusal says.
Case = Callable[[World], str | None]


def ssh_command(w: World) -> str | None:
    # The user's ssh (~/.gitconfig) runs the remote command here, as sshd would; the repository names another.
    fake_ssh = script(w.tmp / "user" / "fake-ssh", f'echo "fake-ssh $*" >> "{w.used}"\nfor last; do :; done\nexec sh -c "$last"\n')
    w.user_config("core.sshCommand", str(fake_ssh))
    w.user_config("ssh.variant", "simple")
    w.repo_config("remote.pages.url", f"ssh://pages.example/{w.bare}")
    w.repo_config("core.sshCommand", str(w.payload("sshCommand")))
    return None


def ssh_command_from_git_ssh(w: World) -> str | None:
    # The user's ssh in the environment (GIT_SSH, which core.sshCommand would outrank); no ~/.gitconfig setting.
    fake_ssh = script(w.tmp / "user" / "fake-ssh", f'echo "fake-ssh $*" >> "{w.used}"\nfor last; do :; done\nexec sh -c "$last"\n')
    w.monkeypatch.setenv("GIT_SSH", str(fake_ssh))
    w.monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    w.repo_config("remote.pages.url", f"pages.example:{w.bare}")
    w.repo_config("core.sshCommand", str(w.payload("sshCommand")))
    return None


def ext_transport(w: World) -> str | None:
    w.repo_config("protocol.ext.allow", "always")
    w.repo_config("remote.pages.url", f"ext::{w.payload('ext-transport')} %S")
    return "transport 'ext' not allowed"


def receivepack_setting(w: World) -> str | None:
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config("remote.pages.receivepack", str(w.payload("receivepack")))
    w.repo_config("remote.pages.uploadpack", str(w.payload("uploadpack")))
    return None


def remote_on_disk(w: World) -> str | None:
    # The repository's config chose a repository on this machine, whose receive-pack runs here: its hooks, its
    # own hooksPath and its alternate-refs command (it borrows objects from another) do not run.
    for hook in ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "push-to-checkout"):
        script(w.bare / "hooks" / hook, f'echo "remote hook {hook}" >> "{w.ran}"\n')
        script(w.tmp / "remote-hooks" / hook, f'echo "remote hooksPath {hook}" >> "{w.ran}"\n')
    git(w.bare, "config", "core.alternateRefsCommand", str(w.payload("alternateRefsCommand")))
    git(w.bare, "config", "core.fsmonitor", str(w.payload("remote-fsmonitor")))
    lender = w.tmp / "lender.git"
    git(w.tmp, "init", "-q", "--bare", str(lender))
    (w.bare / "objects" / "info" / "alternates").write_text(f"{lender}/objects\n")
    w.repo_config("remote.pages.url", f"file://{w.bare}")
    return None


def remote_on_disk_checked_out(w: World) -> str | None:
    # A repository on this machine with gh-pages checked out and updateInstead: a push would check the site out
    # there, through that repository's filters. Refused instead (git's default for a checked-out branch).
    publish_site(w.site, w.repo)  # published before, then checked out there
    deploy = w.tmp / "deploy"
    git(w.tmp, "clone", "-q", "-b", "gh-pages", str(w.repo), str(deploy))
    git(deploy, "config", "receive.denyCurrentBranch", "updateInstead")
    git(deploy, "config", "filter.x.smudge", str(w.payload("remote-smudge")))
    git(deploy, "config", "core.fsmonitor", str(w.payload("remote-fsmonitor")))
    (deploy / ".git" / "info" / "attributes").write_text("* filter=x\n")
    w.repo_config("remote.pages.url", str(deploy))
    return "checked out"


def git_proxy(w: World) -> str | None:
    w.repo_config("remote.pages.url", "git://pages.example/pages.git")
    w.repo_config("core.gitProxy", str(w.payload("gitProxy")))
    return "transport 'git' not allowed"


def include_path(w: World) -> str | None:
    hooks = w.tmp / "hooks"
    for hook in ("pre-push", "reference-transaction", "post-commit", "pre-commit"):
        script(hooks / hook, f'echo "hook {hook}" >> "{w.ran}"\n')
    included = w.tmp / "included.gitconfig"
    included.write_text(f'[remote "pages"]\n\treceivepack = {w.payload("included-receivepack")}\n'
                        f'[core]\n\tsshCommand = {w.payload("included-sshCommand")}\n'
                        f'\tfsmonitor = {w.payload("included-fsmonitor")}\n\thooksPath = {hooks}\n'
                        f'[credential]\n\thelper = {w.payload("included-credential")}\n')
    conditional = w.tmp / "conditional.gitconfig"
    conditional.write_text(f"[core]\n\taskPass = {w.payload('includeIf-askPass')}\n"
                           f"[push]\n\tgpgSign = true\n[gpg]\n\tprogram = {w.payload('includeIf-gpg')}\n")
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config("include.path", str(included))
    w.repo_config(f"includeIf.gitdir:{w.repo}/.git.path", str(conditional))
    return None


def _user_helper(w: World) -> Path:
    return script(w.tmp / "user" / "helper", f'echo "helper $*" >> "{w.used}"\n'
                  f'[ "$1" = get ] && printf "username={USER}\\npassword={SECRET}\\n"\nexit 0\n')


def credential_helper(w: World) -> str | None:
    w.user_config("credential.helper", str(_user_helper(w)))
    w.repo_config("remote.pages.url", w.http_url)
    w.repo_config("credential.helper", str(w.payload("credential.helper")))
    w.repo_config(f"credential.{w.http_url.rsplit('/', 1)[0]}.helper", str(w.payload("credential.URL.helper")))
    return None


def credential_helper_from_the_environment(w: World) -> str | None:
    # The user's helper given in the environment (GIT_CONFIG_COUNT), as a CI job or a wrapper sets it.
    for var, value in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "credential.helper"), ("GIT_CONFIG_VALUE_0", str(_user_helper(w)))):
        w.monkeypatch.setenv(var, value)
    w.repo_config("remote.pages.url", w.http_url)
    w.repo_config("credential.helper", str(w.payload("credential.helper")))
    return None


def ask_pass(w: World) -> str | None:
    askpass = script(w.tmp / "user" / "askpass", f'echo "askpass $*" >> "{w.used}"\n'
                     f'case "$1" in Username*) echo {USER};; *) echo {SECRET};; esac\n')
    w.user_config("core.askPass", str(askpass))
    w.repo_config("remote.pages.url", w.http_url)
    w.repo_config("core.askPass", str(w.payload("askPass")))
    return None


def insteadof_to_ext(w: World) -> str | None:
    w.repo_config("protocol.ext.allow", "always")
    w.repo_config("remote.pages.url", "https://pages.example/site.git")
    w.repo_config(f"url.ext::{w.payload('insteadOf')} %S #.insteadOf", "https://pages.example/")
    return "transport 'ext' not allowed"


def pushinsteadof_to_ext(w: World) -> str | None:
    w.repo_config("protocol.allow", "always")
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config(f"url.ext::{w.payload('pushInsteadOf')} %S #.pushInsteadOf", str(w.bare))
    return "transport 'ext' not allowed"


def remote_helper(w: World) -> str | None:
    # remote.NAME.vcs (or a URL `evil::...`) runs git-remote-evil, wherever PATH finds it.
    helper = w.payload("git-remote-evil")
    w.monkeypatch.setenv("PATH", f"{helper.parent}{os.pathsep}{os.environ['PATH']}")
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config("remote.pages.vcs", "evil")
    return "transport 'evil' not allowed"


def signed_push(w: World) -> str | None:
    git(w.bare, "config", "receive.certNonceSeed", "nonce-seed")  # the remote accepts signed pushes
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config("push.gpgSign", "true")
    w.repo_config("commit.gpgSign", "true")
    w.repo_config("gpg.program", str(w.payload("gpg.program")))
    return None


def never_needed(w: World) -> str | None:
    # Settings for commands publishing does not run (a pager, an editor, diffs, filters of a checkout), all set.
    w.repo_config("remote.pages.url", str(w.bare))
    for key in ("core.pager", "pager.show", "pager.push", "pager.cat-file", "core.editor", "sequence.editor", "diff.external",
                "filter.x.clean", "filter.x.smudge", "filter.x.process", "diff.x.textconv", "diff.x.command", "core.fsmonitor"):
        w.repo_config(key, str(w.payload(key)))
    w.repo_config("filter.x.required", "true")
    (w.repo / ".gitattributes").write_text("* filter=x diff=x\n")
    (w.repo / ".git" / "info").mkdir(exist_ok=True)
    (w.repo / ".git" / "info" / "attributes").write_text("* filter=x diff=x\n")
    (w.site / ".gitattributes").write_text("* filter=x diff=x\n")  # a user's file in SITE: left out anyway
    return None


def signed_tip_shown(w: World) -> str | None:
    # A commit someone signed on top of gh-pages; `git log` of it with log.showSignature on runs gpg.program (a
    # blind reviewer's finding, once publish began reading the branch's log to name commits it replaces).
    publish_site(w.site, w.repo)
    tree, tip = git(w.repo, "rev-parse", "gh-pages^{tree}"), git(w.repo, "rev-parse", "gh-pages")
    body = (f"tree {tree}\nparent {tip}\nauthor a <a@e> 1700000000 +0000\ncommitter a <a@e> 1700000000 +0000\n"
            "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned by hand\n")
    signed = subprocess.run(["git", "-C", str(w.repo), "hash-object", "-t", "commit", "-w", "--stdin"], input=body,
                            capture_output=True, text=True, check=True).stdout.strip()
    git(w.repo, "update-ref", "refs/heads/gh-pages", signed)
    w.repo_config("remote.pages.url", str(w.bare))
    w.repo_config("log.showSignature", "true")
    for key in ("gpg.program", "gpg.openpgp.program", "gpg.ssh.program", "gpg.x509.program"):
        w.repo_config(key, str(w.payload(key)))
    return None


CASES: dict[str, Case] = {
    "core.sshCommand": ssh_command, "core.sshCommand, the user's GIT_SSH": ssh_command_from_git_ssh,
    "ext transport": ext_transport, "remote.receivepack/uploadpack": receivepack_setting,
    "a remote on disk: its hooks and config": remote_on_disk, "a remote on disk with the branch checked out": remote_on_disk_checked_out,
    "core.gitProxy": git_proxy, "include.path/includeIf": include_path, "credential.helper": credential_helper,
    "credential.helper from the environment": credential_helper_from_the_environment, "core.askPass": ask_pass,
    "url.insteadOf to ext": insteadof_to_ext, "url.pushInsteadOf to ext": pushinsteadof_to_ext,
    "remote.vcs helper": remote_helper, "push.gpgSign/gpg.program": signed_push, "pager/editor/diff/filters": never_needed,
    "log.showSignature/gpg.program on a signed tip": signed_tip_shown,
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_program_from_the_repositorys_config_runs_when_publishing(world: World, case: str) -> None:
    refused = CASES[case](world)
    args = ["publish", str(world.site), "--repo", str(world.repo), "--push", "pages", "--cname", "report.example.org"]
    res = CliRunner().invoke(main, args)
    assert not world.ran.exists(), f"ran: {world.ran.read_text()}"
    if refused:  # the transport is the program (or the remote refuses): the commit made here is not kept either
        assert res.exit_code == 4 and refused in res.output, res.output
        if "the local gh-pages is back at" not in res.output:  # (a case whose branch was there before)
            assert "gh-pages was not kept" in res.output and git(world.repo, "branch", "--list", "gh-pages") == ""
        return
    assert res.exit_code == 0, res.output
    files = set(git(world.repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    assert {"index.html", ".nojekyll", "CNAME", ".reporter-site"} <= files and ".gitattributes" not in files
    assert git(world.bare, "rev-parse", "gh-pages") == git(world.repo, "rev-parse", "gh-pages")
    (world.site / "index.html").write_text("<p>rebuilt</p>")
    res = CliRunner().invoke(main, ["publish", str(world.site), "--repo", str(world.repo), "--push", "pages"])  # keeps CNAME
    assert res.exit_code == 0, res.output
    assert not world.ran.exists(), f"ran: {world.ran.read_text()}"
    assert git(world.bare, "rev-parse", "gh-pages") == git(world.repo, "rev-parse", "gh-pages")
    assert git(world.bare, "cat-file", "blob", "gh-pages:CNAME") == "report.example.org"
    if case.startswith(("core.sshCommand", "credential.helper", "core.askPass")):
        assert world.used.exists()  # the user's own setting did the pushing


def test_a_push_that_needed_the_repositorys_own_helper_says_so(world: World) -> None:
    # Credentials set up only in the repository's config are not used: the push fails, and says how to set them.
    world.repo_config("remote.pages.url", world.http_url)
    world.repo_config("credential.helper", str(world.payload("credential.helper")))
    world.repo_config("core.sshCommand", str(world.payload("sshCommand")))
    res = CliRunner().invoke(main, ["publish", str(world.site), "--repo", str(world.repo), "--push", "pages"])
    assert res.exit_code == 4 and "git push pages failed" in res.output, res.output
    assert "this repository's own core.sshcommand, credential.helper are not used" in res.output
    assert "~/.gitconfig (git config --global ...)" in res.output
    assert not world.ran.exists(), world.ran.read_text()
    assert git(world.repo, "branch", "--list", "gh-pages") == ""  # the commit that could not be pushed is not kept


def test_hooks_configured_by_name_are_turned_off(world: World) -> None:
    # git 2.54 and later also runs `hook.NAME.command` for each `hook.NAME.event`, whatever core.hooksPath says: every
    # NAME configured (here, in an included file, in the user's config, in the repository pushed to) is turned off.
    included = world.tmp / "hooks.gitconfig"
    included.write_text(f'[hook "Included"]\n\tevent = reference-transaction\n\tcommand = {world.payload("included-hook")}\n')
    for name, event in (("lint", "pre-push"), ("tx", "reference-transaction"), ("post", "post-commit")):
        world.repo_config(f"hook.{name}.event", event)
        world.repo_config(f"hook.{name}.command", str(world.payload(f"hook-{name}")))
    world.repo_config("include.path", str(included))
    world.user_config("hook.mine.event", "pre-push")
    world.user_config("hook.mine.command", str(world.payload("hook-mine")))
    git(world.bare, "config", "hook.deploy.event", "post-receive")
    git(world.bare, "config", "hook.deploy.command", str(world.payload("hook-deploy")))
    world.repo_config("remote.pages.url", str(world.bare))
    res = CliRunner().invoke(main, ["publish", str(world.site), "--repo", str(world.repo), "--push", "pages"])
    assert res.exit_code == 0, res.output
    assert not world.ran.exists(), world.ran.read_text()
    assert git(world.bare, "rev-parse", "gh-pages") == git(world.repo, "rev-parse", "gh-pages")
    env = git_environment(world.repo)
    for name in ("lint", "tx", "post", "Included", "mine"):  # what git itself reads, with the environment publishing gives it
        got = subprocess.run(["git", "-C", str(world.repo), "config", f"hook.{name}.enabled"], env=env, capture_output=True, text=True)
        assert got.stdout.strip() == "false", name
    command = receive_pack(world.repo, [str(world.bare)])
    assert "hook.deploy.enabled=false" in command and "hook.mine.enabled=false" in command
    assert receive_pack(world.repo, ["git@github.com:acme/site.git", "https://github.com/acme/site.git"]) == "git-receive-pack"
