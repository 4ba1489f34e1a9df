"""The polygon, detail and clearance stages' results, the NavMesh assembled from them, and its JSON form.

Storage is flat (CSR) so that queries can vectorise: polygon p owns the edge slots
`poly_offsets[p]:poly_offsets[p+1]`. Edge k of a polygon runs from its vertex k to vertex k+1.
Per-edge arrays (`poly_vertices`, `neighbors`, `edge_clearance`) share those slots.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields

import numpy as np

from .. import files
from ..components import connected_components, twin_edges
from ..errors import NavMeshError
from ..params import BakeParams
from .reading import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_AREA,
    _area_costs,
    _area_key,
    _float_in,
    _int_in,
    _points,
    _read_clearance,
    _read_detail,
    _read_header,
    _read_polygons,
    check_convex,
    check_neighbors,
    check_required_params,
)

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


def _restore(value, state: dict) -> None:
    """__setstate__ of the stage values: unpickled or deep-copied, their arrays are read-only views
    again (pickle gives back writeable arrays)."""
    value.__dict__.update(state)
    _read_only(value)


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

    __setstate__ = _restore

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
    triangle belongs to. rough: (R,) the polygons whose surface reached the triangle cap with floor
    still farther than max_height_error from it (too large for their floor's relief).
    """

    corners: np.ndarray
    vertices: np.ndarray
    triangles: np.ndarray
    polygons: np.ndarray
    rough: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self) -> None:
        _read_only(self)

    __setstate__ = _restore

    @classmethod
    def from_surfaces(cls, corners: np.ndarray, surfaces: list[tuple[np.ndarray, np.ndarray]], rough=()) -> DetailMesh:
        """The detail mesh of polygons 0, 1, ... whose surfaces are given in turn, each as (its
        vertices (k, 3), its triangles (t, 3) indexing those); rough as DetailMesh.rough."""
        offsets = np.cumsum([0] + [len(verts) for verts, _ in surfaces])
        counts = [len(tris) for _, tris in surfaces]
        return cls(
            corners=corners,
            vertices=np.concatenate([verts for verts, _ in surfaces]) if surfaces else np.zeros((0, 3)),
            triangles=np.concatenate([tris + base for (_, tris), base in zip(surfaces, offsets)]).astype(np.int64)
            if surfaces
            else np.zeros((0, 3), dtype=np.int64),
            polygons=np.repeat(np.arange(len(surfaces), dtype=np.int64), counts),
            rough=np.asarray(rough, dtype=np.int64),
        )

    def surfaces(self, polygons) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Polygon -> (vertices (k, 3), triangles (t, 3) indexing those) of its surface, as
        from_surfaces takes it, for each of `polygons` (the triangles grouped once)."""
        order = np.argsort(self.polygons, kind="stable")
        cuts = np.searchsorted(self.polygons[order], np.arange(int(self.polygons.max(initial=-1)) + 2))
        out = {}
        for p in polygons:
            tris = self.triangles[order[cuts[p] : cuts[p + 1]]]
            used, local = np.unique(tris, return_inverse=True)
            out[p] = (self.vertices[used], local.reshape(-1, 3))
        return out


@dataclass(frozen=True)
class Clearance:
    """The clearance stage's result: edge (E,), the widest agent radius that can cross each edge (0
    on boundary edges, inf where nothing limits it); cross, flat, per polygon an n×n row-major block
    (n = its edge count): entry [i, j] is the widest radius that can enter by edge i and leave by j."""

    edge: np.ndarray
    cross: np.ndarray

    def __post_init__(self) -> None:
        _read_only(self)

    __setstate__ = _restore


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
        params = BakeParams.from_dict(data["params"], baked=True)
        check_required_params(data["params"])
        vertices = _points(data["vertices"], "vertices")
        polys = _read_polygons(data, len(vertices))
        detail_vertices, detail_triangles, detail_polygons = _read_detail(data, len(polys.sizes))
        edge_clearance, cross_clearance = _read_clearance(data, polys.sizes)
        links = data["links"]
        if not isinstance(links, list):
            raise NavMeshError("field 'links' must be a list")
        links = [OffMeshLink.from_dict(link, k, up_axis == "Y", len(polys.sizes)) for k, link in enumerate(links)]
        costs = data.get("area_costs", {})  # absent from files older than area costs
        if not isinstance(costs, dict):
            raise NavMeshError("field 'area_costs' must be an object of area id -> cost")
        if up_axis == "Y":
            vertices, detail_vertices = from_y_up(vertices), from_y_up(detail_vertices)
        check_convex(vertices, polys.offsets, polys.vertices)
        check_neighbors(polys.offsets, polys.vertices, polys.neighbors)
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


def _float_out(x: float):
    """JSON has no infinity: +inf (unlimited clearance) is written as null."""
    return None if math.isinf(x) else float(x)
