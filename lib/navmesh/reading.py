"""The navmesh JSON read strictly: its header, a reader per section, and conversions that name the
field and the index of a value they refuse."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import NavMeshError
from ..geometry import cross_vectors

FORMAT_NAME = "navmesh"


FORMAT_VERSION = 1


# Area ids run from 0 to this (Recast's RC_WALKABLE_AREA is 63).
MAX_AREA = 63

# The fields every version-1 file has had since the format's first writer (schema/navmesh.schema.json
# lists them as required). area_costs and empty_reason may be absent: area_costs came later within
# version 1, empty_reason is written only for an empty navmesh.
REQUIRED_FIELDS = (
    "units",
    "up_axis",
    "params",
    "vertices",
    "polygons",
    "neighbors",
    "regions",
    "areas",
    "detail",
    "edge_clearance",
    "cross_clearance",
    "links",
)
# The bake parameters every version-1 file has had. max_edge_len and the jump_* parameters came later
# within version 1, so an older file lacks them and gets their defaults; cell_height, which older
# files hold, is ignored (BakeParams.from_dict).
REQUIRED_PARAMS = (
    "cell_size",
    "agent_radius",
    "agent_height",
    "agent_max_climb",
    "agent_max_slope",
    "region_min_area",
    "max_verts_per_poly",
    "max_edge_error",
    "max_height_error",
)


def _read_header(data) -> str:
    """Check what makes a dict a navmesh of this format (format, version, units, the required
    fields); returns its up axis."""
    if not isinstance(data, dict):
        raise NavMeshError("navmesh JSON must be an object at the top level")
    if data.get("format") != FORMAT_NAME:
        raise NavMeshError(f"not a navmesh file: format is {data.get('format')!r}, expected {FORMAT_NAME!r}")
    if data.get("version") != FORMAT_VERSION:
        raise NavMeshError(f"unsupported navmesh version {data.get('version')!r}; this reader knows {FORMAT_VERSION}")
    for key in REQUIRED_FIELDS:
        if key not in data:
            raise NavMeshError(f"navmesh JSON is missing the field {key!r}")
    up_axis = data["up_axis"]
    if up_axis not in ("Z", "Y"):
        raise NavMeshError(f"navmesh has up_axis {up_axis!r}; expected 'Z' or 'Y'")
    if data["units"] != "meter":
        raise NavMeshError(f"navmesh has units {data['units']!r}; only 'meter' is supported")
    if not isinstance(data["params"], dict):
        raise NavMeshError("field 'params' must be an object of bake parameters")
    if "empty_reason" in data and not isinstance(data["empty_reason"], str):
        raise NavMeshError(f"field 'empty_reason' must be text, got {data['empty_reason']!r}")
    return up_axis


def check_required_params(params: dict) -> None:
    """A NavMeshError naming the first bake parameter every version-1 file has that this one lacks
    (after the values it has are checked, so a typo is named as unknown rather than as missing)."""
    for key in REQUIRED_PARAMS:
        if key not in params:
            raise NavMeshError(f"navmesh JSON params is missing {key!r}; every navmesh file has it")


class _Polygons(NamedTuple):
    """The polygon section of a navmesh dict as NavMesh's flat arrays."""

    sizes: np.ndarray
    offsets: np.ndarray
    vertices: np.ndarray
    neighbors: np.ndarray
    regions: np.ndarray
    areas: np.ndarray


