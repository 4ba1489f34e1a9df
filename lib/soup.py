"""Input stage: validate and normalise a triangle soup before voxelisation.

Level geometry is a polygon soup. This stage turns whatever arrays the caller has into a
clean `TriangleSoup`: finite coordinates, valid indices, no degenerate triangles, and a local
origin so that coordinates around 1e6 keep their precision in the later stages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .components import connected_components
from .errors import NavMeshError
from .geometry import NONZERO_DIVISOR
from .navmesh import MAX_AREA

# A triangle whose doubled area is below this fraction of its longest edge squared is degenerate.
_DEGENERATE_RATIO = 1e-12


@dataclass(frozen=True)
class TriangleSoup:
    """A clean soup in a local frame: world = local + origin.

    vertices: (N, 3) float64, local frame. triangles: (M, 3) int64, none degenerate.
    walkable: (M,) bool, False for "obstacle only" triangles that block but are never walked on.
    areas: (M,) int32 area id per triangle. origin: (3,) float64.
    closed: (M,) bool, True for triangles of a closed, consistently wound shell (a crate, a pillar):
    such a shell bounds a solid, and a floor inside it is not walkable.
    empty_reason: set when nothing usable is left (then M == 0).
    """

    vertices: np.ndarray
    triangles: np.ndarray
    walkable: np.ndarray
    areas: np.ndarray
    origin: np.ndarray
    closed: np.ndarray
    empty_reason: str | None = None


@dataclass(frozen=True)
class AreaVolume:
    """A closed mesh (world frame) that marks the walkable floor inside it with `area` (0..63), or
    removes that floor when area is None (a "no go" zone), as Unity's NavMeshModifierVolume does,
    without touching the level mesh. name: how errors refer to it."""

    vertices: np.ndarray
    triangles: np.ndarray
    area: int | None
    name: str = "area volume"


def volume_triangles(volume: AreaVolume, origin: np.ndarray) -> np.ndarray:
    """(T, 3, 3) the volume's triangles in the soup's local frame; NavMeshError unless it is a
    closed, consistently wound mesh (inside must mean something) with a valid area."""
    try:
        verts = np.asarray(volume.vertices, dtype=np.float64).reshape(-1, 3)
        tris = np.asarray(volume.triangles, dtype=np.int64).reshape(-1, 3)
    except (TypeError, ValueError):
        raise NavMeshError(f"{volume.name}: vertices must be (N, 3) numbers and triangles (M, 3) indices") from None
    if volume.area is not None and not (isinstance(volume.area, (int, np.integer)) and 0 <= volume.area <= MAX_AREA):
        raise NavMeshError(
            f"{volume.name}: area {volume.area!r} must be a whole number from 0 to {MAX_AREA}, "
            "or None to remove the floor"
        )
    if not len(tris) or not np.isfinite(verts).all() or tris.min() < 0 or tris.max() >= len(verts):
        raise NavMeshError(f"{volume.name}: needs finite vertices and triangles indexing them")
    if not closed_shells(verts, tris).all():
        raise NavMeshError(
            f"{volume.name} is not a closed mesh (a box or any watertight shell): what is inside it is undefined"
        )
    return verts[tris] - origin


def prepare_soup(vertices, triangles, walkable=None, areas=None) -> TriangleSoup:
    """Check and normalise caller arrays; raise NavMeshError naming the first problem found."""
    try:
        verts = np.asarray(vertices, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NavMeshError(f"vertices are not numeric: {exc}") from None
    if verts.size == 0:
        verts = verts.reshape(0, 3)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise NavMeshError(f"vertices must have shape (N, 3), got {verts.shape}")
    try:
        tris_raw = np.asarray(triangles)
    except (TypeError, ValueError) as exc:
        raise NavMeshError(f"triangles are not an index array: {exc}") from None
    if tris_raw.size == 0:
        tris_raw = tris_raw.reshape(0, 3)
    if tris_raw.ndim != 2 or tris_raw.shape[1] != 3:
        raise NavMeshError(f"triangles must have shape (M, 3), got {tris_raw.shape}")
    if tris_raw.dtype.kind == "f":
        if not np.all(np.isfinite(tris_raw)) or np.any(tris_raw != np.round(tris_raw)):
            raise NavMeshError("triangle indices must be whole numbers")
    elif tris_raw.dtype.kind not in "iu":
        raise NavMeshError(f"triangle indices must be integers, got dtype {tris_raw.dtype}")
    tris = tris_raw.astype(np.int64)
    m = len(tris)

    if walkable is None:
        walk = np.ones(m, dtype=bool)
    else:
        walk_raw = np.asarray(walkable).reshape(-1)
        if walk_raw.size and walk_raw.dtype.kind not in "biu":
            # np.asarray(["no"], dtype=bool) is True: only booleans or 0/1 say what they mean.
            raise NavMeshError(f"walkable flags must be booleans (or 0/1), got dtype {walk_raw.dtype}")
        walk = walk_raw.astype(bool)
    area = np.zeros(m, dtype=np.int32) if areas is None else np.asarray(areas).reshape(-1)
    if len(walk) != m:
        raise NavMeshError(f"walkable flags: expected one per triangle ({m}), got {len(walk)}")
    if len(area) != m:
        raise NavMeshError(f"area ids: expected one per triangle ({m}), got {len(area)}")
    if area.dtype.kind not in "iu" or (m and (area.min() < 0 or area.max() > MAX_AREA)):
        raise NavMeshError(f"area ids must be integers from 0 to {MAX_AREA}")
    area = area.astype(np.int32)

    if m and (tris.min() < 0 or tris.max() >= len(verts)):
        bad_tri = int(np.flatnonzero((tris < 0).any(axis=1) | (tris >= len(verts)).any(axis=1))[0])
        raise NavMeshError(
            f"triangle {bad_tri} has vertex index {tris[bad_tri].tolist()} out of range for {len(verts)} vertices"
        )
    bad = ~np.isfinite(verts[np.unique(tris)]).all(axis=1)  # a vertex no triangle uses is ignored
    if bad.any():
        first = int(np.unique(tris)[np.flatnonzero(bad)[0]])
        raise NavMeshError(f"{int(bad.sum())} vertices have NaN or infinite coordinates (first: vertex {first})")

    empty = np.zeros((0, 3), dtype=np.int64)
    if m == 0:
        return TriangleSoup(verts[:0], empty, walk[:0], area[:0], np.zeros(3), walk[:0], "the input has no triangles")
    origin = verts[np.unique(tris)].min(axis=0)
    local = verts - origin
    p0, p1, p2 = local[tris[:, 0]], local[tris[:, 1]], local[tris[:, 2]]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is named below
        doubled_area = np.linalg.norm(np.cross(p1 - p0, p2 - p0), axis=1)
        longest_sq = np.maximum.reduce([((p1 - p0) ** 2).sum(1), ((p2 - p1) ** 2).sum(1), ((p0 - p2) ** 2).sum(1)])
    if not (np.isfinite(doubled_area).all() and np.isfinite(longest_sq).all()):
        raise NavMeshError(
            f"vertex coordinates up to {float(np.abs(verts[np.unique(tris)]).max()):.3g} are too large to measure "
            "triangles in meters"
        )
    keep = doubled_area > _DEGENERATE_RATIO * np.maximum(longest_sq, NONZERO_DIVISOR)
    keep &= longest_sq > 0
    if not keep.any():
        return TriangleSoup(
            local[:0], empty, walk[:0], area[:0], origin, walk[:0], f"all {m} triangles are degenerate (zero area)"
        )
    # Only the vertices the kept triangles use: a stray vertex far away would set the grid's size
    # (1 km off: 1.6 s and 0.34 GB for a 14-triangle level; 10 km off: a 120 GB refusal).
    used, tris = np.unique(tris[keep], return_inverse=True)
    tris = tris.reshape(-1, 3)
    local = local[used]
    return TriangleSoup(local, tris, walk[keep], area[keep], origin, closed_shells(local, tris))


def closed_shells(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Per triangle: is it part of a closed shell, every edge walked as often one way as the other
    by the shell's triangles? Vertices are welded by exact position first, and a face repeated
    exactly (a mesh duplicated in place) counts once, as the same face."""
    if not len(triangles):
        return np.zeros(0, dtype=bool)
    points, ids = np.unique(vertices, axis=0, return_inverse=True)
    welded = ids.reshape(-1)[triangles]
    # The same corners in the same turning order, whichever corner a copy starts from.
    first = np.argmin(welded, axis=1)
    rows = np.arange(len(welded))[:, None]
    rotated = welded[rows, (first[:, None] + np.arange(3)) % 3]
    unique, copy_of = np.unique(rotated, axis=0, return_inverse=True)
    return _closed(points, unique)[copy_of.reshape(-1)]


