"""`[tool.reporter]`: project settings in pyproject.toml, checked before any command runs.

The file is the current directory's ``pyproject.toml`` (or ``--config FILE``); a file without the table
is no configuration. Every key is optional: an unset key keeps the built-in default (the defaults are
written once, in `records.ValidationSettings` and the CLI), and a command-line option beats the file.
Paths are relative to the file's folder. All problems are reported together, one line each, naming the
file and the key::

    [tool.reporter]
    data = "data"                 # DATA for build / validate / cache
    site = "site"                 # SITE for build / publish
    rules = "kernelbench-2025"    # the rule set of runs whose trace names none (default: strict, our audit's)

    [tool.reporter.validation]    # any field of ValidationSettings, plus jobs and ncu
    nominal_trials = 3
    perf_trials = 30              # calls per basis before the adaptive stop is tried
    atol = { fp32 = 1e-4 }        # merged over the defaults, per precision
    jobs = 4

    [tool.reporter.publish]
    branch = "gh-pages"
    cname = "report.example.org"

    [tool.reporter.audit]         # reporter review and the boards' audit state
    reviewer = "ada"              # the author of `reporter review` verdicts when --reviewer is not given
    pending_top = 3               # a board's top N rows are "audit pending" until their counting runs are reviewed

    [tool.reporter.prices]        # US dollars per million tokens, per model: the only source of dollar figures
    "Kimi-K2.6" = 0.6
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .core.audit import PENDING_TOP, PageOptions
from .core.errors import ConfigError
from .core.records import ValidationSettings
from .core.rules import rules_named

PYPROJECT = "pyproject.toml"
TABLE = ("tool", "reporter")
Precision = Literal["fp32", "fp16", "bf16"]
NonNegInt = Annotated[int, Field(ge=0)]
PosInt = Annotated[int, Field(ge=1)]
PosFloat = Annotated[float, Field(gt=0)]
Tolerances = dict[Precision, Annotated[float, Field(ge=0)]]


class _Table(BaseModel):
    # strict: TOML has types, so "3" for a trial count is a mistake to report, not to coerce.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ValidationConfig(_Table):
    """Overrides for `ValidationSettings` (None: keep the default) and the validate command's options."""

    seed: int | None = None
    nominal_trials: PosInt | None = None
    jitter_trials: NonNegInt | None = None
    jitter_fraction: Annotated[float, Field(ge=0, lt=1)] | None = None
    atol: Tolerances = Field(default_factory=dict)
    rtol: Tolerances = Field(default_factory=dict)
    warmup: NonNegInt | None = None
    perf_trials: PosInt | None = None
    ci_target_pct: PosFloat | None = None
    time_cap_s: PosFloat | None = None
    flush_l2_mb: NonNegInt | None = None
    timeout_s: PosFloat | None = None
    torch_compile_baseline: bool | None = None
    excessive_speedup: PosFloat | None = None
    jobs: PosInt | None = None
    ncu: bool | None = None


# Keys of ValidationConfig that are options of the command, not settings that change a measurement.
COMMAND_KEYS = frozenset({"jobs", "ncu"})


class PublishConfig(_Table):
    branch: str | None = None
    cname: str | None = None
    remote: str | None = None


class AuditConfig(_Table):
    reviewer: str | None = None
    pending_top: NonNegInt | None = None  # None: `core.audit.PENDING_TOP`


class ReporterConfig(_Table):
    data: str | None = None
    site: str | None = None
    rules: str | None = None  # `core.rules`: the rule set of runs whose trace names none

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, v: str | None) -> str | None:
        try:
            return None if v is None else rules_named(v).name
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    publish: PublishConfig = Field(default_factory=PublishConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    prices: dict[str, PosFloat] = Field(default_factory=dict)  # model -> US dollars per million tokens
    _source: Path | None = PrivateAttr(None)  # the file read; None when there was none

    @property
    def source(self) -> Path | None:
        return self._source

    def _path(self, value: str | None) -> Path | None:
        if value is None:
            return None
        base = self._source.resolve().parent if self._source else Path.cwd()
        return base / value

    @property
    def data_dir(self) -> Path | None:
        return self._path(self.data)

    @property
    def site_dir(self) -> Path | None:
        return self._path(self.site)


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(x) for x in (*TABLE, *loc)).replace(".[key]", " (the key)")


def _messages(path: Path, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        got = f" (got {err['input']!r})" if err["type"] not in ("missing", "extra_forbidden") else ""
        out.append(f"{path}: {_where(err['loc'])}: {err['msg']}{got}")
    return out


def _from(file: Path, cfg: ReporterConfig) -> ReporterConfig:
    cfg._source = file
    return cfg


def load(path: Path | None = None) -> ReporterConfig:
    """The `[tool.reporter]` table of `path` (default: ./pyproject.toml); every problem in one ConfigError."""
    file = path or Path(PYPROJECT)
    if not file.is_file():
        if path is not None:
            raise ConfigError(f"{file}: no such file")
        return ReporterConfig()
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file}: not readable TOML: {exc}") from exc
    raw: Any = doc
    for key in TABLE:
        raw = raw.get(key) if isinstance(raw, dict) else None
    if raw is None:
        return _from(file, ReporterConfig())
    if not isinstance(raw, dict):
        raise ConfigError(f"{file}: {'.'.join(TABLE)}: must be a table")
    problems: list[str] = []
    cfg = None
    try:
        cfg = _from(file, ReporterConfig.model_validate(raw))
    except ValidationError as exc:
        problems.extend(_messages(file, exc))
    data = raw.get("data")
    if isinstance(data, str) and not (folder := file.resolve().parent / data).is_dir():
        problems.append(f"{file}: {_where(('data',))}: {folder} is not a folder")
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    assert cfg is not None
    return cfg


def page_options(cfg: ReporterConfig) -> PageOptions:
    """The audit rule and the user's prices, as the renderer takes them."""
    top = cfg.audit.pending_top
    return PageOptions(PENDING_TOP if top is None else top, tuple(sorted(cfg.prices.items())))


def parse_tolerances(items: tuple[str, ...]) -> dict[str, float]:
    """`--tol PREC=VALUE` items as {precision: value}; ValueError names the bad item."""
    precisions = get_args(Precision)
    out: dict[str, float] = {}
    for item in items:
        prec, _, value = item.partition("=")
        if prec not in precisions:
            raise ValueError(f"{item!r}: precision must be one of {', '.join(sorted(precisions))}")
        try:
            out[prec] = float(value)
        except ValueError as exc:
            raise ValueError(f"{item!r}: expected PRECISION=NUMBER, e.g. fp32=1e-4") from exc
    return out


def settings(cfg: ReporterConfig, **options: Any) -> ValidationSettings:
    """ValidationSettings: the defaults, then the file, then the command's options (None: not given).

    `tol` (from --tol) sets atol and rtol of its precisions together.
    """
    base = ValidationSettings().model_dump()
    file = cfg.validation.model_dump(exclude_none=True, exclude=set(COMMAND_KEYS))
    tol = options.pop("tol", None) or {}
    for key in ("atol", "rtol"):
        base[key] = {**base[key], **file.pop(key, {}), **tol}
    base.update(file)
    base.update({k: v for k, v in options.items() if v is not None})
    return ValidationSettings.model_validate(base)
