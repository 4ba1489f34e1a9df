"""Godot 3 NavigationMesh resource (.tres, text) writer for a NavMesh.

Godot's importer turns a "-navmesh" glTF or COLLADA node into a NavigationMesh of triangles; this
resource keeps the convex polygons instead: `load("res://level.tres")` as the navmesh of a
NavigationMeshInstance under a Navigation node. The faces are those of `export_surface.convex_pieces`:
a polygon whose detail surface is the fan from one of its corners is one face starting at that corner
(Godot fans a polygon from its first vertex, so its heights are the detail surface's), any other
polygon is its detail triangles; the surface follows the real floor within max_height_error.

Godot is Y-up: Blender's (x, y, z) is written as (x, z, -y). Faces are wound clockwise seen from above,
the reverse of ours and Recast's, as Godot's importer winds a "-navmesh" mesh and its Recast baker
writes polygons (Godot 3.2's pathing accepts either winding); vertices are shared between faces.
The resource's metadata (`get_meta(name)`) carries what Godot has no place for:
  navmesh_format, navmesh_version, units    "navmesh", the JSON format version, "meter"
  face_polygons                              the navmesh polygon of each face
  polygon_regions, polygon_areas             one integer per navmesh polygon
  polygon_sizes, polygon_corners             per polygon its edge count; per edge (polygon after
                                             polygon) the vertex its edge starts at: edge k runs from
                                             corner k to k + 1, counter-clockwise seen from above
  edge_neighbors                             per edge the polygon across it, -1 on the boundary
  edge_clearance, cross_clearance            as in the JSON format, when computed; unlimited is
                                             UNLIMITED_CLEARANCE (Godot 3.2 cannot read back inf)
  bake_params                                the bake parameters
  area_costs                                 area id -> cost, for costs other than 1
  link_ends                                  per off-mesh link its start and end (Y-up)
  link_polygons, link_bidirectional,         per link its start and end polygon, 1 if both ways,
  link_areas, link_radii, link_costs         area id, widest agent radius and cost factor
"""

from __future__ import annotations

import numpy as np

from . import files
from .export_surface import convex_pieces, export_surface, finite_clearance, welded
from .links import link_columns
from .navmesh import FORMAT_NAME, FORMAT_VERSION, NavMesh, to_y_up

# Godot's NavigationMesh settings that mean the same as a bake parameter (world units), so a re-bake in
# Godot starts from the same agent.
GODOT_SETTINGS = {
    "cell/size": "cell_size",
    "agent/height": "agent_height",
    "agent/radius": "agent_radius",
    "agent/max_climb": "agent_max_climb",
    "agent/max_slope": "agent_max_slope",
    "detail/sample_max_error": "max_height_error",
}


# Godot 3's Navigation keys every vertex by its position on a 1 cm grid, in 21-bit fields across
# and 22 bits up: beyond these distances from the origin (m) the keys wrap round, and its paths there
# go wrong without an error (seen in Godot 3.2.3 at 11 km).
GODOT3_REACH = 2**20 * 0.01
GODOT3_HEIGHT_REACH = 2**21 * 0.01


def range_warning(mesh: NavMesh) -> str | None:
    """Why Godot 3 would path wrongly on this navmesh (a vertex beyond its reach), or None."""
    points = np.vstack([mesh.vertices, mesh.detail_vertices]).reshape(-1, 3)
    if not len(points):
        return None
    across = float(np.abs(points[:, :2]).max())
    up = float(np.abs(points[:, 2]).max())
    if across <= GODOT3_REACH and up <= GODOT3_HEIGHT_REACH:
        return None
    return (
        f"the navmesh reaches {max(across, up):,.0f} m from the origin: Godot 3 paths only within "
        f"{GODOT3_REACH:,.0f} m across and {GODOT3_HEIGHT_REACH:,.0f} m up (it keys points on a 1 cm grid), "
        "so move the level nearer the origin for Godot"
    )


def to_tres(mesh: NavMesh) -> str:
    """The NavigationMesh resource as Godot 3's text format."""
    surface = export_surface(mesh)
    vertices, vertex_of = welded(surface.vertices)
    offsets, faces, face_polygons = convex_pieces(mesh, surface)
    faces = vertex_of[faces]
    polygons = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        first, rest = faces[a], faces[a + 1 : b][::-1]  # clockwise, still starting at the fan's apex
        polygons.append(f"PoolIntArray( {_ints([first, *rest])} )")

    meta = {
        "navmesh_format": _string(FORMAT_NAME),
        "navmesh_version": str(FORMAT_VERSION),
        "units": _string("meter"),
        "face_polygons": _int_array(face_polygons),
        "polygon_regions": _int_array(mesh.regions),
        "polygon_areas": _int_array(mesh.areas),
        "polygon_sizes": _int_array(mesh.polygon_sizes),
        "polygon_corners": _int_array(vertex_of[surface.corner_vertex]),
        "edge_neighbors": _int_array(mesh.neighbors),
    }
    for name in ("edge_clearance", "cross_clearance"):
        values = getattr(mesh, name)
        if values is not None:
            meta[name] = f"PoolRealArray( {_floats(finite_clearance(values))} )"
    params = mesh.params.to_dict()
    meta["bake_params"] = _dictionary({key: _number(value) for key, value in params.items()})
    if mesh.area_costs:
        meta["area_costs"] = _dictionary({str(area): _number(cost) for area, cost in mesh.area_costs})
    if mesh.links:
        ends = to_y_up(np.array([[link.start, link.end] for link in mesh.links], dtype=np.float64).reshape(-1, 3))
        meta["link_ends"] = f"PoolVector3Array( {_floats(ends.ravel())} )"
        for name, values in link_columns(mesh).items():
            meta[name] = f"PoolRealArray( {_floats(values)} )" if values.dtype.kind == "f" else _int_array(values)
    if mesh.empty_reason is not None:
        meta["empty_reason"] = _string(mesh.empty_reason)

    lines = [
        '[gd_resource type="NavigationMesh" format=2]',
        "",
        "[resource]",
        f"vertices = PoolVector3Array( {_floats(to_y_up(vertices).ravel())} )",
        f"polygons = [ {', '.join(polygons)} ]",
        *(f"{setting} = {_number(params[name])}" for setting, name in GODOT_SETTINGS.items()),
        f"__meta__ = {_dictionary(meta)}",
        "",
    ]
    return "\n".join(lines)


def write_tres(mesh: NavMesh, path) -> None:
    """Write `to_tres(mesh)` to path (UTF-8, all or nothing)."""
    files.write_text(path, to_tres(mesh))


def _dictionary(entries: dict[str, str]) -> str:
    body = ",\n".join(f"{_string(key)}: {value}" for key, value in entries.items())
    return f"{{\n{body}\n}}"


def _int_array(values) -> str:
    return f"PoolIntArray( {_ints(values)} )"


def _ints(values) -> str:
    return ", ".join(str(int(v)) for v in values)


def _floats(values) -> str:
    return ", ".join(_number(v) for v in values)


def _number(value) -> str:
    return str(int(value)) if isinstance(value, (int, np.integer)) else repr(float(value))


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
