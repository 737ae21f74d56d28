"""Coverage of per-category, self-preference and TNR intervals on real data, before and after issue 26 item 6.

    python benchmarks/coverage_categories.py [--samples 200] [--bias-samples 100] [--resamples 1000] [--jobs 2]

Prints Markdown tables (the ones in benchmarks/README.md): for each pool and design, the share of nominal 95%
intervals that contain the pool's own value, per metric and category size, before (the cluster bootstrap every
category had) and after (``stats.per_category_agreement`` as shipped); then the self-preference effects (expanded
percentile before, the shipped default after) and TPR / TNR. How the golden sets are drawn:
``validation/category_coverage.py``. Needs ../shared/data; exits 2 without it.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from validation import category_coverage as cc  # noqa: E402

SHORT = {"exact_agreement": "exact agreement", "krippendorff_alpha_ordinal": "alpha",
         "mean_signed_error": "mean signed error", "same_model": "same-model effect",
         "same_family": "same-family effect", "tnr": "TNR", "tpr": "TPR"}


def _categories(job):
    name, judge, design, samples, resamples = job
    return (name, design), cc.category_coverage(cc.pool(name, judge), design=design, samples=samples,
                                                resamples=resamples, seed=zlib.crc32(judge.encode()) % 1000)


def _bias(job):
    judge, design, sizes, samples, resamples = job
    return design, cc.bias_coverage(cc.pool("play_favorites", judge), design=design, sizes=sizes, samples=samples,
                                    resamples=resamples)


def cell(t: cc.Tally, key: tuple) -> str:
    if not t.given[key] and not t.withheld[key]:
        return ""
    if not t.given[key]:
        return f"none given ({t.withheld[key]})"
    extra = f", {t.zero_width[key]} zero-width" if t.zero_width[key] else ""
    return f"{t.coverage(key):.3f} (w {t.mean_width(key):.2f}{extra})"


def category_table(title: str, t: cc.Tally, sizes: tuple[int, ...]) -> str:
    lines = [f"**{title}**", "", "| metric | intervals | " + " | ".join(f"{n} items" for n in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    for m in cc.CATEGORY_METRICS:
        for method in ("before", "after"):
            lines.append(f"| {SHORT[m]} | {method} | " + " | ".join(cell(t, (m, method, n)) for n in sizes) + " |")
    return "\n".join(lines)


def bias_table(title: str, t: cc.Tally, sizes: tuple[int, ...]) -> str:
    lines = [f"**{title}**", "", "| interval | method | " + " | ".join(f"{n} items" for n in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    for k, methods in (("same_model", ("before", "after")), ("same_family", ("before", "after")),
                       ("tnr", ("wilson",)), ("tpr", ("wilson",))):
        for method in methods:
            label = {"before": "expanded percentile", "after": "posterior (shipped)", "wilson": "Wilson, effective n"}
            lines.append(f"| {SHORT[k]} | {label[method]} | "
                         + " | ".join(cell(t, (k, method, n)) for n in sizes) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=200, help="golden sets per pool, judge and design")
    ap.add_argument("--bias-samples", type=int, default=100, help="golden sets per judge, design and size")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-bias", action="store_true")
    ap.add_argument("--skip-categories", action="store_true")
    args = ap.parse_args(argv)
    if not cc.available():
        print(f"{cc.DATA} not found; this benchmark needs ../shared/data", file=sys.stderr)
        return 2
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        if not args.skip_categories:
            jobs = [(name, judge, design, args.samples, args.resamples)
                    for name, judges in (("summeval", cc.SUMMEVAL_JUDGES),
                                         ("play_favorites", cc.PLAY_FAVORITES_JUDGES))
                    for judge in judges for design in ("items", "tasks")]
            merged: dict[tuple, cc.Tally] = {}
            for key, tally in pool.map(_categories, jobs):
                merged.setdefault(key, cc.Tally()).merge(tally)
            for (name, design), tally in merged.items():
                judges = cc.SUMMEVAL_JUDGES if name == "summeval" else cc.PLAY_FAVORITES_JUDGES
                print(category_table(f"{name}, design '{design}': {args.samples} golden sets x {len(judges)} judges "
                                     f"({', '.join(judges)})", tally, tuple(sorted(cc.SIZES[name]))))
                print()
        if not args.skip_bias:
            sizes = (50, 100, 200, 400)
            judges = sorted(set(cc.pool("play_favorites", "gpt-4o").frame["model"]))  # the nine that also judge
            jobs = [(judge, design, sizes, args.bias_samples, args.resamples)
                    for judge in judges for design in ("items", "tasks", "whole tasks")]
            merged = {}
            for design, tally in pool.map(_bias, jobs):
                merged.setdefault(design, cc.Tally()).merge(tally)
            for design, tally in merged.items():
                print(bias_table(f"play_favorites, design '{design}': {args.bias_samples} golden sets per size x "
                                 f"{len(judges)} judges", tally, sizes))
                print()
    print(f"(nominal level 0.95; w = mean interval width; {time.perf_counter() - start:.0f} s on {args.jobs} "
          "processes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
