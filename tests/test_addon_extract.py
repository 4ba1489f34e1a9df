"""Scene -> arrays: evaluated, world-space triangles with roles and areas, and clear errors."""

from __future__ import annotations

import math

import bpy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blender_navmesh as lib
from navmesh_addon.scene_extract import extract_scene
from tests.blender_scenes import box_object, grid_object, select_only, triangle_normals


def test_modifiers_are_applied_in_world_space(blender):
    floor = grid_object("Floor", 2.0, 2.0, location=(10.0, 0.0, 1.0))
    array = floor.modifiers.new("Array", "ARRAY")
    array.count = 3
    array.relative_offset_displace = (1.0, 0.0, 0.0)
    select_only(floor)
    arrays = extract_scene(blender, "SELECTED")
    assert arrays.triangles.shape == (6, 3)
    np.testing.assert_allclose(arrays.vertices[:, 0].min(), 10.0)
    np.testing.assert_allclose(arrays.vertices[:, 0].max(), 16.0)
    np.testing.assert_allclose(arrays.vertices[:, 2], 1.0)
    assert arrays.object_names == ["Floor"]
    assert len(floor.data.polygons) == 1 and len(floor.modifiers) == 1


def test_parenting_puts_the_child_where_the_viewport_shows_it(blender):
    parent = bpy.data.objects.new("Parent", None)
    blender.scene.collection.objects.link(parent)
    parent.location = (5.0, 0.0, 0.0)
    parent.rotation_euler = (0.0, 0.0, math.pi / 2)
    child = grid_object("Child", 2.0, 1.0)
    child.parent = parent
    select_only(child)
    arrays = extract_scene(blender, "SELECTED")
    # Local x in [0, 2] becomes world y in [0, 2]; local y in [0, 1] becomes world x in [4, 5].
    np.testing.assert_allclose(arrays.vertices[:, 0].min(), 4.0, atol=1e-6)
    np.testing.assert_allclose(arrays.vertices[:, 0].max(), 5.0, atol=1e-6)
    np.testing.assert_allclose(arrays.vertices[:, 1].max(), 2.0, atol=1e-6)


@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (1.0, -2.0, 1.0), (-1.0, -1.0, -1.0)])
def test_negative_scale_keeps_faces_pointing_out(blender, scale):
    box = box_object("Box", (0, 0, 0), (1, 1, 1))
    box.scale = scale
    select_only(box)
    arrays = extract_scene(blender, "SELECTED")
    normals = triangle_normals(arrays.vertices, arrays.triangles)
    centres = arrays.vertices[arrays.triangles].mean(axis=1)
    outward = centres - arrays.vertices.mean(axis=0)
    assert np.all(np.sum(normals * outward, axis=1) > 0)
    assert np.sum(normals[:, 2] > 0.99) == 2  # exactly the top face looks up


