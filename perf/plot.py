"""``python -m perf plot FILE.json -o DIR``: PNG charts of one run (needs matplotlib: ``jitcep[perf]``).

- ``throughput_vs_window.png``, ``throughput_vs_length.png``,
  ``throughput_vs_selectivity.png``: events/s of jitcep and of every baseline
  measured on the full input, against the family's parameter (DESIGN.md
  section 6 asks for < 2x loss from length 3 to 24 and from window T to 4T).
- ``baselines.png``: per workload, jitcep's speed-up over each baseline
  (baseline time / jitcep time, log scale; 1 = parity).
"""

from __future__ import annotations

from pathlib import Path

from .compare import load

SWEEPS = (("window", "window", "window (time units)"), ("length", "length", "pattern length (events)"),
          ("selectivity", "selectivity", "multi-class predicate selectivity"))


def _pyplot():
    try:
        import matplotlib
    except ImportError as e:
        raise SystemExit("error: plots need matplotlib: pip install 'jitcep[perf]' (or pip install matplotlib)") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def NullFormatter():
    from matplotlib.ticker import NullFormatter as F

    return F()


def plot(path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write the charts the run's workloads support; return their paths."""
    doc = load(path)
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ok = [w for w in doc["workloads"] if w.get("status") == "ok"]
    written = []
    for family, param, label in SWEEPS:
        ws = sorted((w for w in ok if w["family"] == family and param in w["params"]),
                    key=lambda w: w["params"][param])
        if len(ws) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = [w["params"][param] for w in ws]
        ax.plot(xs, [w["engine"]["events_per_s"] for w in ws], "o-", lw=2.5, label=f"jitcep ({doc['engine']})")
        names = sorted({b for w in ws for b in w["baselines"]})
        for b in names:
            pts = [(w["params"][param], w["baselines"][b]["events_per_s"]) for w in ws
                   if w["baselines"].get(b, {}).get("status") == "ok" and not w["baselines"][b].get("prefix")]
            if pts:
                ax.plot(*zip(*pts), "s--", label=b)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label)
        ax.set_ylabel("input events / s")
        ax.set_title(f"throughput against {param}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        p = out / f"throughput_vs_{param}.png"
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    if ok:
        names = sorted({b for w in ok for b in w.get("ratios", {})})
        fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(ok) * max(len(names), 1) / 2), 5))
        width = 0.8 / max(len(names), 1)
        for j, b in enumerate(names):
            xs = [i + j * width for i, w in enumerate(ok) if b in w.get("ratios", {})]
            ys = [w["ratios"][b] for w in ok if b in w.get("ratios", {})]
            ax.bar(xs, ys, width=width, label=b)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(ok))])
        ax.set_xticklabels([w["name"] for w in ok], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel("baseline time / jitcep time")
        ax.set_title("jitcep against each baseline (above 1: jitcep faster)")
        ax.legend(fontsize=8)
        p = out / "baselines.png"
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    return written
