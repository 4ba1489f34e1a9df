"""Blender scene -> world-space triangle arrays with a role and area per triangle.

Objects are read evaluated (modifiers applied, collection and geometry-node instances realised)
through the depsgraph, so parenting, linked duplicates and negative scale come out in world space.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

import blender_navmesh as lib
from blender_navmesh import links as offmesh
from blender_navmesh import soup

from . import units

GEOMETRY_TYPES = {"MESH", "CURVE", "SURFACE", "FONT", "META"}
# Custom property of the empties that mark walkable seeds (navmesh.add_seed).
SEED_TAG = "navmesh_seed"
ROLE_RANK = {"WALKABLE": 0, "OBSTACLE": 1, "IGNORE": 2, "AREA_VOLUME": 3, "NO_GO_VOLUME": 4, "OFF_MESH_LINK": 5}
VOLUME_ROLES = ("AREA_VOLUME", "NO_GO_VOLUME")


@dataclass
class SceneArrays:
    """What lib.generate needs, plus which objects it came from."""

    vertices: np.ndarray
    triangles: np.ndarray
    walkable: np.ndarray
    areas: np.ndarray
    object_names: list[str] = field(default_factory=list)
    area_costs: dict[int, float] = field(default_factory=dict)
    seeds: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    seed_names: list[str] = field(default_factory=list)  # what an error calls each seed
    volumes: list = field(default_factory=list)  # lib.AreaVolume per volume object
    links: list = field(default_factory=list)  # lib.links.LinkSpec per off-mesh link object
    # What a later change is compared with: per source object the digest of its evaluated world
    # geometry (source_digests) and its navmesh settings (source_settings), and the scene's area types.
    digests: dict[str, str] = field(default_factory=dict)
    settings: dict[str, list] = field(default_factory=dict)
    area_types: list = field(default_factory=list)
    # Per triangle, the evaluated object (instance) it came from, an index into part_names, the
    # names of those objects (the instanced one for an instance: the mesh to fix).
    parts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    part_names: list[str] = field(default_factory=list)

    def downward_floors(self, params: lib.BakeParams) -> list[str]:
        """Names of the objects with floors facing down (flipped normals, lib.soup.downward_floors)
        that a bake with these parameters would have walked on if they faced up."""
        found = soup.downward_floors(
            self.vertices, self.triangles, self.walkable, params.agent_max_slope, self.parts, params.region_min_area
        )
        return sorted({self.part_names[k] for k in np.unique(self.parts[found]).tolist()})


def source_objects(context, source: str, collection=None) -> set:
    """The original objects the user picked as sources; NavMeshError saying what to do when there are none."""
    context.view_layer.update()  # objects added by a script this tick are not listed before a sync
    if source == "SELECTED":
        picked = set(context.selected_objects)
        if not picked:
            raise lib.NavMeshError(
                "nothing is selected: select the objects to bake, or set Source to Collection or Visible"
            )
    elif source == "COLLECTION":
        if collection is None:
            raise lib.NavMeshError("no collection chosen: pick the collection to bake in the Sources panel")
        # Visible ones, as Source Visible: an object hidden with its own eye icon or its collection's
        # is left out alike (Blender does not evaluate the first, and the second was baked).
        picked = {obj for obj in collection.all_objects if obj.visible_get()}
        if not picked:
            raise lib.NavMeshError(_why_nothing_visible(context, collection))
    elif source == "VISIBLE":
        # What the viewport draws: the view layer's visible objects and its Background Scene's (Set).
        picked = {obj for obj in context.view_layer.objects if obj.visible_get()} | set_objects(context)
        if not picked:
            raise lib.NavMeshError("no object is visible: unhide the level geometry or choose another source")
    else:
        raise lib.NavMeshError(f"unknown source {source!r}; expected SELECTED, COLLECTION or VISIBLE")
    return {obj for obj in picked if not obj.get("navmesh_generated")}


def set_objects(context) -> set:
    """The original objects the viewport draws from the scene's Background Scene (Set) and its own
    sets: those its depsgraph evaluates as coming from a set (the set scene's visible ones)."""
    if context.scene.background_set is None:
        return set()
    depsgraph = context.evaluated_depsgraph_get()
    return {
        inst.object.original for inst in depsgraph.object_instances if not inst.is_instance and inst.object.is_from_set
    }


def _set_scenes(scene) -> list:
    """The scene's Background Scene, its background scene, and so on (Blender refuses a cycle)."""
    found = []
    while scene.background_set is not None and scene.background_set not in found:
        scene = scene.background_set
        found.append(scene)
    return found


def _why_nothing_visible(context, collection) -> str:
    """Why a source collection shows no object in the view layer, and what to do."""
    name, scene, view_layer = collection.name, context.scene, context.view_layer
    if collection != scene.collection and collection not in scene.collection.children_recursive:
        return (
            f"collection {name!r} is not in scene {scene.name!r}: link it into this scene (or bake in "
            "the scene that holds it), or pick another collection"
        )
    layers = list(_layer_collections(view_layer.layer_collection, collection))
    if layers and all(excluded for _, excluded, _ in layers):
        return (
            f"collection {name!r} is excluded from view layer {view_layer.name!r}: tick its checkbox "
            "(or its parent's) in the Outliner, or pick another collection"
        )
    if not collection.all_objects:
        return f"collection {name!r} has no object: add objects to it, or pick another collection"
    if layers and all(excluded or hidden for _, excluded, hidden in layers):
        return (
            f"collection {name!r} is hidden in view layer {view_layer.name!r}: unhide it (its eye icon, "
            "or its parent's, in the Outliner), or pick another collection"
        )
    return f"collection {name!r} has no visible object: unhide its objects, or pick another collection"


def _layer_collections(layer, collection, excluded=False, hidden=False):
    """(layer collection, excluded, hidden) for each place `collection` sits in a view layer's tree,
    counting its parents' exclude checkbox and eye icon (and the collection's own Disable in
    Viewports)."""
    excluded = excluded or layer.exclude
    hidden = hidden or layer.hide_viewport or layer.collection.hide_viewport
    if layer.collection == collection:
        yield layer, excluded, hidden
    for child in layer.children:
        yield from _layer_collections(child, collection, excluded, hidden)


def seed_points(context, source: str, collection=None) -> tuple[np.ndarray, list[str]]:
    """(K, 3) world positions (meters) and names of the walkable seeds of the bake's sources: the
    selected ones for Source Selected, those in the collection (or its children) for Source
    Collection, else every one in the view layer or in its Background Scene (Set); hidden or not,
    as a hidden seed still marks a place agents must reach (another level's seeds, in another
    collection, are not this one's)."""
    if source == "SELECTED":
        pool = context.selected_objects
    elif source == "COLLECTION" and collection is not None:
        pool = collection.all_objects
    else:
        sets = (obj for scene in _set_scenes(context.scene) for obj in scene.objects)
        pool = [*context.view_layer.objects, *sets]
    seeds = sorted({obj for obj in pool if obj.get(SEED_TAG)}, key=lambda obj: obj.name)
    points = np.array([tuple(obj.matrix_world.translation) for obj in seeds], dtype=np.float64).reshape(-1, 3)
    return points * units.meters_per_unit(context.scene), [obj.name for obj in seeds]


def extract_scene(context, source: str, collection=None) -> SceneArrays:
    """World-space triangles of the evaluated source objects, with walkable flags and area ids, in
    meters (Blender units times the scene's Unit Scale)."""
    sources = source_objects(context, source, collection)
    depsgraph = context.evaluated_depsgraph_get()
    meters = units.meters_per_unit(context.scene)
    parts, names, volumes, links, shown = [], [], [], [], []
    costs, not_walkable = _area_table(context.scene.navmesh)
    feeding = set(sources)  # the objects whose navmesh settings this bake reads: what they instance too
    for obj, owner, matrix in _instances(depsgraph, sources, meters):
        feeding.add(obj.original)
        # An instance takes the stricter of its instancer's role and its object's own.
        role = max(owner.navmesh_role, obj.original.navmesh_role, key=ROLE_RANK.get)
        if role == "IGNORE":
            continue
        if role in VOLUME_ROLES:
            volumes.append(_volume(obj, owner, matrix, role, costs, not_walkable))
            names.append(owner.name)
            continue
        if role == "OFF_MESH_LINK":
            links.append(_link(obj, owner, matrix, costs, meters))
            names.append(owner.name)
            continue
        part = _object_triangles(obj, matrix, role == "WALKABLE", costs, owner)
        if part is not None:
            parts.append(part)
            names.append(owner.name)
            shown.append(obj.original.name)
    if not parts:
        raise lib.NavMeshError(
            "the source objects have no faces to bake (all ignored, volumes, empty or not geometry): "
            "add mesh objects or set their Navmesh role to Walkable"
        )
    offsets = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
    seeds, seed_names = seed_points(context, source, collection)
    arrays = SceneArrays(
        vertices=np.concatenate([p[0] for p in parts]),
        triangles=np.concatenate([p[1] + off for p, off in zip(parts, offsets)]),
        walkable=np.concatenate([p[2] for p in parts]),
        areas=np.concatenate([p[3] for p in parts]),
        object_names=sorted(set(names)),
        area_costs={area: cost for area, (cost, _) in costs.items()},
        seeds=seeds,
        seed_names=seed_names,
        volumes=volumes,
        links=links,
        digests=source_digests(depsgraph, context.scene, sources),
        settings={obj.name: source_settings(obj) for obj in feeding},
        area_types=area_types(context.scene.navmesh),
        parts=np.repeat(np.arange(len(parts)), [len(p[1]) for p in parts]),
        part_names=shown,
    )
    # Faces of an area type the table marks not walkable still block, as Recast's null area does.
    arrays.walkable &= ~np.isin(arrays.areas, list(not_walkable))
    if not arrays.walkable.any():
        raise lib.NavMeshError(
            "nothing walkable: every source object is Obstacle Only; set the floor objects' Navmesh role to Walkable"
        )
    corners = arrays.vertices[arrays.triangles[arrays.walkable]]
    doubled_area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    if not np.any(doubled_area > 1e-12):
        raise lib.NavMeshError(
            "degenerate input: every walkable face has zero area; fix the geometry "
            "(Mesh > Clean Up > Degenerate Dissolve) or apply the objects' scale"
        )
    return arrays


def _instances(depsgraph, owners, meters: float):
    """(evaluated object, original owner, world matrix in meters) of every geometry instance shown
    of the owners: their own geometry and what they instance. show_self is off for an instancer (a
    particle emitter) whose own geometry is not shown."""
    to_meters = np.diag([meters, meters, meters, 1.0])
    for inst in depsgraph.object_instances:
        obj = inst.object
        owner = (inst.parent if inst.is_instance else obj).original
        if owner in owners and obj.type in GEOMETRY_TYPES and inst.show_self:
            yield obj, owner, to_meters @ np.array(inst.matrix_world)


def source_digests(depsgraph, scene, owners) -> dict[str, str]:
    """Per source object, a digest of its evaluated world geometry (what it instances included): a
    change that leaves it as it was (Edit Mode entered and left, Display As) keeps the digest."""
    digests = {owner.name: hashlib.sha1() for owner in owners}
    for obj, owner, matrix in _instances(depsgraph, set(owners), units.meters_per_unit(scene)):
        digest = digests[owner.name]
        for part in (matrix, *_mesh_arrays(obj)):
            digest.update(np.ascontiguousarray(part).tobytes())
    return {name: digest.hexdigest() for name, digest in digests.items()}


def _mesh_arrays(obj) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An evaluated object's mesh as arrays: vertex positions (V, 3) in its own space, loop triangles
    (T, 3) and each triangle's material index (all empty when it has no mesh: a curve with no points
    left)."""
    mesh = obj.to_mesh()
    try:
        if mesh is None:
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
        mesh.calc_loop_triangles()
        co = np.empty(3 * len(mesh.vertices), dtype=np.float64)
        mesh.vertices.foreach_get("co", co)
        tris = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
        mesh.loop_triangles.foreach_get("vertices", tris)
        mat_index = np.empty(len(mesh.loop_triangles), dtype=np.int64)
        mesh.loop_triangles.foreach_get("material_index", mat_index)
    finally:
        obj.to_mesh_clear()
    return co.reshape(-1, 3), tris.reshape(-1, 3), mat_index


def source_settings(obj) -> list:
    """An object's navmesh settings as a bake reads them: role, area, cost, link options, and per
    material slot the area and cost of a material that sets one (None for a slot whose faces take the
    object's area). A material's name, or one with no area (-1), does not change a bake: with no
    material setting an area the list is empty, as with no material at all."""
    materials = [_material_area(slot.material) for slot in obj.material_slots]
    return [
        obj.navmesh_role,
        obj.navmesh_area,
        round(obj.navmesh_area_cost, 6),
        obj.navmesh_link_bidirectional,
        round(obj.navmesh_link_radius, 6),
        materials if any(entry is not None for entry in materials) else [],
    ]


def _material_area(material) -> list | None:
    """[area, cost] of a material that sets an area, else None."""
    if material is None or material.navmesh_area < 0:
        return None
    return [material.navmesh_area, round(material.navmesh_area_cost, 6)]


def same_settings(now: list, then: list) -> bool:
    """Do an object's settings now (source_settings) give the bake its stored settings gave? A bake
    of an earlier version stored each material as [name, area, cost] (with no slot for an empty
    one): the name is dropped and an area of -1 reads as None."""
    if len(then) == 6 and then[5] and all(isinstance(entry, list) and len(entry) == 3 for entry in then[5]):
        materials = [None if entry[1] < 0 else entry[1:] for entry in then[5]]
        then = [*then[:5], materials if any(entry is not None for entry in materials) else []]
    return now == then


def area_types(settings) -> list:
    """The scene's area types table as a bake reads it: id, cost and walkable per entry."""
    return [[entry.area_id, round(entry.cost, 6), entry.walkable] for entry in settings.area_types]


def _object_triangles(obj, matrix: np.ndarray, walkable: bool, costs: dict, owner=None):
    """(vertices, triangles, walkable, areas) of one evaluated object in world space, or None if it
    has no faces. owner: the source object showing it (its instancer, for an instance)."""
    co, tris, mat_index = _mesh_arrays(obj)
    if not len(tris):
        return None
    co = co @ matrix[:3, :3].T + matrix[:3, 3]
    if np.linalg.det(matrix[:3, :3]) < 0:
        tris = tris[:, ::-1].copy()
    return co, tris, np.full(len(tris), walkable), _triangle_areas(obj, owner, mat_index, costs)


def _volume(obj, owner, matrix: np.ndarray, role: str, costs: dict, not_walkable: set) -> lib.AreaVolume:
    """An area volume object as lib takes it: world triangles, its Area Type or None (no go: also
    an area type the scene's table marks not walkable, as faces of that type are)."""
    part = _object_triangles(obj, matrix, False, {})
    name = f"area volume {obj.original.name!r}"
    if part is None:
        raise lib.NavMeshError(f"{name} has no faces: make it a closed mesh (a box) around the floor to mark")
    area = None
    giver = area_object(obj, owner)
    if role == "AREA_VOLUME" and giver.navmesh_area not in not_walkable:
        area = int(giver.navmesh_area)
        _note_cost(costs, area, giver.navmesh_area_cost, f"object {giver.name!r}")
    return lib.AreaVolume(part[0], part[1], area, name)


def _link(obj, owner, matrix: np.ndarray, costs: dict, meters: float):
    """An off-mesh link object as lib takes it: its first and last points (world, meters), both
    ways or not, its radius (None: the bake radius) and area. Its Area Cost is its area type's cost,
    as any object's, which the query applies to the link (as Detour does): the link's own cost
    factor stays 1, or the cost would count twice."""
    original = obj.original
    co = _mesh_arrays(obj)[0]
    if len(co) < 2:
        raise lib.NavMeshError(f"off-mesh link {original.name!r} needs two points (a two-point curve or an edge)")
    ends = co[[0, -1]] @ matrix[:3, :3].T + matrix[:3, 3]
    giver = area_object(obj, owner)
    _note_cost(costs, giver.navmesh_area, giver.navmesh_area_cost, f"object {giver.name!r}")
    return offmesh.LinkSpec(
        tuple(ends[0].tolist()),
        tuple(ends[1].tolist()),
        original.navmesh_link_bidirectional,
        original.navmesh_link_radius * meters or None,
        int(giver.navmesh_area),
        1.0,
        original.name,
    )


def _area_table(settings) -> tuple[dict, set]:
    """The scene's area types as costs ({area: (cost, "area type 'Mud'")}, which objects and
    materials do not override) and the ids that are not walkable; NavMeshError for an id named twice."""
    costs, not_walkable, names = {}, set(), {}
    for entry in settings.area_types:
        if entry.area_id in names:
            raise lib.InputError(
                f"area id {entry.area_id} is named twice in the area types table "
                f"({names[entry.area_id]!r} and {entry.name!r}): give each type its own id"
            )
        names[entry.area_id] = entry.name
        costs[entry.area_id] = (round(float(entry.cost), 6), f"area type {entry.name!r}")
        if not entry.walkable:
            not_walkable.add(entry.area_id)
    return costs, not_walkable


def _note_cost(costs: dict, area: int, cost: float, who: str) -> None:
    """Record an area's cost; NavMeshError when another object or material gave it a different one.
    An area type of the scene's table keeps the table's cost."""
    cost = round(float(cost), 6)  # Blender stores float32
    known = costs.setdefault(int(area), (cost, who))
    if known[1].startswith("area type "):
        return
    if known[0] != cost:
        raise lib.InputError(
            f"area {area} has cost {known[0]:g} on {known[1]} and {cost:g} on {who}: give each area id one cost"
        )


def area_object(obj, owner=None):
    """The original object whose Area Type (and Area Cost) an evaluated object's faces take where no
    material sets one: its own; for an instance whose own area is 0 (ground, the default), its
    instancer's (a collection instance's Empty), as the instancer's role applies to what it
    instances. So a material's area wins over the object's, and the object's own (not 0) over its
    instancer's."""
    original = obj.original
    if owner is not None and owner != original and original.navmesh_area == 0:
        return owner
    return original


def _triangle_areas(obj, owner, mat_index: np.ndarray, costs: dict) -> np.ndarray:
    """Area id per triangle: its material's area when set (>= 0), else the object's (area_object).
    Each area's cost is noted in costs ({area: (cost, who set it)})."""
    original = area_object(obj, owner)
    lookup, own = [], []
    for slot in obj.material_slots:
        mat = slot.material
        if mat is not None and mat.navmesh_area >= 0:
            lookup.append(mat.navmesh_area)
            _note_cost(costs, mat.navmesh_area, mat.navmesh_area_cost, f"material {mat.name!r}")
        else:
            lookup.append(original.navmesh_area)
            own.append(len(lookup) - 1)
    if not lookup:
        areas = np.full(len(mat_index), original.navmesh_area, dtype=np.int64)
        used_own = True
    else:
        slots = np.clip(mat_index, 0, len(lookup) - 1)
        areas = np.asarray(lookup, dtype=np.int64)[slots]
        used_own = bool(np.isin(slots, own).any())
    if used_own:  # the object's own cost counts only where its own area is used
        _note_cost(costs, original.navmesh_area, original.navmesh_area_cost, f"object {original.name!r}")
    return areas
