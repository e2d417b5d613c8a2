"""How often ``agree`` tells a majority column from a rater by its values (issue 25).

Seeded simulation; prints one table, not a timed test. Binary codes, prevalence 0.35; each
rater copies the truth and flips it with probability ``e`` (e = 0.02 gives Fleiss' kappa
about 0.92, 0.05 about 0.81, 0.10 about 0.64, 0.20 about 0.36). Columns are unnamed (a, b, c,
...), so only the value rule of :mod:`failcodes.stats.summaries` can act.

- "3 + majority": three raters and their row-wise majority. Share of tables where the
  majority column is left out (right), where the table is refused as ambiguous (asks for
  --raters: no number), and where it is kept as a fourth rater (an inflated number; the
  first line lists it among the raters).
- "4 raters": four raters, no summary column. Share of tables where a rater is left out
  (wrong, named on the first line) and where the table is refused as ambiguous (no number).

Run: python bench/bench_summary_columns.py [--reps N] [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np

from failcodes.stats.summaries import value_summaries


def _raters(rng: np.random.Generator, n: int, k: int, e: float) -> list[np.ndarray]:
    truth = rng.random(n) < 0.35
    return [np.where(rng.random(n) < e, ~truth, truth).astype(int) for _ in range(k)]


def _rows(columns: list[np.ndarray]) -> list[list[str | None]]:
    return [[str(int(v)) for v in row] for row in np.column_stack(columns)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{'n':>5} {'e':>5} | 3+majority: left out  refused  kept | 4 raters: rater out  refused")
    for n in (30, 100, 300):
        for e in (0.02, 0.05, 0.10, 0.20):
            right = refused3 = kept = 0
            wrong = refused4 = 0
            for _ in range(args.reps):
                three = _raters(rng, n, 3, e)
                majority = (sum(three) >= 2).astype(int)
                check = value_summaries(_rows([*three, majority]), ["a", "b", "c", "m"])
                if check.ambiguous:
                    refused3 += 1
                elif [s.column for s in check.summaries] == ["m"]:
                    right += 1
                else:
                    kept += 1
                check = value_summaries(_rows(_raters(rng, n, 4, e)), list("abcd"))
                refused4 += bool(check.ambiguous)
                wrong += bool(check.summaries)
            r = args.reps
            print(
                f"{n:>5} {e:>5.2f} | {right / r:>21.3f} {refused3 / r:>8.3f} {kept / r:>5.3f} |"
                f" {wrong / r:>18.3f} {refused4 / r:>8.3f}"
            )


if __name__ == "__main__":
    main()
