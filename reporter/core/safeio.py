"""Reading untrusted files without blocking, without leaving DATA, and within named bounds.

Every file `collect` reads goes through `read_bounded`: the path must resolve inside a given root
(DATA, the trace's folder, a cache entry), be a regular file (not a FIFO, device, socket or folder)
and fit its size limit. The type is checked before opening and again on the open descriptor, which is
opened non-blocking and without following a final link, so a file swapped for a FIFO in between can
neither hang the build nor escape. `hash_bounded` is the same read, streamed into a hash (the build's
signatures). `parse_json` bounds nesting and integer size and replaces lone surrogates, so what it
returns can always be rendered and encoded as UTF-8; `parse_yaml` refuses aliases (no billion laughs)
and bounds nesting the same way. `write_inside` writes a file without following a link on the way.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from . import limits
from .atomic import replace_file
from .errors import CollectError, replace_surrogates

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _not_regular(mode: int) -> str | None:
    return next((what for test, what in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a regular file")


def _other_names(path: Path, field: str, links: int) -> CollectError:
    return CollectError(path, field, f"has {links} hard links: another name of the same file may be outside DATA (a "
                                     "hard link is not a symlink: nothing says where its other names are), so it is refused; "
                                     "replace it by a copy (cp, not cp -l or ln) if the file is yours")


def checked_path(path: Path, root: Path, field: str, limit_name: str, one_name: bool = True) -> Path:
    """The resolved path of a regular file inside `root` within its size limit, or a CollectError. With `one_name`
    (DATA's files) a file with more than one hard link is refused: its other name may be outside `root`, and a
    resolved path cannot tell (SITE's own files are linked from the live site on purpose, so its reads pass False)."""
    if "\0" in str(path):
        raise CollectError(path, field, "the path contains a NUL byte")
    try:
        os.lstat(path)
        real = Path(os.path.realpath(path))
        info = os.stat(real)
    except OSError as exc:
        raise CollectError(path, field, f"cannot read: {exc.strerror or exc}") from exc
    root_real = Path(os.path.realpath(root))
    if not real.is_relative_to(root_real):
        raise CollectError(path, field, f"leads outside {root} (through a link or `..`): refused")
    if (what := _not_regular(info.st_mode)) is not None:
        raise CollectError(path, field, f"is {what}, not a regular file: refused")
    if one_name and info.st_nlink > 1:
        raise _other_names(path, field, info.st_nlink)
    limit = getattr(limits, limit_name)
    if info.st_size > limit:
        raise CollectError(path, field, f"is {info.st_size:,} bytes, over the limit {limits.describe(limit_name)}")
    return real


def _open_checked(path: Path, root: Path, field: str, limit_name: str, one_name: bool = True) -> int:
    """A descriptor of the regular file `path` inside `root` within its limit; the caller closes it."""
    real = checked_path(path, root, field, limit_name, one_name)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        raise CollectError(path, field, f"cannot open: {exc.strerror or exc}") from exc
    try:
        # The file may have been swapped since the check: trust only what the open descriptor says.
        st = os.fstat(fd)
        if (what := _not_regular(st.st_mode)) is not None:
            raise CollectError(path, field, f"is {what}, not a regular file: refused")
        if one_name and st.st_nlink > 1:
            raise _other_names(path, field, st.st_nlink)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _chunks(fd: int, path: Path, field: str, limit_name: str) -> Iterator[bytes]:
    """The file's bytes in chunks, failing once more than the limit has been read (it grew meanwhile)."""
    limit, size = getattr(limits, limit_name), 0
    try:
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            size += len(chunk)
            if size > limit:
                raise CollectError(path, field, f"grew past the limit {limits.describe(limit_name)} while being read")
            yield chunk
    except OSError as exc:
        raise CollectError(path, field, f"cannot read: {exc.strerror or exc}") from exc


def read_bounded(path: Path, root: Path, field: str, limit_name: str, one_name: bool = True) -> bytes:
    """The bytes of a regular file inside `root`, at most `limits.<limit_name>` of them (else a CollectError)."""
    fd = _open_checked(path, root, field, limit_name, one_name)
    try:
        return b"".join(_chunks(fd, path, field, limit_name))
    finally:
        os.close(fd)


def hash_bounded(path: Path, root: Path, field: str, limit_name: str) -> tuple[int, int, str]:
    """(size, mtime_ns, sha256) of a regular file inside `root`, streamed within the limit, like `read_bounded`."""
    fd = _open_checked(path, root, field, limit_name)
    try:
        st = os.fstat(fd)
        h = hashlib.sha256()
        for chunk in _chunks(fd, path, field, limit_name):
            h.update(chunk)
        return st.st_size, st.st_mtime_ns, h.hexdigest()
    finally:
        os.close(fd)


class _IntTooLong(ValueError):
    pass


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > limits.MAX_INT_DIGITS:
        raise _IntTooLong(f"an integer of {digits:,} digits is over the limit {limits.describe('MAX_INT_DIGITS')}")
    return int(text)


def _depth_problem(doc: Any) -> str | None:
    """Where `doc` first nests deeper than MAX_JSON_DEPTH, as a dotted path; iterative, so any depth is safe."""
    stack: list[tuple[Any, int, str]] = [(doc, 0, "")]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, (dict, list)):
            if depth >= limits.MAX_JSON_DEPTH:
                return where or "(document)"
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                if isinstance(value, (dict, list)):
                    stack.append((value, depth + 1, f"{where}.{key}" if isinstance(node, dict) else f"{where}[{key}]"))
    return None


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep_at(text: str) -> str:
    """` at line L column C` where `text` first nests deeper than MAX_JSON_DEPTH (strings skipped)."""
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        depth += 1 if token in "[{" else -1 if token in "]}" else 0
        if depth > limits.MAX_JSON_DEPTH:
            line = text.count("\n", 0, m.start()) + 1
            return f" at line {line} column {m.start() - text.rfind(chr(10), 0, m.start())}"
    return ""


def clean_strings(node: Any) -> Any:
    """A copy of a parsed JSON document with lone surrogates replaced in every key and string."""
    if isinstance(node, str):
        return replace_surrogates(node)
    if isinstance(node, dict):
        return {replace_surrogates(k) if isinstance(k, str) else k: clean_strings(v) for k, v in node.items()}
    if isinstance(node, list):
        return [clean_strings(v) for v in node]
    return node


def parse_json(raw: bytes | str, path: Path, field: str = "(json)") -> Any:
    """A JSON document within MAX_JSON_DEPTH and MAX_INT_DIGITS, its text safe to encode; else a CollectError."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise CollectError(path, "(file)", f"not UTF-8 text (byte {exc.start:,} cannot be decoded)") from exc
    try:
        doc = json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise CollectError(path, field, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except _IntTooLong as exc:
        raise CollectError(path, field, str(exc)) from exc
    except RecursionError as exc:
        raise CollectError(path, field, f"nested deeper than the limit {limits.describe('MAX_JSON_DEPTH')}"
                           f"{_too_deep_at(text)}") from exc
    if (where := _depth_problem(doc)) is not None:
        raise CollectError(path, where.lstrip("."), f"nested deeper than the limit {limits.describe('MAX_JSON_DEPTH')}")
    return clean_strings(doc)


class _NoAliasLoader(yaml.SafeLoader):
    """YAML without anchors and aliases: a few lines of `&a [*a, *a]` would otherwise expand exponentially."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are refused in untrusted YAML", mark)
        return super().compose_node(parent, index)


