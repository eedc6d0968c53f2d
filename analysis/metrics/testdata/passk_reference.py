#!/usr/bin/python3
"""Writes passk_reference.tsv: pass@k = 1 - C(n-c, k)/C(n, k) computed exactly with
Python's math.comb and fractions.Fraction, then rounded to 17 significant digits.
Run from this folder: /usr/bin/python3 passk_reference.py > passk_reference.tsv"""
from fractions import Fraction
from math import comb

print("n\tc\tk\tpass_at_k")
for n in (1, 2, 3, 5, 8, 16, 17, 64, 100, 256, 1000):
    cs = sorted({0, 1, 2, n // 3, n // 2, n - 1, n} & set(range(n + 1)))
    ks = sorted({1, 2, 4, 8, 16, n // 2, n} & set(range(1, n + 1)))
    for c in cs:
        for k in ks:
            p = 1 - Fraction(comb(n - c, k), comb(n, k))
            print(f"{n}\t{c}\t{k}\t{float(p):.17g}")
