#!/usr/bin/env python3
"""Derives the erfc polynomial of the GELU erf form (src/fused/fused_math.h,
erfc_factors): erfc(a) = t · exp(P(t) − a²) with t = 1 / (1 + p·a), a >= 0.

P is a degree-5 polynomial fitted to Q(t) = ln(erfc(a) / t) + a² over the
a where erfc is a normal fp32 (a ≤ 9.3), minimizing the largest weighted
error |P − Q| / (1 + w·a²): an error in P is the relative error of erfc, and
the kernels' error already grows with a² (the rounding of a² in the
exponent), so the fit spends its accuracy where the result is most precise.
Lawson's iteratively reweighted least squares converges to that minimax fit.

Then it evaluates P with fp32 coefficients in fp32 Horner steps, as the
kernels do, and prints the coefficients and the largest errors.

    python3 scripts/fit_gelu_erfc.py            # the shipped fit: degree 5, p = 0.46, w = 0.5
    python3 scripts/fit_gelu_erfc.py --degree 7 --p 0.45   # the fit before (1.6e-7)
    python3 scripts/fit_gelu_erfc.py --degree 9 --p 0.5    # close to Numerical Recipes' erfcc

Numerical Recipes' erfcc (degree 9, p = 0.5, relative error < 1.2e-7) came
first, then degree 7 at p = 0.45 (1.6e-7, within a few fp32 ulps of libm);
degree 5 at p = 0.46 (1.75e-6 · (1 + a²/2)) takes two fused multiply-adds
fewer per element again. The fused ops emit int8 / fp8 codes, whose steps
are thousands of times coarser than that error (docs/fused.md, "The
degree-5 refit").
"""
import argparse
import math

import numpy as np

A_MAX = 9.3  # erfc(9.3) ≈ 1.4e-39: beyond it the kernels' result underflows


def q_exact(t, p):
    a = (1.0 / t - 1.0) / p
    return math.log(math.erfc(a) / t) + a * a  # double: ~1e-14 absolute here


def fit(degree, p, weight, nodes=1500, iterations=60):
    t_min = 1.0 / (1.0 + p * A_MAX)
    x = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    t = t_min + (1.0 - t_min) * (x + 1.0) / 2.0  # Chebyshev nodes on [t_min, 1]
    a = (1.0 / t - 1.0) / p
    scale = 1.0 / (1.0 + weight * a * a)
    q = np.array([q_exact(ti, p) for ti in t]) * scale
    basis = np.vander(t, degree + 1, increasing=True) * scale[:, None]
    lawson = np.full(nodes, 1.0 / nodes)
    for _ in range(iterations):
        root = np.sqrt(lawson)
        coefs, *_ = np.linalg.lstsq(basis * root[:, None], q * root, rcond=None)
        lawson *= np.abs(basis @ coefs - q)
        lawson /= lawson.sum()
    return coefs.astype(np.float32)


def fp32_horner(coefs, t):
    acc = np.full_like(t, coefs[-1])
    for c in coefs[-2::-1]:  # fma in double, rounded once to fp32
        acc = (acc.astype(np.float64) * t + np.float64(c)).astype(np.float32)
    return acc.astype(np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--degree", type=int, default=5)
    parser.add_argument("--p", type=float, default=0.46)
    parser.add_argument("--weight", type=float, default=0.5)
    args = parser.parse_args()
    coefs = fit(args.degree, args.p, args.weight)
    t = np.linspace(1.0 / (1.0 + args.p * A_MAX), 1.0, 20001).astype(np.float32).astype(np.float64)
    a = (1.0 / t - 1.0) / args.p
    err = np.abs(fp32_horner(coefs, t) - np.array([q_exact(ti, args.p) for ti in t]))
    print("P(t), constant term first:", ", ".join("%.9g" % c for c in coefs))
    print("relative error of erfc: %.3g for a < 1, %.3g · (1 + %g·a²) everywhere, %.3g at most"
          % (err[a < 1].max(), (err / (1 + args.weight * a * a)).max(), args.weight, err.max()))


if __name__ == "__main__":
    main()
