"""COLLADA 1.4.1 (.dae) writer for a NavMesh, standard-library XML only.

The geometry is written as <polylist> (one entry per navmesh polygon, in order) so engines get
the same convex polygons; `triangulate=True` writes a fan-triangulated <triangles> instead.
Godot turns a node whose name ends in "-navmesh" into a navigation region, hence `godot_suffix`.
Per-polygon and per-edge data ride along in <extra><technique profile="navmesh">:
  polygon_regions, polygon_areas       one integer per polygon
  edge_neighbors                       one integer per polygon edge (polygon order, -1 = boundary)
  edge_clearance                       one float per polygon edge ("inf" = unlimited), when computed
  triangle_polygons                    with triangulate: the polygon each triangle came from
  bake_params                          the bake parameters as attributes
"""
from __future__ import annotations

import datetime as _dt
import xml.etree.ElementTree as ET

import numpy as np

from . import files
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
    vertices = to_y_up(mesh.vertices) if y_up else mesh.vertices
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
        triangles, owners = fan_triangulate(mesh)
        prim = ET.SubElement(mesh_el, "triangles", {"count": str(len(triangles))})
        ET.SubElement(prim, "input", {"semantic": "VERTEX", "source": f"#{geom_id}-vertices", "offset": "0"})
        ET.SubElement(prim, "p").text = _ints(triangles.ravel())
    else:
        prim = ET.SubElement(mesh_el, "polylist", {"count": str(mesh.polygon_count)})
        ET.SubElement(prim, "input", {"semantic": "VERTEX", "source": f"#{geom_id}-vertices", "offset": "0"})
        ET.SubElement(prim, "vcount").text = _ints(mesh.polygon_sizes)
        ET.SubElement(prim, "p").text = _ints(mesh.poly_vertices)

    extra = ET.SubElement(ET.SubElement(geometry, "extra"), "technique", {"profile": "navmesh"})
    _int_list(extra, "polygon_regions", mesh.regions)
    _int_list(extra, "polygon_areas", mesh.areas)
    _int_list(extra, "edge_neighbors", mesh.neighbors)
    if mesh.edge_clearance is not None:
        el = ET.SubElement(extra, "edge_clearance", {"count": str(len(mesh.edge_clearance))})
        el.text = _floats(mesh.edge_clearance)
    if triangulate:
        _int_list(extra, "triangle_polygons", owners)
    ET.SubElement(extra, "bake_params", {k: repr(v) for k, v in mesh.params.to_dict().items()})

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


def fan_triangulate(mesh: NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Fan triangles of each convex polygon: (T, 3) vertex indices and (T,) owning polygon."""
    sizes = mesh.polygon_sizes
    owners = np.repeat(np.arange(mesh.polygon_count), np.maximum(sizes - 2, 0))
    first = mesh.poly_offsets[:-1][owners]
    local = np.arange(len(owners)) - np.repeat(np.cumsum(sizes - 2) - (sizes - 2), sizes - 2)
    corners = np.stack([first, first + local + 1, first + local + 2], axis=1)
    return mesh.poly_vertices[corners].reshape(-1, 3), owners


def _asset(root: ET.Element, y_up: bool) -> None:
    asset = ET.SubElement(root, "asset")
    contributor = ET.SubElement(asset, "contributor")
    ET.SubElement(contributor, "authoring_tool").text = "Blender navmesh extension"
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
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
