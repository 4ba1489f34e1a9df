"""Contour stage: regions -> simplified outlines with holes (Recast: rcBuildContours).

build_contours runs the stage's steps, one module each: trace (cell edges to traced rings),
simplify (rings within the edge error), holes (wall-only holes with few corners), push (wall edges
off the agent's band, without crossing another ring), pinches (points that nearly touch another
edge moved to where the band is), slits (a ring's corners between edges back to back dropped),
seams (two regions' walls back to back joined) and rings (the ring geometry and repair they share).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..boundary import FloorBoundary
from ..components import connected_components
from ..geometry import STEP_NOISE, ring_edges_split, ring_next, ring_prev, signed_area
from ..heightfield import Heightfield
from ..params import BakeParams
from ..progress import SILENT, Progress
from ..regions import RegionMap
from .corners import fewer_corners
from .holes import _HOLE_REACH, _enclosing_hole
from .pinches import dropped_pockets, widen_pinches
from .push import _away_from_walls, _push_rings, _reach, _RingBoxes, push_first_options
from .rings import (
    _cut_necks,
    _dedupe,
    _hole_inside,
    _keys,
    _split_at_crossings,
    _split_at_touches,
    _touches_itself,
)
from .seams import joined_alongside, joined_back_to_back
from .simplify import _rdp, _section, _simplify, borders_in_the_way
from .slits import closed_slits
from .trace import _boundary_edges, _cycles, _edge_points, _split_broken_borders, _square_corners, _successors


@dataclass
class RegionOutline:
    """One region's outline in the soup's local frame.

    rings[0] is the outer boundary, counter-clockwise seen from +Z; rings[1:] are holes, clockwise.
    Each ring is (n, 3) float64, not closed (the last point does not repeat the first).
    ring_neighbors[k][i] is the region across edge i -> i+1 of ring k, or -1 for a wall/ledge.
    Where two regions meet, both outlines hold bitwise-identical vertices along the shared border,
    in opposite order, so polygons built from them weld without T-junctions.
    """

    region: int
    area: int
    rings: list[np.ndarray]
    ring_neighbors: list[np.ndarray]
    # The rings that could not be pushed off the walls and keep a traced outline that reaches into
    # the agent's band.
    unpushed: tuple[np.ndarray, ...] = ()


class _RegionRing(NamedTuple):
    """A simplified ring of a region, with what the push falls back on.

    option: (points, per-edge neighbour region, per-point shared flag), the outline tried first.
    wall_hole: the traced points of a hole bounded by walls only (a pillar), else None: a
    fewer-corner outline of it is tried before `option`.
    finer: callables giving the ring simplified ever finer (each (points, neighbours, shared) or
    None), tried in turn when nothing before them can be pushed off the walls.
    """

    option: tuple[np.ndarray, np.ndarray, np.ndarray]
    wall_hole: np.ndarray | None
    finer: list

    @property
    def points(self) -> np.ndarray:
        return self.option[0]


# Two regions' walls that leave one point and end this close (cells) are one edge (_far_ends_met).
_FAR_END = 0.05
# A border's end beside a wall that lies in the agent's band is moved this many cells beyond
# agent_radius from the floor's boundary (_shared_ends_off_walls): a wall edge turning about it can
# then clear the band (at the radius exactly only the tangent does, which the push approaches
# without end).
_SHARED_END_CLEARANCE = 0.05
# Wall edges of two regions that leave one point back to back closer than this many cells (and the
# agent radius) are joined into their border (seams.py).
_SEAM = 0.05
# Rings with less area than this fraction of a cell are slivers and dropped.
_MIN_RING_AREA = 1e-3
# A ring whose simplified outline cannot be pushed off the walls is simplified again with the
# tolerance divided by each of these in turn.
_FINER_STEPS = (2, 4)
# A lobe of floor smaller than region_min_area that a ring holds by a neck narrower than this many
# cells is cut off: polygons across the neck would be needles or slivers.
_NECK = 0.1
# Rounds of keeping more points of shared borders whose chords other rings cross (the second
# keeps every point of a border its first round's points did not clear).
_BORDER_PASSES = 3
# Traced points of the rings simplified together (bounds the time between progress reports).
_BATCH_POINTS = 20_000


def _simplification_tolerance(params) -> float:
    """RDP tolerance: max_edge_error less the traced outline's own sub-cell error (about cs/4), so the
    simplified outline stays within max(cell_size / 2, max_edge_error) of the true boundary."""
    return max(params.max_edge_error - params.cell_size / 4, params.cell_size / 8)


def build_contours(
    hf: Heightfield,
    region_map: RegionMap,
    params: BakeParams,
    progress: Progress = SILENT,
    boundary: FloorBoundary | None = None,
) -> list[RegionOutline]:
    """Trace, place (sub-cell, marching squares) and simplify the outline of every region.

    Each boundary edge of a region's cells gives one point: on a wall or ledge, where the linearly
    interpolated distance field crosses agent_radius between the two cell centres (at the
    heightfield's block fraction of the step when the erosion does not reach it; at bridge spans
    and the spans linked to them, where the exact distance crosses it, by bisection; at least
    trace.OFF_WALL cells off the wall whatever the radius); between two
    regions, the exact midpoint of the centres (no erosion), computed symmetrically so both sides
    agree bitwise. Wall runs are simplified with Ramer-Douglas-Peucker; shared runs keep their ends,
    and where the regions differ in area id, the points symmetric RDP keeps, the same on both sides.
    A wall edge that two regions' outlines walk both ways is made their shared border. Wall edges
    are then pushed out of the agent's band (push.py), and short edges between two notches of the
    floor dropped (corners.py). `boundary`: the heightfield's FloorBoundary when the caller has
    it (one outlining the floor again passes the first one's, whose measurements it keeps).
    """
    region = region_map.region
    if region_map.region_count == 0:
        return []
    edges = _boundary_edges(hf, region)
    if len(edges.span) == 0:
        return []
    boundary = boundary or FloorBoundary(hf, params)
    points, labels = _edge_points(hf, region_map, params, edges, boundary)
    successor = _successors(hf, edges)
    tolerance = _simplification_tolerance(params)
    traced_rings = []
    cycles = list(_cycles(successor))
    # Corners squared a batch of rings at a time: one boundary measurement per batch, with bounded
    # temporaries.
    for first, last in _batches([len(ring) for ring in cycles]):
        for ring, (ring_points, ring_labels, ring_edges) in zip(
            cycles[first:last], _square_corners(hf, edges, cycles[first:last], points, labels, boundary)
        ):
            ring_points, ring_labels = _split_broken_borders(hf, edges, successor, ring_points, ring_labels, ring_edges)
            traced_rings.append((int(region[edges.span[ring[0]]]), ring_points, ring_labels))
    # Borders between different area ids keep their shape (to the tolerance), as Recast keeps
    # RC_AREA_BORDER points: a chord between a border's ends would move the painted area.
    kept = _area_border_corners(traced_rings, region_map.region_area, tolerance)
    tracing = progress.span(0.0, 0.5)
    pieces = []
    for first, last in _batches([len(ring_points) for _, ring_points, _ in traced_rings]):
        tracing.at(first / len(traced_rings))
        pieces += _outline_pieces([ring[1:] for ring in traced_rings[first:last]], tolerance, boundary, kept)
    # A ring that cannot be simplified with its shared borders cut short to chords keeps those
    # borders' points whole, and so does the ring on the other side of them.
    whole = {
        key
        for (_, ring_points, ring_labels), ring_pieces in zip(traced_rings, pieces)
        if any(simple is None for _, _, simple in ring_pieces)
        for key in _shared_keys(ring_points, ring_labels)
    }
    if whole:
        kept = kept | whole
        _outline_again(traced_rings, pieces, whole, tolerance, boundary, kept)
    # A shared border whose chord another ring of either region crosses or lies beyond keeps
    # more of its points, in the rings on both sides of it.
    for _ in range(_BORDER_PASSES):
        by_region: dict[int, list[tuple]] = {}
        for (r, _, _), ring_pieces in zip(traced_rings, pieces):
            by_region.setdefault(r, []).extend(piece for piece in ring_pieces if piece[2] is not None)
        in_the_way = set().union(*(borders_in_the_way(rings, tolerance, kept) for rings in by_region.values()))
        if not in_the_way:
            break
        kept = kept | in_the_way
        _outline_again(traced_rings, pieces, in_the_way, tolerance, boundary, kept)
    rings_by_region: dict[int, list[_RegionRing]] = {}
    for (r, ring_points, _), ring_pieces in zip(traced_rings, pieces):
        # A trace can cross or overlap itself where its points lie at block fractions of cells: a
        # loop of a hole turning the other way, and a loop of an outer ring inside its other loops
        # (_held_twice), is floor that the region's rings already hold.
        hole = signed_area(ring_points) < 0
        twice = set() if hole else _held_twice([traced for traced, _, _ in ring_pieces])
        for k, (traced, traced_labels, simple) in enumerate(ring_pieces):
            if simple is not None and k not in twice and not (hole and signed_area(simple[0]) > 0):
                wall_hole = signed_area(simple[0]) < 0 and bool((traced_labels < 0).all())
                finer = _finer(traced, traced_labels, tolerance, kept, boundary)
                rings_by_region.setdefault(r, []).append(_RegionRing(simple, traced if wall_hole else None, finer))
    climb = float(params.agent_max_climb) + STEP_NOISE
    met = _walls_walked_both_ways_shared(_far_ends_met(rings_by_region, _FAR_END * hf.cell_size, climb), climb)
    rings_by_region = _shared_ends_off_walls(met, boundary)
    min_area = _MIN_RING_AREA * hf.cell_size**2
    outlines = []
    pushing = progress.span(0.5, 1.0)
    planning, placing = pushing.span(0.0, 0.2), pushing.span(0.2, 1.0)
    # Per outer ring of each region, its ring and holes' outlines to try, planned for every region
    # before any is placed, so the first outlines of all rings are pushed together.
    plans = []
    for done, r in enumerate(sorted(rings_by_region)):
        planning.at(done / len(rings_by_region))
        rings = [ring for ring in rings_by_region[r] if abs(signed_area(ring.points)) >= min_area]
        outers = sorted(
            (k for k, ring in enumerate(rings) if signed_area(ring.points) > 0),
            key=lambda k: signed_area(rings[k].points),
        )
        holes_of: dict[int, list[int]] = {k: [] for k in outers}
        for h in (k for k, ring in enumerate(rings) if signed_area(ring.points) < 0):
            # A hole belongs to the smallest outer ring around it.
            owner = next((k for k in outers if _hole_inside(rings[k].points, rings[h].points)), None)
            if owner is not None:
                holes_of[owner].append(h)
        for k in reversed(outers):
            members = [k] + holes_of[k]
            # Per ring, the outlines to try, best first: (points, neighbours, shared flags), and
            # then finer simplifications, made only if those fail.
            options = [[rings[m].option, *rings[m].finer] for m in members]
            placed = _RingBoxes([rings[m].points for m in members])
            for slot, h in enumerate(holes_of[k], start=1):
                traced_hole = rings[h].wall_hole
                if traced_hole is not None:
                    # The fewer-corner outline stays within tolerance of the traced one.
                    others = placed.near(traced_hole, skip=slot, margin=_HOLE_REACH * tolerance)
                    fewer = _enclosing_hole(traced_hole, len(placed.rings[slot]), tolerance, others)
                    if fewer is not None:
                        placed.replace(slot, fewer)
                        no_border = np.full(len(fewer), -1, dtype=np.int64)
                        options[slot].insert(0, (fewer, no_border, np.zeros(len(fewer), dtype=bool)))
            plans.append((done, r, options, [rings[m].option for m in members]))
    push_first_options([options for _, _, options, _ in plans], boundary)
    for done, r, options, standing in plans:
        region_part = placing.part(done, len(rings_by_region))
        chosen, neighbours, unpushed = _push_rings(options, standing, boundary, region_part)
        # A hole that pushing or settling shrank to nothing, or that the outer ring's push left
        # outside it, holds no floor of the region apart: dropped, as traced rings that small
        # are, rather than left for the polygons to find no bridge to.
        lasting = [
            j
            for j, ring in enumerate(chosen)
            if j == 0 or (abs(signed_area(ring)) >= min_area and _hole_inside(chosen[0], ring))
        ]
        chosen, neighbours = [chosen[j] for j in lasting], [neighbours[j] for j in lasting]
        chosen, neighbours = fewer_corners(chosen, neighbours, boundary, tolerance, _reach(boundary))
        neck, min_lobe = _NECK * float(params.cell_size), float(params.region_min_area)
        cut = [
            _cut_necks(ring, nb, neck, min_lobe, chosen[:j] + chosen[j + 1 :])
            for j, (ring, nb) in enumerate(zip(chosen, neighbours))
        ]
        neighbours = [nb for _, nb in cut]
        chosen = widen_pinches([ring for ring, _ in cut], neighbours, boundary, _reach(boundary))
        chosen, neighbours = map(list, zip(*map(dropped_pockets, chosen, neighbours)))
        chosen, neighbours = map(
            list,
            zip(*(_split_long_wall_edges(ring, nb, params.max_edge_len) for ring, nb in zip(chosen, neighbours))),
        )
        outlines.append(RegionOutline(r, int(region_map.region_area[r]), chosen, neighbours, unpushed=tuple(unpushed)))
    # Floors either side of a real wall lie at least twice the radius apart.
    seam = min(_SEAM * hf.cell_size, float(params.agent_radius))
    outlines = closed_slits(outlines, boundary, _reach(boundary), seam, float(params.max_edge_len))
    outlines = joined_back_to_back(outlines, seam, climb)
    outlines = joined_alongside(outlines, seam, climb)
    return _drop_small_islands(outlines, params.region_min_area)


def _walls_walked_both_ways_shared(
    rings_by_region: dict[int, list[_RegionRing]], climb: float
) -> dict[int, list[_RegionRing]]:
    """The rings with every wall edge that another region's outline walks the other way (the same
    two points, within a climb of each other in height) made a border shared with that region,
    its ends shared points. Points within _SAME_POINT are one: the two traces reach them from
    different cells, a rounding apart. Two regions whose shared border ends at a cell a wall
    barely touches both place their next point at that cell's centre, and both simplify the run
    back to the border's last point to one edge: floor on both sides, so a border, not a wall of
    no width (fuzz case 406162)."""
    walls: dict[tuple, tuple[int, int, int]] = {}
    for r, rings in rings_by_region.items():
        for j, ring in enumerate(rings):
            points, nb, _ = ring.option
            keys = _keys(points)
            for k in np.flatnonzero(nb < 0).tolist():
                walls[(keys[k], keys[(k + 1) % len(keys)])] = (r, j, k)
    found: dict[tuple[int, int], list[tuple]] = {}  # (region, ring) -> ((start, end), other region)
    for (a, b), (r, j, k) in walls.items():
        other = walls.get((b, a))
        if other is None or other[0] == r:
            continue
        points = rings_by_region[r][j].option[0]
        s, i, e = other
        there = rings_by_region[s][i].option[0]
        if (
            max(abs(points[k, 2] - there[(e + 1) % len(there), 2]), abs(points[(k + 1) % len(points), 2] - there[e, 2]))
            <= climb
        ):
            found.setdefault((r, j), []).append(((a, b), s))

    def as_border(option, edges):
        points, nb, shared = option
        nb, shared = nb.copy(), shared.copy()
        at = {key: k for k, key in enumerate(_keys(points))}
        keep = np.ones(len(points), dtype=bool)
        for (a, b), s in edges:
            if a not in at or b not in at:
                continue
            # A finer outline can hold points between the two (its own wall run): they go.
            start, end = at[a], at[b]
            run = (start + np.arange((end - start) % len(points))) % len(points)
            if len(run) > len(points) // 2 or shared[run[1:]].any() or (nb[run] >= 0).any():
                continue
            keep[run[1:]] = False
            nb[start] = s
            shared[[start, end]] = True
        return points[keep], nb[keep], shared[keep]

    return _edited(rings_by_region, found, as_border)


def _shared_ends_off_walls(
    rings_by_region: dict[int, list[_RegionRing]], boundary: FloorBoundary
) -> dict[int, list[_RegionRing]]:
    """The rings with each shared point next to a wall edge that lies in the agent's band moved out
    of it, to _SHARED_END_CLEARANCE cells beyond the radius, the same in every ring that holds it.
    Such a point ends a border between two regions: the midpoint of two cells' centres, a cell's
    centre, or one region's interpolation, and it can lie millimetres to centimetres inside the
    band. A shared point never moves in the push, so no push of the wall edge from it would clear,
    and the ring would fall back on finer outlines, then on settling (fuzz case 830: two walls a
    centimetre apart; 2018: a sliver between a border and the band's edge)."""
    ends: dict[tuple, np.ndarray] = {}
    for rings in rings_by_region.values():
        for ring in rings:
            points, nb, shared = ring.option
            at_wall = shared & ((nb < 0) | (ring_prev(nb) < 0))
            for key, point in zip(_keys(points[at_wall]), points[at_wall]):
                ends.setdefault(key, point)
    if not ends or boundary.radius <= 0:  # no band to leave
        return rings_by_region
    points = np.array(list(ends.values()))
    free = np.ones(len(points), dtype=bool)
    beyond = _SHARED_END_CLEARANCE * boundary.cs
    off = _away_from_walls(points[:, :2], points[:, 2], free, boundary, points[:, :2], beyond)
    moved = {key: xy for key, xy, was in zip(ends, off, points[:, :2]) if (xy != was).any()}

    def off_walls(option, _):
        points, nb, shared = option
        points = points.copy()
        for k, key in enumerate(_keys(points)):
            if key in moved:
                points[k, :2] = moved[key]
        return points, nb, shared

    holding = {
        (r, j)
        for r, rings in rings_by_region.items()
        for j, ring in enumerate(rings)
        if any(key in moved for key in _keys(ring.option[0]))
    }
    return _edited(rings_by_region, dict.fromkeys(holding), off_walls)


def _far_ends_met(
    rings_by_region: dict[int, list[_RegionRing]], reach: float, climb: float
) -> dict[int, list[_RegionRing]]:
    """The rings with the far end of a wall edge moved onto another region's, where two regions'
    walls leave one point and end within `reach` of each other, walked opposite ways: the line
    where both regions' outlines meet the eroded floor at a cell whose distance is the radius
    exactly, each end placed by its own interpolation (nav_test: 4.5 mm apart, two walls back to
    back across floor). Only a free point moves (not a region's shared one), and only the ring
    that starts the pair; _walls_walked_both_ways_shared then makes the pair their border. Both
    walls' ends lie within a climb of each other in height: a floor under a slab has its walls
    where the slab's are, seen from above (fuzz case 30233: a floor's point moved 2.4 m up onto
    the slab's, and a polygon joined the two floors)."""
    starts: dict[tuple, list[tuple[int, int, int]]] = {}  # a wall's start point -> (region, ring, edge)
    for r, rings in rings_by_region.items():
        for j, ring in enumerate(rings):
            points, nb, _ = ring.option
            keys = _keys(points)
            for k in np.flatnonzero(nb < 0).tolist():
                starts.setdefault(keys[k], []).append((r, j, k))
    moves: dict[tuple[int, int], dict[tuple, np.ndarray]] = {}  # (region, ring) -> {point: where to}
    for r, rings in rings_by_region.items():
        for ring in rings:
            points, nb, shared = ring.option
            keys = _keys(points)
            for k in np.flatnonzero(nb < 0).tolist():
                joint = (k + 1) % len(points)
                for s, i, e in starts.get(keys[joint], []):
                    other, other_shared = rings_by_region[s][i].option[0], rings_by_region[s][i].option[2]
                    far = (e + 1) % len(other)
                    gap = float(np.hypot(*(other[far, :2] - points[k, :2])))
                    level = abs(other[e, 2] - points[joint, 2]) <= climb and abs(other[far, 2] - points[k, 2]) <= climb
                    if s != r and 0 < gap <= reach and level and not other_shared[far] and not shared[k]:
                        moves.setdefault((s, i), {})[_keys(other[far : far + 1])[0]] = points[k]

    def moved(option, to):
        points, nb, shared = option
        points = points.copy()
        for k, key in enumerate(_keys(points)):
            if key in to and not shared[k]:
                points[k] = to[key]
        return points, nb, shared

    return _edited(rings_by_region, moves, moved)


def _edited(rings_by_region: dict[int, list[_RegionRing]], edits: dict, edit) -> dict[int, list[_RegionRing]]:
    """The rings with ring j of region r given option edit(its option, edits[(r, j)]), and its finer
    options edited the same way when they are made (the edits name points, not indices), the others
    as they were (the same dict when there is nothing to edit). A ring that falls back on a finer
    outline keeps the borders made with other regions: without them the two would face each other
    across floor (fuzz case 830; multi_storey at (24.6, 17.1))."""
    if not edits:
        return rings_by_region

    def finer(made, changes):
        option = made()
        return None if option is None else edit(option, changes)

    out = {r: list(rings) for r, rings in rings_by_region.items()}
    for (r, j), changes in edits.items():
        ring = out[r][j]
        out[r][j] = ring._replace(
            option=edit(ring.option, changes),
            finer=[lambda made=made, changes=changes: finer(made, changes) for made in ring.finer],
        )
    return out


def _held_twice(loops: list[np.ndarray]) -> set[int]:
    """The loops an outer ring's trace split into that turn its way (counter-clockwise) and lie
    where its larger loops already wind once around them: floor the trace holds twice where it
    overlaps itself (two cells meeting at a corner, each with its walls at the other's neighbour
    centres, both claim the square between them)."""
    if len(loops) < 2:
        return set()
    areas = [signed_area(loop) for loop in loops]
    twice = set()
    for k, loop in enumerate(loops):
        if areas[k] <= 0:
            continue
        around = sum(
            np.sign(areas[j])
            for j, other in enumerate(loops)
            if j != k and abs(areas[j]) > areas[k] and _hole_inside(other, loop)
        )
        if around >= 1:
            twice.add(k)
    return twice


def _split_long_wall_edges(ring: np.ndarray, nb: np.ndarray, max_len: float):
    """(ring, neighbours) with every wall edge (nb < 0) longer than max_len (seen from above; 0: no
    limit) cut into equal pieces by points on it (Recast's maxEdgeLen). Shared edges are left
    whole: the region across must see the same points."""
    if max_len <= 0:
        return ring, nb
    lengths = np.hypot(*(ring_next(ring[:, :2]) - ring[:, :2]).T)
    pieces = np.where(nb < 0, np.ceil(lengths / max_len), 1).astype(np.int64)
    if (pieces == 1).all():
        return ring, nb
    split, edge = ring_edges_split(ring, pieces)
    return split, nb[edge]


def _outline_again(
    traced_rings: list, pieces: list, keys: set, tolerance: float, boundary: FloorBoundary | None, kept: set
) -> None:
    """Outline again, in place in `pieces`, the traced rings (region, points, labels) holding a
    shared point in `keys`, keeping every shared point in `kept`: the rings on both sides of a
    border keep the same points."""
    again = [k for k, (_, points, labels) in enumerate(traced_rings) if keys & _shared_keys(points, labels)]
    for k, ring_pieces in zip(again, _outline_pieces([traced_rings[k][1:] for k in again], tolerance, boundary, kept)):
        pieces[k] = ring_pieces


def _outline_pieces(
    rings: list[tuple[np.ndarray, np.ndarray]],
    tolerance: float,
    boundary: FloorBoundary | None,
    whole: frozenset | set = frozenset(),
) -> list[list[tuple]]:
    """Per traced ring (points, labels), its (traced points, traced labels, simplified or None)
    pieces: the ring itself, or when it does not simplify into a simple ring, the loops it splits
    into where it touches or crosses itself. Shared points in `whole` are all kept. The rings are
    simplified together, then the loops of all the rings that split."""
    simple = _simplify(rings, tolerance, whole, boundary)
    out: list[list[tuple]] = []
    loops = []
    for (points, labels), ring_simple in zip(rings, simple):
        if ring_simple is not None and not _touches_itself(ring_simple[0]):
            out.append([(points, labels, ring_simple)])
            continue
        out.append([])
        loops += [
            (len(out) - 1, piece)
            for touching in _split_at_touches(*_dedupe(points, labels))
            for piece in _split_at_crossings(*touching)
        ]
    for (k, piece), loop_simple in zip(loops, _simplify([piece for _, piece in loops], tolerance, whole, boundary)):
        out[k].append((*piece, loop_simple))
    return out


def _batches(sizes: list[int]):
    """(first, last) index ranges over rings of these point counts, about _BATCH_POINTS points each:
    rings simplified together (one boundary measurement per generation), with progress between."""
    first, total = 0, 0
    for k, size in enumerate(sizes):
        total += size
        if total >= _BATCH_POINTS:
            yield first, k + 1
            first, total = k + 1, 0
    if first < len(sizes):
        yield first, len(sizes)


def _finer(points: np.ndarray, labels: np.ndarray, tolerance: float, whole, boundary: FloorBoundary | None):
    """Callables giving the ring simplified with the tolerance divided by each of _FINER_STEPS (None
    if it degenerates): the fallbacks when the simplified ring cannot be pushed off the walls
    without crossing another ring. Shared borders come out the same at every tolerance."""
    return [lambda f=f: _simplify([(points, labels)], tolerance / f, whole, boundary)[0] for f in _FINER_STEPS]


def _area_border_corners(
    traced_rings: list[tuple], region_area: np.ndarray, tolerance: float
) -> set[tuple[float, float]]:
    """Top-view positions of the points kept on borders between regions of different area ids:
    each such run of a traced ring simplified with symmetric Ramer-Douglas-Peucker to the tolerance.

    A run is walked from its lexicographically smaller end, so the ring on the other side, which
    holds the same points in the opposite order, keeps the same ones. Rings shared whole with one
    region keep all their corners already (_simplify) and are skipped.
    """
    kept: set[tuple[float, float]] = set()
    for r, points, labels in traced_rings:
        shared = labels >= 0
        if shared.all() and (labels == labels[0]).all():
            continue
        across = np.where(shared, region_area[np.maximum(labels, 0)], -1)
        run_start = np.flatnonzero(shared & (across != region_area[r]) & (labels != ring_prev(labels)))
        for start in run_start:
            around = _section(start, start, len(labels))[:-1]
            run = around[: int(np.argmax(labels[around] != labels[start])) or len(around)]
            if tuple(points[run[-1], :2]) < tuple(points[run[0], :2]):
                run = run[::-1]
            corners = run[_rdp([points[run]], tolerance, outside_share=1.0)[0]]
            kept.update(map(tuple, points[corners, :2].tolist()))
    return kept


def _shared_keys(points: np.ndarray, labels: np.ndarray) -> set[tuple[float, float]]:
    """The top-view positions of a ring's points on borders shared with other regions (both
    sides compute them bitwise equal)."""
    return set(map(tuple, points[labels >= 0, :2].tolist()))


def _drop_small_islands(outlines: list[RegionOutline], min_area: float) -> list[RegionOutline]:
    """Drop islands (outlines joined by shared borders) whose outlines cover less than min_area.

    The region stage already dropped islands of too few cells; placed at sub-cell precision an
    island's outline can be smaller than its cells, and what the user sees is the outline. A region
    may hold several outlines, so outlines are joined by the bitwise-identical vertices of their
    shared borders, not by region id.
    """
    owner: dict[tuple[float, float], int] = {}
    joined: list[tuple[int, int]] = []
    for i, outline in enumerate(outlines):
        for ring, nb in zip(outline.rings, outline.ring_neighbors):
            shared = np.flatnonzero(nb >= 0)
            ends = np.unique(np.concatenate([shared, (shared + 1) % len(ring)]))
            for key in map(tuple, ring[ends, :2].tolist()):
                j = owner.setdefault(key, i)
                if j != i:
                    joined.append((i, j))
    pairs = np.array(joined, dtype=np.int64).reshape(-1, 2)
    island = connected_components(len(outlines), pairs[:, 0], pairs[:, 1])
    areas = [sum(signed_area(ring) for ring in outline.rings) for outline in outlines]
    island_area = np.bincount(island, weights=areas, minlength=len(outlines))
    return [o for o, k in zip(outlines, island.tolist()) if island_area[k] >= min_area]
