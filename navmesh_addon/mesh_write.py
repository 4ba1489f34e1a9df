"""NavMesh -> Blender mesh object (faces = navigation polygons, attributes per the design) and back."""

from __future__ import annotations

import hashlib
import uuid

import bmesh
import bpy
import numpy as np
from mathutils import Matrix

import blender_navmesh as lib
from blender_navmesh import edit

from . import units

TAG = "navmesh_generated"
JSON_KEY = "navmesh_json"
REVISION_KEY = "navmesh_revision"  # changes with every write, so caches need not compare the JSON
FACES_KEY = "navmesh_faces"  # fingerprint of the faces as written: a hand edit changes it
# Meters per Blender unit the faces were written in (the scene's Unit Scale then).
METERS_KEY = "navmesh_meters_per_unit"
MATERIAL_NAME = "Navmesh"
NAVMESH_COLOR = (0.05, 0.75, 0.68, 1.0)  # teal: apart from the greys of untextured levels
NAVMESH_ALPHA = 0.5
# The object is drawn this far above the polygons it stores (its transform, not its vertices), so its
# faces do not flicker against the floor they lie on. The stored data stay exact; the overlay draws
# the detail surface over steps, where the flat polygons dip into them.
DISPLAY_LIFT = 0.02
# Blender units (and radians) by which a navmesh object's transform may differ from the one it was
# written with and still count as not moved (the transform is stored at single precision).
MOTION_TOLERANCE = 1e-5
# What ties our objects and collections to the scene they were baked for: the scene's key (with the
# scene name it was last given under), and on each of ours the key of its scene. A navmesh appended
# from another file, or seen through a scene's Linked Copy, carries another scene's key: it is read
# (paths, exports) but never replaced or removed. A scene copied with its key leaves the key to the
# scene of the name it was given under, and gets its own at its first bake.
SCENE_KEY = "navmesh_scene_key"
SCENE_KEY_NAME = "navmesh_scene_key_name"
OWNER_KEY = "navmesh_scene"


def find_navmesh_objects(scene) -> list:
    """Objects in the scene that we generated (tagged), never guessed from names: every one a path
    test or export can read, linked from another file or baked for another scene included."""
    return [obj for obj in scene.objects if obj.get(TAG)]


def own_navmesh_objects(scene) -> list:
    """Our objects in the scene that a bake of it replaces and Clear removes (see `owned`)."""
    return [obj for obj in find_navmesh_objects(scene) if owned(obj, scene)]


def owned(block, scene) -> bool:
    """Is our tagged object or collection the scene's own: local (not linked from a library file or
    overridden, which Blender does not save back) and written for this scene, or before our
    datablocks recorded their scene."""
    if block.library is not None or block.override_library is not None:
        return False
    owner = block.get(OWNER_KEY)
    return owner is None or owner == scene_key(scene)


def scene_key(scene) -> str | None:
    """The scene's key, or None before its first bake, or when it carries a key copied from another
    scene that keeps it (the one whose name the key was last given under, else the first by name)."""
    key = scene.get(SCENE_KEY)
    if key is None:
        return None
    sharing = [other for other in bpy.data.scenes if other.get(SCENE_KEY) == key]
    if len(sharing) > 1:
        named = [other for other in sharing if other.get(SCENE_KEY_NAME) == other.name]
        if scene != (named or sorted(sharing, key=lambda other: other.name))[0]:
            return None
    return key


def claim_scene_key(scene) -> str:
    """The scene's key, given a new one first when it has none of its own (written: not in a draw)."""
    key = scene_key(scene) or uuid.uuid4().hex
    scene[SCENE_KEY], scene[SCENE_KEY_NAME] = key, scene.name
    return key


def remove_navmesh_object(obj) -> None:
    """Delete one of our navmesh objects, and its mesh data when nothing else uses it."""
    data = obj.data
    bpy.data.objects.remove(obj)
    if data is not None and data.users == 0:
        bpy.data.meshes.remove(data)


