"""NavMesh -> Blender mesh object (faces = navigation polygons, attributes per the design) and back."""
from __future__ import annotations

import colorsys
import uuid

import bpy
import numpy as np

from . import lib

TAG = "navmesh_generated"
JSON_KEY = "navmesh_json"
REVISION_KEY = "navmesh_revision"  # changes with every write, so caches need not compare the JSON
REGION_COLOR = "nav_region_color"


def find_navmesh_objects(scene) -> list:
    """Objects in the scene that we generated (tagged), never guessed from names."""
    return [obj for obj in scene.objects if obj.get(TAG)]


def region_colors(regions: np.ndarray) -> np.ndarray:
    """(P, 4) RGBA per polygon: a distinct, stable hue per region id (golden-ratio hue steps)."""
    ids, inverse = np.unique(np.asarray(regions, dtype=np.int64), return_inverse=True)
    hues = (ids * 0.61803398875) % 1.0
    rgb = np.array([colorsys.hsv_to_rgb(h, 0.55, 0.9) for h in hues.tolist()]).reshape(-1, 3)
    return np.hstack([rgb[inverse.reshape(-1)], np.ones((len(inverse), 1))])


def build_mesh(mesh: lib.NavMesh, name: str) -> bpy.types.Mesh:
    """A new mesh datablock holding the polygons, their attributes and the full NavMesh JSON."""
    data = bpy.data.meshes.new(name)
    vcount, ecount, pcount = len(mesh.vertices), len(mesh.poly_vertices), mesh.polygon_count
    data.vertices.add(vcount)
    data.loops.add(ecount)
    data.polygons.add(pcount)
    data.vertices.foreach_set("co", mesh.vertices.astype(np.float32).ravel())
    data.loops.foreach_set("vertex_index", mesh.poly_vertices.astype(np.int32))
    data.polygons.foreach_set("loop_start", mesh.poly_offsets[:-1].astype(np.int32))
    data.update(calc_edges=True)
    data.validate(clean_customdata=False)

    loop_edges = np.zeros(ecount, dtype=np.int32)
    data.loops.foreach_get("edge_index", loop_edges)
    edge_count = len(data.edges)
    portal = np.zeros(edge_count, dtype=bool)
    portal[loop_edges[mesh.neighbors >= 0]] = True
    clearance = np.zeros(edge_count, dtype=np.float32)
    if mesh.edge_clearance is not None:
        slot = np.where(mesh.neighbors >= 0, mesh.edge_clearance, 0.0).astype(np.float32)
        np.maximum.at(clearance, loop_edges, slot)

    _attribute(data, "nav_clearance", "FLOAT", "EDGE", clearance)
    _attribute(data, "nav_portal", "BOOLEAN", "EDGE", portal)
    _attribute(data, "nav_neighbor", "INT", "CORNER", mesh.neighbors.astype(np.int32))
    _attribute(data, "nav_region", "INT", "FACE", mesh.regions.astype(np.int32))
    _attribute(data, "nav_area", "INT", "FACE", mesh.areas.astype(np.int32))
    # Solid mode shows only point or corner colours, so each corner carries its polygon's region colour.
    color_attr = data.color_attributes.new(REGION_COLOR, "FLOAT_COLOR", "CORNER")
    corner_colors = np.repeat(region_colors(mesh.regions), mesh.polygon_sizes, axis=0)
    color_attr.data.foreach_set("color", corner_colors.astype(np.float32).ravel())
    data.color_attributes.active_color = color_attr
    data.color_attributes.render_color_index = data.color_attributes.active_color_index
    data[JSON_KEY] = mesh.to_json()
    data[REVISION_KEY] = uuid.uuid4().hex
    return data


def write_navmesh_object(
    context, mesh: lib.NavMesh, name: str, *, collection_name: str = "Navmesh", stats: dict | None = None
) -> bpy.types.Object:
    """Create or update our navmesh object for `name` in our collection `collection_name`.

    Our object is found by its tag, which holds `name`, whatever it is called now; it is replaced in
    place (its mesh datablock is swapped, so references to the object stay valid). A user's object
    that happens to have the name is left untouched, and ours is created beside it (Blender adds a
    number to the name).
    """
    collection = _collection(context, collection_name)
    obj = _tagged(bpy.data.objects, name)
    data = build_mesh(mesh, name)
    if obj is not None and obj.type == "MESH":
        old = obj.data
        obj.data = data
        if old.users == 0:
            bpy.data.meshes.remove(old)
    else:
        obj = bpy.data.objects.new(name, data)
        obj[TAG] = name
    if collection not in obj.users_collection:
        for other in list(obj.users_collection):
            other.objects.unlink(obj)
        collection.objects.link(obj)
    obj.hide_render = True
    obj.show_wire = True  # polygon borders stay visible over the floor they lie on
    obj.matrix_world.identity()
    info = {"params": mesh.params.to_dict(), "polygons": mesh.polygon_count, "area": mesh.area_xy()}
    if mesh.empty_reason:
        info["empty_reason"] = mesh.empty_reason
    info.update(stats or {})
    obj["navmesh"] = info
    return obj


def read_navmesh_object(obj) -> lib.NavMesh:
    """The NavMesh stored on our object (lossless, including clearance and the detail mesh)."""
    if obj is None or obj.type != "MESH" or JSON_KEY not in obj.data:
        name = getattr(obj, "name", None)
        raise lib.NavMeshError(f"object {name!r} carries no navmesh data: bake a navmesh or import a navmesh JSON file")
    return lib.NavMesh.from_json(obj.data[JSON_KEY])


def _tagged(datablocks, name: str):
    """Our datablock for `name`: tagged with it, or (written before tags held names) named it and
    tagged True."""
    for block in datablocks:
        if block.get(TAG) == name:
            return block
    block = datablocks.get(name)
    legacy = None if block is None else block.get(TAG)
    return block if isinstance(legacy, (bool, int)) and legacy else None


def _collection(context, name: str) -> bpy.types.Collection:
    """Our collection for navmesh objects; a user's collection of the same name is never touched."""
    collection = _tagged(bpy.data.collections, name)
    if collection is None:
        collection = bpy.data.collections.new(name)
        collection[TAG] = name
    scene_root = context.scene.collection
    if collection not in scene_root.children_recursive:
        scene_root.children.link(collection)
    collection.hide_render = True
    return collection


def _attribute(data, name: str, kind: str, domain: str, values: np.ndarray) -> None:
    attr = data.attributes.new(name, kind, domain)
    attr.data.foreach_set("value", values)
