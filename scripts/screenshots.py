"""Regenerate docs/img/<type>-report.png: each data type's demo report in headless Chromium.

Runs ``structanon demo`` (or reads an existing demo folder), renders the top of each HTML
report (headline, flags, the first before/after view) with the Debian ``chromium`` package,
and stores it as a palette PNG under 300 KB.

Usage (from the repository root)::

    python scripts/screenshots.py                 # run the demo, then shoot
    python scripts/screenshots.py --demo-dir DIR  # shoot an existing demo's reports
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {  # data type -> its demo report shown in the guide
    "tabular": "tabular/report.html",
    "transactions": "transactions/report.html",
    "location": "location/location_geolife_report.html",
    "graphs": "graphs/report.html",
    "querylogs": "querylogs/report.html",
}
WINDOW = (1100, 1700)
MAX_BYTES = 300_000
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def run_demo(folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "structanon", "demo", "--output-dir", str(folder)],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )


def shoot(browser: str, page: Path, target: Path, profile: Path) -> None:
    """Screenshot the top of ``page`` into ``target``, then shrink it to a palette PNG."""
    from PIL import Image

    raw = profile / "raw.png"
    subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            f"--screenshot={raw}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    image = Image.open(raw).convert("RGB")
    for colours in (128, 64, 32):
        image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
        if target.stat().st_size < MAX_BYTES:
            return
    raise SystemExit(f"{target} stays over {MAX_BYTES:,} bytes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--demo-dir", type=Path, help="an existing `structanon demo` output")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = ap.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("no Chromium found: apt-get install chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="structanon-shots-") as tmp:
        demo = args.demo_dir or Path(tmp) / "demo"
        if args.demo_dir is None:
            run_demo(demo)
        for name, relative in PAGES.items():
            target = args.out / f"{name}-report.png"
            profile = Path(tmp) / f"profile-{name}"
            profile.mkdir()
            shoot(browser, demo / relative, target, profile)
            print(f"{target}: {target.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
