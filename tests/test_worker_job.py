"""The worker's job crosses a process boundary as one typed record, serialised in one place."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reporter.core.records import ValidationSettings
from reporter.core.schema import CheckSettings, WorkerJob
from reporter.validate.process import _write_job
from reporter.validate.recorder import check_settings


def test_a_job_reaches_the_worker_as_the_parent_made_it(tmp_path: Path) -> None:
    settings = check_settings(ValidationSettings(seed=7, atol={"fp32": 1e-3}))
    job = WorkerJob("ref = 1\n", "kernel = 2\n", settings, "cpu", "bf16")
    built = dataclasses.replace(job, extensions_dir=str(tmp_path / "ext"), role="kernel")
    _write_job(built, tmp_path / "job", "check")
    read = WorkerJob.from_json((tmp_path / "job" / "job.json").read_text(encoding="utf-8"))
    assert read == built and isinstance(read.settings, CheckSettings)
    assert (read.settings.seed, read.settings.atol, read.settings.perf_trials) == (7, {"fp32": 1e-3}, 30)
    assert (read.precision, read.extensions_dir, read.role) == ("bf16", str(tmp_path / "ext"), "kernel")
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.kernel = "changed"  # type: ignore[misc]


def test_a_job_missing_a_field_or_holding_an_unknown_one_is_refused() -> None:
    job = WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}, "device": "cpu"}')
    assert job.precision == "fp32" and job.settings == CheckSettings()  # defaults: the record's own
    with pytest.raises(ValueError, match="missing 'device'"):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}}')
    with pytest.raises(ValueError, match="no field 'shell'"):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}, "device": "cpu", "shell": "rm -rf /"}')
    with pytest.raises(ValueError, match=r"WorkerJob.settings: CheckSettings has no field 'trials'"):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {"trials": 3}, "device": "cpu"}')
    with pytest.raises(ValueError, match=r"WorkerJob.settings.seed: expected int, got str"):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {"seed": "42"}, "device": "cpu"}')
    with pytest.raises(ValueError, match="JSON object"):
        WorkerJob.from_json('["r", "k"]')
