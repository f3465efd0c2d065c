#!/usr/bin/env python3
"""Writes the expected statistics that NumpyStatsTest / MetricRecorderTest compare against.

Run from the repository root (needs numpy):
    python3 profile/scripts/numpy_golden.py > profile/src/test/resources/numpy-golden.json

Inputs are generated from a fixed seed and written next to the expected values, so the Java tests
never need numpy and the values can be regenerated and diffed.
"""
import json
import sys

import numpy as np

PERCENTILES = [0, 1, 5, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 99, 99.9, 100]


def case(name, values):
    a = np.asarray(values, dtype=np.float64)
    return {
        "name": name,
        "values": [float(v) for v in a],
        "mean": float(np.mean(a)),
        "sd": float(np.std(a)),
        "median": float(np.median(a)),
        "percentiles": {repr(float(p)): float(np.percentile(a, p)) for p in PERCENTILES},
    }


def main():
    rng = np.random.default_rng(20240925)
    cases = [
        case("single", [42.5]),
        case("two", [1.0, 2.0]),
        case("identical", [7.25] * 9),
        case("small_ints_odd", [4, 26, 256, 17, 99, 3, 64]),
        case("small_ints_even", [4, 26, 256, 17, 99, 3, 64, 1]),
        case("negative_and_positive", [-3.5, 0.0, 2.25, -1e-3, 8.0, -100.0]),
        case("large_offset", list(1e9 + rng.normal(0, 1, 257))),
        case("lognormal_latency_ms_1000", list(rng.lognormal(mean=6.0, sigma=0.8, size=1000))),
        case("uniform_300", list(rng.uniform(0, 1, 300))),
        case("per_token_latency_s_4097", list(rng.gamma(2.0, 0.02, 4097))),
        case("input_len_ints_600", list(rng.integers(4, 257, 600).astype(float))),
    ]
    # Above-cap check: the Java test records these with a small cap and compares histogram
    # percentiles with numpy's exact ones (<= 0.1 % relative error). The values come from a formula
    # that Java reproduces bit for bit (integer hashing, one IEEE division), so they are not stored.
    n = 200_000
    u = ((np.arange(n, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(1 << 32)).astype(
        np.float64
    ) / 4294967296.0
    big = 10.0 / (1.0 - u)
    big_summary = {
        "name": "pareto_hash_200000",
        "formula": "u_i = ((i * 2654435761) mod 2^32) / 2^32; x_i = 10 / (1 - u_i); i = 0..n-1",
        "n": n,
        "mean": float(np.mean(big)),
        "sd": float(np.std(big)),
        "median": float(np.median(big)),
        "min": float(np.min(big)),
        "max": float(np.max(big)),
        "percentiles": {repr(float(p)): float(np.percentile(big, p)) for p in PERCENTILES},
    }
    json.dump(
        {"numpy_version": np.__version__, "cases": cases, "large": big_summary},
        sys.stdout,
        separators=(",", ":"),
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
