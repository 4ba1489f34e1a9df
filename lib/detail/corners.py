"""Polygon corners moved onto their floor: the nearest floor sample of their polygon or region."""

from __future__ import annotations

import numpy as np

from ..geometry import closest_on_triangles
from ..heightfield import Heightfield
from ..heightfield.walk import floor_under
from ..navmesh import PolyMesh
from .samples import ON_TRIANGLE, span_points

# A polygon vertex's height is checked against its region's floor samples this many cells around it.
_VERTEX_REACH = 2
# A corner whose floor came from a sample whose triangle does not hold it looks for one that does
# in the columns this many cells around its own (its own column can be a wall's, fuzz case 448748).
_LOOSE_REACH = 1
# Floor samples whose columns _floor_near looks up at once (bounds its temporaries).
_POINTS_PER_CHUNK = 1 << 18


def _vertices_on_floor(
    mesh: PolyMesh,
    sample_poly: np.ndarray,
    sample_span: np.ndarray,
    hf: Heightfield,
    layer_tol: float,
    tol: float,
    span_region: np.ndarray | None = None,
) -> np.ndarray:
    """The vertices, each moved up or down onto its polygons' floor where it is more than tol off it.

    Outline points take their height between two column centres and keep it when simplification
    or the push off walls moves them across a slope, and a vertex added on a long edge (a portal's
    end) takes it along the edge, across a crease: any of these can float above the floor or sink
    below it. The floor at a vertex is that of the nearest sample of its polygon within
    _VERTEX_REACH cells, carried over along that sample's slope but not past its triangle's
    lowest or highest point. A vertex whose polygon holds no sample that near (a thin polygon
    between cell centres, at the foot of a stair) takes the nearest span of the polygon's region
    within layer_tol (half the agent height) of the vertex: a region can hold another floor in the
    next column, at least an agent height away, but a vertex pushed across a steep slope can be
    more than a climb step off its own. The nearest span, not the nearest other polygon's sample:
    on a stair of one-cell steps that sample can be two steps up while the step under the vertex
    is a span no polygon samples (its column centre on an edge). Where the column under the vertex
    holds a span of the region within layer_tol of the floor found, and that span's triangle holds
    the vertex, that span's floor is taken: under a thin polygon across steps a few cells deep, the
    nearest sample can be a step away. Samples whose triangle holds the vertex come first: the
    slope of another, carried past the triangle's side, can pass over a floor a step lower.
    A vertex of several polygons takes the floor found from a sample whose triangle holds it, if
    any, and of those from the sample nearest it: at a crease
    between two slopes, each polygon's nearest sample can lie on its own slope, and carried along
    that slope the farther one can be a tenth of a metre off the floor under the vertex. A vertex
    with none of these near takes its polygons' (or their regions') nearest samples, however far.
    Last, a corner whose floor came from a sample whose triangle does not hold it takes the floor
    of a span in or beside its column whose triangle does, if there is one (`_floor_under_loose_corners`)."""
    vertex = mesh.poly_vertices
    poly = mesh.edge_polygon
    xyz = mesh.vertices[vertex]
    # Keyed by polygon, _floor_near takes only the vertex's own polygon's samples, at any height.
    floor, away, held = _floor_near(hf, xyz, poly, sample_poly, sample_span, np.inf)
    missing = np.flatnonzero(np.isnan(floor))
    if len(missing):
        if span_region is not None:
            point_region, span = _region_spans(hf, span_region, xyz[missing])
        else:
            point_region, span = mesh.regions[sample_poly], sample_span
        floor[missing], away[missing], held[missing] = _floor_near(
            hf, xyz[missing], mesh.regions[poly[missing]], point_region, span, layer_tol
        )
        # A vertex the push off the walls moved far along a ramp can be more than layer_tol off
        # every span of its region near it, and have no polygon sample near: the span nearest its
        # height is its floor (in most columns a region has one storey; leaving the vertex where it
        # is would be off them all).
        lost = missing[_floorless(vertex, floor)[missing]]
        if len(lost):
            floor[lost], away[lost], held[lost] = _floor_near(
                hf, xyz[lost], mesh.regions[poly[lost]], point_region, span, np.inf, by_height=True
            )
    _floor_of_far_corners(
        hf,
        xyz,
        vertex,
        poly,
        mesh.regions[poly],
        sample_poly,
        mesh.regions[sample_poly],
        sample_span,
        (floor, away, held),
    )
    if span_region is not None:
        # Where the column under the vertex holds a span of its region near that floor, the
        # floor is that span's: a polygon's nearest sample can lie a step away on a stair whose
        # steps are a few cells deep, under a thin polygon crossing several.
        point_region, span = _region_spans(hf, span_region, xyz, reach=0)
        near = np.column_stack([xyz[:, :2], np.where(np.isnan(floor), xyz[:, 2], floor)])
        own, own_away, own_held = _floor_near(
            hf, near, mesh.regions[poly], point_region, span, layer_tol, by_height=True, reach=0, holding=True
        )
        none = np.isnan(own)
        floor, away, held = np.where(none, floor, own), np.where(none, away, own_away), np.where(none, held, own_held)
    _floor_under_loose_corners(hf, xyz, (floor, away, held), layer_tol)
    vertices = np.array(mesh.vertices)
    off = np.abs(floor - vertices[vertex, 2])
    # A vertex of several polygons takes the floor of a sample whose triangle holds it, the nearest
    # (then closest to its height).
    by_vertex = np.lexsort((np.nan_to_num(off, nan=np.inf), away, ~held, vertex))
    first = by_vertex[np.concatenate([[True], vertex[by_vertex[1:]] != vertex[by_vertex[:-1]]])]
    # A floor found on a triangle that holds the vertex (or reached from one, floor_under) is the
    # floor under it exactly: taken however near; another only where the vertex is more than tol off.
    move = first[(off[first] > tol) | held[first]]
    vertices[vertex[move], 2] = floor[move]
    return vertices


