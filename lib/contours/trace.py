"""Contour tracing: every boundary edge of a region's cells gives one outline point (on the
eroded boundary at walls and ledges, the midpoint between regions), chained into rings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..boundary import FloorBoundary
from ..components import find_sorted
from ..geometry import ring_next
from ..heightfield import DIR_DX, DIR_DY, Heightfield
from ..params import BakeParams
from ..regions import ON_RADIUS, RegionMap

# Bisection steps placing a bridge span's outline point (a cell / 2^20 at most off).
_CROSSING_STEPS = 20
# Each bisection step measures distances exactly only this many cells past the radius (fewer
# boundary segments to test; farther is all it asks).
_CROSSING_REACH = 1e-3
# Outlines keep this fraction of a cell off walls and ledges, whatever the agent radius: at radius 0
# the floors on both sides of a thin wall would otherwise both end on its line, and their polygons'
# edges overlap there (a T-junction to a mesh check; engines that weld by position may join them).
OFF_WALL = 0.01
# Where two storeys of one region sit in neighbouring columns, each outline stops this fraction
# of a cell short of the edge between them.
_STOREY_GAP = 1e-3
# An edge to a squared corner this near (m) a boundary segment meets it: the corner lies across a wall.
_MEETS_WALL = 1e-9
# Spans whose boundary edges _boundary_edges finds at once (bounds its temporaries).
_EDGE_CHUNK = 1 << 18


@dataclass
class _Edges:
    """Boundary cell edges: span (E,) and direction (E,), in order of span * 4 + dir (`key`)."""

    span: np.ndarray
    dir: np.ndarray
    key: np.ndarray

    def find(self, span: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The edge of each (span, d), or -1 where that is no boundary edge: a search of the
        sorted keys, where a table over every span and direction would cost 4 ids a span."""
        return find_sorted(self.key, span * 4 + d)


def _boundary_edges(hf: Heightfield, region: np.ndarray) -> _Edges:
    """The cell edges of every region's spans that have no span of the same region across."""
    boundary = np.zeros((hf.span_count, 4), dtype=bool)
    for way in range(4):  # a direction and a chunk of spans at a time: bounded temporaries
        for start in range(0, hf.span_count, _EDGE_CHUNK):
            part = slice(start, start + _EDGE_CHUNK)
            across, own = hf.links[part, way], region[part]
            boundary[part, way] = (own >= 0) & ((across < 0) | (region[np.maximum(across, 0)] != own))
    span, d = (k.astype(np.int64) for k in np.nonzero(boundary))
    return _Edges(span, d, span * 4 + d)


def _edge_points(hf: Heightfield, region_map: RegionMap, params: BakeParams, edges: _Edges, boundary: FloorBoundary):
    """(E, 3) point and (E,) neighbour region (-1 for wall/ledge) of every boundary edge."""
    cs, radius = hf.cell_size, params.agent_radius
    dist, region = region_map.distance, region_map.region
    a, d = edges.span, edges.dir
    b = hf.links[a, d]
    has_b = b >= 0
    bs = np.maximum(b, 0)
    centre = hf.centers_xy(a)  # each edge's own span's
    step = np.stack([DIR_DX[d], DIR_DY[d]], axis=1) * cs
    nreg = np.where(has_b, region[bs], -1)
    shared = nreg >= 0
    da = dist[a]
    db = np.where(has_b, dist[bs], da - cs)
    za = hf.z[a]
    zb = np.where(has_b, hf.z[bs], za)
    with np.errstate(divide="ignore", invalid="ignore"):  # inf - inf deep inside; those are shared edges
        drop = da - db
        t = np.where((drop > 0) & (db <= radius + ON_RADIUS * cs), (da - radius) / drop, 0.5)
    # Where the erosion does not reach a missing link, the floor ends where the link is blocked.
    end, found = hf.link_end(a, d)
    t = np.where(has_b | (db <= radius + ON_RADIUS * cs), t, end)
    # Below OFF_WALL cells of radius, wall points stop short of the wall by the rest of it.
    t = np.where(shared, t, t - max(0.0, OFF_WALL - radius / cs))
    # Where the region also holds a span of the column across (another storey of it), the
    # outline there stays in this column, a hair short of its edge: the two storeys' outlines
    # would overlap, or meet at points of the same place and different heights. So it does where
    # a link was refused with no wall found in the step (headroom or climb failing between two
    # columns of one slope) and another region's floor lies across, within the agent's height.
    stop = _stops_at_border(hf, region, a, d, ~has_b & ~found, params.agent_height)
    t = np.clip(t, 0.0, np.where(stop, 0.5 - _STOREY_GAP, 1.0))
    xy = centre + t[:, None] * step
    z = za + t * (zb - za)
    # A bridge span's centre lies within the radius: its wall and ledge points are found between
    # its point farther than the radius and the step's end; so are those of the spans linked to a
    # bridge (a passage's mouth), from their centre, where the distance is far from linear.
    inner = np.full((len(a), 2), np.nan)
    is_bridge = np.zeros(hf.span_count, dtype=bool)
    is_bridge[region_map.bridges] = True
    inner[is_bridge[a]] = region_map.bridge_xy[np.searchsorted(region_map.bridges, a[is_bridge[a]])]
    linked = hf.links[a]
    mouth = ~is_bridge[a] & (is_bridge[np.maximum(linked, 0)] & (linked >= 0)).any(axis=1)
    inner[mouth] = centre[mouth]
    exact = ~shared & ~np.isnan(inner[:, 0])
    if exact.any():
        end = centre[exact] + np.where(has_b[exact], 1.0, hf.link_end(a[exact], d[exact])[0])[:, None] * step[exact]
        xy[exact] = _radius_crossing(boundary, inner[exact], end, za[exact], radius)
        along = np.einsum("ij,ij->i", xy[exact] - centre[exact], step[exact]) / (cs * cs)
        z[exact] = za[exact] + np.clip(along, 0.0, 1.0) * (zb[exact] - za[exact])
    # Between regions: the symmetric midpoint, bitwise equal from either side.
    xy[shared] = (centre[shared] + hf.centers_xy(bs[shared])) * 0.5
    z[shared] = (za[shared] + zb[shared]) * 0.5
    return np.column_stack([xy, z]), nreg