def parse_yaml(raw: bytes, path: Path) -> Any:
    """A YAML document (already read within its limit) without aliases and within MAX_JSON_DEPTH; else a CollectError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CollectError(path, "(file)", f"not UTF-8 text (byte {exc.start:,} cannot be decoded)") from exc
    try:
        doc = yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader that also refuses aliases
    except yaml.YAMLError as exc:
        raise CollectError(path, "(yaml)", f"not usable YAML: {str(exc).splitlines()[0][:200]}") from exc
    except RecursionError as exc:
        raise CollectError(path, "(yaml)", f"nested deeper than the limit {limits.describe('MAX_JSON_DEPTH')}") from exc
    if (where := _depth_problem(doc)) is not None:
        raise CollectError(path, where.lstrip("."), f"nested deeper than the limit {limits.describe('MAX_JSON_DEPTH')}")
    return clean_strings(doc)


def write_inside(out: Path, parts: tuple[str, ...], text: str) -> Path:
    """Write OUT/parts.../name as a new file without following a link: every folder on the way must be a real
    folder (not a link), and the file is replaced, never written into, so a link standing there is replaced."""
    folder = out
    folder.mkdir(parents=True, exist_ok=True)
    for part in parts[:-1]:
        folder = folder / part
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise CollectError(folder, "(out)", "is a link or not a folder: refusing to write through it")
    return replace_file(folder / parts[-1], text)
