"""The notch portal search (NEOGEN-2D): portals scored and laid on the planar graph until no
notch is left."""

from __future__ import annotations

import heapq
import math

import numpy as np

from ..geometry import NONZERO_DIVISOR, cross_vectors
from ..progress import SILENT, Progress
from .graph import _REFLEX_EPS, _SPLIT_TOL, PlanarGraph, _Target

# A portal's score is its length divided by this floor at worst, so very acute corners are avoided
# but still possible when nothing else resolves the notch.
_MIN_QUALITY = 0.1
_PARTNER_WINDOWS = 4
# Vertex candidates are tested for visibility this many at a time, nearest first.
_CAST_BATCH = 24
# Portals that resolve two notches count as this fraction of their length when ranked, portals to
# a new vertex as this multiple (a new vertex joins two cells and uses up their vertex budget).
_TWO_NOTCH_BONUS = 0.5
_STEINER_COST = 3.0
# A notch's best portal scoring worse than the queue's best by more than this is queued again.
_SCORE_TIE = 1e-12


class PortalSearch(PlanarGraph):
    """The notch portals laid on the planar graph: two-notch portals first, then the best single
    portal of every notch left (to a vertex, or to a new vertex on an edge), scored by length
    over quality."""

    def _quality(self, v: int, d: tuple[float, float], corner: tuple[int, int], at_end: tuple) -> float:
        """Smallest corner angle the portal makes, as a fraction of a right angle (at most 1)."""
        u, w = corner
        angles = [_angle_between(d, self._dir(v, u)), _angle_between(d, self._dir(v, w))]
        back = (-d[0], -d[1])
        angles += [_angle_between(back, e) for e in at_end]
        return max(min(min(angles) / (0.5 * math.pi), 1.0), _MIN_QUALITY)

    def _cone_candidates(
        self, notch: tuple[int, int, int], radius: float, two_notch_only: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vertex ids, vectors to them from the notch, lengths) of the vertices within `radius` in
        the notch's cone, nearest first; two_notch_only keeps those whose own cone may hold the way
        back (_cone_faces_back)."""
        u, v, w = notch
        a, b = self._dir(v, u), self._dir(v, w)
        near_v = self._near_vertices(v, radius)
        ids = self._vertex_ids[near_v]
        to_pts = self._vertex_xy[near_v] - self.xyz[v][:2]
        in_cone = self._in_cone(a, b, to_pts) & (ids != v) & np.any(to_pts != 0.0, axis=1)
        if two_notch_only:
            in_cone[in_cone] &= self._cone_faces_back(near_v[in_cone], to_pts[in_cone])
        cand_ids, cand_d = ids[in_cone], to_pts[in_cone]
        length = np.hypot(cand_d[:, 0], cand_d[:, 1])
        order = np.argsort(length)
        return cand_ids[order], cand_d[order], length[order]

    def _best_vertex_target(self, notch: tuple[int, int, int], radius: float) -> tuple[float, int] | None:
        """The best visible vertex within `radius` in the notch's cone as (score, vertex), or None."""
        cand_ids, cand_d, length = self._cone_candidates(notch, radius, False)
        v = notch[1]
        best = None
        # Nearest first, a batch at a time: a far vertex cannot beat a near portal already found.
        for lo in range(0, len(cand_ids), _CAST_BATCH):
            if best is not None and length[lo] * _TWO_NOTCH_BONUS >= best[0]:
                break
            batch = slice(lo, lo + _CAST_BATCH)
            visible = lo + np.flatnonzero(self._visible(v, cand_d[batch] / length[batch, None], length[batch]))
            for k in visible:
                if best is not None and length[k] * _TWO_NOTCH_BONUS >= best[0]:
                    break
                p = int(cand_ids[k])
                d = (float(cand_d[k, 0]), float(cand_d[k, 1]))
                score = self._vertex_score(notch, p, d, float(length[k]), False)
                if score is not None and (best is None or (score, p) < best):
                    best = (score, p)
        return best

    def _all_partners(
        self, notches: list[tuple[int, int, int]], progress: Progress = SILENT
    ) -> list[tuple[float, tuple[int, int, int], int]]:
        """(score, notch, vertex) of every portal that resolves two notches: each notch against the
        vertices in its cone whose own cone may hold the way back, within a few search windows (a
        long portal rarely beats two short ones), or all of them in a small region. The views of
        all notches are tested in one pass (_visible_many): no portal is laid before they are."""
        if not notches:
            return []
        radius = min(_PARTNER_WINDOWS * self.window, self.extent)
        candidates = [self._cone_candidates(notch, radius, True) for notch in notches]
        sizes = [len(ids) for ids, _, _ in candidates]
        origin = np.repeat(np.array([notch[1] for notch in notches], dtype=np.int64), sizes)
        d = np.concatenate([to for _, to, _ in candidates]).reshape(-1, 2)
        length = np.concatenate([lengths for _, _, lengths in candidates])
        progress.at(0.5)
        visible = np.split(self._visible_many(origin, d / length[:, None], length), np.cumsum(sizes)[:-1])
        found = []
        for notch, (ids, to, lengths), seen in zip(notches, candidates, visible):
            for k in np.flatnonzero(seen).tolist():
                p, dk = int(ids[k]), (float(to[k, 0]), float(to[k, 1]))
                score = self._vertex_score(notch, p, dk, float(lengths[k]), two_notch_only=True)
                if score is not None:
                    found.append((score, notch, p))
        return found

    def _cone_faces_back(self, rows: np.ndarray, to_pts: np.ndarray) -> np.ndarray:
        """Per vertex row: may a portal from here resolve a notch there too? A quick filter before
        the exact test: its reflex corner's cone must hold the way back (-to_pts); vertices with
        several reflex corners pass."""
        a, b, several = self._corner_a[rows], self._corner_b[rows], self._corner_several[rows]
        d = -to_pts
        na, nb, nd = np.hypot(*a.T), np.hypot(*b.T), np.hypot(*d.T)
        tol = _SPLIT_TOL * nd
        inside = (cross_vectors(a, d) <= tol * na) & (cross_vectors(d, b) <= tol * nb)
        return (inside & (na > 0) & (nb > 0)) | several

    def _vertex_score(self, notch, p: int, d: tuple[float, float], length: float, two_notch_only: bool) -> float | None:
        """Score of the portal from the notch to vertex p along d (None if it is not wanted)."""
        u, v, w = notch
        back = (-d[0], -d[1])
        corner_p = self._corner_at(p, back)
        if corner_p is None:
            return None
        up, wp, angle_p = corner_p
        a_p, b_p = self._dir(p, up), self._dir(p, wp)
        two = angle_p > math.pi + _REFLEX_EPS and self._splits(a_p, b_p, back)
        if two_notch_only and not two:
            return None
        quality = self._quality(v, d, (u, w), (a_p, b_p))
        return length / quality * (_TWO_NOTCH_BONUS if two else 1.0)

    def _best_target(self, notch: tuple[int, int, int]) -> _Target | None:
        """The best portal from this notch on the current graph, or None if none can be laid.

        Searched within a window that widens until the best found beats anything outside it (any
        portal longer than the window scores at least _TWO_NOTCH_BONUS times the window)."""
        radius = self.window
        while True:
            best = self._best_target_within(notch, radius)
            if radius >= self.extent or (best is not None and best.score <= _TWO_NOTCH_BONUS * radius):
                return best
            radius = min(max(2 * radius, best.score / _TWO_NOTCH_BONUS if best else 0.0), self.extent)

    def _best_target_within(self, notch: tuple[int, int, int], radius: float) -> _Target | None:
        u, v, w = notch
        a, b = self._dir(v, u), self._dir(v, w)
        vx, vy = self.xyz[v][:2]
        best: _Target | None = None
        to_vertex = self._best_vertex_target(notch, radius)
        if to_vertex is not None:
            best = _Target(*to_vertex)

        # Rays into the cone: along both edge extensions, its bisector, and perpendicular to each
        # edge whose foot lies in the cone; each ends where it first meets an edge.
        near_e = self._near_edges(v, radius)
        sa, sb = self._edge_a[near_e], self._edge_b[near_e]
        na, nb = math.hypot(*a), math.hypot(*b)
        ext = np.array([[-a[0] / na, -a[1] / na], [-b[0] / nb, -b[1] / nb]])
        bis = ext[0] + ext[1]
        rays = [ext, bis[None] / max(np.hypot(*bis), NONZERO_DIVISOR)]
        e = sb - sa
        elen2 = np.maximum((e**2).sum(1), NONZERO_DIVISOR)
        t = ((vx - sa[:, 0]) * e[:, 0] + (vy - sa[:, 1]) * e[:, 1]) / elen2
        foot = sa + np.clip(t, 0.0, 1.0)[:, None] * e - (vx, vy)
        flen = np.hypot(foot[:, 0], foot[:, 1])
        ok = (t > 0) & (t < 1) & (flen > self.eps) & (flen <= radius)
        ok &= self._in_cone(a, b, foot)
        if ok.any():
            rays.append(foot[ok] / flen[ok, None])
        rays = np.concatenate(rays)
        dist, edge_row, t_hit = self._cast(v, rays, near_e)
        for k in np.argsort(dist):
            if dist[k] > radius or (best is not None and dist[k] * _STEINER_COST >= best.score):
                break
            row = int(edge_row[k])
            key = (int(self._edge_ends[row, 0]), int(self._edge_ends[row, 1]))
            if self.kind[key] == "fixed":
                continue
            pa, pb = self.xyz[key[0]][:2], self.xyz[key[1]][:2]
            edge_len = math.hypot(pb[0] - pa[0], pb[1] - pa[1])
            tk = float(t_hit[k])
            if tk * edge_len < self.snap or (1.0 - tk) * edge_len < self.snap:
                continue  # next to a vertex: the vertex candidates cover it
            d = (float(rays[k, 0] * dist[k]), float(rays[k, 1] * dist[k]))
            ed = (pb[0] - pa[0], pb[1] - pa[1])
            quality = self._quality(v, d, (u, w), (ed, (-ed[0], -ed[1])))
            score = float(dist[k]) / quality * _STEINER_COST
            if best is None or score < best.score:
                best = _Target(score, None, key, (vx + d[0], vy + d[1]), tk)
        return best

    def lay_two_notch_portals(self, progress: Progress = SILENT) -> None:
        """Portals between two notches, each inside the other's cone, best (short, fat) first."""
        pairs = sorted(self._all_partners(self.notches(), progress.span(0.0, 0.5)))
        for k, (_, notch, p) in enumerate(pairs):
            progress.at(0.5 + 0.5 * k / len(pairs))
            if not self._is_notch(notch):
                continue  # a portal laid since resolved or reshaped this corner
            # A portal laid since may have resolved the partner's corner, or block the view (the
            # cheaper test first: most pairs fail it).
            d = self._dir(notch[1], p)
            if self._vertex_score(notch, p, d, math.hypot(*d), two_notch_only=True) is not None and self._sees(
                notch[1], p
            ):
                self._lay(notch[1], _Target(0.0, p))

    def lay_single_portals(self, progress: Progress = SILENT) -> bool:
        """Resolve every remaining notch with its best portal, best first; False if one cannot be.

        Queued scores go stale as portals are laid: the best queued notch is scored afresh and laid
        only if it still beats the next one in the queue. A score taken since the last portal was
        laid is still fresh, and its target is laid without searching again."""
        queue: list[tuple[float, int, tuple[int, int, int], int, _Target | None]] = [
            (0.0, k, notch, -1, None) for k, notch in enumerate(self.notches())
        ]
        counter = len(queue)
        laid = 0
        for _ in range(8 * len(self.xyz) + 16):
            progress.at(laid / max(counter, 1))
            while queue and not self._is_notch(queue[0][2]):
                heapq.heappop(queue)
            if not queue:
                return not self._reflex
            _, order, notch, scored_at, target = heapq.heappop(queue)
            if scored_at != laid:
                target = self._best_target(notch)
                if target is None:
                    return False
                if queue and target.score > queue[0][0] + _SCORE_TIE:
                    heapq.heappush(queue, (target.score, order, notch, laid, target))
                    continue
            assert target is not None  # a score taken since the last portal comes with its target
            for x in self._lay(notch[1], target):
                for corner in self._reflex.get(x, ()):
                    heapq.heappush(queue, (0.0, counter, corner, -1, None))
                    counter += 1
            laid += 1
        return False


def _angle_between(d: tuple[float, float], e: tuple[float, float]) -> float:
    return abs(math.atan2(d[0] * e[1] - d[1] * e[0], d[0] * e[0] + d[1] * e[1]))
