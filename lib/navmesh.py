"""The polygon, detail and clearance stages' results, the NavMesh assembled from them, and its JSON form.

Storage is flat (CSR) so that queries can vectorise: polygon p owns the edge slots
`poly_offsets[p]:poly_offsets[p+1]`. Edge k of a polygon runs from its vertex k to vertex k+1.
Per-edge arrays (`poly_vertices`, `neighbors`, `edge_clearance`) share those slots.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np

from . import files
from .components import connected_components, twin_edges
from .errors import NavMeshError
from .params import BakeParams

FORMAT_NAME = "navmesh"
FORMAT_VERSION = 1
# Area ids run from 0 to this (Recast's RC_WALKABLE_AREA is 63).
MAX_AREA = 63

# Y-up files (for engines) store Blender's (x, y, z) as (x, z, -y): a rotation, so lengths and
# counter-clockwise winding (now seen from +Y) are kept; reading applies the inverse (x, -z, y).
_Z_TO_Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def to_y_up(points: np.ndarray) -> np.ndarray:
    """Blender Z-up (x, y, z) -> Y-up (x, z, -y), for (N, 3) arrays."""
    return np.asarray(points, dtype=np.float64).reshape(-1, 3) @ _Z_TO_Y_UP.T


def from_y_up(points: np.ndarray) -> np.ndarray:
    """Y-up (x, y, z) -> Blender Z-up (x, -z, y); exact inverse of `to_y_up`."""
    return np.asarray(points, dtype=np.float64).reshape(-1, 3) @ _Z_TO_Y_UP


@dataclass(frozen=True)
class OffMeshLink:
    """A connection the floor does not make (a jump, a drop, a ladder, a door): from `start` on
    polygon start_polygon to `end` on polygon end_polygon (world, on the surface), both ways when
    `bidirectional`, for agents of radius up to `radius` (m), costing `cost` times its length, with
    area id `area` (a filter can exclude it). name: where it came from (an object's name)."""

    start: tuple[float, float, float]
    end: tuple[float, float, float]
    start_polygon: int
    end_polygon: int
    radius: float
    bidirectional: bool = True
    area: int = 0
    cost: float = 1.0
    name: str = ""

    def to_dict(self, y_up: bool = False) -> dict:
        points = to_y_up(np.array([self.start, self.end])) if y_up else np.array([self.start, self.end])
        return {
            "start": points[0].tolist(),
            "end": points[1].tolist(),
            "start_polygon": self.start_polygon,
            "end_polygon": self.end_polygon,
            "radius": self.radius,
            "bidirectional": self.bidirectional,
            "area": self.area,
            "cost": self.cost,
            "name": self.name,
        }

    @classmethod
    def from_dict(cls, data, k: int, y_up: bool, polygon_count: int) -> OffMeshLink:
        """A link from its JSON object (number k in the list); NavMeshError naming what is wrong."""
        where = f"links[{k}]"
        if not isinstance(data, dict):
            raise NavMeshError(f"{where} must be an object")
        for key in ("start", "end", "start_polygon", "end_polygon", "radius"):
            if key not in data:
                raise NavMeshError(f"{where} is missing {key!r}")
        ends = _points([data["start"], data["end"]], f"{where} start/end")
        if y_up:
            ends = from_y_up(ends)
        try:
            polys = [_int_in(data["start_polygon"]), _int_in(data["end_polygon"])]
            radius, cost, area = (
                _float_in(data["radius"]),
                _float_in(data.get("cost", 1.0)),
                _int_in(data.get("area", 0)),
            )
        except ValueError as exc:
            raise NavMeshError(f"{where}: {exc.args[0]!r} is not a valid number there") from None
        if not all(0 <= p < polygon_count for p in polys):
            raise NavMeshError(f"{where} refers to polygon {polys} out of range")
        if not (math.isfinite(radius) and radius >= 0 and math.isfinite(cost) and cost > 0):
            raise NavMeshError(f"{where}: radius must be finite and >= 0, cost finite and > 0")
        if not 0 <= area <= MAX_AREA:
            raise NavMeshError(f"{where}: area {area} must be from 0 to {MAX_AREA}")
        return cls(
            tuple(ends[0].tolist()),
            tuple(ends[1].tolist()),
            polys[0],
            polys[1],
            radius,
            bool(data.get("bidirectional", True)),
            area,
            cost,
            str(data.get("name", "")),
        )


def _read_only(value) -> None:
    """Make a frozen dataclass's arrays read-only views, so what is built from it cannot go stale."""
    for f in fields(value):
        array = getattr(value, f.name)
        if isinstance(array, np.ndarray):
            view = array.view()
            view.flags.writeable = False
            object.__setattr__(value, f.name, view)


@dataclass(frozen=True, eq=False)
class PolyMesh:
    """The polygon stage's result (Recast's rcPolyMesh): convex polygons, counter-clockwise seen
    from +Z, in flat (CSR) arrays. Immutable, with read-only arrays.

    vertices: (V, 3) float64. poly_offsets: (P+1,) int64. poly_vertices: (E,) int64.
    neighbors: (E,) int64, the polygon across each edge or -1.
    regions, areas: (P,) int64, connected-island id and area id per polygon.
    """

    vertices: np.ndarray
    poly_offsets: np.ndarray
    poly_vertices: np.ndarray
    neighbors: np.ndarray
    regions: np.ndarray
    areas: np.ndarray
    params: BakeParams

    def __post_init__(self) -> None:
        _read_only(self)

    @classmethod
    def from_polygons(
        cls, polys: list[list[int]], regions, areas, vertices: np.ndarray, params: BakeParams
    ) -> PolyMesh:
        """Polygons given as vertex-index lists: the used vertices compacted, the CSR arrays built
        and each edge's neighbour found (the polygon holding the same edge reversed)."""
        used = sorted({v for poly in polys for v in poly})
        remap = {v: i for i, v in enumerate(used)}
        polys = [[remap[v] for v in poly] for poly in polys]
        owner = {}
        for p, poly in enumerate(polys):
            for k, a in enumerate(poly):
                owner[(a, poly[(k + 1) % len(poly)])] = p
        flat = [v for poly in polys for v in poly]
        neighbors = [owner.get((poly[(k + 1) % len(poly)], a), -1) for poly in polys for k, a in enumerate(poly)]
        sizes = [len(poly) for poly in polys]
        return cls(
            vertices=vertices[used] if used else np.zeros((0, 3)),
            poly_offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            poly_vertices=np.asarray(flat, dtype=np.int64),
            neighbors=np.asarray(neighbors, dtype=np.int64),
            regions=np.asarray(regions, dtype=np.int64),
            areas=np.asarray(areas, dtype=np.int64),
            params=params,
        )

    @property
    def polygon_count(self) -> int:
        return len(self.poly_offsets) - 1

    @property
    def is_empty(self) -> bool:
        return self.polygon_count == 0

    @property
    def polygon_sizes(self) -> np.ndarray:
        return np.diff(self.poly_offsets)

    @property
    def edge_polygon(self) -> np.ndarray:
        """(E,) the polygon that owns each edge slot."""
        return np.repeat(np.arange(self.polygon_count), self.polygon_sizes)

    @property
    def edge_next_vertex(self) -> np.ndarray:
        """(E,) the vertex each edge runs to (vertex k+1 of its polygon, wrapping)."""
        nxt = np.arange(1, len(self.poly_vertices) + 1)
        nxt[self.poly_offsets[1:] - 1] = self.poly_offsets[:-1]
        return self.poly_vertices[nxt]

    @property
    def edge_twin(self) -> np.ndarray:
        """(E,) the slot of the same portal edge seen from the neighbouring polygon; -1 on walls."""
        return np.where(self.neighbors >= 0, twin_edges(self.poly_vertices, self.edge_next_vertex), -1)

    @property
    def cross_offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.polygon_sizes**2)]).astype(np.int64)

    @property
    def polygons(self) -> list[list[int]]:
        return [self.poly_vertices[a:b].tolist() for a, b in zip(self.poly_offsets[:-1], self.poly_offsets[1:])]

    def polygon(self, p: int) -> np.ndarray:
        return self.poly_vertices[self.poly_offsets[p] : self.poly_offsets[p + 1]]

    def area_xy(self) -> float:
        """Walkable area seen from above (m²)."""
        return float(self.polygon_areas().sum()) if not self.is_empty else 0.0

    def polygon_areas(self) -> np.ndarray:
        """(P,) area of each polygon seen from above (m²), by the shoelace formula over its edges."""
        a = self.vertices[self.poly_vertices, :2]
        b = self.vertices[self.edge_next_vertex, :2]
        return 0.5 * np.add.reduceat(a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1], self.poly_offsets[:-1])


