"""``python -m perf compare BASE.json NEW.json``: the regression gate.

Absolute times move with the machine; the ratio of jitcep's time to a bare
Numba pass over the same columns measured in the same run (the scan limit,
``numba_scan``) moves much less, so the gate is on that ratio.  A workload
regresses when its ratio fell by more than ``threshold`` percent.  A baseline
disagreeing with jitcep in NEW fails the gate too.  Workloads present in only
one file are reported and ignored.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def load(path: str | Path) -> dict:
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"error: cannot read perf results {path}: {e}")
    if not isinstance(doc, dict) or "workloads" not in doc:
        raise SystemExit(f"error: {path} is not a perf results file (no 'workloads')")
    return doc


def compare(base: dict, new: dict, *, threshold: float = 25.0, against: str = "numba_scan") -> tuple[list[dict], bool]:
    """Per-workload verdicts and whether the gate fails."""
    by_name = {w["name"]: w for w in base["workloads"]}
    rows, failed = [], False
    for w in new["workloads"]:
        b = by_name.pop(w["name"], None)
        row = {"name": w["name"], "base": None, "new": None, "change_pct": None, "verdict": "new"}
        if w.get("status") == "mismatch":
            row["verdict"], failed = "MISMATCH", True
            rows.append(row)
            continue
        if b is None:
            rows.append(row)
            continue
        rb = b.get("ratios", {}).get(against)
        rn = w.get("ratios", {}).get(against)
        row.update(base=rb, new=rn)
        if rb is None or rn is None or rb <= 0:
            row["verdict"] = "no ratio"
        elif b.get("events") != w.get("events"):
            row["verdict"] = "size differs"   # --quick against a full run: not comparable
        else:
            change = (rn - rb) / rb * 100.0   # ratio = baseline time / jitcep time: higher is better
            row["change_pct"] = change
            if change < -threshold:
                row["verdict"], failed = "REGRESSED", True
            else:
                row["verdict"] = "improved" if change > threshold else "ok"
        rows.append(row)
    rows += [{"name": n, "base": None, "new": None, "change_pct": None, "verdict": "missing in new"}
             for n in by_name]
    return rows, failed


def main(base_path: str, new_path: str, *, threshold: float = 25.0, against: str = "numba_scan") -> int:
    base, new = load(base_path), load(new_path)
    rows, failed = compare(base, new, threshold=threshold, against=against)
    fmt = (lambda x: "-" if x is None else f"{x:.4g}")
    print(f"ratio to {against} (baseline time / jitcep time), threshold {threshold:g}%")
    print(f"base: {base.get('git', {}).get('commit')} {base.get('created')}  "
          f"new: {new.get('git', {}).get('commit')} {new.get('created')}")
    width = max([8] + [len(r["name"]) for r in rows])
    print(f"{'workload':{width}s}  {'base':>10s}  {'new':>10s}  {'change':>8s}  verdict")
    for r in rows:
        ch = "-" if r["change_pct"] is None else f"{r['change_pct']:+.1f}%"
        print(f"{r['name']:{width}s}  {fmt(r['base']):>10s}  {fmt(r['new']):>10s}  {ch:>8s}  {r['verdict']}")
    if failed:
        print("FAIL: performance regression or wrong answers", file=sys.stderr)
    return 1 if failed else 0
