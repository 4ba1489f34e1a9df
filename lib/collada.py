"""COLLADA 1.4.1 (.dae) writer for a NavMesh, standard-library XML only.

The geometry is the detail surface, which follows the real floor within max_height_error
(see lib.export_surface), with vertices shared between faces. It is written as <polylist>: a polygon
whose detail is the fan from one of its corners stays one convex face starting at that corner, any
other polygon becomes its detail triangles; `triangulate=True` writes every detail triangle as
<triangles> instead. Faces are in polygon order.
Godot turns a node whose name ends in "-navmesh" into a navigation region, hence `godot_suffix`.
Per-polygon and per-edge data ride along in <extra><technique profile="navmesh">:
  face_polygons                        the navmesh polygon of each face (polylist entry or triangle)
  polygon_regions, polygon_areas       one integer per polygon
  polygon_sizes                        the edge count of each polygon
  polygon_corners                      per polygon edge (polygon order): the vertex at its start, so
                                       edge k of a polygon runs from corner k to corner k + 1
  edge_neighbors                       one integer per polygon edge (-1 = boundary)
  edge_clearance                       one float per polygon edge ("inf" = unlimited), when computed
  cross_clearance                      per polygon its n x n block of widest radius entering by edge i
                                       and leaving by edge j, row-major, when computed
  bake_params                          the bake parameters as attributes
  area_costs                           areas="..." costs="...": each area's cost other than 1
  link_ends                            per off-mesh link its start and end point (file coordinates)
  link_polygons, link_bidirectional,   per link: its start and end polygon, 1 if both ways, its
  link_areas, link_radii, link_costs   area id, widest agent radius and cost factor
"""

from __future__ import annotations

import datetime as _dt
import xml.etree.ElementTree as ET

import numpy as np

from . import files
from .export_surface import convex_pieces, export_surface, welded
from .links import link_columns
from .navmesh import NavMesh, to_y_up

NAMESPACE = "http://www.collada.org/2005/11/COLLADASchema"
GODOT_SUFFIX = "-navmesh"