def _radius_crossing(boundary: FloorBoundary, inner: np.ndarray, outer: np.ndarray, z: np.ndarray, radius: float):
    """(N, 2) points where the distance to the boundary falls to radius on each segment inner ->
    outer (inner farther than radius, outer not), by bisection; the distance is not linear along
    the segment where the nearest wall changes, so it is measured."""
    lo, hi = inner.copy(), outer.copy()
    for _ in range(_CROSSING_STEPS):
        mid = 0.5 * (lo + hi)
        far = boundary.point_distance(mid, z, radius + _CROSSING_REACH * boundary.cs) > radius
        lo[far], hi[~far] = mid[far], mid[~far]
    return lo


def _stops_at_border(
    hf: Heightfield, region: np.ndarray, a: np.ndarray, d: np.ndarray, refused: np.ndarray, height: float
) -> np.ndarray:
    """Per edge (span a, direction d): does the column across hold a span of a's region, or, where
    `refused` (a missing link whose floor end was not found), a span of any region whose floor lies
    within `height` of a's? Spans are sorted by column, so each column's spans are one run; a
    column holds a span per storey, so the runs are short."""
    column = hf.y.astype(np.int64) * hf.width + hf.x
    nx, ny = hf.x[a] + DIR_DX[d], hf.y[a] + DIR_DY[d]
    inside = (nx >= 0) & (nx < hf.width) & (ny >= 0) & (ny < hf.height)
    query = ny.astype(np.int64) * hf.width + nx
    first = np.searchsorted(column, query, "left")
    count = np.where(inside, np.searchsorted(column, query, "right") - first, 0)
    stop = np.zeros(len(a), dtype=bool)
    for k in range(int(count.max(initial=0))):
        span = np.minimum(first + k, hf.span_count - 1)
        held = (k < count) & (region[span] >= 0)
        stop |= held & ((region[span] == region[a]) | (refused & (np.abs(hf.z[span] - hf.z[a]) < height)))
    return stop


