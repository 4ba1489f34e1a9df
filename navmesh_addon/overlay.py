"""Viewport overlay: the navmesh surface, boundary, portal and clearance lines, the test path and the clearance legend.

Batches are built as plain arrays (testable without a GPU); `draw_view` and `draw_legend` turn them
into GPU draws, for the viewport handlers and for off-screen images alike. Every line builder returns
(coords (2K, 3) float32, colors (2K, 4) float32): K line segments as vertex pairs.

Depth: the surface is drawn with the depth test, pulled toward the eye by SURFACE_PULL of its
distance (a scale about the eye moves each point along its own view ray, so nothing shifts on
screen). The detail surface can dip below the real floor at step edges (up to a step's rise); the
pull keeps it in front of the floor there without floating it. The path is drawn last without depth
test, so no wall, step or fill hides it.
"""

from __future__ import annotations

import colorsys
import math

import bpy
import numpy as np
from mathutils import Matrix

import blender_navmesh as lib

from . import mesh_write, operators_bake, operators_path, units

PATH_COLOR = (1.0, 0.0, 0.85, 1.0)  # magenta: no fill, portal or clearance colour is near it
PATH_OUTLINE_COLOR = (0.05, 0.0, 0.05, 0.9)
PATH_BAND_COLOR = (1.0, 0.0, 0.85, 0.8)  # the path's colour: the edge of the ground the agent's body sweeps
BAND_ARC_STEP = math.radians(10.0)  # round caps and outer corners of the band in steps of this angle
BAND_MITER_LIMIT = 0.05  # an inner corner sharper than this (1 + cos of the turn) is cut, not mitred
PORTAL_COLOR = (0.2, 0.6, 1.0, 1.0)
BOUNDARY_COLOR = (0.0, 0.07, 0.2, 1.0)  # dark navy: the outline reads on light floors and on the teal fill
SHRUNK_PORTAL_COLOR = (0.3, 1.0, 1.0, 1.0)
LINK_COLOR = (1.0, 0.55, 0.0, 1.0)  # orange: off-mesh links, always drawn
BLOCKED_COLOR = (0.55, 0.08, 0.06, 0.45)  # dark red: navmesh the active agent type is too wide for
LIFT = 0.05  # lines sit this far above the navmesh polygons so they are not hidden in them
SURFACE_ALPHA = 0.7  # opaque enough to read the same with or without the object beneath, the floor still shows
# The surface's default colour (the scene's Navmesh Color can change it, for floors of a similar colour).
SURFACE_COLOR = (*mesh_write.NAVMESH_COLOR[:3], SURFACE_ALPHA)
SURFACE_PULL = 0.02  # fraction of the eye distance the surface is drawn closer (see the module docstring)
LINE_PULL = 0.03  # lines are pulled a little further, so they sit on the surface
ORTHO_EYE_DISTANCE = 15.0  # orthographic views pull as an eye this far away would (0.3 m for the surface)
PATH_HUES_AVOIDED = (0.72, 0.97)  # fill hues skip the path's magenta
# The clearance map spans r0 (red: only the baked agent fits) to CLEARANCE_SPAN * r0 (green): the
# built-in presets run from 0.25 m to 1.2 m, three times the Human preset's 0.4 m.
CLEARANCE_SPAN = 3.0
LEGEND_FONT_SIZE = 13  # legend text size (points) at a UI scale of 1


def _empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, 3), dtype=np.float32), np.zeros((0, 4), dtype=np.float32)