def to_collada(
    mesh: NavMesh,
    *,
    name: str = "navmesh",
    y_up: bool = False,
    godot_suffix: bool = True,
    triangulate: bool = False,
) -> str:
    """The .dae document as a string. y_up writes (x, z, -y) with up_axis Y_UP, else Z_UP."""
    base = _xml_id(f"{name}{GODOT_SUFFIX}" if godot_suffix and not name.endswith(GODOT_SUFFIX) else name)
    geom_id = f"{base}-mesh"

    root = ET.Element("COLLADA", {"xmlns": NAMESPACE, "version": "1.4.1"})
    _asset(root, y_up)

    geometries = ET.SubElement(root, "library_geometries")
    geometry = ET.SubElement(geometries, "geometry", {"id": geom_id, "name": base})
    mesh_el = ET.SubElement(geometry, "mesh")
    surface = export_surface(mesh)
    vertices, vertex_of = welded(surface.vertices)
    vertices = to_y_up(vertices) if y_up else vertices
    source = ET.SubElement(mesh_el, "source", {"id": f"{geom_id}-positions"})
    array = ET.SubElement(source, "float_array", {"id": f"{geom_id}-positions-array", "count": str(vertices.size)})
    array.text = _floats(vertices.ravel())
    technique = ET.SubElement(source, "technique_common")
    accessor = ET.SubElement(
        technique, "accessor", {"source": f"#{geom_id}-positions-array", "count": str(len(vertices)), "stride": "3"}
    )
    for axis in "XYZ":
        ET.SubElement(accessor, "param", {"name": axis, "type": "float"})
    verts_el = ET.SubElement(mesh_el, "vertices", {"id": f"{geom_id}-vertices"})
    ET.SubElement(verts_el, "input", {"semantic": "POSITION", "source": f"#{geom_id}-positions"})

    if triangulate:
        face_polygons = surface.triangle_polygon
        prim = ET.SubElement(mesh_el, "triangles", {"count": str(len(face_polygons))})
        ET.SubElement(prim, "input", {"semantic": "VERTEX", "source": f"#{geom_id}-vertices", "offset": "0"})
        ET.SubElement(prim, "p").text = _ints(vertex_of[surface.triangles].ravel())
    else:
        offsets, faces, face_polygons = convex_pieces(mesh, surface)
        prim = ET.SubElement(mesh_el, "polylist", {"count": str(len(face_polygons))})
        ET.SubElement(prim, "input", {"semantic": "VERTEX", "source": f"#{geom_id}-vertices", "offset": "0"})
        ET.SubElement(prim, "vcount").text = _ints(np.diff(offsets))
        ET.SubElement(prim, "p").text = _ints(vertex_of[faces])

    extra = ET.SubElement(ET.SubElement(geometry, "extra"), "technique", {"profile": "navmesh"})
    _int_list(extra, "face_polygons", face_polygons)
    _int_list(extra, "polygon_regions", mesh.regions)
    _int_list(extra, "polygon_areas", mesh.areas)
    _int_list(extra, "polygon_sizes", mesh.polygon_sizes)
    _int_list(extra, "polygon_corners", vertex_of[surface.corner_vertex])
    _int_list(extra, "edge_neighbors", mesh.neighbors)
    for tag in ("edge_clearance", "cross_clearance"):
        values = getattr(mesh, tag)
        if values is not None:
            ET.SubElement(extra, tag, {"count": str(len(values))}).text = _floats(values)
    ET.SubElement(extra, "bake_params", {k: repr(v) for k, v in mesh.params.to_dict().items()})
    if mesh.area_costs:
        areas, costs = zip(*mesh.area_costs)
        ET.SubElement(extra, "area_costs", {"areas": _ints(areas), "costs": _floats(costs)})
    if mesh.links:
        ends = np.array([[link.start, link.end] for link in mesh.links], dtype=np.float64).reshape(-1, 3)
        ends = to_y_up(ends) if y_up else ends
        ET.SubElement(extra, "link_ends", {"count": str(ends.size)}).text = _floats(ends.ravel())
        for tag, values in link_columns(mesh).items():
            if values.dtype.kind == "f":
                ET.SubElement(extra, tag, {"count": str(len(values))}).text = _floats(values)
            else:
                _int_list(extra, tag, values)

    scenes = ET.SubElement(root, "library_visual_scenes")
    scene = ET.SubElement(scenes, "visual_scene", {"id": "Scene", "name": "Scene"})
    node = ET.SubElement(scene, "node", {"id": base, "name": base, "type": "NODE"})
    ET.SubElement(node, "instance_geometry", {"url": f"#{geom_id}"})
    ET.SubElement(ET.SubElement(root, "scene"), "instance_visual_scene", {"url": "#Scene"})

    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def write_collada(mesh: NavMesh, path, **options) -> None:
    """Write `to_collada(mesh, **options)` to path (UTF-8, all or nothing)."""
    files.write_text(path, to_collada(mesh, **options))


def _asset(root: ET.Element, y_up: bool) -> None:
    asset = ET.SubElement(root, "asset")
    contributor = ET.SubElement(asset, "contributor")
    ET.SubElement(contributor, "authoring_tool").text = "Blender navmesh extension"
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    ET.SubElement(asset, "created").text = now
    ET.SubElement(asset, "modified").text = now
    ET.SubElement(asset, "unit", {"name": "meter", "meter": "1"})
    ET.SubElement(asset, "up_axis").text = "Y_UP" if y_up else "Z_UP"


def _int_list(parent: ET.Element, tag: str, values: np.ndarray) -> None:
    ET.SubElement(parent, tag, {"count": str(len(values))}).text = _ints(values)


def _ints(values) -> str:
    return " ".join(str(int(v)) for v in values)


def _floats(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def _xml_id(name: str) -> str:
    """The name as an xs:NCName, which COLLADA requires for ids and names: letters, digits, '-', '_'
    and '.', not starting with a digit, '-' or '.'."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return safe if safe and (safe[0].isalpha() or safe[0] == "_") else f"_{safe}"
