"""Screenshot pages of a built site in headless Chromium: `python scripts/screenshot.py SITE OUT page.html...`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright


def main(site: Path, out: Path, pages: list[str], width: int = 1280, full: bool = True) -> None:
    out.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        for name in pages:
            page.goto((site / name).resolve().as_uri())
            page.wait_for_timeout(800)
            shot = out / (name.replace("/", "_") + ".png")
            page.screenshot(path=str(shot), full_page=full)
            print(shot, "errors:", errors)
            errors.clear()
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
