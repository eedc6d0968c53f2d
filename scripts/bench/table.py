"""Turns the raw results of scripts/bench-table.sh (one `mathrl bench --json
--baseline torch --roofline` comparison a line, with its row name and run
number) into the Markdown table of docs/backends.md: for each row, xla-cpu's
and torch's median time, the median xla-cpu vs PyTorch ratio with its range
over the runs, and each side's median fraction of the roofline (MFU against
the matmul peak for train and prefill; for decode the limit that binds,
the larger of MBU against the copy bandwidth and MFU against the matmul
peak, as `mathrl bench` reports it)."""

import json
import statistics
import sys

PARTS = {  # part: (time field, unit, fraction field, what the fraction is of)
    "train": ("train_step_ms", "ms", "train_mfu", "matmul peak"),
    "prefill": ("prefill_ms", "ms", "prefill_mfu", "matmul peak"),
    "decode": ("decode_step_ms", "ms/step", ("decode_mbu", "decode_mfu"), ("copy bandwidth", "matmul peak")),
}


def bound(side, frac, limit):
    """The fraction of its roofline side reaches and the limit that binds it:
    for a part with one limit that one, for decode the larger fraction (on a
    tie the first, the copy bandwidth, as `mathrl bench` names it)."""
    if isinstance(frac, str):
        return side.get(frac, 0), limit
    return max(((side.get(f, 0), l) for f, l in zip(frac, limit)), key=lambda p: p[0])


def main(path):
    rows = {}
    for line in open(path):
        d = json.loads(line)
        rows.setdefault(d["row"], []).append(d)
    print("| row | part | xla-cpu | PyTorch | xla-cpu vs PyTorch: median (range) | xla-cpu of its limit | PyTorch of its limit | limit |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, runs in rows.items():
        for part, (field, unit, frac, limit) in PARTS.items():
            xla, torch = [], []
            for run in runs:
                sides = {s["name"]: s for s in run["sides"]}
                if sides["xla-cpu"].get(field) and sides["torch"].get(field):
                    xla.append(sides["xla-cpu"])
                    torch.append(sides["torch"])
            if not xla:
                continue
            ratios = [t[field] / x[field] for x, t in zip(xla, torch)]
            med = lambda sides, f: statistics.median(s.get(f, 0) for s in sides)
            medbound = lambda sides: statistics.median(bound(s, frac, limit)[0] for s in sides)
            binding = statistics.mode(bound(s, frac, limit)[1] for s in xla)
            print(f"| {name} | {part} | {med(xla, field):,.1f} {unit} | {med(torch, field):,.1f} {unit} | "
                  f"**{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f}, {len(ratios)} runs) | "
                  f"{100 * medbound(xla):.1f}% | {100 * medbound(torch):.1f}% | {binding} |")
    peaks = []
    for runs in rows.values():
        for run in runs:
            r = run.get("roofline") or {}
            peaks.append(r)
    bw = [p["copy_bytes_per_s"] for p in peaks if p.get("copy_bytes_per_s")]
    if bw:
        print()
        print(f"Copy bandwidth over the runs: median {statistics.median(bw) / 1e9:.1f} GB/s "
              f"({min(bw) / 1e9:.1f}–{max(bw) / 1e9:.1f}).", end=" ")
        mm = {}
        for p in peaks:
            for m in p.get("matmuls") or []:
                mm.setdefault((m["dtype"], m["on"]), []).append(m["flops_per_s"])
        print("Matmul peaks (median GFLOP/s): " + ", ".join(
            f"{k[0]} on {k[1]} {statistics.median(v) / 1e9:,.0f}" for k, v in sorted(mm.items(), key=str)) + ".")


if __name__ == "__main__":
    main(sys.argv[1])
