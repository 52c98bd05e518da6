"""The screenshots in docs/screenshots/: the sample site's run page, a leaderboard and the grid at 390 and
1280 px, in headless Chromium (a touch screen at 390 px). `python scripts/doc_screenshots.py [OUT]`."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = {  # name -> (page, where the shot starts, tallest part shown at 390 px and at 1280 px)
    "run": ("runs/seed-003-l2-p8.html", None, 2600, 1500),
    "run-timing": ("runs/seed-003-l2-p8.html", "#revalidation", 2600, 1400),
    "leaderboard": ("leaderboards/kernelbench--example-sweep.html", None, 2600, 1500),
    "grid": ("grids/kernelbench--example-sweep.html", None, 2000, 1100),
}


def shoot(site: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    done = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or shutil.which("chromium-browser"),
                                    args=["--no-sandbox", "--disable-gpu"])
        for width, phone in ((390, True), (1280, False)):
            context = browser.new_context(viewport={"width": width, "height": 900}, has_touch=phone, is_mobile=phone)
            page = context.new_page()
            for name, (path, anchor, tall_phone, tall_wide) in PAGES.items():
                page.goto((site / path).as_uri())
                page.wait_for_timeout(1500)  # charts
                top = page.locator(anchor).bounding_box()["y"] if anchor else 0  # type: ignore[index]
                height = min(tall_phone if phone else tall_wide, page.evaluate("document.documentElement.scrollHeight") - top)
                shot = out / f"{name}-{width}.png"
                page.screenshot(path=str(shot), full_page=True, clip={"x": 0, "y": top, "width": width, "height": height})
                done.append(shot)
            context.close()
        browser.close()
    return done


def main() -> None:
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.render import build_site
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    with tempfile.TemporaryDirectory() as tmp:
        col = collect(ROOT / "data")
        build_site(col, load_validations(ROOT / "data", col.runs)[0], ROOT / "data", Path(tmp) / "site")
        for shot in shoot(Path(tmp) / "site", out):
            print(shot, shot.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
