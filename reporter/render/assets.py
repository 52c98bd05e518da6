"""Where the templates and static files are: beside the package in a checkout, inside it when installed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def asset_dir(name: str) -> Path:
    local = ROOT / name
    if local.is_dir():
        return local
    from importlib.resources import files
    return Path(str(files("reporter") / name))