def test_linked_duplicates_and_collection_instances_are_all_baked(blender):
    props = bpy.data.collections.new("Props")
    tile = grid_object("Tile", 1.0, 1.0, collection=props)
    twin = bpy.data.objects.new("Twin", tile.data)
    twin.location = (3.0, 0.0, 0.0)
    blender.scene.collection.objects.link(twin)
    instancers = []
    for i in range(2):
        empty = bpy.data.objects.new(f"Instance{i}", None)
        empty.instance_type = "COLLECTION"
        empty.instance_collection = props
        empty.location = (0.0, 10.0 * (i + 1), 2.0)
        blender.scene.collection.objects.link(empty)
        instancers.append(empty)
    select_only(twin, *instancers)
    arrays = extract_scene(blender, "SELECTED")
    assert arrays.triangles.shape == (6, 3)
    centres = arrays.vertices[arrays.triangles].mean(axis=1)
    np.testing.assert_allclose(sorted(set(np.round(centres[:, 1] // 1))), [0.0, 10.0, 20.0])
    assert np.all(arrays.vertices[arrays.vertices[:, 1] >= 10.0][:, 2] == 2.0)


@pytest.mark.parametrize("show_emitter", [True, False])
def test_a_particle_emitter_is_baked_only_where_it_is_shown(blender, show_emitter):
    """A scatter plane hovering at 3 m with Show Emitter off is not drawn, and was baked as floor."""
    grid_object("Floor", 20.0, 20.0)
    emitter = grid_object("ScatterPlane", 10.0, 10.0, location=(5.0, 5.0, 3.0))
    rock = box_object("Rock", (100, 100, 0), (100.4, 100.4, 0.4))
    rock.navmesh_role = "IGNORE"
    emitter.modifiers.new("Scatter", "PARTICLE_SYSTEM")
    particles = emitter.particle_systems[0].settings
    particles.type, particles.count, particles.render_type, particles.instance_object = "HAIR", 5, "OBJECT", rock
    emitter.show_instancer_for_viewport = show_emitter
    arrays = extract_scene(blender, "VISIBLE")
    assert sorted(set(np.round(arrays.vertices[:, 2], 3))) == ([0.0, 3.0] if show_emitter else [0.0])


def test_roles_obstacle_and_ignore(blender):
    floor = grid_object("Floor", 10.0, 10.0)
    crate = box_object("Crate", (4, 4, 0), (6, 6, 1))
    ghost = box_object("Ghost", (0, 0, 0), (1, 1, 1))
    crate.navmesh_role = "OBSTACLE"
    ghost.navmesh_role = "IGNORE"
    arrays = extract_scene(blender, "VISIBLE")
    assert arrays.object_names == ["Crate", "Floor"]
    assert arrays.triangles.shape == (14, 3)
    assert arrays.walkable.sum() == 2
    walk_z = arrays.vertices[arrays.triangles[arrays.walkable]][..., 2]
    np.testing.assert_allclose(walk_z, 0.0)
    assert floor.navmesh_role == "WALKABLE"


def test_area_from_object_and_material(blender):
    floor = grid_object("Floor", 4.0, 4.0)
    floor.navmesh_area = 2
    road = grid_object("Road", 4.0, 1.0, location=(0, 5, 0))
    mud = bpy.data.materials.new("Mud")
    mud.navmesh_area = 7
    mud.navmesh_area_cost = 3.0
    road.data.materials.append(mud)
    arrays = extract_scene(blender, "VISIBLE")
    centres_y = arrays.vertices[arrays.triangles].mean(axis=1)[:, 1]
    np.testing.assert_array_equal(arrays.areas[centres_y < 4], 2)
    np.testing.assert_array_equal(arrays.areas[centres_y > 4], 7)
    assert arrays.area_costs[7] == 3.0


def test_a_collection_instancers_area_applies_to_what_it_instances(blender):
    """The instancer's Role applied to its instances, its Area Type and Area Cost (in the same box)
    did not: a water tile placed by an Empty got area 0. An instanced object's own area (not 0)
    and a material's still win, as a material's wins over its object's."""
    tile = bpy.data.collections.new("Tile")
    blender.scene.collection.children.link(tile)
    blender.view_layer.layer_collection.children["Tile"].exclude = True
    grid_object("Water", 4.0, 4.0, collection=tile)
    paved = grid_object("Paved", 4.0, 4.0, location=(0.0, 4.0, 0.0), collection=tile)
    paved.navmesh_area = 2
    mud = bpy.data.materials.new("Mud")
    mud.navmesh_area, mud.navmesh_area_cost = 7, 2.0
    muddy = grid_object("Muddy", 4.0, 4.0, location=(0.0, 8.0, 0.0), collection=tile)
    muddy.data.materials.append(mud)
    instancer = bpy.data.objects.new("WaterInstance", None)
    instancer.instance_type, instancer.instance_collection = "COLLECTION", tile
    instancer.navmesh_area, instancer.navmesh_area_cost = 3, 5.0
    blender.scene.collection.objects.link(instancer)
    grid_object("Ground", 4.0, 12.0, location=(4.0, 0.0, 0.0))
    arrays = extract_scene(blender, "VISIBLE")
    centres = arrays.vertices[arrays.triangles].mean(axis=1)
    on_tile = centres[:, 0] < 4
    np.testing.assert_array_equal(arrays.areas[on_tile & (centres[:, 1] < 4)], 3)
    np.testing.assert_array_equal(arrays.areas[on_tile & (centres[:, 1] > 4) & (centres[:, 1] < 8)], 2)
    np.testing.assert_array_equal(arrays.areas[on_tile & (centres[:, 1] > 8)], 7)
    np.testing.assert_array_equal(arrays.areas[~on_tile], 0)
    assert arrays.area_costs == {0: 1.0, 2: 1.0, 3: 5.0, 7: 2.0}
    assert set(arrays.settings) == {"WaterInstance", "Ground", "Water", "Paved", "Muddy"}


def test_collection_source_reads_nested_collections(blender):
    level = bpy.data.collections.new("Level")
    blender.scene.collection.children.link(level)
    inner = bpy.data.collections.new("Inner")
    level.children.link(inner)
    grid_object("A", 1.0, 1.0, collection=level)
    grid_object("B", 1.0, 1.0, location=(2, 0, 0), collection=inner)
    grid_object("Outside", 1.0, 1.0, location=(9, 0, 0))
    arrays = extract_scene(blender, "COLLECTION", level)
    assert arrays.object_names == ["A", "B"]


def test_collection_source_leaves_out_hidden_objects_whichever_eye_hid_them(blender):
    """An object hidden with its own eye icon and one in a child collection hidden with the
    collection's are both left out (the first was, the second was baked), as with Source Visible."""
    level = bpy.data.collections.new("Level")
    blender.scene.collection.children.link(level)
    inner = bpy.data.collections.new("Inner")
    level.children.link(inner)
    grid_object("A", 4.0, 4.0, collection=level)
    grid_object("Hidden", 4.0, 4.0, location=(10, 0, 0), collection=level).hide_set(True)
    grid_object("InHiddenCollection", 4.0, 4.0, location=(20, 0, 0), collection=inner)
    blender.view_layer.layer_collection.children["Level"].children["Inner"].hide_viewport = True
    assert extract_scene(blender, "COLLECTION", level).object_names == ["A"]
    blender.view_layer.objects["A"].hide_set(True)
    with pytest.raises(lib.NavMeshError, match="'Level' has no visible object"):
        extract_scene(blender, "COLLECTION", level)


def test_a_source_collection_showing_nothing_names_the_cause(blender):
    """Excluded from the view layer, or only in another scene, the collection got "add objects to
    it, unhide them" though it is full and nothing in it is hidden."""
    arena = bpy.data.collections.new("Arena")
    blender.scene.collection.children.link(arena)
    grid_object("ArenaFloor", 4.0, 4.0, collection=arena)
    layer = blender.view_layer.layer_collection.children["Arena"]
    layer.exclude = True
    with pytest.raises(lib.NavMeshError, match="'Arena' is excluded from view layer 'ViewLayer': tick its checkbox"):
        extract_scene(blender, "COLLECTION", arena)
    layer.exclude = False
    layer.hide_viewport = True
    with pytest.raises(lib.NavMeshError, match="'Arena' is hidden in view layer 'ViewLayer': unhide it"):
        extract_scene(blender, "COLLECTION", arena)
    assets = bpy.data.scenes.new("Assets")
    props = bpy.data.collections.new("Props")
    assets.collection.children.link(props)
    grid_object("Crate", 1.0, 1.0, collection=props)
    with pytest.raises(lib.NavMeshError, match="'Props' is not in scene 'Scene': link it into this scene"):
        extract_scene(blender, "COLLECTION", props)
    empty = bpy.data.collections.new("Empty")
    blender.scene.collection.children.link(empty)
    with pytest.raises(lib.NavMeshError, match="'Empty' has no object: add objects to it"):
        extract_scene(blender, "COLLECTION", empty)


@pytest.mark.parametrize(
    "setup, source, words",
    [
        (lambda: grid_object("Floor", 1, 1), "SELECTED", "nothing is selected"),
        (lambda: None, "COLLECTION", "no collection chosen"),
        (lambda: bpy.data.objects.new("Empty", None), "VISIBLE", "no object is visible"),
    ],
)
def test_nothing_to_bake_says_what_to_do(blender, setup, source, words):
    setup()
    select_only()
    with pytest.raises(lib.NavMeshError, match=words):
        extract_scene(blender, source)


def test_a_curve_with_every_point_deleted_is_skipped(blender):
    """Such a curve evaluates to no mesh at all (to_mesh() gives None), not to an empty one."""
    floor = grid_object("Floor", 4, 4)
    empty = bpy.data.objects.new("Emptied", bpy.data.curves.new("Emptied", "CURVE"))
    blender.scene.collection.objects.link(empty)
    arrays = extract_scene(blender, "VISIBLE")
    assert arrays.object_names == [floor.name] and len(arrays.triangles) == 2


def test_a_link_curve_with_no_points_is_named(blender):
    grid_object("Floor", 4, 4)
    rope = bpy.data.objects.new("Rope", bpy.data.curves.new("Rope", "CURVE"))
    blender.scene.collection.objects.link(rope)
    rope.navmesh_role = "OFF_MESH_LINK"
    with pytest.raises(lib.NavMeshError, match="'Rope' needs two points"):
        extract_scene(blender, "VISIBLE")


def test_only_obstacles_is_nothing_walkable(blender):
    box_object("Crate", (0, 0, 0), (1, 1, 1)).navmesh_role = "OBSTACLE"
    with pytest.raises(lib.NavMeshError, match="nothing walkable.*Walkable"):
        extract_scene(blender, "VISIBLE")


def test_navmesh_results_are_never_sources(blender):
    floor = grid_object("Floor", 1, 1)
    old = grid_object("Old_navmesh", 1, 1, location=(5, 0, 0))
    old["navmesh_generated"] = True
    arrays = extract_scene(blender, "VISIBLE")
    assert arrays.object_names == [floor.name]


def test_geometry_node_instances_are_realised(blender):
    """A geometry-nodes modifier instancing a 1 m grid on 3 points of a line 3 m apart: 3 quads."""
    group = bpy.data.node_groups.new("Scatter", "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    out = group.nodes.new("NodeGroupOutput")
    line = group.nodes.new("GeometryNodeMeshLine")
    line.inputs["Count"].default_value = 3
    line.inputs["Offset"].default_value = (3.0, 0.0, 0.0)
    grid = group.nodes.new("GeometryNodeMeshGrid")
    grid.inputs["Size X"].default_value = grid.inputs["Size Y"].default_value = 1.0
    grid.inputs["Vertices X"].default_value = grid.inputs["Vertices Y"].default_value = 2
    scatter = group.nodes.new("GeometryNodeInstanceOnPoints")
    group.links.new(line.outputs["Mesh"], scatter.inputs["Points"])
    group.links.new(grid.outputs["Mesh"], scatter.inputs["Instance"])
    group.links.new(scatter.outputs["Instances"], out.inputs[0])
    host = grid_object("Host", 1.0, 1.0, location=(0.0, 0.0, 2.0))
    host.modifiers.new("Scatter", "NODES").node_group = group
    select_only(host)
    arrays = extract_scene(blender, "SELECTED")
    assert arrays.triangles.shape == (6, 3)
    centres = arrays.vertices[arrays.triangles].mean(axis=1)
    np.testing.assert_allclose(sorted(set(np.round(centres[:, 0]))), [0.0, 3.0, 6.0], atol=0.5)
    np.testing.assert_allclose(arrays.vertices[:, 2], 2.0)
    assert arrays.object_names == ["Host"]


axis_scale = st.floats(0.2, 3.0).flatmap(lambda v: st.sampled_from([v, -v]))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scale=st.tuples(axis_scale, axis_scale, axis_scale),
    rotation=st.tuples(*[st.floats(-math.pi, math.pi)] * 3),
    offset=st.tuples(*[st.floats(-50, 50)] * 3),
)
def test_any_transform_gives_world_positions_and_outward_faces(blender, scale, rotation, offset):
    box = box_object("Box", (0, 0, 0), (1, 1, 1))
    box.scale, box.rotation_euler, box.location = scale, rotation, offset
    select_only(box)
    try:
        arrays = extract_scene(blender, "SELECTED")
        matrix = np.array(box.matrix_world)
    finally:
        bpy.data.objects.remove(box)
    local = np.array([(x, y, z) for z in (0, 1) for y in (0, 1) for x in (0, 1)], dtype=float)
    expected = local @ matrix[:3, :3].T + matrix[:3, 3]
    assert {tuple(np.round(v, 4)) for v in arrays.vertices} == {tuple(np.round(v, 4)) for v in expected}
    normals = triangle_normals(arrays.vertices, arrays.triangles)
    outward = arrays.vertices[arrays.triangles].mean(axis=1) - expected.mean(axis=0)
    assert np.all(np.sum(normals * outward, axis=1) > 0)


def test_one_area_with_two_costs_is_an_error_naming_both(blender):
    mud = bpy.data.materials.new("Mud")
    mud.navmesh_area, mud.navmesh_area_cost = 7, 3.0
    swamp = bpy.data.materials.new("Swamp")
    swamp.navmesh_area, swamp.navmesh_area_cost = 7, 5.0
    for name, material, x in (("A", mud, 0), ("B", swamp, 5)):
        grid_object(name, 4.0, 4.0, location=(x, 0, 0)).data.materials.append(material)
    with pytest.raises(lib.NavMeshError, match=r"area 7 has cost 3 on material 'Mud' and 5 on material 'Swamp'"):
        extract_scene(blender, "VISIBLE")


def test_an_objects_own_cost_counts_only_where_its_own_area_is_used(blender):
    mud = bpy.data.materials.new("Mud")
    mud.navmesh_area, mud.navmesh_area_cost = 7, 3.0
    road = grid_object("Road", 4.0, 1.0)
    road.data.materials.append(mud)
    road.navmesh_area_cost = 2.0  # its own area (0) is used by no face: nothing to disagree with
    grid_object("Floor", 4.0, 4.0, location=(0, 5, 0))
    arrays = extract_scene(blender, "VISIBLE")
    assert arrays.area_costs == {7: 3.0, 0: 1.0}


def test_the_scene_area_table_names_areas_sets_their_costs_and_can_make_them_unwalkable(blender):
    settings = blender.scene.navmesh
    assert bpy.ops.navmesh.area_type_add() == {"FINISHED"}
    assert bpy.ops.navmesh.area_type_add() == {"FINISHED"}
    mud, water = settings.area_types
    assert (mud.area_id, water.area_id) == (1, 2)
    mud.name, mud.cost = "Mud", 4.0
    water.name, water.walkable = "Water", False
    floor = grid_object("Floor", 4.0, 4.0)
    floor.navmesh_area, floor.navmesh_area_cost = 1, 9.0  # the table's cost wins, no disagreement
    pond = grid_object("Pond", 4.0, 2.0, location=(0, 5, 0))
    pond.navmesh_area = 2
    arrays = extract_scene(blender, "VISIBLE")
    assert arrays.area_costs[1] == 4.0
    centres_y = arrays.vertices[arrays.triangles].mean(axis=1)[:, 1]
    assert arrays.walkable[centres_y < 4].all() and not arrays.walkable[centres_y > 4].any()
    settings.area_types_index = 0
    assert bpy.ops.navmesh.area_type_remove() == {"FINISHED"}
    assert [entry.name for entry in settings.area_types] == ["Water"]


def test_an_area_id_named_twice_in_the_table_is_an_error(blender):
    settings = blender.scene.navmesh
    for name in ("Mud", "Swamp"):
        entry = settings.area_types.add()
        entry.name, entry.area_id = name, 5
    grid_object("Floor", 4.0, 4.0)
    with pytest.raises(
        lib.NavMeshError, match="area id 5 is named twice in the area types table \\('Mud' and 'Swamp'\\)"
    ):
        extract_scene(blender, "VISIBLE")


def test_an_object_picks_its_area_type_from_the_table(blender):
    settings = blender.scene.navmesh
    bpy.ops.navmesh.area_type_add()
    settings.area_types[0].name = "Mud"
    floor = grid_object("Floor", 4.0, 4.0)
    blender.view_layer.objects.active = floor
    assert bpy.ops.navmesh.area_type_pick(area_id=settings.area_types[0].area_id) == {"FINISHED"}
    assert floor.navmesh_area == 1 and settings.area_type(floor.navmesh_area).name == "Mud"
    mud = bpy.data.materials.new("Mud")
    floor.data.materials.append(mud)
    floor.active_material_index = 0
    assert bpy.ops.navmesh.area_type_pick(area_id=1, material=True) == {"FINISHED"}
    assert mud.navmesh_area == 1


def test_an_object_linked_from_a_library_cannot_pick_an_area_type(blender, tmp_path):
    """The Area Type menu changed a linked object, which Blender does not save (lost on reload): the
    pick is greyed out saying why, and a material linked with it is refused too."""
    floor = grid_object("LibFloor", 4.0, 4.0)
    floor.data.materials.append(bpy.data.materials.new("LibMud"))
    path = str(tmp_path / "floorlib.blend")
    bpy.data.libraries.write(path, {floor})
    bpy.data.objects.remove(floor)
    with bpy.data.libraries.load(path, link=True) as (_, into):
        into.objects = ["LibFloor"]
    (linked,) = into.objects
    blender.scene.collection.objects.link(linked)
    blender.view_layer.objects.active = linked
    bpy.ops.navmesh.area_type_add()
    assert not bpy.ops.navmesh.area_type_pick.poll()
    with pytest.raises(RuntimeError, match="'LibFloor' is linked from floorlib.blend: make it local"):
        bpy.ops.navmesh.area_type_pick(area_id=1)
    assert linked.navmesh_area == 0 and linked.active_material.navmesh_area == -1