def _closed(points: np.ndarray, t: np.ndarray) -> np.ndarray:
    """closed_shells for welded triangles (corners into `points`) with no face repeated.

    Each edge's walks are paired as the faces meet round it: at an edge of two faces, the two when
    they walk it opposite ways; where more meet (crates stacked or side by side, a floor's border
    flush under a crate's side, a floor cell under a crate's bottom), each face is paired with the
    next one round the edge, from the back of one to the front of the other, the two bounding one
    solid's wedge. A shell is a set of faces joined by paired walks; it is closed when every walk
    of its faces is paired."""
    m = len(t)
    start, end = t.ravel(), np.roll(t, -1, axis=1).ravel()
    lo, hi = np.minimum(start, end), np.maximum(start, end)
    order = np.lexsort((hi, lo))
    new_edge = np.concatenate([[True], (np.diff(lo[order]) != 0) | (np.diff(hi[order]) != 0)])
    first = np.flatnonzero(new_edge)
    size = np.diff(np.append(first, len(order)))
    forward = start < end
    mate = np.full(3 * m, -1, dtype=np.int64)
    two = first[size == 2]
    a, b = order[two], order[two + 1]
    opposite = forward[a] != forward[b]
    mate[a[opposite]], mate[b[opposite]] = b[opposite], a[opposite]
    many = np.flatnonzero(size > 2)
    if len(many):
        slots = order[np.concatenate([np.arange(first[k], first[k] + size[k]) for k in many.tolist()])]
        group = np.repeat(np.arange(len(many)), size[many])
        angle, front = _round_edge(points, t, slots, lo[slots], hi[slots])
        # Round each edge in turn; at one angle (faces lying on each other) the face whose front
        # looks ahead comes first, closing the wedge behind it.
        turn = np.lexsort((~front, angle, group))
        slots, group, front = slots[turn], group[turn], front[turn]
        begins = np.searchsorted(group, np.arange(len(many)))
        position = np.arange(len(slots))
        following = np.where(position + 1 < np.append(begins[1:], len(slots))[group], position + 1, begins[group])
        pair = ~front & front[following] & (forward[slots] != forward[slots[following]])
        mate[slots[pair]], mate[slots[following[pair]]] = slots[following[pair]], slots[pair]
    owner = np.arange(3 * m) // 3
    paired = mate >= 0
    shell = connected_components(m, owner[paired], owner[mate[paired]])
    open_shell = np.zeros(m, dtype=bool)
    open_shell[shell[owner[~paired]]] = True
    return ~open_shell[shell]