def _square_corners(
    hf: Heightfield,
    edges: _Edges,
    rings: list[np.ndarray],
    points: np.ndarray,
    labels: np.ndarray,
    boundary: FloorBoundary,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per ring (boundary edge ids), its points with the sharp corner restored where two straight
    walls meet in one cell.

    Marching squares cuts such a corner by a chamfer; the offset of a convex floor corner is sharp,
    at centre + (p1 - centre) + (p2 - centre). Only where both walls run straight into the corner,
    so staircases of slanted walls are left alone, and where the edges to the corner meet no wall:
    a wall through the corners of its cells (a thin one at 45 degrees) rasterises into a staircase
    with a two-cell step here and there, whose squared corner lies on the wall's far side, and at
    radius 0 (no band to push it out of) the floor's outline crossed the wall there. Returns per
    ring the points, their labels and their boundary edges (-1 for the corners added). All rings at
    once: the boundary is measured in one call, not two per ring.
    """
    if not rings:
        return []
    size = np.array([len(ring) for ring in rings])
    first = np.repeat(np.cumsum(size) - size, size)
    local = np.arange(len(first)) - first
    n = np.repeat(size, size)

    def ahead(k: int) -> np.ndarray:
        """Each ring point's k-th successor in its own ring (k = -1: its predecessor)."""
        return first + (local + k) % n

    ring = np.concatenate(rings)
    span, d, lab, pts = edges.span[ring], edges.dir[ring], labels[ring], points[ring]
    nxt, nxt2, prev = ahead(1), ahead(2), ahead(-1)
    left_turn = (span[nxt] == span) & (d[nxt] == (d + 1) % 4)
    straight_in = d[prev] == d
    straight_out = d[nxt2] == d[nxt]
    walls = (lab < 0) & (lab[nxt] < 0) & (lab[prev] < 0) & (lab[nxt2] < 0)
    at = np.flatnonzero(left_turn & straight_in & straight_out & walls)
    centre = np.column_stack([hf.centers_xy(span[at]), hf.z[span[at]]])
    corner = pts[at] + pts[nxt[at]] - centre
    ends = np.concatenate([pts[at], pts[nxt[at]]])
    twice = np.concatenate([corner, corner])
    apart = boundary.distance(ends[:, :2], twice[:, :2], ends[:, 2], twice[:, 2])[0] > _MEETS_WALL
    clear = apart[: len(at)] & apart[len(at) :]
    at, corner = at[clear], corner[clear]
    order = np.argsort(np.concatenate([np.arange(len(ring)), at + 0.5]), kind="stable")
    inserted = np.full(len(at), -1)
    cuts = np.cumsum(size + np.bincount(np.searchsorted(np.cumsum(size), at, side="right"), minlength=len(size)))
    return list(
        zip(
            np.split(np.concatenate([pts, corner])[order], cuts[:-1]),
            np.split(np.concatenate([lab, inserted])[order], cuts[:-1]),
            np.split(np.concatenate([ring, inserted])[order], cuts[:-1]),
        )
    )


def _split_broken_borders(
    hf: Heightfield, edges: _Edges, successor: np.ndarray, points: np.ndarray, labels: np.ndarray, ring: np.ndarray
):
    """Ring points (and labels) with a wall point between two consecutive points shared with one
    region that the other region's outline does not hold in a row: where a cell of this region
    borders that region on two sides, across two of its cells that are not joined (a wall between
    them), the other side sees two borders, each ending in a wall at the corner. Taken as one
    border here, its simplified chord would cut the corner, and the two sides' borders would part.
    The point is the two points' midpoint, so the outline keeps its place. ring: each point's
    boundary edge, -1 where _square_corners added it."""
    nxt = ring_next(np.arange(len(ring)))
    pair = np.flatnonzero((labels >= 0) & (labels == labels[nxt]) & (ring >= 0) & (ring[nxt] >= 0))
    if len(pair) == 0:
        return points, labels

    def twin(e: np.ndarray) -> np.ndarray:
        return edges.find(hf.links[edges.span[e], edges.dir[e]], (edges.dir[e] + 2) % 4)

    here, there = twin(ring[pair]), twin(ring[nxt[pair]])
    # The other region walks the border the other way: its edge across the next point comes first.
    broken = pair[(here >= 0) & (there >= 0) & (successor[np.maximum(there, 0)] != here)]
    if len(broken) == 0:
        return points, labels
    middle = 0.5 * (points[broken] + points[nxt[broken]])
    order = np.argsort(np.concatenate([np.arange(len(points)), broken + 0.5]), kind="stable")
    return np.concatenate([points, middle])[order], np.concatenate([labels, np.full(len(broken), -1)])[order]


def _successors(hf: Heightfield, edges: _Edges) -> np.ndarray:
    """Next boundary edge walking with the region on the left (Recast's walkContour, vectorised).

    From edge (s, d) turn left to (s, d+1); while that is not a boundary, step across it and turn
    right. Around one grid corner this resolves within four steps; -1 where the links are too
    irregular for that.
    """
    links = hf.links
    s = edges.span.copy()
    d = (edges.dir + 1) % 4
    nxt = np.full(len(s), -1, dtype=np.int64)
    pending = np.arange(len(s))
    for _ in range(4):
        e = edges.find(s[pending], d[pending])
        done = e >= 0
        nxt[pending[done]] = e[done]
        pending = pending[~done]
        if len(pending) == 0:
            break
        s[pending] = links[s[pending], d[pending]]
        d[pending] = (d[pending] + 3) % 4
    return nxt


def _cycles(successor: np.ndarray):
    """Yield each closed cycle of the successor map as an array of edge ids (open chains are skipped)."""
    seen = np.zeros(len(successor), dtype=bool)
    nxt = successor.tolist()
    for start in range(len(nxt)):
        if seen[start]:
            continue
        ring = []
        e = start
        while e >= 0 and not seen[e]:
            seen[e] = True
            ring.append(e)
            e = nxt[e]
        if e == start:
            yield np.array(ring, dtype=np.int64)