def build_mesh(mesh: lib.NavMesh, name: str, meters: float = 1.0) -> bpy.types.Mesh:
    """A new mesh datablock holding the polygons (in Blender units, `meters` each), their attributes
    and the full NavMesh JSON (in meters)."""
    data = bpy.data.meshes.new(name)
    vcount, ecount, pcount = len(mesh.vertices), len(mesh.poly_vertices), mesh.polygon_count
    data.vertices.add(vcount)
    data.loops.add(ecount)
    data.polygons.add(pcount)
    data.vertices.foreach_set("co", (mesh.vertices / meters).astype(np.float32).ravel())
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
    data.materials.append(navmesh_material())
    data[JSON_KEY] = mesh.to_json()
    data[METERS_KEY] = meters
    data[REVISION_KEY] = uuid.uuid4().hex
    data[FACES_KEY] = faces_fingerprint(data)
    return data


def write_navmesh_object(
    scene, mesh: lib.NavMesh, name: str, *, collection_name: str = "Navmesh", stats: dict | None = None
) -> bpy.types.Object:
    """Create or update the scene's navmesh object for `name` in its collection `collection_name`.

    Our object is found among the scene's own (`owned`) by its tag, which holds `name`, whatever it
    is called now; it is replaced in place (its mesh datablock is swapped, so references to the
    object stay valid). A user's object that happens to have the name, or ours of another scene or
    file, is left untouched, and ours is created beside it (Blender adds a number to the name).
    """
    key = claim_scene_key(scene)
    collection = _collection(scene, collection_name, key)
    obj = _tagged(own_navmesh_objects(scene), name)
    meters = units.meters_per_unit(scene)
    data = build_mesh(mesh, name, meters)
    if obj is not None and obj.type == "MESH":
        old = obj.data
        obj.data = data
        if old.users == 0:
            bpy.data.meshes.remove(old)
    else:
        obj = bpy.data.objects.new(name, data)
        obj[TAG] = name
    obj[OWNER_KEY] = key
    if collection not in obj.users_collection:
        for other in list(obj.users_collection):
            other.objects.unlink(obj)
        collection.objects.link(obj)
    obj.hide_render = True
    obj.show_wire = True  # polygon borders stay visible over the floor they lie on
    obj.color = NAVMESH_COLOR  # Solid mode's Object colour
    obj.matrix_world = Matrix.Translation((0.0, 0.0, DISPLAY_LIFT / meters))
    info = {"params": mesh.params.to_dict(), "polygons": mesh.polygon_count, "area": mesh.area_xy()}
    if mesh.empty_reason:
        info["empty_reason"] = mesh.empty_reason
    info.update(stats or {})
    obj["navmesh"] = info
    return obj


def read_navmesh_object(obj) -> lib.NavMesh:
    """The NavMesh of our object: as stored (lossless, with clearance and the detail surface), or,
    once its faces were edited by hand, the edited faces rebuilt into one (lib.edit)."""
    if obj is None or obj.type != "MESH" or JSON_KEY not in obj.data:
        name = getattr(obj, "name", None)
        raise lib.NavMeshError(f"object {name!r} carries no navmesh data: bake a navmesh or import a navmesh JSON file")
    angle, offset = object_motion(obj)
    baked = lib.NavMesh.from_json(obj.data[JSON_KEY])
    if not edited_by_hand(obj):
        return edit.moved(baked, angle, offset)
    data = obj.data
    co, corners, starts = _faces(data)
    polygons = [part.tolist() for part in np.split(corners, starts[1:])] if len(starts) else []
    try:
        edited = edit.from_edited_polygons(
            baked,
            co.reshape(-1, 3).astype(np.float64) * data.get(METERS_KEY, 1.0),
            polygons,
            _face_ints(data, "nav_area"),
            _face_ints(data, "nav_region"),
        )
    except lib.NavMeshError as exc:
        raise lib.NavMeshError(f"navmesh {obj.name!r} was edited by hand: {exc}") from None
    return edit.moved(edited, angle, offset)


def written_matrix(obj) -> Matrix:
    """The world transform the navmesh object was written with (its faces lifted for display)."""
    return Matrix.Translation((0.0, 0.0, DISPLAY_LIFT / obj.data.get(METERS_KEY, 1.0)))