# Faces round an edge whose angles differ by less than this (radians) lie on each other.
_SAME_ANGLE = 1e-9


def _round_edge(points: np.ndarray, t: np.ndarray, slots: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(angle bin, front looks ahead) of each walk `slots` of an edge lo-hi: the direction its face
    leaves the edge in, as an angle round the edge (from lo to hi, binned by _SAME_ANGLE), and
    whether the face's front (its normal, by its winding) looks toward increasing angles."""
    face = slots // 3
    corner = points[t[face]]
    normal = np.cross(corner[:, 1] - corner[:, 0], corner[:, 2] - corner[:, 0])
    axis = points[hi] - points[lo]
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    # The face's third corner, seen along the edge.
    third = corner[np.arange(len(slots)), (slots % 3 + 2) % 3] - points[lo]
    out = third - np.einsum("ij,ij->i", third, axis)[:, None] * axis
    across = np.eye(3)[np.argmin(np.abs(axis), axis=1)]
    e1 = np.cross(axis, across)
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    e2 = np.cross(axis, e1)
    angle = np.arctan2(np.einsum("ij,ij->i", out, e2), np.einsum("ij,ij->i", out, e1))
    angle = np.where(angle < 0.0, angle + 2.0 * np.pi, angle)
    full = int(round(2.0 * np.pi / _SAME_ANGLE))
    binned = np.round(angle / _SAME_ANGLE).astype(np.int64)
    binned = np.where(binned >= full, binned - full, binned)
    ahead = np.cross(axis, out)
    return binned, np.einsum("ij,ij->i", normal, ahead) > 0.0


def downward_floors(
    vertices: np.ndarray,
    triangles: np.ndarray,
    walkable: np.ndarray,
    max_slope: float,
    parts: np.ndarray | None = None,
    min_area: float = 0.0,
) -> np.ndarray:
    """Per triangle: does it look like a floor whose normals were flipped? A walkable triangle facing
    down, within max_slope (degrees) of straight down, so a floor were it turned over, unless it
    faces down on purpose: part of a closed shell (a slab's bottom, a closed room's ceiling), or of a
    group of such faces (joined at their corners) over an upward walkable face (a ceiling plane over
    a floor, an overhang), or of a group smaller than min_area (m²). parts (each triangle's object,
    if known) limits the search for shells to the objects with such faces. The bake never walks on
    these faces; a level whose floors all face down gets no navmesh."""
    vertices = np.asarray(vertices, dtype=np.float64)
    triangles = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    walkable = np.asarray(walkable, dtype=bool).reshape(-1)
    found = np.zeros(len(triangles), dtype=bool)
    if not len(triangles):
        return found
    corner = vertices[triangles]
    normal = np.cross(corner[:, 1] - corner[:, 0], corner[:, 2] - corner[:, 0])
    length = np.linalg.norm(normal, axis=1)
    upright = normal[:, 2] / np.maximum(length, NONZERO_DIVISOR)
    cos_slope = np.cos(np.radians(max_slope))
    down = walkable & (upright < 0.0) & (upright <= -cos_slope)
    if not down.any():
        return found
    suspects = np.ones(len(triangles), dtype=bool) if parts is None else np.isin(parts, np.asarray(parts)[down])
    searched = np.flatnonzero(suspects)
    used, local = np.unique(triangles[searched], return_inverse=True)
    down[searched[closed_shells(vertices[used], local.reshape(-1, 3))]] = False
    candidates = np.flatnonzero(down)
    if not len(candidates):
        return found
    # Group the candidates joined at a corner (vertices welded by position).
    points, ids = np.unique(corner[candidates].reshape(-1, 3), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    label = connected_components(len(points), np.concatenate([ids[:, 0], ids[:, 0]]), np.concatenate(ids[:, 1:].T))
    group = np.unique(label[ids[:, 0]], return_inverse=True)[1].reshape(-1)
    areas = 0.5 * length[candidates]
    up = corner[walkable & (upright > 0.0) & (upright >= cos_slope)]
    up_lo, up_hi = up.min(axis=1), up.max(axis=1)
    for g in range(int(group.max()) + 1):
        members = candidates[group == g]
        if areas[group == g].sum() < min_area:
            continue
        if not _over_a_floor(corner[members], up, up_lo, up_hi):
            found[members] = True
    return found


# Sample points of a group of downward faces tested for a floor under them.
_SAMPLES = 16


def _over_a_floor(faces: np.ndarray, up: np.ndarray, up_lo: np.ndarray, up_hi: np.ndarray) -> bool:
    """Does an upward face (corners `up`, bounds up_lo / up_hi) lie under one of the centres of the
    largest of `faces` (at most _SAMPLES), seen from above?"""
    lo, hi = faces.reshape(-1, 3).min(axis=0), faces.reshape(-1, 3).max(axis=0)
    near = (up_lo[:, 0] <= hi[0]) & (up_hi[:, 0] >= lo[0]) & (up_lo[:, 1] <= hi[1]) & (up_hi[:, 1] >= lo[1])
    near &= up_lo[:, 2] < hi[2]
    if not near.any():
        return False
    size = np.linalg.norm(np.cross(faces[:, 1] - faces[:, 0], faces[:, 2] - faces[:, 0]), axis=1)
    centres = faces[np.argsort(-size)[:_SAMPLES]].mean(axis=1)
    a, b, c = (up[near][:, k, None, :] for k in range(3))  # (U, 1, 3) against (S, 3)
    q = centres[None, :, :]

    def side(p0, p1):
        return (p1[..., 0] - p0[..., 0]) * (q[..., 1] - p0[..., 1]) - (p1[..., 1] - p0[..., 1]) * (
            q[..., 0] - p0[..., 0]
        )

    s1, s2, s3 = side(a, b), side(b, c), side(c, a)
    inside = ((s1 >= 0) & (s2 >= 0) & (s3 >= 0)) | ((s1 <= 0) & (s2 <= 0) & (s3 <= 0))
    lowest = np.minimum(np.minimum(a[..., 2], b[..., 2]), c[..., 2])
    return bool((inside & (lowest < q[..., 2])).any())