def _floor_under_loose_corners(
    hf: Heightfield, xyz: np.ndarray, found_floor: tuple[np.ndarray, np.ndarray, np.ndarray], layer_tol: float
) -> None:
    """Updates found_floor, _floor_near's (floor, away, held) per polygon corner, where the floor
    found came from a sample whose triangle does not hold the corner: the floor is that of a span
    within _LOOSE_REACH columns whose triangle holds it, of any region, nearest in height within
    layer_tol (then nearest seen from above). A polygon across a step within climb, whose only
    samples lie on the upper floor, would lift a corner over the lower one by the step (with cells
    wider than the agent radius, the column under an outline corner is often eroded out of every
    region; beside a wall it can hold no floor at all)."""
    floor, away, held = found_floor
    loose = np.flatnonzero(~held & ~np.isnan(floor))
    if len(loose) == 0:
        return
    one_region = np.zeros(hf.span_count, dtype=np.int32)  # every span, whatever its region
    point_region, span = _region_spans(hf, one_region, xyz[loose], reach=_LOOSE_REACH)
    near = np.column_stack([xyz[loose, :2], floor[loose]])
    key = np.zeros(len(loose), dtype=np.int64)
    under = _floor_near(hf, near, key, point_region, span, layer_tol, by_height=True, reach=_LOOSE_REACH, holding=True)[
        0
    ]
    found = ~np.isnan(under)
    floor[loose[found]] = under[found]
    away[loose[found]] = 0.0
    held[loose[found]] = True
    # Off every floor triangle near (an outline simplified past the floor's edge): the floor at the
    # nearest point of the triangle nearest in height, not its slope carried past its side, which
    # across a thin steep triangle runs away from the floor (fuzz case 605321: a corner 9 cm off a
    # triangle sloping 40 degrees came 7 cm off the floor, over the 6.5 cm height error).
    off = loose[~found]
    if len(off):
        edge = _floor_near(
            hf,
            near[~found],
            key[~found],
            point_region,
            span,
            layer_tol,
            by_height=True,
            reach=_LOOSE_REACH,
            nearest_point=True,
        )
        known = ~np.isnan(edge[0])
        floor[off[known]], away[off[known]] = edge[0][known], edge[1][known]