def object_motion(obj) -> tuple[float, np.ndarray]:
    """How the navmesh object was moved in Object Mode since it was written (its world transform,
    parents included, against `written_matrix`): (turn about Z in radians, offset in meters), applied
    to the navmesh wherever it is read, as a hand edit of its faces is; (0, zeros) when it was not
    moved. A navmesh can only be moved along the floor: NavMeshError naming the transform, and how to
    clear it, when it is tilted, scaled, mirrored or sheared (its slopes, clearances and agent sizes
    would no longer hold)."""
    relative = np.array(obj.matrix_world, dtype=np.float64) @ np.array(written_matrix(obj).inverted(), dtype=np.float64)
    turn, shift = relative[:3, :3], relative[:3, 3]
    angle = float(np.arctan2(turn[1, 0], turn[0, 0]))
    c, s = np.cos(angle), np.sin(angle)
    if not np.allclose(turn, [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]], rtol=0.0, atol=MOTION_TOLERANCE):
        raise lib.NavMeshError(
            f"navmesh {obj.name!r} is {_transform_words(obj)} in Object Mode: a navmesh can only be moved or "
            "turned about Z (tilting or scaling it would change its slopes and agent sizes); "
            "clear its rotation (Alt+R) and scale (Alt+S), or bake again"
        )
    if abs(angle) < MOTION_TOLERANCE:
        angle = 0.0
    if np.abs(shift).max() < MOTION_TOLERANCE:
        shift = np.zeros(3)
    return angle, shift * obj.data.get(METERS_KEY, 1.0)


def moved_by_hand(obj) -> bool:
    """Was the navmesh object moved or turned in Object Mode since it was written (`object_motion`)?
    True too when it was tilted or scaled, which reading it refuses."""
    try:
        angle, offset = object_motion(obj)
    except lib.NavMeshError:
        return True
    return angle != 0.0 or bool(offset.any())


def _transform_words(obj) -> str:
    """What the object's world transform does besides moving and turning about Z, in words."""
    axes = np.array(obj.matrix_world, dtype=np.float64)[:3, :3]
    lengths = np.linalg.norm(axes, axis=0)
    words = []
    if np.abs(axes[2, :2]).max() > MOTION_TOLERANCE * lengths[:2].max() or axes[2, 2] < 0.0:
        words.append("tilted (rotated about X or Y)")
    if np.linalg.det(axes) < 0.0:
        words.append("mirrored (a negative scale)")
    elif np.abs(lengths - 1.0).max() > MOTION_TOLERANCE:
        words.append(f"scaled ({', '.join(f'{k:.3g}' for k in lengths)})")
    return " and ".join(words) or "sheared (by a parent's scale)"


def revision(obj) -> tuple:
    """What caches of a navmesh object's NavMesh are keyed by: the write, the faces and the object's
    world transform now."""
    return obj.data.get(REVISION_KEY), faces_fingerprint(obj.data), tuple(map(tuple, obj.matrix_world))


def edited_by_hand(obj) -> bool:
    """Do the object's faces differ from those the navmesh was written with?"""
    written = obj.data.get(FACES_KEY)
    return written is not None and written != faces_fingerprint(obj.data)


def faces_fingerprint(data) -> str:
    """A hash of what a hand edit can change: the corners' positions, the faces and their area ids."""
    digest = hashlib.sha1()
    for part in (*_faces(data), _face_ints(data, "nav_area")):
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()