@dataclass(frozen=True)
class DetailMesh:
    """The detail stage's result (Recast's rcPolyMeshDetail): a triangulated surface per polygon
    that follows the real floor within max_height_error.

    corners: (V, 3) the polygon mesh's vertices, each moved onto the floor it stands on.
    vertices: (D, 3). triangles: (T, 3) int64 into vertices. polygons: (T,) the polygon each
    triangle belongs to.
    """

    corners: np.ndarray
    vertices: np.ndarray
    triangles: np.ndarray
    polygons: np.ndarray

    def __post_init__(self) -> None:
        _read_only(self)


@dataclass(frozen=True)
class Clearance:
    """The clearance stage's result: edge (E,), the widest agent radius that can cross each edge (0
    on boundary edges, inf where nothing limits it); cross, flat, per polygon an n×n row-major block
    (n = its edge count): entry [i, j] is the widest radius that can enter by edge i and leave by j."""

    edge: np.ndarray
    cross: np.ndarray

    def __post_init__(self) -> None:
        _read_only(self)


@dataclass(frozen=True, eq=False)
class NavMesh(PolyMesh):
    """The baked navmesh (world Z-up, meters): the polygons with their detail surface, clearances,
    off-mesh links and area costs. Immutable: the fields cannot be reassigned and the arrays are
    read-only, so query state built from a mesh can never go stale. A bake assembles it once from
    the stage results (`assemble`); edits (links, pruning, hand edits) make new ones.

    vertices .. params: as PolyMesh (storage described in the module docstring).
    detail_vertices / detail_triangles / detail_polygons: as DetailMesh's vertices, triangles and
    polygons.
    edge_clearance, cross_clearance: as Clearance's edge and cross; None only in a file that has none.
    empty_reason: why the mesh is empty, when it is.
    links: OffMeshLinks (lib.links.attach_links places them).
    area_costs: ((area id, cost), ...) sorted: the travel cost factor of each area id that has one
    other than 1 (a query's default filter); given as a dict or pairs.
    """

    detail_vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    detail_triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    detail_polygons: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    edge_clearance: np.ndarray | None = None
    cross_clearance: np.ndarray | None = None
    links: tuple = ()
    empty_reason: str | None = None
    area_costs: tuple = ()

    def __post_init__(self) -> None:
        _read_only(self)
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "area_costs", _area_costs(self.area_costs))

    @classmethod
    def assemble(
        cls,
        polys: PolyMesh,
        detail: DetailMesh,
        clearance: Clearance,
        origin=(0.0, 0.0, 0.0),
        area_costs=(),
    ) -> NavMesh:
        """The navmesh of a bake's stage results, its polygons standing on the floor (detail.corners),
        every point moved by `origin` (the bake works near the origin, the navmesh is in world space)."""
        shift = np.asarray(origin, dtype=np.float64)
        return cls(
            vertices=detail.corners + shift,
            poly_offsets=polys.poly_offsets,
            poly_vertices=polys.poly_vertices,
            neighbors=polys.neighbors,
            regions=polys.regions,
            areas=polys.areas,
            params=polys.params,
            detail_vertices=detail.vertices + shift,
            detail_triangles=detail.triangles,
            detail_polygons=detail.polygons,
            edge_clearance=clearance.edge,
            cross_clearance=clearance.cross,
            area_costs=area_costs,
        )

    @classmethod
    def empty(cls, params: BakeParams, reason: str) -> NavMesh:
        return cls(
            vertices=np.zeros((0, 3)),
            poly_offsets=np.zeros(1, dtype=np.int64),
            poly_vertices=np.zeros(0, dtype=np.int64),
            neighbors=np.zeros(0, dtype=np.int64),
            regions=np.zeros(0, dtype=np.int64),
            areas=np.zeros(0, dtype=np.int64),
            params=params,
            empty_reason=reason,
        )

    def islands(self) -> np.ndarray:
        """(P,) the connected piece of the navmesh each polygon is on (joined through portals and
        off-mesh links), labelled by its smallest polygon."""
        portal = self.neighbors >= 0
        u = np.concatenate([self.edge_polygon[portal], [link.start_polygon for link in self.links]]).astype(np.int64)
        v = np.concatenate([self.neighbors[portal], [link.end_polygon for link in self.links]]).astype(np.int64)
        return connected_components(self.polygon_count, u, v)

    def to_dict(self, y_up: bool = False) -> dict:
        """JSON-ready dict (see schema/navmesh.schema.json); y_up writes coordinates as (x, z, -y)."""

        def per_poly(flat: np.ndarray, offsets: np.ndarray, cast) -> list:
            return [[cast(x) for x in flat[a:b]] for a, b in zip(offsets[:-1], offsets[1:])]

        data = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "units": "meter",
            "up_axis": "Y" if y_up else "Z",
            "params": self.params.to_dict(),
            "vertices": (to_y_up(self.vertices) if y_up else self.vertices).tolist(),
            "polygons": self.polygons,
            "neighbors": per_poly(self.neighbors, self.poly_offsets, int),
            "regions": self.regions.astype(int).tolist(),
            "areas": self.areas.astype(int).tolist(),
            "detail": {
                "vertices": (to_y_up(self.detail_vertices) if y_up else self.detail_vertices).tolist(),
                "triangles": self.detail_triangles.astype(int).tolist(),
                "polygons": self.detail_polygons.astype(int).tolist(),
            },
            "edge_clearance": None
            if self.edge_clearance is None
            else per_poly(self.edge_clearance, self.poly_offsets, _float_out),
            "cross_clearance": None
            if self.cross_clearance is None
            else per_poly(self.cross_clearance, self.cross_offsets, _float_out),
            "links": [link.to_dict(y_up) for link in self.links],
            "area_costs": {str(area): cost for area, cost in self.area_costs},
        }
        if self.empty_reason is not None:
            data["empty_reason"] = self.empty_reason
        return data

    def to_json(self, indent: int | None = None, y_up: bool = False) -> str:
        return json.dumps(self.to_dict(y_up=y_up), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict) -> NavMesh:
        """Rebuild from `to_dict` output (Z-up or Y-up); every inconsistency is a NavMeshError naming it."""
        up_axis = _read_header(data)
        params = BakeParams.from_dict(data["params"])
        vertices = _points(data["vertices"], "vertices")
        polys = _read_polygons(data, len(vertices))
        detail_vertices, detail_triangles, detail_polygons = _read_detail(data, len(polys.sizes))
        edge_clearance, cross_clearance = _read_clearance(data, polys.sizes)
        links = data.get("links") or []
        if not isinstance(links, list):
            raise NavMeshError("field 'links' must be a list")
        links = [OffMeshLink.from_dict(link, k, up_axis == "Y", len(polys.sizes)) for k, link in enumerate(links)]
        costs = data.get("area_costs") or {}
        if not isinstance(costs, dict):
            raise NavMeshError("field 'area_costs' must be an object of area id -> cost")
        if up_axis == "Y":
            vertices, detail_vertices = from_y_up(vertices), from_y_up(detail_vertices)
        check_convex(vertices, polys.offsets, polys.vertices)
        return cls(
            vertices=vertices,
            poly_offsets=polys.offsets,
            poly_vertices=polys.vertices,
            neighbors=polys.neighbors,
            regions=polys.regions,
            areas=polys.areas,
            params=params,
            detail_vertices=detail_vertices,
            detail_triangles=detail_triangles,
            detail_polygons=detail_polygons,
            edge_clearance=edge_clearance,
            cross_clearance=cross_clearance,
            links=tuple(links),
            empty_reason=data.get("empty_reason"),
            area_costs=tuple((_area_key(key), cost) for key, cost in costs.items()),
        )

    @classmethod
    def from_json(cls, text: str) -> NavMesh:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NavMeshError(f"navmesh file is not valid JSON: {exc}") from None
        return cls.from_dict(data)