def _segments(a: np.ndarray, b: np.ndarray, colors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interleave segment ends a[i], b[i] and repeat each colour for both ends."""
    coords = np.empty((2 * len(a), 3), dtype=np.float32)
    coords[0::2], coords[1::2] = a, b
    coords[:, 2] += LIFT
    return coords, np.repeat(np.asarray(colors, dtype=np.float32).reshape(-1, 4), 2, axis=0)


def distinct_colors(ids: np.ndarray) -> np.ndarray:
    """(N, 4) RGBA per id: a stable hue per id (golden-ratio steps), never near the path's magenta."""
    ids = np.asarray(ids, dtype=np.int64)
    low, high = PATH_HUES_AVOIDED
    hues = (ids * 0.61803398875) % 1.0 * (1.0 - (high - low))
    hues = np.where(hues >= low, hues + (high - low), hues)
    rgb = np.array([colorsys.hsv_to_rgb(h, 0.6, 0.9) for h in hues.tolist()]).reshape(-1, 3)
    return np.hstack([rgb, np.ones((len(ids), 1))])


def polygon_colors(
    mesh: lib.NavMesh, mode: str, area_colors: dict | None = None, color=mesh_write.NAVMESH_COLOR
) -> np.ndarray:
    """(P, 4) fill colour per polygon for a Color By mode (properties.COLOR_BY): the navmesh colour
    (`color`, the scene's Navmesh Color: RGB, alpha 1), or distinct colours per area, region or
    polygon. Area 0 (ground) keeps the navmesh colour so only special areas stand out; area_colors
    ({area id: RGB}, the scene's area types) colour their areas."""
    navmesh = (*tuple(color)[:3], 1.0)
    if mode == "NAVMESH":
        return np.tile(navmesh, (mesh.polygon_count, 1))
    if mode == "AREA":
        colors = distinct_colors(mesh.areas)
        colors[mesh.areas == 0] = navmesh
        for area, rgb in (area_colors or {}).items():
            colors[mesh.areas == area] = (*rgb, 1.0)
        return colors
    ids = mesh.regions if mode == "REGION" else np.arange(mesh.polygon_count)
    return distinct_colors(ids)


def surface_triangles(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """(T, 3, 3) triangles over the walkable surface and (T,) the polygon of each: the detail mesh,
    which follows the real floor (polygons are flat and cut through steps), else polygon fans."""
    if len(mesh.detail_triangles):
        return mesh.detail_vertices[mesh.detail_triangles], np.asarray(mesh.detail_polygons, dtype=np.int64)
    sizes = mesh.polygon_sizes
    owner = np.repeat(np.arange(mesh.polygon_count), sizes - 2)
    first = np.repeat(mesh.poly_offsets[:-1], sizes - 2)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(sizes - 2) - (sizes - 2), sizes - 2)
    corners = np.column_stack([first, first + k + 1, first + k + 2])
    return mesh.vertices[mesh.poly_vertices[corners]], owner


def surface_fill(
    mesh: lib.NavMesh, mode: str = "NAVMESH", area_colors: dict | None = None, color=SURFACE_COLOR
) -> tuple[np.ndarray, np.ndarray]:
    """Triangle batch of the navmesh surface: coords (3T, 3) and colours (3T, 4), semi-transparent:
    `color` (the scene's Navmesh Color) gives the navmesh's RGB and every mode's alpha."""
    triangles, owner = surface_triangles(mesh)
    if not len(triangles):
        return _empty()
    colors = polygon_colors(mesh, mode, area_colors, color)[owner].astype(np.float32)
    colors[:, 3] = tuple(color)[3]
    return triangles.reshape(-1, 3).astype(np.float32), np.repeat(colors, 3, axis=0)


def _subdivide(triangles: np.ndarray, spacing: float) -> np.ndarray:
    """(T', 3, 3): each triangle cut into n² equal ones, n = its longest edge / spacing (at most 64)."""
    longest = np.max(np.linalg.norm(triangles - np.roll(triangles, 1, axis=1), axis=2), axis=1)
    cuts = np.clip(np.ceil(longest / spacing), 1, 64).astype(np.int64)
    parts = []
    for n in np.unique(cuts):
        n = int(n)
        up = [((i, j), (i + 1, j), (i, j + 1)) for i in range(n) for j in range(n - i)]
        down = [((i + 1, j), (i + 1, j + 1), (i, j + 1)) for i in range(n - 1) for j in range(n - 1 - i)]
        ij = np.array(up + down, dtype=np.float64) / n  # (n², 3 corners, 2): weights of corners 1 and 2
        weights = np.concatenate([1.0 - ij.sum(axis=2, keepdims=True), ij], axis=2)  # (n², 3, 3)
        parts.append(np.einsum("skc,tcd->tskd", weights, triangles[cuts == n]).reshape(-1, 3, 3))
    return np.concatenate(parts)


def _near_segments(
    points: np.ndarray, a: np.ndarray, b: np.ndarray, margin: float, cell: float, batch: int = 1 << 20
) -> np.ndarray:
    """(N,) True where a point is closer than `margin` (3D) to some segment a[k]-b[k]. Segments are
    binned on an XY grid of `cell` (their boxes grown by margin), so each point only meets those of
    its own cell; at most `batch` point-segment pairs are measured at once."""
    near = np.zeros(len(points), dtype=bool)
    if not len(a) or not len(points):
        return near
    lo = np.floor((np.minimum(a, b)[:, :2] - margin) / cell).astype(np.int64)
    span = np.floor((np.maximum(a, b)[:, :2] + margin) / cell).astype(np.int64) - lo + 1
    per_segment = span[:, 0] * span[:, 1]
    owner = np.repeat(np.arange(len(a)), per_segment)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(per_segment) - per_segment, per_segment)
    cx, cy = lo[owner, 0] + k // span[owner, 1], lo[owner, 1] + k % span[owner, 1]
    point_cell = np.floor(points[:, :2] / cell).astype(np.int64)
    base = min(cx.min(), point_cell[:, 0].min()), min(cy.min(), point_cell[:, 1].min())
    width = max(cy.max(), point_cell[:, 1].max()) - base[1] + 1
    keys = (cx - base[0]) * width + (cy - base[1])
    order = np.argsort(keys, kind="stable")
    keys, segment = keys[order], owner[order]
    point_keys = (point_cell[:, 0] - base[0]) * width + (point_cell[:, 1] - base[1])
    first, last = np.searchsorted(keys, point_keys, "left"), np.searchsorted(keys, point_keys, "right")
    counts = last - first
    ends = np.cumsum(counts)
    start = 0
    while start < len(points):
        stop = max(int(np.searchsorted(ends, (ends[start - 1] if start else 0) + batch, "right")), start + 1)
        idx = np.arange(start, stop)
        pair_point = np.repeat(idx, counts[idx])
        offset = np.arange(len(pair_point)) - np.repeat(np.cumsum(counts[idx]) - counts[idx], counts[idx])
        k = segment[first[pair_point] + offset]
        ab = b[k] - a[k]
        t = np.clip(
            np.einsum("nd,nd->n", points[pair_point] - a[k], ab) / np.maximum(np.einsum("nd,nd->n", ab, ab), 1e-18),
            0.0,
            1.0,
        )
        close = np.linalg.norm(points[pair_point] - (a[k] + t[:, None] * ab), axis=1) < margin
        near[pair_point[close]] = True
        start = stop
    return near