def _faces(data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A mesh's corner positions (3V,) float32 as Blender stores them, each face corner's vertex
    and each face's first corner. In Edit Mode, those of the mesh being edited (the datablock's
    arrays are not kept in step with it until Edit Mode is left)."""
    if data.is_editmode:
        bm = bmesh.from_edit_mesh(data)
        bm.verts.index_update()
        co = np.array([c for v in bm.verts for c in v.co], dtype=np.float32)
        corners = np.array([loop.vert.index for f in bm.faces for loop in f.loops], dtype=np.int64)
        sizes = np.array([len(f.loops) for f in bm.faces], dtype=np.int64)
        return co, corners, np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else sizes
    co = np.empty(3 * len(data.vertices), dtype=np.float32)
    data.vertices.foreach_get("co", co)
    corners = np.empty(len(data.loops), dtype=np.int64)
    data.loops.foreach_get("vertex_index", corners)
    starts = np.empty(len(data.polygons), dtype=np.int64)
    data.polygons.foreach_get("loop_start", starts)
    return co, corners, starts


def check_not_edited(scene) -> None:
    """NavMeshError naming the scene's own navmesh object that is in Edit Mode: a bake cannot replace
    the mesh of an object in Edit Mode (Blender keeps the one being edited), nor should Clear remove it."""
    for obj in own_navmesh_objects(scene):
        if obj.type == "MESH" and obj.data.is_editmode:
            raise lib.NavMeshError(
                f"navmesh {obj.name!r} is in Edit Mode: leave Edit Mode (Tab) first, as baking replaces its faces"
            )


def collection_for_new_objects(context) -> bpy.types.Collection:
    """Where an operator adds an object, as Blender's own Add menu does: the active collection,
    else (linked from a library file or overridden, where an object added is lost on reload) its
    nearest editable parent, else the scene collection."""

    def editable(collection) -> bool:
        return collection.library is None and collection.override_library is None

    def chain(layer, target) -> list:  # the layer collections from the view layer's root down to target
        if layer == target:
            return [layer]
        for child in layer.children:
            found = chain(child, target)
            if found:
                return [layer, *found]
        return []

    active = context.view_layer.active_layer_collection
    for layer in reversed(chain(context.view_layer.layer_collection, active)):
        if editable(layer.collection):
            return layer.collection
    return context.scene.collection


def poll_navmesh(operator_class, context, message: str, find=find_navmesh_objects) -> bool:
    """An operator's poll that needs a navmesh object in the scene (as `find` finds them); `message`
    says what to do."""
    if find(context.scene):
        return True
    operator_class.poll_message_set(message)
    return False


def _face_ints(data, name: str) -> np.ndarray:
    """A per-face int attribute (0 for faces a user added, which have none set), in Edit Mode from
    the mesh being edited."""
    if data.is_editmode:
        bm = bmesh.from_edit_mesh(data)
        layer = bm.faces.layers.int.get(name)
        return np.array([f[layer] if layer is not None else 0 for f in bm.faces], dtype=np.int64)
    values = np.zeros(len(data.polygons), dtype=np.int64)
    attr = data.attributes.get(name)
    if attr is not None and attr.domain == "FACE" and len(values):
        raw = np.empty(len(values), dtype=np.int32)
        attr.data.foreach_get("value", raw)
        values[:] = raw
    return values


def navmesh_material() -> bpy.types.Material:
    """Our semi-transparent teal material (found by its tag, created when missing; user materials are
    never touched): its viewport colour shows in Solid mode, its shader nodes in Material Preview."""
    material = _tagged(bpy.data.materials, MATERIAL_NAME)
    if material is not None:
        return material
    material = bpy.data.materials.new(MATERIAL_NAME)
    material[TAG] = MATERIAL_NAME
    material.diffuse_color = (*NAVMESH_COLOR[:3], NAVMESH_ALPHA)
    if material.node_tree is None:  # Blender 4.x makes materials without nodes; 5.0 always has them
        material.use_nodes = True
    shader = material.node_tree.nodes.get("Principled BSDF")
    shader.inputs["Base Color"].default_value = NAVMESH_COLOR
    shader.inputs["Alpha"].default_value = NAVMESH_ALPHA
    shader.inputs["Roughness"].default_value = 0.8
    material.surface_render_method = "BLENDED"
    material.use_backface_culling = False
    return material


def _tagged(blocks, name: str):
    """Our datablock for `name` among `blocks`: tagged with it, or (written before tags held names)
    named it and tagged True."""
    legacy = None
    for block in blocks:
        tag = block.get(TAG)
        if tag == name and isinstance(tag, str):
            return block
        if block.name == name and isinstance(tag, (bool, int)) and tag:
            legacy = block
    return legacy


def _collection(scene, name: str, key: str) -> bpy.types.Collection:
    """The scene's own collection for our navmesh objects (each scene has its own, so one level's
    navmesh never shows, or is cleared, in another, even where a Linked Copy of the scene shares the
    first scene's); a user's collection of the same name is never touched."""
    scene_root = scene.collection
    collection = _tagged([c for c in scene_root.children_recursive if owned(c, scene)], name)
    if collection is None:
        collection = bpy.data.collections.new(name)
        collection[TAG] = name
        scene_root.children.link(collection)
    collection[OWNER_KEY] = key
    collection.hide_render = True
    return collection


def _attribute(data, name: str, kind: str, domain: str, values: np.ndarray) -> None:
    attr = data.attributes.new(name, kind, domain)
    attr.data.foreach_set("value", values)