def _read_header(data) -> str:
    """Check what makes a dict a navmesh of this format (format, version, units, the required
    fields); returns its up axis."""
    if not isinstance(data, dict):
        raise NavMeshError("navmesh JSON must be an object at the top level")
    if data.get("format") != FORMAT_NAME:
        raise NavMeshError(f"not a navmesh file: format is {data.get('format')!r}, expected {FORMAT_NAME!r}")
    if data.get("version") != FORMAT_VERSION:
        raise NavMeshError(f"unsupported navmesh version {data.get('version')!r}; this reader knows {FORMAT_VERSION}")
    up_axis = data.get("up_axis", "Z")
    if up_axis not in ("Z", "Y"):
        raise NavMeshError(f"navmesh has up_axis {up_axis!r}; expected 'Z' or 'Y'")
    if data.get("units", "meter") != "meter":
        raise NavMeshError(f"navmesh has units {data.get('units')!r}; only 'meter' is supported")
    for key in ("params", "vertices", "polygons", "neighbors", "regions", "areas"):
        if key not in data:
            raise NavMeshError(f"navmesh JSON is missing the field {key!r}")
    if not isinstance(data["params"], dict):
        raise NavMeshError("field 'params' must be an object of bake parameters")
    return up_axis


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
    return _Polygons(sizes, offsets, poly_vertices, neighbors, regions, areas)


