"""The worker's job crosses a process boundary as one typed record, serialised in one place."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reporter.core.records import ValidationSettings
from reporter.core.schema import WorkerJob
from reporter.validate.process import _write_job


def test_a_job_reaches_the_worker_as_the_parent_made_it(tmp_path: Path) -> None:
    job = WorkerJob("ref = 1\n", "kernel = 2\n", ValidationSettings().model_dump(mode="json"), "cpu", "bf16")
    built = dataclasses.replace(job, extensions_dir=str(tmp_path / "ext"), role="kernel")
    _write_job(built, tmp_path / "job", "check")
    read = WorkerJob.from_json((tmp_path / "job" / "job.json").read_text(encoding="utf-8"))
    assert read == built and read.settings["seed"] == ValidationSettings().seed
    assert (read.precision, read.extensions_dir, read.role) == ("bf16", str(tmp_path / "ext"), "kernel")
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.kernel = "changed"  # type: ignore[misc]


def test_a_job_missing_a_field_or_holding_an_unknown_one_is_refused() -> None:
    assert WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}, "device": "cpu"}').precision == "fp32"
    with pytest.raises(TypeError):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}}')
    with pytest.raises(TypeError):
        WorkerJob.from_json('{"reference": "r", "kernel": "k", "settings": {}, "device": "cpu", "shell": "rm -rf /"}')
    with pytest.raises(ValueError, match="JSON object"):
        WorkerJob.from_json('["r", "k"]')
