#!/usr/bin/env python3
"""Predicted against measured output tokens/s of the calibration table, log-log, with the 10% band.

Reads the predictions CSV that tests/cost/calibration_fit.cpp writes and writes an SVG:
    scripts/calibration_plot.py PREDICTIONS.csv docs/img/cost-model-calibration.svg
"""
import csv
import math
import sys


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    pts = [(float(r["measured_tokens_per_s"]), float(r["predicted_tokens_per_s"]), r["split"], r["id"]) for r in rows]
    lo = min(min(m, p) for m, p, _, _ in pts) / 1.5
    hi = max(max(m, p) for m, p, _, _ in pts) * 1.5
    w, h, left, right, top, bottom = 640, 560, 70, 20, 40, 60
    l0, l1 = math.log10(lo), math.log10(hi)

    def x(v):
        return left + (math.log10(v) - l0) / (l1 - l0) * (w - left - right)

    def y(v):
        return h - bottom - (math.log10(v) - l0) / (l1 - l0) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="22" font-size="13" font-weight="bold">Output tokens/s: server model against published measurements</text>']
    # The 10% band around y = x.
    band = [(lo, lo * 1.1), (hi, hi * 1.1), (hi, hi / 1.1), (lo, lo / 1.1)]
    out.append('<polygon fill="#dde8f5" points="' + " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in band) + '"/>')
    out.append(f'<line x1="{x(lo):.1f}" y1="{y(lo):.1f}" x2="{x(hi):.1f}" y2="{y(hi):.1f}" stroke="#557" stroke-dasharray="4 3"/>')
    for e in range(math.ceil(l0), math.floor(l1) + 1):
        v = 10 ** e
        out.append(f'<line x1="{x(v):.1f}" y1="{h - bottom}" x2="{x(v):.1f}" y2="{h - bottom + 5}" stroke="#000"/>')
        out.append(f'<text x="{x(v):.1f}" y="{h - bottom + 18}" text-anchor="middle">{v:g}</text>')
        out.append(f'<line x1="{left - 5}" y1="{y(v):.1f}" x2="{left}" y2="{y(v):.1f}" stroke="#000"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="none" stroke="#000"/>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 20}" text-anchor="middle">measured output tokens/s (published)</text>')
    out.append(f'<text transform="translate(18,{(top + h - bottom) / 2}) rotate(-90)" text-anchor="middle">predicted output tokens/s</text>')
    for m, p, split, rid in pts:
        colour = "#1f77b4" if split == "fit" else "#d62728"
        shape = (f'<circle cx="{x(m):.1f}" cy="{y(p):.1f}" r="3.5" fill="{colour}"><title>{rid}: {p / m - 1:+.1%}</title></circle>'
                 if split == "fit" else
                 f'<rect x="{x(m) - 3.5:.1f}" y="{y(p) - 3.5:.1f}" width="7" height="7" fill="{colour}"><title>{rid}: {p / m - 1:+.1%}</title></rect>')
        out.append(shape)
    out.append(f'<circle cx="{left + 20}" cy="{top + 15}" r="3.5" fill="#1f77b4"/><text x="{left + 30}" y="{top + 19}">fit rows</text>')
    out.append(f'<rect x="{left + 16.5}" y="{top + 28.5}" width="7" height="7" fill="#d62728"/><text x="{left + 30}" y="{top + 36}">held-out rows</text>')
    out.append(f'<text x="{left + 30}" y="{top + 53}">shaded: within 10%</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
