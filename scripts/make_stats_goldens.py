#!/usr/bin/python3
"""Regenerates data/stats/goldens.json: fixtures for the statistics module and the values the
references compute from them.

References: numpy.quantile (default method "linear"), statsmodels OLS and RLM (HuberT, defaults),
scipy.stats.t. Run with Debian's python3 (python3-numpy, python3-statsmodels, python3-scipy):

    /usr/bin/python3 scripts/make_stats_goldens.py

The fixture data is drawn from a seeded generator, so a rerun gives the same file.
"""
import json
import os
import sys

import numpy as np
import scipy.stats
import statsmodels
import statsmodels.api as sm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "data", "stats", "goldens.json")
QS = [0.0, 0.1, 0.25, 0.33, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0]


def quantile_cases(rng):
    cases = {
        "one": [7.0],
        "two": [3.0, 10.0],
        "ints_with_ties": [float(v) for v in rng.integers(0, 20, size=101)],
        "token_like": [float(v) for v in np.round(rng.lognormal(5.5, 1.1, size=1000))],
        "floats": [float(v) for v in rng.normal(0.0, 1e3, size=257)],
        "tiny_spread": [1.0 + i * 1e-15 for i in range(13)],
    }
    out = []
    for name, values in cases.items():
        arr = np.array(values, dtype=np.float64)
        out.append({"name": name, "values": values, "qs": QS,
                    "expected": [float(np.quantile(arr, q)) for q in QS],
                    "median": float(np.median(arr)), "sum": float(np.sum(arr)), "mean": float(np.mean(arr))})
    return out


def t_quantile_975(df):
    """scipy 1.10's t.ppf (cephes stdtrit) is only good to ~4e-9 relative (its own t.sf at the
    result misses 0.025 by ~4e-10), which statsmodels' conf_int inherits. Two Newton steps on the
    accurate t.sf give the quantile to double precision; the goldens' intervals use it, and keep
    statsmodels' own interval beside it ("ci_*_statsmodels") for reference."""
    q = scipy.stats.t.ppf(0.975, df)
    for _ in range(3):
        q += (scipy.stats.t.sf(q, df) - 0.025) / scipy.stats.t.pdf(q, df)
    return q


def coefficient_table(res, names, use_t):
    ci = np.asarray(res.conf_int(alpha=0.05))
    q = t_quantile_975(res.df_resid) if use_t else scipy.stats.norm.ppf(0.975)
    return [{"name": n, "estimate": float(res.params[i]), "std_error": float(res.bse[i]),
             "t": float(res.tvalues[i]), "p": float(res.pvalues[i]),
             "ci_low": float(res.params[i] - q * res.bse[i]), "ci_high": float(res.params[i] + q * res.bse[i]),
             "ci_low_statsmodels": float(ci[i, 0]), "ci_high_statsmodels": float(ci[i, 1])}
            for i, n in enumerate(names)]


def fit_all(y, columns):
    fits = {}
    for model, cols in (("a", ["tokens"]), ("b", ["turnover", "tokens"])):
        X = sm.add_constant(np.column_stack([columns[c] for c in cols]), has_constant="add")
        names = ["const"] + cols
        o = sm.OLS(y, X).fit()
        r = sm.RLM(y, X, M=sm.robust.norms.HuberT()).fit()
        fits[model] = {
            "regressors": cols,
            "ols": {"coefficients": coefficient_table(o, names, True), "n": int(o.nobs),
                    "df_resid": float(o.df_resid), "r_squared": float(o.rsquared),
                    "adj_r_squared": float(o.rsquared_adj), "resid_sd": float(np.sqrt(o.scale)),
                    "ssr": float(o.ssr), "f_statistic": float(o.fvalue), "f_p": float(o.f_pvalue)},
            "huber": {"coefficients": coefficient_table(r, names, False), "scale": float(r.scale),
                      "iterations": int(r.fit_history["iteration"])},
        }
    return fits


def ols_cases(rng):
    out = []
    # Hand-sized: 8 items, one turnover.
    tokens = np.array([12, 40, 33, 90, 15, 61, 27, 48], dtype=np.float64)
    turnover = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=np.float64)
    y = np.array([310.5, 52.0, 47.25, 70.0, 39.5, 60.75, 44.0, 58.5])
    out.append(("small", y, tokens, turnover))
    # Seed-like: token counts log-normal, a batch of 10, heavy-tailed noise, times in microseconds.
    n = 3000
    tokens = np.round(rng.lognormal(5.5, 1.0, size=n))
    turnover = (np.arange(n) % 10 == 9).astype(np.float64)
    y = 40.0 + 0.05 * tokens + 900.0 * turnover + rng.standard_t(3, size=n) * 6.0 + rng.exponential(5.0, size=n)
    out.append(("seed_like", y, tokens, turnover))
    # Nanosecond scale: large response values and a wide token range (conditioning).
    n = 1500
    tokens = np.round(rng.uniform(1, 20000, size=n))
    turnover = (rng.uniform(size=n) < 0.12).astype(np.float64)
    y = 2.5e6 + 310.0 * tokens + 4.0e6 * turnover + rng.normal(0, 3.0e5, size=n)
    out.append(("nanoseconds", y, tokens, turnover))
    result = []
    for name, y, tokens, turnover in out:
        result.append({"name": name, "y": [float(v) for v in y], "tokens": [float(v) for v in tokens],
                       "turnover": [float(v) for v in turnover],
                       "fits": fit_all(y, {"tokens": tokens, "turnover": turnover})})
    return result


def t_cases():
    out = []
    for t, df in ((0.5, 1.0), (2.0, 5.0), (-3.1, 17.0), (1.96, 1000.0), (8.0, 2998.0), (0.01, 3.0), (12.0, 40.0)):
        out.append({"t": t, "df": df, "p": float(2 * scipy.stats.t.sf(abs(t), df)),
                    "q975": float(t_quantile_975(df))})
    return out


def main():
    rng = np.random.default_rng(20240611)
    goldens = {
        "generator": "scripts/make_stats_goldens.py",
        "versions": {"numpy": np.__version__, "statsmodels": statsmodels.__version__, "scipy": scipy.__version__},
        "quantiles": quantile_cases(rng),
        "ols": ols_cases(rng),
        "student_t": t_cases(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(goldens, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