def _read_polygons(data: dict, vertex_count: int) -> _Polygons:
    """Polygons, their neighbours, regions and areas, each checked against the others."""
    polygons = data["polygons"]
    if not isinstance(polygons, list) or not all(isinstance(p, list) and len(p) >= 3 for p in polygons):
        raise NavMeshError("polygons must be a list of vertex-index lists with at least 3 entries each")
    if any(len(set(map(repr, p))) != len(p) for p in polygons):
        raise NavMeshError("a polygon lists the same vertex twice")
    sizes = np.array([len(p) for p in polygons], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    poly_vertices = _flat_ints(polygons, "polygons")
    if len(poly_vertices) and (poly_vertices.min() < 0 or poly_vertices.max() >= vertex_count):
        raise NavMeshError("polygons refer to vertex indices out of range")
    neighbors = _per_edge(data["neighbors"], sizes, "neighbors", _int_in)
    if len(neighbors) and (neighbors.min() < -1 or neighbors.max() >= len(sizes)):
        raise NavMeshError("neighbors refer to polygon indices out of range")
    regions = _array(data["regions"], np.int64, "regions")
    areas = _array(data["areas"], np.int64, "areas")
    if len(regions) != len(sizes) or len(areas) != len(sizes):
        raise NavMeshError("regions and areas need one entry per polygon")
    if len(areas) and (areas.min() < 0 or areas.max() > MAX_AREA):
        raise NavMeshError(f"area ids must be 0..{MAX_AREA}, the file has {int(areas.min())}..{int(areas.max())}")
    return _Polygons(sizes, offsets, poly_vertices, neighbors, regions, areas)


def _read_detail(data: dict, polygon_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The detail surface: (vertices, triangles, owning polygon per triangle), indices checked."""
    detail = data["detail"]
    if not isinstance(detail, dict) or not all(key in detail for key in ("vertices", "triangles", "polygons")):
        raise NavMeshError("field 'detail' must be an object with vertices, triangles and polygons")
    detail_vertices = _points(detail["vertices"], "detail.vertices")
    detail_triangles = _array(detail["triangles"], np.int64, "detail.triangles")
    if detail_triangles.size % 3:
        raise NavMeshError("field 'detail.triangles' must hold triples of vertex indices")
    detail_triangles = detail_triangles.reshape(-1, 3)
    detail_polygons = _array(detail["polygons"], np.int64, "detail.polygons")
    if len(detail_triangles) != len(detail_polygons):
        raise NavMeshError("detail.polygons needs one entry per detail triangle")
    if len(detail_polygons) and (detail_polygons.min() < 0 or detail_polygons.max() >= polygon_count):
        raise NavMeshError("detail.polygons refer to polygon indices out of range")
    if len(detail_triangles) and (detail_triangles.min() < 0 or detail_triangles.max() >= len(detail_vertices)):
        raise NavMeshError("detail.triangles refer to vertex indices out of range")
    return detail_vertices, detail_triangles, detail_polygons


def _read_clearance(data: dict, sizes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Edge clearance (one per polygon edge) and cross clearance (one per pair of a polygon's
    edges), each None when the file has none."""
    edge_clearance = cross_clearance = None
    if data.get("edge_clearance") is not None:
        edge_clearance = _per_edge(data["edge_clearance"], sizes, "edge_clearance", _float_in)
    if data.get("cross_clearance") is not None:
        cross_clearance = _per_edge(data["cross_clearance"], sizes**2, "cross_clearance", _float_in)
    return edge_clearance, cross_clearance


def _area_key(key) -> int:
    """An area id written as a JSON object key ("5")."""
    if not (isinstance(key, str) and key.isdigit()):
        raise NavMeshError(f"area_costs: key {key!r} must be an area id (a whole number)")
    return int(key)


def _area_costs(costs) -> tuple:
    """Area costs as sorted (area, cost) pairs, costs of 1 left out; NavMeshError naming a bad one."""
    pairs = costs.items() if isinstance(costs, dict) else costs
    out = {}
    for area, cost in pairs:
        if isinstance(area, bool) or not isinstance(area, (int, np.integer)) or not 0 <= int(area) <= MAX_AREA:
            raise NavMeshError(f"area_costs: area id {area!r} must be a whole number from 0 to {MAX_AREA}")
        if (
            isinstance(cost, bool)
            or not isinstance(cost, (int, float, np.number))
            or not (math.isfinite(cost) and cost > 0)
        ):
            raise NavMeshError(f"area_costs: area {int(area)} has cost {cost!r}; costs must be finite and > 0")
        if float(cost) != 1.0:
            out[int(area)] = float(cost)
    return tuple(sorted(out.items()))


def check_neighbors(offsets: np.ndarray, poly_vertices: np.ndarray, neighbors: np.ndarray) -> None:
    """Every portal fits together: the polygon an edge names has the same edge the other way round
    (its two vertices reversed) naming this polygon back, and no polygon names itself. A NavMeshError
    names the first polygon and edge that do not (a wall edge edited to name a polygon that does not
    share it, a portal on one side only), which would let a walk through a wall or answer
    differently in the two directions."""
    portal = np.flatnonzero(neighbors >= 0)
    if not len(portal):
        return
    sizes = np.diff(offsets)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    nxt = np.arange(1, len(poly_vertices) + 1)
    nxt[offsets[1:] - 1] = offsets[:-1]
    p, q = owner[portal], neighbors[portal]
    a, b = poly_vertices[portal], poly_vertices[nxt[portal]]
    back = q != p
    # Each portal against every edge slot of the polygon it names, one slot position at a time.
    for m in range(int(sizes.max())):
        j = offsets[q] + m
        slot = np.minimum(j, len(poly_vertices) - 1)
        back_here = (m < sizes[q]) & (poly_vertices[slot] == b) & (poly_vertices[nxt[slot]] == a)
        back &= ~(back_here & (neighbors[slot] == p))
    bad = np.flatnonzero((q == p) | back)
    if len(bad):
        k = int(portal[bad[0]])
        pk, qk, edge = int(owner[k]), int(neighbors[k]), k - int(offsets[owner[k]])
        va, vb = int(poly_vertices[k]), int(poly_vertices[nxt[k]])
        if qk == pk:
            raise NavMeshError(f"neighbors: polygon {pk} edge {edge} (vertices {va}-{vb}) names the polygon itself")
        raise NavMeshError(
            f"neighbors: polygon {pk} edge {edge} (vertices {va}-{vb}) names polygon {qk}, which has no edge "
            f"{vb}-{va} naming polygon {pk} back; a portal's two polygons share the edge and name each other"
        )


# A polygon corner may turn right by at most this much (sine of the angle) and still count as straight.
CONVEX_TOL = 1e-9


def check_convex(vertices: np.ndarray, offsets: np.ndarray, poly_vertices: np.ndarray) -> None:
    """Every polygon counter-clockwise seen from +Z, convex and winding once round its inside (left
    turns alone let a star through, which winds twice): a NavMeshError naming the first that is not."""
    if not len(poly_vertices):
        return
    sizes = np.diff(offsets)
    nxt = np.arange(1, len(poly_vertices) + 1)
    nxt[offsets[1:] - 1] = offsets[:-1]
    a = vertices[poly_vertices, :2]
    edge = vertices[poly_vertices[nxt], :2] - a
    a = a - np.repeat(a[offsets[:-1]], sizes, axis=0)  # about each polygon's first corner, for precision
    after = edge[nxt]
    turn = cross_vectors(edge, after)
    scale = np.hypot(*edge.T) * np.hypot(*after.T)
    area = np.add.reduceat(cross_vectors(a, edge), offsets[:-1])
    owner = np.repeat(np.arange(len(sizes)), sizes)
    bad = np.flatnonzero(area <= 0)
    if len(bad):
        raise NavMeshError(
            f"polygon {int(bad[0])} is clockwise or has no area seen from above; polygons must "
            f"be counter-clockwise seen from +Z"
        )
    # Each polygon's total turn: one full turn for a convex polygon, two for a pentagram.
    turns = np.add.reduceat(np.arctan2(turn, np.einsum("ij,ij->i", edge, after)), offsets[:-1]) / (2 * np.pi)
    bad = np.concatenate([owner[turn < -CONVEX_TOL * scale], np.flatnonzero(np.round(turns) != 1)])
    if len(bad):
        raise NavMeshError(
            f"polygon {int(bad.min())} is not convex (or crosses itself); navmesh polygons must be convex"
        )


def _float_in(x) -> float:
    """A clearance from JSON: null is +inf (unlimited); anything but a finite number >= 0 is refused."""
    if x is None:
        return math.inf
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ValueError(x)
    return float(x)


def _int_in(x) -> int:
    """An index from JSON: a whole number (2.0 passes, 2.5 and true do not)."""
    if isinstance(x, bool) or not (isinstance(x, int) or (isinstance(x, float) and x.is_integer())):
        raise ValueError(x)
    return int(x)


def _array(values, dtype, name: str) -> np.ndarray:
    try:
        raw = np.asarray(values)
        if raw.size and raw.dtype.kind not in "biuf":  # text such as "1" would convert silently
            raise TypeError(raw.dtype)
        arr = raw.astype(dtype)
    except (TypeError, ValueError):
        raise NavMeshError(f"field {name!r} has entries of the wrong type or shape") from None
    if dtype != np.float64 and raw.size and (raw.dtype == bool or not np.array_equal(raw, arr)):
        bad = np.ones(raw.shape, dtype=bool) if raw.dtype == bool else raw != arr
        k = _first_entry(bad)
        raise NavMeshError(f"field {name!r} entry {k} is {_entry(raw, k)}: whole numbers are needed")
    if dtype == np.float64 and arr.size and not np.all(np.isfinite(arr)):
        k = _first_entry(~np.isfinite(arr))
        raise NavMeshError(f"field {name!r} entry {k} has a NaN or infinite value: {_entry(raw, k)}")
    return arr.reshape(-1) if arr.ndim <= 1 else arr


def _first_entry(bad: np.ndarray) -> int:
    """The index of the first entry (row of a nested list, else element) where `bad` holds."""
    return int(np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))[0])


