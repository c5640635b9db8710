"""The whole memory at a glance: what is used and what is stale, per slot, and a map of the
facts' vectors (a 2-D principal-component projection, plain numpy, drawn as SVG)."""

from __future__ import annotations

from ..errors import InvalidInput
from .html import e

MAP_POINTS = 2000  # the most recently updated facts with a vector; more makes a slow page
STALE_DAYS = 90
DAY_MS = 86_400_000
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def overview(store, params: dict, view) -> tuple[str, str]:
    by = params.get("colour") or "slot"
    if by not in ("slot", "cluster"):
        raise InvalidInput(f"colour must be slot or cluster, not {by!r}")
    return "Map", usage(store) + vector_map(store, by)


def usage(store) -> str:
    """Per slot: facts used in the last 30 days, used before, stale (unused for STALE_DAYS),
    never used, as one stacked bar each."""
    now = store.clock()
    found = store.use_by_slot(now - 30 * DAY_MS, now - STALE_DAYS * DAY_MS)
    if not found:
        return "<h2>Use</h2><p>No facts yet.</p>"
    kinds = (
        ("used in the last 30 days", "#2ca02c"),
        (f"used before, within {STALE_DAYS} days", "#98df8a"),
        (f"stale: unused for {STALE_DAYS} days", "#ff7f0e"),
        ("never used", "#c7c7c7"),
    )
    rows = []
    for slot, counts in found.items():
        total = sum(counts) or 1
        bar = "".join(
            f'<span style="display:inline-block;height:1rem;width:{100 * n / total:.2f}%;'
            f'background:{colour}" title="{e(label)}: {n}"></span>'
            for n, (label, colour) in zip(counts, kinds)
            if n
        )
        cells = "".join(f'<td class="num">{n}</td>' for n in counts)
        rows.append(
            f'<tr><th scope="row">{e(slot)}</th>{cells}'
            f'<td style="width:30%" aria-hidden="true">{bar}</td></tr>'
        )
    heads = "".join(
        f'<th scope="col"><span style="color:{colour}" aria-hidden="true">■</span> {e(label)}</th>'
        for label, colour in kinds
    )
    return (
        '<h2>Use</h2><table aria-label="Use per slot"><thead><tr><th scope="col">Slot</th>'
        f'{heads}<th scope="col">Share</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def vector_map(store, by: str = "slot") -> str:
    model = store.semantic.model_id()
    if not model:
        return (
            "<h2>Map</h2><p>No map: this memory has no vectors. "
            "<code>slotmem reindex</code> turns semantic search on.</p>"
        )
    try:
        import numpy as np
    except ImportError:
        return "<h2>Map</h2><p>The map needs numpy: <code>pip install 'slotmem[ui]'</code>.</p>"
    found = store.semantic.newest(MAP_POINTS)
    stored = store.semantic.stored([row[3] for row in found])
    found = [row for row in found if row[3] in stored]
    if len(found) < 2:
        return "<h2>Map</h2><p>No map: fewer than two facts have vectors.</p>"
    vectors = np.stack([np.frombuffer(stored[row[3]], dtype="<f4") for row in found])
    points = project(vectors)
    if by == "cluster":
        groups = [
            f"cluster {n + 1}" for n in clusters(vectors, min(len(COLOURS), len(found) // 4 or 1))
        ]
    else:
        groups = [row[0] for row in found]
    names = sorted(set(groups), key=lambda g: (len(g), g))
    colour = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(names)}
    size, pad = 480, 16
    low, high = points.min(axis=0), points.max(axis=0)
    span = np.where(high - low > 0, high - low, 1.0)
    xy = pad + (points - low) / span * (size - 2 * pad)
    dots = "".join(
        f'<a href="/fact?slot={e(slot)}&amp;key={e(key)}"><circle cx="{x:.1f}" cy="{y:.1f}" '
        f'r="5" fill="{colour[group]}" fill-opacity="0.75"><title>{e(slot)}/{e(key)}: '
        f"{e(value[:160])}</title></circle></a>"
        for (slot, key, value, _), (x, y), group in zip(found, xy, groups)
    )
    legend = " ".join(
        f'<span><span style="color:{colour[g]}" aria-hidden="true">●</span> {e(g)}</span>'
        for g in names
    )
    other = "cluster" if by == "slot" else "slot"
    legend += f' · <a href="/map?colour={other}">Colour by {other}</a>'
    return (
        f"<h2>Map</h2><p>{len(found)} facts with a vector ({e(model)}), the two directions in "
        "which they differ most (principal components): near means similar. Hover a point for "
        f"its fact; click to open it.</p><p>{legend}</p>"
        f'<svg role="img" aria-label="Map of {len(found)} facts by meaning" width="{size}" '
        f'height="{size}" viewBox="0 0 {size} {size}" style="background:#fff;border:1px solid '
        f'#ccc">{dots}</svg>'
    )


def project(vectors):
    """The rows of ``vectors`` on their first two principal components (n x 2)."""
    import numpy as np

    centred = vectors - vectors.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    out = centred @ axes[:2].T
    if out.shape[1] < 2:  # one dimension only: a line
        out = np.hstack([out, np.zeros((len(out), 1))])
    return out


def clusters(vectors, k: int, rounds: int = 20):
    """k-means of the unit ``vectors`` (cosine): the cluster number of each row. Starts from
    k spread-out rows (the farthest from those chosen so far), so the same vectors always give
    the same clusters."""
    import numpy as np

    centres = [vectors[0]]
    for _ in range(1, min(k, len(vectors))):
        nearest = np.max(vectors @ np.stack(centres).T, axis=1)
        centres.append(vectors[int(np.argmin(nearest))])
    centre = np.stack(centres)
    labels = np.zeros(len(vectors), dtype=int)
    for _ in range(rounds):
        labels = np.argmax(vectors @ centre.T, axis=1)
        for n in range(len(centre)):
            members = vectors[labels == n]
            if len(members):
                mean = members.mean(axis=0)
                norm = np.linalg.norm(mean)
                centre[n] = mean / norm if norm > 0 else centre[n]
    return [int(n) for n in labels]