def _floorless(vertex: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Per polygon corner: has no corner of its vertex found a floor (floor NaN at all of them)?"""
    found = np.zeros(int(vertex.max(initial=-1)) + 1, dtype=bool)
    found[vertex[~np.isnan(floor)]] = True
    return ~found[vertex]


def _floor_of_far_corners(
    hf: Heightfield,
    xyz: np.ndarray,
    vertex: np.ndarray,
    poly: np.ndarray,
    corner_region: np.ndarray,
    sample_poly: np.ndarray,
    sample_region: np.ndarray,
    sample_span: np.ndarray,
    found_floor: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Fills found_floor, _floor_near's (floor, away, held) per polygon corner, for the
    vertices none of whose corners found a floor within _VERTEX_REACH cells: from the nearest sample
    of the corner's polygon, or where it has none of its region's, however far (a vertex at the far
    end of a polygon thin as a needle, between wall points on two slopes, would keep a height taken
    along a wall edge across both)."""
    floor, away, held = found_floor
    for k in np.flatnonzero(_floorless(vertex, floor)).tolist():
        lo, hi = np.searchsorted(sample_poly, [poly[k], poly[k] + 1])
        own = np.arange(lo, hi) if lo < hi else np.flatnonzero(sample_region == corner_region[k])
        if len(own) == 0:
            continue
        reach = (
            int(np.ceil(np.hypot(*(span_points(hf, sample_span[own])[:, :2] - xyz[k, :2]).T).min() / hf.cell_size)) + 1
        )
        one_key = np.zeros(len(own), dtype=np.int64)
        nearest = _floor_near(hf, xyz[k : k + 1], one_key[:1], one_key, sample_span[own], np.inf, reach=reach)
        floor[k], away[k], held[k] = nearest[0][0], nearest[1][0], nearest[2][0]


def _region_spans(
    hf: Heightfield, span_region: np.ndarray, xyz: np.ndarray, reach: int = _VERTEX_REACH
) -> tuple[np.ndarray, np.ndarray]:
    """(their regions, their span ids) of the spans in a region within `reach` cells of any of the
    points: the only ones _floor_near looks at (so the spans handed to it stay few on a large level)."""
    near = np.zeros((hf.height, hf.width), dtype=bool)
    _, i, j, inside = _window(hf, xyz, reach)
    near[j[inside], i[inside]] = True
    span = np.flatnonzero((span_region >= 0) & near[hf.y, hf.x])
    return span_region[span], span


def _window(
    hf: Heightfield, xyz: np.ndarray, reach: int = _VERTEX_REACH
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(slot, i, j, inside): every grid column (i, j) within `reach` cells of each point xyz[slot],
    and whether it lies on the grid."""
    base = np.floor((xyz[:, :2] - hf.bmin[:2]) / hf.cell_size).astype(np.int64)
    k = np.arange(-reach, reach + 1)
    di, dj = (a.ravel() for a in np.meshgrid(k, k))
    slot = np.repeat(np.arange(len(xyz)), len(di))
    i, j = base[slot, 0] + np.tile(di, len(xyz)), base[slot, 1] + np.tile(dj, len(xyz))
    return slot, i, j, (i >= 0) & (i < hf.width) & (j >= 0) & (j < hf.height)


def _floor_near(
    hf: Heightfield,
    xyz: np.ndarray,
    region: np.ndarray,
    point_region: np.ndarray,
    point_span: np.ndarray,
    layer_tol: float,
    by_height: bool = False,
    reach: int = _VERTEX_REACH,
    holding: bool = False,
    nearest_point: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N,) the floor height under each of xyz (N, 3) from the nearest of the spans `point_span`
    (floor samples: their column centres at their floor's height, lib.detail.samples.span_points,
    at most one per column and key) with the same key (`region`, `point_region`:
    a region or a polygon) within `reach` cells, carried along its span's slope but not past its
    triangle's lowest or highest point; NaN where none is that near. A point farther than
    layer_tol from the height of xyz is on another floor and skipped. Nearest is seen from above,
    samples whose triangle holds the point (seen from above) first, or by_height, in height (then
    from above); holding: only samples whose triangle holds the point; nearest_point: the floor at
    the point of the sample's triangle nearest to it, not the slope carried past its side. Also
    returns each point's distance from above to the sample taken (inf where none), and whether its
    triangle holds the point."""
    cs = hf.cell_size
    slot, i, j, hit = _window(hf, xyz, reach)
    # Only the samples in the windows' columns can match (those a cell beyond are taken too, should
    # rounding put a sample's centre across a column border): they alone are keyed and sorted, as
    # the samples are the stage's largest arrays.
    _, wide_i, wide_j, on_grid = _window(hf, xyz, reach + 1)
    wanted = np.zeros((hf.height, hf.width), dtype=bool)
    wanted[wide_j[on_grid], wide_i[on_grid]] = True
    # In chunks of points: their columns for all at once would be as large as the samples.
    found = [np.zeros(0, dtype=np.int64)]
    for start in range(0, len(point_span), _POINTS_PER_CHUNK):
        part = point_span[start : start + _POINTS_PER_CHUNK]
        found.append(start + np.flatnonzero(wanted[hf.y[part], hf.x[part]]))
    near = np.concatenate(found)
    del wide_i, wide_j, on_grid, wanted, found
    # Keyed by (key, row, column).
    near_points = span_points(hf, point_span[near])
    key = point_region[near] * hf.height + np.floor((near_points[:, 1] - hf.bmin[1]) / cs).astype(np.int64)
    key = key * hf.width + np.floor((near_points[:, 0] - hf.bmin[0]) / cs).astype(np.int64)
    order = np.argsort(key, kind="stable")  # rows of near
    key = key[order]
    query = (region[slot] * hf.height + j) * hf.width + i
    at = np.minimum(np.searchsorted(key, query), max(len(key) - 1, 0))
    hit &= (key[at] == query) if len(key) else False
    slot, point = slot[hit], order[at[hit]]
    taken = near_points[point]
    span = point_span[near[point]]
    rel = xyz[slot, :2] - taken[:, :2]
    # A sample whose triangle holds the point, seen from above, gives the floor there exactly;
    # another's slope carried past its triangle's side can pass over a lower floor.
    corners = hf.triangle_at(span)
    on = xyz[slot, :2] if corners is None else closest_on_triangles(xyz[slot, :2], corners)
    off = np.hypot(*(xyz[slot, :2] - on).T)
    z = taken[:, 2] + (((on if nearest_point else xyz[slot, :2]) - taken[:, :2]) * hf.gradient_at(span)).sum(axis=1)
    bounds = hf.surface_range_at(span)
    if bounds is not None:  # not past the sample's triangle: a ramp's slope ends at its foot
        z = np.clip(z, bounds[:, 0], bounds[:, 1])
    # Off the sample's triangle, the floor that triangle runs on into, where it reaches the point:
    # exact (a corner a cell from the sample on a soup finer than the cells lies triangles away,
    # and the slope carried there, cut at the triangle's heights, is not the floor under it). A
    # point so reached counts as held.
    on = off <= ON_TRIANGLE
    beyond = np.flatnonzero(~on)
    walked, reached = floor_under(hf, span[beyond], xyz[slot[beyond], :2])
    z[beyond[reached]] = walked[reached]
    on[beyond[reached]] = True
    usable = (np.abs(z - xyz[slot, 2]) <= layer_tol) & (on | (not holding))
    slot, z, dist, held = slot[usable], z[usable], np.hypot(*rel[usable].T), on[usable]
    if by_height:
        best = np.lexsort((dist, np.abs(z - xyz[slot, 2]), slot))
    else:
        best = np.lexsort((dist, ~held, slot))
    best = best[np.concatenate([[True], slot[best[1:]] != slot[best[:-1]]])] if len(best) else best
    floor = np.full(len(xyz), np.nan)
    floor[slot[best]] = z[best]
    away = np.full(len(xyz), np.inf)
    away[slot[best]] = dist[best]
    on_triangle = np.zeros(len(xyz), dtype=bool)
    on_triangle[slot[best]] = held[best]
    return floor, away, on_triangle