def reach(mesh: lib.NavMesh, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Where an agent of `radius` (>= the bake radius r0) can stand: the surface cut into triangles
    about a cell across, (T, 3, 3), and (T,) True where a triangle's centre is at least radius - r0
    from every navmesh boundary edge (in 3D, as clearance measures it, so the path query agrees)."""
    triangles, _ = surface_triangles(mesh)
    if not len(triangles):
        return np.zeros((0, 3, 3)), np.zeros(0, dtype=bool)
    spacing = mesh.params.cell_size
    pieces = _subdivide(triangles, spacing)
    margin = radius - mesh.params.agent_radius
    if margin <= 0.0:
        return pieces, np.ones(len(pieces), dtype=bool)
    wall = np.flatnonzero(mesh.neighbors < 0)
    a, b = mesh.vertices[mesh.poly_vertices[wall]], mesh.vertices[mesh.edge_next_vertex[wall]]
    return pieces, ~_near_segments(pieces.mean(axis=1), a, b, margin, max(margin, 4.0 * spacing))


def reach_area(mesh: lib.NavMesh, radius: float) -> float:
    """Area (m², seen from above) where an agent of `radius` can stand, as `reach` draws it."""
    pieces, usable = reach(mesh, radius)
    u, v = pieces[usable, 1] - pieces[usable, 0], pieces[usable, 2] - pieces[usable, 0]
    return float(0.5 * np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]).sum())


def reach_fill(mesh: lib.NavMesh, radius: float, color=SURFACE_COLOR) -> tuple[np.ndarray, np.ndarray]:
    """Triangle batch of `reach`: the navmesh colour (`color`) where the agent fits, BLOCKED_COLOR elsewhere."""
    pieces, usable = reach(mesh, radius)
    colors = np.where(usable[:, None], tuple(color), BLOCKED_COLOR)
    return pieces.reshape(-1, 3).astype(np.float32), np.repeat(colors.astype(np.float32), 3, axis=0)


def _portal_slots(mesh: lib.NavMesh) -> np.ndarray:
    """Edge slots that are portals, each shared edge once (from its lower-numbered polygon)."""
    owner = mesh.edge_polygon
    return np.flatnonzero((mesh.neighbors >= 0) & (mesh.neighbors > owner))


def portal_lines(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Every portal once, in one colour."""
    slots = _portal_slots(mesh)
    if not len(slots):
        return _empty()
    a, b = mesh.vertices[mesh.poly_vertices[slots]], mesh.vertices[mesh.edge_next_vertex[slots]]
    return _segments(a, b, np.tile(PORTAL_COLOR, (len(slots), 1)))


def boundary_lines(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Every boundary edge (a wall or ledge: no polygon beyond it), so the navmesh's outline shows
    where it ends on any floor."""
    slots = np.flatnonzero(mesh.neighbors < 0)
    if not len(slots):
        return _empty()
    a, b = mesh.vertices[mesh.poly_vertices[slots]], mesh.vertices[mesh.edge_next_vertex[slots]]
    return _segments(a, b, np.tile(BOUNDARY_COLOR, (len(slots), 1)))


def clearance_range(agent_radius: float) -> tuple[float, float]:
    """The clearances (m) drawn red and green: the bake radius and CLEARANCE_SPAN times it."""
    return agent_radius, CLEARANCE_SPAN * agent_radius


def heat(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """(N, 4) colours from red (<= low) through yellow to green (>= high); inf counts as wide."""
    values = np.nan_to_num(np.asarray(values, dtype=np.float64), posinf=high)
    t = np.clip((values - low) / max(high - low, 1e-9), 0.0, 1.0)
    red = np.clip(2.0 - 2.0 * t, 0.0, 1.0)
    green = np.clip(2.0 * t, 0.0, 1.0)
    return np.column_stack([red, green, np.zeros_like(t), np.ones_like(t)])


def clearance_lines(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Portals coloured by clearance over clearance_range(bake radius)."""
    if mesh.edge_clearance is None:
        return _empty()
    slots = _portal_slots(mesh)
    if not len(slots):
        return _empty()
    a, b = mesh.vertices[mesh.poly_vertices[slots]], mesh.vertices[mesh.edge_next_vertex[slots]]
    return _segments(a, b, heat(mesh.edge_clearance[slots], *clearance_range(mesh.params.agent_radius)))


def _arc(centre: np.ndarray, start: np.ndarray, sweep: float, radius: float) -> np.ndarray:
    """(K, 2) points on the circle about centre from direction `start` (a unit vector), turning
    `sweep` radians (positive: counter-clockwise), both ends included."""
    steps = max(int(math.ceil(abs(sweep) / BAND_ARC_STEP)), 1)
    angles = math.atan2(start[1], start[0]) + np.linspace(0.0, sweep, steps + 1)
    return centre + radius * np.column_stack([np.cos(angles), np.sin(angles)])


def _band_side(xy: np.ndarray, normals: np.ndarray, radius: float) -> list[np.ndarray]:
    """The left edge of the band along a polyline (its segments' left normals given), from the
    first point's offset to the last's: mitred where the path turns left (the inner side), round
    where it turns right."""
    pieces = [xy[:1] + radius * normals[:1]]
    for k in range(1, len(xy) - 1):
        n_in, n_out = normals[k - 1], normals[k]
        turn = n_in[0] * n_out[1] - n_in[1] * n_out[0]
        cosine = float(n_in @ n_out)
        if turn > 0 and 1.0 + cosine > BAND_MITER_LIMIT:
            pieces.append(xy[k] + radius * (n_in + n_out) / (1.0 + cosine))
        elif turn > 0:
            pieces.append(np.vstack([xy[k] + radius * n_in, xy[k] + radius * n_out]))
        else:
            pieces.append(_arc(xy[k], n_in, -math.acos(max(-1.0, min(1.0, cosine))), radius))
    pieces.append(xy[-1:] + radius * normals[-1:])
    return [np.atleast_2d(piece) for piece in pieces]


def path_band(points, radius: float, color=PATH_BAND_COLOR) -> tuple[np.ndarray, np.ndarray]:
    """The outline of the ground an agent of `radius` sweeps along the path (seen from above: both
    sides at `radius` from the path, round at its ends), as segments. Each outline point takes the
    height of the path point it is offset from."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts):
        keep = np.concatenate([[True], np.hypot(*np.diff(pts[:, :2], axis=0).T) > 1e-9])
        pts = pts[keep]
    if radius <= 0.0 or len(pts) == 0:
        return _empty()
    xy = pts[:, :2]
    if len(pts) == 1:
        ring = _arc(xy[0], np.array([1.0, 0.0]), 2.0 * math.pi, radius)
        heights = np.full(len(ring), pts[0, 2])
    else:
        d = np.diff(xy, axis=0)
        d /= np.hypot(*d.T)[:, None]
        normals = np.column_stack([-d[:, 1], d[:, 0]])
        left = _band_side(xy, normals, radius)
        right = _band_side(xy[::-1], -normals[::-1], radius)
        end_cap = _arc(xy[-1], normals[-1], -math.pi, radius)
        start_cap = _arc(xy[0], -normals[0], -math.pi, radius)
        pieces = [*left, end_cap, *right, start_cap]
        sources = (
            [0, *range(1, len(xy) - 1), len(xy) - 1]
            + [len(xy) - 1]
            + [len(xy) - 1, *range(len(xy) - 2, 0, -1), 0]
            + [0]
        )
        ring = np.vstack(pieces)
        heights = np.concatenate([np.full(len(piece), pts[k, 2]) for piece, k in zip(pieces, sources)])
    a = np.column_stack([ring, heights])
    b = np.roll(a, -1, axis=0)
    return _segments(a, b, np.tile(color, (len(a), 1)))


def path_lines(points, color=PATH_COLOR) -> tuple[np.ndarray, np.ndarray]:
    """The path polyline as segments."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) < 2:
        return _empty()
    return _segments(pts[:-1], pts[1:], np.tile(color, (len(pts) - 1, 1)))


def shrunk_portal_lines(mesh: lib.NavMesh, corridor, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Portals between consecutive corridor polygons (the A* polygon sequence), each end pulled in by
    radius - r0: where an agent of that radius can cross them."""
    corridor = [int(p) for p in corridor]
    pairs = [(p, q) for p, q in zip(corridor[:-1], corridor[1:]) if p != q]
    if not pairs:
        return _empty()
    ends_a, ends_b = [], []
    for p, q in pairs:
        lo, hi = mesh.poly_offsets[p], mesh.poly_offsets[p + 1]
        hit = np.flatnonzero(mesh.neighbors[lo:hi] == q)
        if len(hit):
            slot = lo + hit[0]
            ends_a.append(mesh.vertices[mesh.poly_vertices[slot]])
            ends_b.append(mesh.vertices[mesh.edge_next_vertex[slot]])
    if not ends_a:
        return _empty()
    a, b = np.array(ends_a), np.array(ends_b)
    shrink = max(radius - mesh.params.agent_radius, 0.0)
    length = np.linalg.norm(b - a, axis=1, keepdims=True)
    pull = np.minimum(shrink, 0.5 * length) / np.maximum(length, 1e-12)
    a, b = a + (b - a) * pull, b - (b - a) * pull
    return _segments(a, b, np.tile(SHRUNK_PORTAL_COLOR, (len(a), 1)))


def _concatenate(parts) -> tuple[np.ndarray, np.ndarray]:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return _empty()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def link_lines(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Each off-mesh link as a line from its start to its end."""
    if not mesh.links:
        return _empty()
    a = np.array([link.start for link in mesh.links], dtype=np.float64)
    b = np.array([link.end for link in mesh.links], dtype=np.float64)
    return _segments(a, b, np.tile(LINK_COLOR, (len(a), 1)))


def scene_lines(
    meshes: list[lib.NavMesh],
    show_portals: bool,
    show_clearance: bool,
    path=None,
    path_mesh: lib.NavMesh | None = None,
    path_radius: float = 0.0,
    show_path_portals: bool = False,
    show_boundary: bool = False,
):
    """The depth-tested lines for the current toggles (the path itself is drawn apart, on top)."""
    parts = [link_lines(mesh) for mesh in meshes]
    for mesh in meshes:
        if show_boundary:
            parts.append(boundary_lines(mesh))
        if show_clearance:
            parts.append(clearance_lines(mesh))
        elif show_portals:
            parts.append(portal_lines(mesh))
    if path is not None and show_path_portals and path_mesh is not None:
        parts.append(shrunk_portal_lines(path_mesh, path.corridor, path_radius))
    return _concatenate(parts)


def _quad(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float, float]]:
    return [(x0, y0, 0.0), (x1, y0, 0.0), (x1, y1, 0.0), (x0, y0, 0.0), (x1, y1, 0.0), (x0, y1, 0.0)]


def legend(agent_radius: float, scale: float = 1.0, left: float = 10.0, bottom: float = 10.0):
    """The clearance legend in pixels from the region's lower left corner, every size times `scale`
    (Blender's UI scale): triangles (N, 3) with colours (N, 4) for a dark backdrop and the colour
    bar, and labels (x, y, text, align) in meters under the bar's ends and middle and a title above
    it; align is where x falls on the text's width (0 its left end, 0.5 its middle, 1 its right end)."""
    low, high = clearance_range(agent_radius)
    steps = 24
    bar_left, bar_width = left + 10.0 * scale, 180.0 * scale
    bar_bottom, bar_height = bottom + 32.0 * scale, 14.0 * scale
    coords = _quad(left, bottom, bar_left + bar_width + 10.0 * scale, bottom + 72.0 * scale)
    colors = [(0.0, 0.0, 0.0, 0.6)] * 6
    xs = bar_left + np.linspace(0.0, bar_width, steps + 1)
    shades = heat(np.linspace(low, high, steps + 1), low, high)
    for i in range(steps):
        coords += _quad(xs[i], bar_bottom, xs[i + 1], bar_bottom + bar_height)
        colors += [shades[i], shades[i + 1], shades[i + 1], shades[i], shades[i + 1], shades[i]]
    text_bottom = bottom + 10.0 * scale
    labels = [
        (bar_left, text_bottom, f"{low:.2f} m", 0.0),
        (bar_left + bar_width / 2, text_bottom, f"{(low + high) / 2:.2f} m", 0.5),
        (bar_left + bar_width, text_bottom, f"{high:.2f} m+", 1.0),
        (bar_left, bar_bottom + bar_height + 8.0 * scale, "Clearance (agent radius)", 0.0),
    ]
    return np.array(coords, dtype=np.float32), np.array(colors, dtype=np.float32), labels


def eye_pull(view_matrix: Matrix, projection_matrix: Matrix, fraction: float) -> Matrix:
    """Model matrix that draws world geometry `fraction` of its distance closer to the eye, without
    moving it on screen (a scale about the eye); orthographic views shift it toward the viewer by
    `fraction` of ORTHO_EYE_DISTANCE."""
    to_world = view_matrix.inverted()
    if projection_matrix[3][3] == 0.0:  # perspective
        eye = to_world.translation
        return Matrix.Translation(eye) @ Matrix.Scale(1.0 - fraction, 4) @ Matrix.Translation(-eye)
    toward_viewer = to_world.col[2].xyz.normalized()
    return Matrix.Translation(toward_viewer * fraction * ORTHO_EYE_DISTANCE)


class ViewBatches:
    """What the overlay draws, as GPU batches: surface triangles, depth-tested lines, the path; all
    in meters, drawn `units_per_meter` Blender units each (the scene's Unit Scale's inverse)."""

    def __init__(self, fill, lines, path_points, path_radius: float = 0.0, units_per_meter: float = 1.0):
        import gpu  # imported here: the module's pure builders must load where no GPU exists
        from gpu_extras.batch import batch_for_shader

        self.flat_shader = gpu.shader.from_builtin("SMOOTH_COLOR")
        self.line_shader = gpu.shader.from_builtin("POLYLINE_SMOOTH_COLOR")
        self.to_units = Matrix.Scale(units_per_meter, 4)
        self.fill = (
            batch_for_shader(self.flat_shader, "TRIS", {"pos": fill[0], "color": fill[1]}) if len(fill[0]) else None
        )
        self.lines = (
            batch_for_shader(self.line_shader, "LINES", {"pos": lines[0], "color": lines[1]}) if len(lines[0]) else None
        )
        self.path = self.path_outline = self.path_band = None
        if path_points is not None and len(path_points) >= 2:
            for name, color in (("path", PATH_COLOR), ("path_outline", PATH_OUTLINE_COLOR)):
                coords, colors = path_lines(path_points, color)
                setattr(self, name, batch_for_shader(self.line_shader, "LINES", {"pos": coords, "color": colors}))
            band = path_band(path_points, path_radius)
            if len(band[0]):
                self.path_band = batch_for_shader(self.line_shader, "LINES", {"pos": band[0], "color": band[1]})


def _draw_lines(batch, shader, viewport_size: tuple[int, int], width: float) -> None:
    shader.uniform_float("viewportSize", viewport_size)
    shader.uniform_float("lineWidth", width)
    batch.draw(shader)


def draw_view(batches: ViewBatches, viewport_size: tuple[int, int]) -> None:
    """Draw the batches with the view and projection currently loaded in gpu.matrix (POST_VIEW):
    the surface and lines depth-tested and pulled toward the eye, then the outlined path on top."""
    import gpu

    view, projection = gpu.matrix.get_model_view_matrix(), gpu.matrix.get_projection_matrix()
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_mask_set(False)
    gpu.state.depth_test_set("LESS_EQUAL")
    if batches.fill is not None:
        with gpu.matrix.push_pop():
            gpu.matrix.multiply_matrix(eye_pull(view, projection, SURFACE_PULL) @ batches.to_units)
            batches.fill.draw(batches.flat_shader)
    if batches.lines is not None:
        with gpu.matrix.push_pop():
            gpu.matrix.multiply_matrix(eye_pull(view, projection, LINE_PULL) @ batches.to_units)
            _draw_lines(batches.lines, batches.line_shader, viewport_size, 3.0)
    gpu.state.depth_test_set("NONE")
    with gpu.matrix.push_pop():
        gpu.matrix.multiply_matrix(batches.to_units)
        if batches.path_band is not None:
            _draw_lines(batches.path_band, batches.line_shader, viewport_size, 2.0)
        if batches.path is not None:
            _draw_lines(batches.path_outline, batches.line_shader, viewport_size, 8.0)
            _draw_lines(batches.path, batches.line_shader, viewport_size, 4.0)
    gpu.state.depth_mask_set(True)
    gpu.state.blend_set("NONE")


def draw_legend(agent_radius: float, scale: float = 1.0) -> None:
    """Draw the clearance legend in pixel space (POST_PIXEL, or any pixel projection), `scale` times
    its size at a UI scale of 1."""
    import blf
    import gpu
    from gpu_extras.batch import batch_for_shader

    coords, colors, labels = legend(agent_radius, scale)
    shader = gpu.shader.from_builtin("SMOOTH_COLOR")
    gpu.state.blend_set("ALPHA")
    batch_for_shader(shader, "TRIS", {"pos": coords, "color": colors}).draw(shader)
    font = 0
    blf.size(font, LEGEND_FONT_SIZE * scale)
    blf.color(font, 1.0, 1.0, 1.0, 1.0)
    for x, y, text, align in labels:
        blf.position(font, x - align * blf.dimensions(font, text)[0], y, 0)
        blf.draw(font, text)
    gpu.state.blend_set("NONE")


class _MeshCache:
    """NavMesh per navmesh object, re-read only when it is written again or its faces are edited
    (the draw runs every frame)."""

    def __init__(self):
        self._entries: dict[str, tuple[tuple, lib.NavMesh]] = {}

    def get(self, obj) -> lib.NavMesh:
        key = mesh_write.revision(obj)
        entry = self._entries.get(obj.name)
        if entry is None or entry[0] != key:
            entry = (key, mesh_write.read_navmesh_object(obj))
            self._entries[obj.name] = entry
        return entry[1]


MESHES = _MeshCache()
_handles: list = []
# (inputs key -> ViewBatches): rebuilt only when what they show changes; a few kept, as viewports in
# Local View or with their own collections' visibility show different navmesh objects.
_batches: dict[tuple, ViewBatches] = {}
_BATCHES_KEPT = 4


def shown_agent(scene):
    """The agent type whose reach the overlay shows (the list's active one, with Show Reach on), or None."""
    settings = scene.navmesh
    if settings.show_agent_reach and 0 <= settings.agent_types_index < len(settings.agent_types):
        return settings.agent_types[settings.agent_types_index]
    return None


def overlay_shown(scene, space=None) -> bool:
    """Does the navmesh overlay draw at all: the scene's Show Overlay toggle is on and, in a 3D view
    (`space`, a SpaceView3D; None off-screen), the viewport's Overlays are on."""
    if not scene.navmesh.show_overlay:
        return False
    overlay = getattr(space, "overlay", None)
    return overlay is None or bool(overlay.show_overlays)


def visible_in(obj, space=None) -> bool:
    """Is the object shown in the 3D view `space` (its Local View and its own collection visibility
    included), or, with no space, in the view layer."""
    return bool(obj.visible_get(viewport=space) if space is not None else obj.visible_get())


def shown_objects(scene, space=None) -> list:
    """The navmesh objects the overlay draws in the 3D view `space`: the visible ones (in Local View
    only those in it), only the shown agent type's (see `shown_agent`); none when the overlay is off."""
    if not overlay_shown(scene, space):
        return []
    objects = [obj for obj in mesh_write.find_navmesh_objects(scene) if visible_in(obj, space)]
    agent = shown_agent(scene)
    if agent is not None:
        nav = operators_bake.agent_navmesh(scene, agent)
        objects = [obj for obj in objects if obj == nav]
    return objects


def path_shown(scene, space=None) -> bool:
    """Is the test path drawn: it hides with the navmesh it runs on (hidden, excluded, outside Local
    View, or the overlay off)."""
    nav = operators_path.path_target(scene)[0]
    return (
        operators_path.STATE.result is not None
        and nav is not None
        and overlay_shown(scene, space)
        and visible_in(nav, space)
    )


def scene_batches(context, space=None) -> ViewBatches | None:
    """The batches for the scene's navmesh objects shown in the 3D view `space` (`shown_objects`;
    None: as the view layer shows them), display settings and test path (cached); None when the
    overlay draws nothing."""
    scene = context.scene
    if not overlay_shown(scene, space):
        return None
    settings = scene.navmesh
    agent = shown_agent(scene)
    objects = shown_objects(scene, space)
    state = operators_path.STATE
    show_path = path_shown(scene, space)
    area_colors = {entry.area_id: tuple(entry.color) for entry in settings.area_types}
    color = tuple(settings.navmesh_color)
    meters = units.meters_per_unit(scene)
    key = (
        tuple((obj.name_full, mesh_write.revision(obj)) for obj in objects),
        settings.color_by,
        color,
        tuple(sorted(area_colors.items())),
        settings.show_boundary,
        settings.show_portals,
        settings.show_clearance,
        settings.path_show_portals,
        state.key if show_path else None,
        None if agent is None else round(agent.radius, 6),
        meters,
    )
    if key not in _batches:
        try:
            meshes = [MESHES.get(obj) for obj in objects]
        except lib.NavMeshError:
            return None
        if agent is None:
            fill = _concatenate([surface_fill(mesh, settings.color_by, area_colors, color) for mesh in meshes])
        else:
            fill = _concatenate([reach_fill(mesh, agent.radius * meters, color) for mesh in meshes])
        path_radius = operators_path.path_target(scene)[1] * meters
        result = state.result if show_path else None
        lines = scene_lines(
            meshes,
            settings.show_portals,
            settings.show_clearance,
            result,
            state.mesh,
            path_radius,
            settings.path_show_portals,
            settings.show_boundary,
        )
        path_points = None if result is None else result.points
        if len(_batches) >= _BATCHES_KEPT:
            _batches.clear()
        _batches[key] = ViewBatches(fill, lines, path_points, path_radius, 1.0 / meters)
    return _batches[key]


def legend_radius(context, space=None) -> float | None:
    """The bake radius the clearance legend is drawn for, or None when clearance is not shown."""
    if not context.scene.navmesh.show_clearance:
        return None
    for obj in shown_objects(context.scene, space):
        try:
            return MESHES.get(obj).params.agent_radius
        except lib.NavMeshError:
            continue
    return None


def _view_space(context):
    """The 3D view being drawn (its Overlays toggle and Local View), or None."""
    space = context.space_data
    return space if getattr(space, "type", None) == "VIEW_3D" else None


def _draw_view_handler() -> None:
    """POST_VIEW callback: the surface, lines and path in the 3D view."""
    batches = scene_batches(bpy.context, _view_space(bpy.context))
    if batches is not None:
        region = bpy.context.region
        draw_view(batches, (region.width, region.height))


def _draw_legend_handler() -> None:
    """POST_PIXEL callback: the clearance legend when clearance is shown."""
    radius = legend_radius(bpy.context, _view_space(bpy.context))
    if radius is not None:
        draw_legend(radius, bpy.context.preferences.system.ui_scale)


def register_draw_handler() -> None:
    """Add the draw callbacks, only in an interactive Blender (background mode has no viewport)."""
    if bpy.app.background or _handles:
        return
    _handles.append(bpy.types.SpaceView3D.draw_handler_add(_draw_view_handler, (), "WINDOW", "POST_VIEW"))
    _handles.append(bpy.types.SpaceView3D.draw_handler_add(_draw_legend_handler, (), "WINDOW", "POST_PIXEL"))


def unregister_draw_handler() -> None:
    _batches.clear()
    while _handles:
        bpy.types.SpaceView3D.draw_handler_remove(_handles.pop(), "WINDOW")
