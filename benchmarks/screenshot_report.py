"""Screenshot ``results/report.html`` in headless Chromium, to look at the report as a reader.

Usage::

    python benchmarks/screenshot_report.py                      # results/ -> /tmp/report.png
    python benchmarks/screenshot_report.py /tmp/r --out /tmp/r.png --size 1400,4000
    python benchmarks/screenshot_report.py --only day2016_fig3     # one experiment's card
    python benchmarks/screenshot_report.py --no-write           # keep the existing report.html

It rewrites the report first (:func:`privpub.plots.report.write_report`, from the files already in
the results directory: nothing is recomputed), then runs Chromium with networking disabled.
Chromium is not a Python package: on Debian ``apt-get install -y chromium``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    tried = ", ".join(BROWSERS)
    sys.exit(f"no Chromium found on PATH (tried {tried}); on Debian: apt-get install -y chromium")


def screenshot(page: Path, out: Path, *, size: str = "1400,2000", only: str = "") -> Path:
    """Render ``page`` (an HTML file) to the PNG ``out`` with headless Chromium.

    ``only``: the id of one experiment card; the others and the overview are hidden (a copy
    of the page is rendered), so the screenshot shows that experiment from its top.
    """
    with tempfile.TemporaryDirectory(prefix="privpub-chromium-") as tmp:
        if only:
            text = page.read_text(encoding="utf-8")
            hide = (
                f"<style>#overview,article.card:not([id='{only}']),"
                "section:not(:has(article[id='" + only + "'])){display:none}</style>"
            )
            page = Path(tmp) / page.name
            page.write_text(text.replace("</head>", hide + "</head>", 1), encoding="utf-8")
        cmd = [
            find_browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--screenshot={out}",
            f"--window-size={size}",
            page.resolve().as_uri(),
        ]
        out.unlink(missing_ok=True)  # a stale screenshot must not pass for a new one
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not out.is_file():
        sys.exit(f"chromium failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", default="results", type=Path)
    parser.add_argument("--out", default=Path("/tmp/report.png"), type=Path)
    parser.add_argument("--size", default="1400,2000", help="window WIDTH,HEIGHT in pixels")
    parser.add_argument("--only", default="", help="show one experiment, e.g. day2016_fig3")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite the report")
    args = parser.parse_args(argv)
    page = args.results_dir / "report.html"
    if not args.no_write:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from privpub.plots.report import write_report

        write_report(args.results_dir)
    if not page.is_file():
        sys.exit(f"{page} does not exist: run an experiment first (python run.py)")
    out = screenshot(page, args.out, size=args.size, only=args.only)
    print(f"{page} ({page.stat().st_size / 1e6:.2f} MB) -> {out}")


if __name__ == "__main__":
    main()
