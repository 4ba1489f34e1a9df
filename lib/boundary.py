"""The floor's boundary (Heightfield.boundary: where the floor ends at walls and ledges), binned by
cell for the distance queries of the regions (exact erosion near the agent radius) and contours
(pushing wall edges off it)."""

from __future__ import annotations

import numpy as np

from .components import run_positions, sorted_starts
from .geometry import point_segment_distance, segment_distance
from .heightfield import DIR_DX, DIR_DY, Heightfield
from .params import BakeParams
from .progress import SILENT, Progress


class FloorBoundary:
    """The floor's boundary segments (Heightfield.boundary), binned by cell, for clearance tests."""

    def __init__(self, hf: Heightfield, params: BakeParams):
        seg = hf.boundary if hf.boundary is not None else model_boundary(hf)
        self.cs, self.bmin = hf.cell_size, hf.bmin
        self.radius = float(params.agent_radius)
        # Boundary seen from a floor more than this far below or above belongs to another storey.
        self.storey = 0.5 * float(params.agent_height)
        # Bins cover the grid and a margin of _BIN_PAD cells around it.
        self.cols, self.rows = hf.width + 2 * _BIN_PAD, hf.height + 2 * _BIN_PAD
        key = self._bin(0.5 * (seg[:, :2] + seg[:, 2:4]))
        order = np.argsort(key, kind="stable")
        # The segments (x0, y0, x1, y1, z) stored a column after another, each contiguous, and
        # their directions and squared lengths (1 for a point, as geometry's point_segment_distance
        # takes them): point_distance gathers them per (point, segment) pair, several times faster
        # than rows. self.seg is the (G, 5) view of the columns, for the rows edges are measured by.
        self.columns = np.empty((5, len(seg)), dtype=seg.dtype)
        for column, values in enumerate(self.columns):  # no (G, 5) copy besides hf.boundary
            values[:] = seg[order, column]
        self.seg = self.columns.T
        self.abx, self.aby = self.columns[2] - self.columns[0], self.columns[3] - self.columns[1]
        length_sq = self.abx * self.abx + self.aby * self.aby
        self.length_sq = np.where(length_sq > 0, length_sq, 1.0)
        # A segment within some distance of a point or edge has its midpoint within that distance
        # plus the longest half segment of it.
        # Per segment, its half length and midpoint, for distance()'s first cut of its candidates
        # (gathered per candidate pair, the same floats as measured on the pair's row).
        self.half = _half_lengths(self.seg)
        self.longest_half = float(self.half.max(initial=0.0))
        self.mid_x = 0.5 * (self.columns[0] + self.columns[2])
        self.mid_y = 0.5 * (self.columns[1] + self.columns[3])
        # Bin b's segments are self.seg[start[b]:start[b + 1]]. One entry per bin (the grid's size),
        # so int32 while segment ids fit.
        self.start = sorted_starts(key[order], self.cols * self.rows)
        # (distance, where) of every edge distance() measured, by the bytes of its p, q, zp, zq.
        self._measured: dict[bytes, tuple[float, float]] = {}
        # Results of the contour stage's pushes and settlings of a ring (contours.push), by the bytes
        # of their inputs: a ring no push clears is settled alone, then again to make room or merge,
        # and the stage runs twice when bridges are closed (pipeline._outlines), on the same rings.
        self.memo: dict[tuple, tuple] = {}

    def _cell(self, xy: np.ndarray) -> np.ndarray:
        return np.clip(
            np.floor((xy - self.bmin) / self.cs).astype(np.int64) + _BIN_PAD, 0, [self.cols - 1, self.rows - 1]
        )

    def _column(self, x: np.ndarray) -> np.ndarray:
        """The bin column of each x: _cell's first coordinate, without its second."""
        return np.clip(np.floor((x - self.bmin[0]) / self.cs).astype(np.int64) + _BIN_PAD, 0, self.cols - 1)

    def _bin(self, xy: np.ndarray) -> np.ndarray:
        c = self._cell(xy)
        return c[:, 1] * self.cols + c[:, 0]

    def faces_passage(
        self, p: np.ndarray, q: np.ndarray, zp: np.ndarray, zq: np.ndarray, reach: float, slant: float = 0.0
    ) -> np.ndarray:
        """(E,) bool: does the boundary of its storey lie in front of each edge p-q (E, 2), within
        agent_radius of the edge moved `reach` radii onto its walkable (left) side, straight ahead
        or turned by `slant` (radians) either way?"""
        edge = q - p
        left = np.column_stack([-edge[:, 1], edge[:, 0]]) / np.hypot(*edge.T)[:, None]
        angles = (0.0, slant, -slant) if slant else (0.0,)
        shifts = []
        for angle in angles:
            c, s = np.cos(angle), np.sin(angle)
            turned = np.column_stack([c * left[:, 0] - s * left[:, 1], s * left[:, 0] + c * left[:, 1]])
            shifts.append(reach * self.radius * turned)
        # Every way measured in one call.
        starts, ends = np.concatenate([p + shift for shift in shifts]), np.concatenate([q + shift for shift in shifts])
        ways = len(angles)
        dist = self.distance(starts, ends, np.tile(zp, ways), np.tile(zq, ways))[0]
        return (dist.reshape(ways, len(p)) < self.radius).any(axis=0)

    def point_distance(self, xy: np.ndarray, z: np.ndarray, limit: float, progress: Progress = SILENT) -> np.ndarray:
        """(N,) top-view distance of each point xy (N, 2) at floor height z (N,) to the boundary of its
        storey, exact up to `limit` (m) and `limit` beyond it."""
        best = np.full(len(xy), float(limit))
        if len(xy) == 0 or len(self.seg) == 0:
            return best
        for start in range(0, len(xy), _POINT_BATCH):
            progress.at(start / len(xy))
            part = slice(start, start + _POINT_BATCH)
            best[part] = self._point_distance(xy[part], z[part], best[part])
        return best

    def _point_distance(self, xy: np.ndarray, z: np.ndarray, best: np.ndarray) -> np.ndarray:
        """point_distance for one batch: best (N,) lowered to the nearest segment of each point's
        storey among those whose midpoint lies within best plus the longest half segment: per row
        of bins, the run of segments in the bins across the disc of that radius."""
        reach = best + self.longest_half + _NEAR_SLACK
        lo, hi = self._cell(xy - reach[:, None]), self._cell(xy + reach[:, None])
        rows = hi[:, 1] - lo[:, 1] + 1
        point = np.repeat(np.arange(len(xy)), rows)
        cj = lo[point, 1] + run_positions(rows)
        # The row's y range (the edge rows also hold the midpoints beyond the grid) and the half
        # width of the disc within it.
        y0 = np.where(cj > 0, self.bmin[1] + (cj - _BIN_PAD) * self.cs, -np.inf)
        y1 = np.where(cj < self.rows - 1, self.bmin[1] + (cj + 1 - _BIN_PAD) * self.cs, np.inf)
        x, y = xy[:, 0].take(point), xy[:, 1].take(point)
        gap = np.maximum(np.maximum(y0 - y, y - y1), 0.0)
        half = np.sqrt(np.maximum(reach.take(point) ** 2 - gap**2, 0.0)) + _NEAR_SLACK
        ci_lo, ci_hi = self._column(x - half), self._column(x + half)
        first = self.start[cj * self.cols + ci_lo]
        count = self.start[cj * self.cols + ci_hi + 1] - first
        point = np.repeat(point, count)
        if len(point) == 0:
            return best
        seg = np.repeat(first, count) + run_positions(count)
        dx, dy = self._offsets(xy[:, 0].take(point), xy[:, 1].take(point), seg)
        # Only pairs that can lower best get their distance measured (np.hypot is most of the
        # cost): a pair whose squared offset exceeds best's square by more than float noise lies
        # farther than best, and one of another storey does not count.
        within_sq = (best * (1.0 + _SQUARE_NOISE)) ** 2
        near = (dx * dx + dy * dy <= within_sq.take(point)) & (
            np.abs(z.take(point) - self.columns[4].take(seg)) < self.storey
        )
        point = point[near]
        if len(point) == 0:
            return best
        dist = np.hypot(dx[near], dy[near])
        # Pairs come grouped by point, in point order.
        head = np.flatnonzero(_run_starts(point))
        best[point[head]] = np.minimum(best[point[head]], np.minimum.reduceat(dist, head))
        return best

    def _offsets(self, x: np.ndarray, y: np.ndarray, seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dx, dy): from the closest point of each segment (P,) to each point x, y (P,), whose
        np.hypot is their distance: geometry.point_segment_distance's arithmetic, step for step
        (the same floats)."""
        abx, aby = self.abx.take(seg), self.aby.take(seg)
        rx, ry = x - self.columns[0].take(seg), y - self.columns[1].take(seg)
        t = np.clip((rx * abx + ry * aby) / self.length_sq.take(seg), 0.0, 1.0)
        return rx - t * abx, ry - t * aby

    def distance(self, p: np.ndarray, q: np.ndarray, zp: np.ndarray, zq: np.ndarray):
        """(E,) least top-view distance of each edge p-q (E, 2) to boundary segments of its storey,
        and (E,) where along the edge (0..1) it is reached. Exact where it is below agent_radius;
        elsewhere not below it (inf where no segment is near), which is all the callers ask.

        Edges measured before are not measured again: the contours measure a ring's edges once
        per push pass, and most edges stay where they were between passes."""
        keys = [row.tobytes() for row in np.column_stack([p, q, zp, zq])]
        known = [self._measured.get(key) for key in keys]
        new = np.array([k is None for k in known], dtype=bool).reshape(-1)
        best, where = np.array([k or (0.0, 0.0) for k in known], dtype=np.float64).reshape(-1, 2).T.copy()
        unknown = np.flatnonzero(new)
        # A batch of edges at a time: an edge has some hundred candidate segments, each pair a few
        # arrays' rows.
        for start in range(0, len(unknown), _EDGE_BATCH):
            part = unknown[start : start + _EDGE_BATCH]
            best[part], where[part] = self._measure(p[part], q[part], zp[part], zq[part])
        for k in unknown.tolist():
            self._measured[keys[k]] = (float(best[k]), float(where[k]))
        return best, where

    def _measure(self, p: np.ndarray, q: np.ndarray, zp: np.ndarray, zq: np.ndarray):
        """distance() of edges not measured before: the candidates near each edge, measured exactly."""
        e = len(p)
        best, where = np.full(e, np.inf), np.zeros(e)
        if e == 0 or len(self.seg) == 0:
            return best, where
        edge, seg = self._segments_near(p, q)
        # A segment whose midpoint is farther than agent_radius plus its half length from the edge
        # is farther than agent_radius all along: only the rest is measured exactly.
        # (Rows are gathered with take: several times faster than indexing on these pair arrays.)
        a, b = p.take(edge, axis=0), q.take(edge, axis=0)
        mid = np.column_stack([self.mid_x.take(seg), self.mid_y.take(seg)])
        close = point_segment_distance(mid, a, b)[0] < self.radius + self.half.take(seg) + _MID_SLACK
        keep = np.flatnonzero(close)
        if len(keep) == 0:
            return best, where
        edge, a, b, seg = edge.take(keep), a.take(keep, axis=0), b.take(keep, axis=0), seg.take(keep)
        x0, y0, x1, y1, z = (column.take(seg) for column in self.columns)
        dist, t = segment_distance(a, b, np.column_stack([x0, y0]), np.column_stack([x1, y1]))
        same = np.abs(zp[edge] + t * (zq[edge] - zp[edge]) - z) < self.storey
        dist = np.where(same, dist, np.inf)
        # Pairs come grouped by edge, in edge order: per edge the least distance and, of the pairs
        # reaching it, the first one's place along the edge.
        starts = _run_starts(edge)
        head, group = np.flatnonzero(starts), np.cumsum(starts) - 1
        least = np.minimum.reduceat(dist, head)
        first_least = np.flatnonzero(dist == least[group])
        first_least = first_least[_run_starts(group[first_least])]
        best[edge[head]], where[edge[head]] = least, t[first_least]
        return best, where

    def overreach(self, p: np.ndarray, q: np.ndarray, zp: np.ndarray, zq: np.ndarray):
        """(E,) how far boundary segments of its storey that cross each edge p-q (E, 2) reach past
        it onto its left (walkable) side, measured square to the edge and within its length (0
        where none does), and (E,) where along the edge (0..1) the deepest reach is. An outline
        edge cut short of a wall's end passes a wall through the floor, at any radius."""
        depth, where = np.zeros(len(p)), np.zeros(len(p))
        if len(p) == 0 or len(self.seg) == 0:
            return depth, where
        edge, seg = self._segments_near(p, q)
        if len(edge) == 0:
            return depth, where
        a, b, s = p[edge], q[edge], self.seg[seg]
        dist, t = segment_distance(a, b, s[:, :2], s[:, 2:4])
        same = np.abs(zp[edge] + t * (zq[edge] - zp[edge]) - s[:, 4]) < self.storey
        length = np.hypot(*(b - a).T)
        along_unit = (b - a) / np.maximum(length, _MID_SLACK)[:, None]
        left_unit = np.column_stack([-along_unit[:, 1], along_unit[:, 0]])
        # The segment's end on the left, and the piece of the segment from the crossing towards it
        # cut where it leaves the strip square to the edge (along 0..length).
        ends = [s[:, :2] - a, s[:, 2:4] - a]
        across = [np.einsum("ij,ij->i", end, left_unit) for end in ends]
        tip = np.where((across[0] > across[1])[:, None], ends[0], ends[1])
        tip_across = np.maximum(across[0], across[1])
        tip_along = np.einsum("ij,ij->i", tip, along_unit)
        cross_along = t * length
        with np.errstate(divide="ignore", invalid="ignore"):
            beyond = np.where(tip_along > length, length, 0.0)
            kept = np.where(
                (tip_along > length) | (tip_along < 0), (beyond - cross_along) / (tip_along - cross_along), 1.0
            )
        reach = np.where((dist == 0) & same & (tip_across > 0), kept * tip_across, 0.0)
        at = (cross_along + kept * (tip_along - cross_along)) / np.maximum(length, _MID_SLACK)
        deepest = np.lexsort((-reach, edge))
        first = deepest[_run_starts(edge[deepest])]
        depth[edge[first]], where[edge[first]] = reach[first], np.clip(at[first], 0.0, 1.0)
        return depth, where

    def segments_near(self, p: np.ndarray, q: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
        """(edge, segment) pairs, grouped by edge: a superset of the segments (rows of self.seg)
        that come within `reach` (m) of each edge p-q (E, 2), whatever their storey."""
        return self._segments_near(p, q, reach)

    def _segments_near(self, p: np.ndarray, q: np.ndarray, reach: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(edge, segment) pairs, grouped by edge in edge order and in segment order within an edge:
        a superset of the segments whose midpoint lies within `reach` (agent_radius if None) plus the
        longest half segment of each edge p-q (E, 2). Segments are binned by the cell of their
        midpoint, so per row of bins the candidates are the bins the edge passes near in that row,
        one run of self.seg, without looking at each bin."""
        near = (self.radius if reach is None else reach) + self.longest_half + _NEAR_SLACK
        lo, hi = self._cell(np.minimum(p, q) - near), self._cell(np.maximum(p, q) + near)
        rows = hi[:, 1] - lo[:, 1] + 1
        edge = np.repeat(np.arange(len(p)), rows)
        cj = lo[edge, 1] + run_positions(rows)
        # The part of the edge whose y comes within `near` of the row (the edge rows also hold the
        # midpoints beyond the grid), and its x range widened by `near`.
        y0 = np.where(cj > 0, self.bmin[1] + (cj - _BIN_PAD) * self.cs - near, -np.inf)
        y1 = np.where(cj < self.rows - 1, self.bmin[1] + (cj + 1 - _BIN_PAD) * self.cs + near, np.inf)
        a, b = p[edge], q[edge]
        dy = b[:, 1] - a[:, 1]
        flat = dy == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            t0, t1 = (y0 - a[:, 1]) / dy, (y1 - a[:, 1]) / dy
        t_lo = np.where(flat, 0.0, np.clip(np.minimum(t0, t1), 0.0, 1.0))
        t_hi = np.where(flat, 1.0, np.clip(np.maximum(t0, t1), 0.0, 1.0))
        x_a = a[:, 0] + t_lo * (b[:, 0] - a[:, 0])
        x_b = a[:, 0] + t_hi * (b[:, 0] - a[:, 0])
        ci_lo = np.floor((np.minimum(x_a, x_b) - near - self.bmin[0]) / self.cs).astype(np.int64) + _BIN_PAD
        ci_hi = np.floor((np.maximum(x_a, x_b) + near - self.bmin[0]) / self.cs).astype(np.int64) + _BIN_PAD
        ci_lo, ci_hi = np.clip(ci_lo, lo[edge, 0], hi[edge, 0]), np.clip(ci_hi, lo[edge, 0], hi[edge, 0])
        first = self.start[cj * self.cols + ci_lo]
        count = self.start[cj * self.cols + ci_hi + 1] - first
        edge = np.repeat(edge, count)
        return edge, np.repeat(first, count) + run_positions(count)


# Float slack (m) of the midpoint test in FloorBoundary.distance, and of the candidate searches.
_MID_SLACK = 1e-9
_NEAR_SLACK = 1e-6
# Relative float noise allowed between a squared distance summed in floats and np.hypot's (a few
# units in the last place; this is far more).
_SQUARE_NOISE = 1e-9
# Points measured at once by point_distance, and edges by distance (their pair arrays stay within
# a few MB).
_EDGE_BATCH = 256
_POINT_BATCH = 1024
# Boundary bins extend this many cells beyond the grid (segments on its far edges).
_BIN_PAD = 2


def _half_lengths(seg: np.ndarray) -> np.ndarray:
    """Half the top-view length of each segment (rows x0, y0, x1, y1, z)."""
    return 0.5 * np.hypot(*(seg[:, 2:4] - seg[:, :2]).T)


def _run_starts(keys: np.ndarray) -> np.ndarray:
    """(N,) bool: where each run of equal consecutive keys begins (np.r_ costs tens of
    microseconds a call, and the contours measure a few edges at a time, thousands of times)."""
    starts = np.empty(len(keys), dtype=bool)
    starts[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=starts[1:])
    return starts


def model_boundary(hf: Heightfield) -> np.ndarray:
    """(G, 5) boundary segments from the block fractions alone (hand-built heightfields), as
    regions.distance_field places them: cell-wide across the step where found, else a point."""
    span, d = np.nonzero(hf.links < 0)
    step = np.column_stack([DIR_DX[d], DIR_DY[d]]).astype(np.float64)
    fraction, found = hf.link_end(span, d)
    mid = hf.centers_xy(span) + (fraction * hf.cell_size)[:, None] * step
    half = np.where(found, 0.5 * hf.cell_size, 0.0)[:, None] * step[:, ::-1]
    return np.column_stack([mid - half, mid + half, hf.z[span]])