def _read_detail(data: dict, polygon_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The detail surface: (vertices, triangles, owning polygon per triangle), indices checked."""
    detail = data.get("detail") or {}
    if not isinstance(detail, dict):
        raise NavMeshError("field 'detail' must be an object with vertices, triangles and polygons")
    detail_vertices = _points(detail.get("vertices", []), "detail.vertices")
    detail_triangles = _array(detail.get("triangles", []), np.int64, "detail.triangles")
    if detail_triangles.size % 3:
        raise NavMeshError("field 'detail.triangles' must hold triples of vertex indices")
    detail_triangles = detail_triangles.reshape(-1, 3)
    detail_polygons = _array(detail.get("polygons", []), np.int64, "detail.polygons")
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


def save(navmesh: NavMesh, path, indent: int | None = None, y_up: bool = False) -> None:
    """Write the JSON file (all or nothing); y_up stores coordinates as (x, z, -y) for Y-up engines."""
    files.write_text(path, navmesh.to_json(indent=indent, y_up=y_up))


def load(path) -> NavMesh:
    """Read a navmesh JSON file, Z-up or Y-up, back into a Z-up NavMesh."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise NavMeshError(f"cannot read navmesh file {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise NavMeshError(f"navmesh file {str(path)!r} is not UTF-8 text") from None
    return NavMesh.from_json(text)


# A polygon corner may turn right by at most this much (sine of the angle) and still count as straight.
CONVEX_TOL = 1e-9


def check_convex(vertices: np.ndarray, offsets: np.ndarray, poly_vertices: np.ndarray) -> None:
    """Every polygon counter-clockwise seen from +Z and convex (which rules out self-intersection):
    a NavMeshError naming the first that is not."""
    if not len(poly_vertices):
        return
    sizes = np.diff(offsets)
    nxt = np.arange(1, len(poly_vertices) + 1)
    nxt[offsets[1:] - 1] = offsets[:-1]
    a = vertices[poly_vertices, :2]
    edge = vertices[poly_vertices[nxt], :2] - a
    a = a - np.repeat(a[offsets[:-1]], sizes, axis=0)  # about each polygon's first corner, for precision
    after = edge[nxt]
    turn = edge[:, 0] * after[:, 1] - edge[:, 1] * after[:, 0]
    scale = np.hypot(*edge.T) * np.hypot(*after.T)
    area = np.add.reduceat(a[:, 0] * edge[:, 1] - a[:, 1] * edge[:, 0], offsets[:-1])
    owner = np.repeat(np.arange(len(sizes)), sizes)
    bad = np.flatnonzero(area <= 0)
    if len(bad):
        raise NavMeshError(
            f"polygon {int(bad[0])} is clockwise or has no area seen from above; polygons must "
            f"be counter-clockwise seen from +Z"
        )
    bad = owner[turn < -CONVEX_TOL * scale]
    if len(bad):
        raise NavMeshError(f"polygon {int(bad[0])} is not convex (or crosses itself); navmesh polygons must be convex")


def _float_out(x: float):
    """JSON has no infinity: +inf (unlimited clearance) is written as null."""
    return None if math.isinf(x) else float(x)


def _float_in(x) -> float:
    """A clearance from JSON: null is +inf (unlimited); anything but a finite number is refused."""
    if x is None:
        return math.inf
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
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
        arr = raw.astype(dtype)
    except (TypeError, ValueError):
        raise NavMeshError(f"field {name!r} has entries of the wrong type or shape") from None
    if dtype != np.float64 and raw.size and (raw.dtype == bool or not np.array_equal(raw, arr)):
        k = 0 if raw.dtype == bool else int(np.flatnonzero(raw.reshape(-1) != arr.reshape(-1))[0])
        raise NavMeshError(f"field {name!r} entry {k} is {raw.reshape(-1)[k]!r}, not a whole number")
    if dtype == np.float64 and arr.size and not np.all(np.isfinite(arr)):
        raise NavMeshError(f"field {name!r} has NaN or infinite values")
    return arr.reshape(-1) if arr.ndim <= 1 else arr


def _points(values, name: str) -> np.ndarray:
    arr = _array(values, np.float64, name)
    if arr.size % 3 or (arr.ndim > 1 and arr.shape[-1] != 3):
        raise NavMeshError(f"field {name!r} must be a list of [x, y, z] points")
    return arr.reshape(-1, 3)


def _flat_ints(lists: list, name: str) -> np.ndarray:
    flat = [x for row in lists for x in row]
    try:
        return np.asarray([_int_in(x) for x in flat], dtype=np.int64)
    except ValueError as exc:
        raise NavMeshError(f"field {name!r} must hold lists of whole numbers, got {exc.args[0]!r}") from None


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
                    f"{'a finite number or null' if cast is _float_in else 'a whole number'} is needed"
                ) from None
    return np.asarray(flat, dtype=np.float64 if cast is _float_in else np.int64)
