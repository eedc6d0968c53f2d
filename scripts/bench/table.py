"""Turns the raw results of scripts/bench-table.sh (one `mathrl bench --json
--baseline torch --roofline` comparison a line, with its row name and run
number) into the Markdown table of docs/backends.md: for each row, xla-cpu's
and torch's median time, the median xla-cpu vs PyTorch ratio with its range
over the runs, and each side's median fraction of the roofline (MFU against
the matmul peak for train and prefill; for decode the limit that binds,
the larger of MBU against the copy bandwidth and MFU against the matmul
peak, as `mathrl bench` reports it).

With a second file, the raw results of `mathrl bench --what products --json`
(one comparison a line, with its run number and the step rows, train_row and
decode_row, whose shapes it timed), it adds a second table: for each part, the
time of a step's products alone on each side (every product times the number
of times a step runs it; the head's apart), its fraction of the matmul peak,
and its share of the part's step time in the first table (medians over the
runs)."""

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


PART_LABEL = {
    "train": "train step",
    "prefill-row": "prefill, a prompt at a time (the sampler's)",
    "prefill-batch": "prefill, every prompt in one forward (PyTorch's)",
    "decode": "decode step",
}
STEP_OF = {  # product part: (step row field, time field of that row)
    "train": ("train_row", "train_step_ms"),
    "prefill-row": ("decode_row", "prefill_ms"),
    "prefill-batch": ("decode_row", "prefill_ms"),
    "decode": ("decode_row", "decode_step_ms"),
}


def product_totals(run, side, head):
    """{part: (ms, FLOPs)} of a step's products on side (the head's only, or all)."""
    out = {}
    ms = next(s["ms"] for s in run["sides"] if s["name"] == side)
    for p, t in zip(run["products"], ms):
        if head and p["weight"] != "head":
            continue
        tot = out.setdefault(p["part"], [0.0, 0.0])
        tot[0] += p["count"] * t
        tot[1] += p["count"] * 2 * p["rows"] * p["in"] * p["out"]
    return out


def products_table(path, steps):
    """Prints the products table; steps are the first table's runs by row name."""
    runs = [json.loads(line) for line in open(path)]
    print()
    print("| step | its products | xla-cpu | PyTorch | xla-cpu vs PyTorch | xla-cpu of peak | PyTorch of peak | "
          "share of the step: xla-cpu | PyTorch |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for part, (row_field, time_field) in STEP_OF.items():
        groups = {}
        for run in runs:
            groups.setdefault(run[row_field], []).append(run)
        for step_row, group in groups.items():
            for head in (False, True):
                cells = {}
                for side in ("xla-cpu", "torch"):
                    ms, frac, share = [], [], []
                    for run in group:
                        tot = product_totals(run, side, head).get(part)
                        if not tot:
                            continue
                        peak = max(m["flops_per_s"] for m in run["roofline"]["matmuls"] if m["dtype"] == run["dtype"])
                        ms.append(tot[0])
                        frac.append(tot[1] / (tot[0] / 1000) / peak)
                        step = [next(s for s in r["sides"] if s["name"] == side).get(time_field, 0)
                                for r in steps.get(run[row_field], [])]
                        step = [v for v in step if v]
                        if step:
                            share.append(tot[0] / statistics.median(step))
                    cells[side] = (ms, frac, share)
                if not cells["xla-cpu"][0]:
                    continue
                (xm, xf, xs), (tm, tf, ts) = cells["xla-cpu"], cells["torch"]
                med = statistics.median
                pct = lambda v: f"{100 * med(v):.1f}%" if v else "-"
                which = "the head's" if head else "all"
                name = f"{step_row}: {PART_LABEL[part]}"
                print(f"| {name} | {which} | {med(xm):,.1f} ms | {med(tm):,.1f} ms | {med(tm) / med(xm):.2f}× | "
                      f"{pct(xf)} | {pct(tf)} | {pct(xs)} | {pct(ts)} |")


def main(path, products=None):
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
    if products:
        products_table(products, rows)


if __name__ == "__main__":
    main(*sys.argv[1:3])
