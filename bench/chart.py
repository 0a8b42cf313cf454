"""The benchmark's chart: how many times better than the reference each of our stores is, against the targets."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

# The performance issue's targets, as "times better than the reference" (memory's is absolute: <= 200 MiB)
TARGETS = {"get_table_1": 5.0, "get_table_8": 10.0, "create_drop": 10.0, "add_partitions": 30.0,
           "get_partitions": 10.0, "get_partitions_by_filter": 10.0}
MEMORY_LIMIT_MIB = 200.0


def factor(ours: float | None, ref: float | None, better: str) -> float | None:
    """How many times better ours is (above 1) or worse (below 1)."""
    if not ours or not ref or ours <= 0 or ref <= 0:
        return None
    return ours / ref if better == "higher" else ref / ours


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def write_chart(rows: list[dict[str, Any]], meta: dict[str, Any], path: Path) -> bool:
    """A PNG of the rows' factors per store, one group per benchmark; False when there is nothing to compare
    (no reference in the run)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r.get("reference")]
    if not rows:
        return False
    backends = list(rows[0]["ours"])
    height = 0.8 / max(1, len(backends))
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.55 * len(rows) * max(1, len(backends)) ** 0.5))
    top = 1.0
    colors = ["#1f77b4", "#2ca02c", "#9467bd"]
    labels = []
    for i, r in enumerate(rows):
        label = textwrap.fill(r["label"].split(" (")[0] if r["id"] == "rss" else r["label"], 40)
        label += f"\n(reference: {_num(r['reference'])} {r['unit']})"
        if r["id"] == "rss":
            label += "\nours: " + ", ".join(f"{b} {r['ours'][b]:.0f}" for b in backends if r["ours"].get(b))
            label += f" (target ≤ {MEMORY_LIMIT_MIB:.0f})"
        labels.append(label)
        for j, b in enumerate(backends):
            # each store against the reference on the same kind of store when that ran (see run.build_rows)
            f = factor(r["ours"].get(b), r.get("reference_by_backend", {}).get(b, r["reference"]), r["better"])
            if f is None:
                continue
            y = i + (j - (len(backends) - 1) / 2) * height
            top = max(top, f)
            ax.barh(y, f, height=height * 0.9, color=colors[j % len(colors)], label=b if i == 0 else None)
            ax.text(f * 1.03, y, f"{f:.1f}×", va="center", fontsize=7)
        target = TARGETS.get(r["id"])
        if target is not None:
            ax.plot([target, target], [i - 0.45, i + 0.45], color="#d62728", linewidth=2,
                    label="target" if not any(t.get_label() == "target" for t in ax.lines) else None)
    ax.set_xscale("log")
    ax.set_xlim(0.8, top * 2.0)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("times better than the reference (Hive 2.3.10; on Derby for SQLite, else on the same database), "
                  "log scale")
    ax.set_title(f"metastore vs the reference, {meta.get('finished', '')[:16].replace('T', ' ')} UTC\n"
                 f"{meta.get('command', '')}", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
