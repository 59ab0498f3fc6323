"""Screenshot the leaderboard pages (``<results>/leaderboard/*.html``) in headless Chromium.

Usage::

    python benchmarks/screenshot_leaderboard.py /tmp/r                 # index + every task
    python benchmarks/screenshot_leaderboard.py /tmp/r --task node_dp_degree --size 1400,5000

The pages must exist (``privpub leaderboard --results-dir /tmp/r``); Chromium runs with
networking disabled (:func:`screenshot_report.screenshot`). One PNG per page goes to
``--out-dir`` (default ``/tmp/leaderboard-shots``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshot_report import screenshot  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", default="results", type=Path)
    parser.add_argument("--task", action="append", default=[], help="only these task pages")
    parser.add_argument("--size", default="1400,3000", help="window WIDTH,HEIGHT in pixels")
    parser.add_argument("--out-dir", default=Path("/tmp/leaderboard-shots"), type=Path)
    args = parser.parse_args(argv)
    pages = args.results_dir / "leaderboard"
    names = args.task or ["index", *sorted(p.stem for p in pages.glob("*.html")
                                           if p.stem != "index")]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        page = pages / f"{name}.html"
        if not page.is_file():
            sys.exit(f"no page {page}: run privpub leaderboard --results-dir {args.results_dir}")
        print(screenshot(page, args.out_dir / f"{name}.png", size=args.size))


if __name__ == "__main__":
    main()