def _entry(raw: np.ndarray, k: int) -> str:
    """Entry k of a field as the file spells it (a number, or a row as a JSON-like list)."""
    value = raw[k]
    return repr(value.tolist()) if isinstance(value, np.ndarray) else repr(value.item())


def _points(values, name: str) -> np.ndarray:
    arr = _array(values, np.float64, name)
    if arr.size % 3 or (arr.ndim > 1 and arr.shape[-1] != 3):
        raise NavMeshError(f"field {name!r} must be a list of [x, y, z] points")
    return arr.reshape(-1, 3)


def _flat_ints(lists: list, name: str) -> np.ndarray:
    flat: list[int] = []
    for k, row in enumerate(lists):
        try:
            flat.extend(_int_in(x) for x in row)
        except ValueError as exc:
            raise NavMeshError(
                f"field {name!r} entry {k} must hold whole numbers, got {exc.args[0]!r} in {row!r}"
            ) from None
    return np.asarray(flat, dtype=np.int64)


def _per_edge(lists, sizes: np.ndarray, name: str, cast) -> np.ndarray:
    if not isinstance(lists, list) or len(lists) != len(sizes):
        raise NavMeshError(f"field {name!r} needs one list per polygon")
    for row, n in zip(lists, sizes):
        if not isinstance(row, list) or len(row) != n:
            raise NavMeshError(f"field {name!r} has a list of the wrong length for its polygon")
    flat = []
    for p, row in enumerate(lists):
        for x in row:
            try:
                flat.append(cast(x))
            except (TypeError, ValueError):
                raise NavMeshError(
                    f"field {name!r} has {x!r} for polygon {p}: "
                    f"{'a finite number >= 0 or null' if cast is _float_in else 'a whole number'} is needed"
                ) from None
    return np.asarray(flat, dtype=np.float64 if cast is _float_in else np.int64)
