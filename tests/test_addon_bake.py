"""Bake operator end to end in real Blender: result object, sources untouched, re-bake, undo, cancel, errors."""

from __future__ import annotations

from types import SimpleNamespace

import bpy
import numpy as np
import pytest

import blender_navmesh as lib
from navmesh_addon import mesh_write, operators_bake, scene_extract
from tests.blender_scenes import box_object, grid_object, mesh_snapshot, select_only


def navmesh_objects() -> list:
    return [o for o in bpy.data.objects if o.get("navmesh_generated")]


@pytest.fixture
def level(blender):
    """A 10 m x 10 m floor with a 2 m obstacle-only crate in the middle, baked coarsely to stay fast."""
    floor = grid_object("Floor", 10.0, 10.0)
    crate = box_object("Crate", (4, 4, 0), (6, 6, 1.5))
    crate.navmesh_role = "OBSTACLE"
    settings = blender.scene.navmesh
    settings.source = "VISIBLE"
    settings.cell_size = 0.25
    return floor, crate


def test_bake_writes_a_navmesh_around_the_obstacle(level):
    floor, crate = level
    before = (mesh_snapshot(floor), mesh_snapshot(crate))
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    assert obj.name == f"{bpy.context.scene.name}_navmesh"
    assert obj.hide_render and obj.users_collection[0].name == "Navmesh"
    mesh = mesh_write.read_navmesh_object(obj)
    r = mesh.params.agent_radius
    assert mesh.params.to_dict() == pytest.approx({**lib.BakeParams().to_dict(), "cell_size": 0.25})  # the defaults
    # Free area: floor eroded by r minus the crate grown by r (corners rounded; allow the voxel error).
    expected = (10 - 2 * r) ** 2 - (2 + 2 * r) ** 2
    assert obj["navmesh"]["area"] == pytest.approx(expected, rel=0.08)
    assert obj["navmesh"]["polygons"] == len(obj.data.polygons) == mesh.polygon_count > 0
    assert obj["navmesh"]["bake_time"] > 0
    centres = np.array([p.center for p in obj.data.polygons])
    assert not np.any(np.all((centres[:, :2] > 4.2) & (centres[:, :2] < 5.8), axis=1))
    for name, domain in [
        ("nav_clearance", "EDGE"),
        ("nav_portal", "EDGE"),
        ("nav_neighbor", "CORNER"),
        ("nav_region", "FACE"),
        ("nav_area", "FACE"),
    ]:
        assert obj.data.attributes[name].domain == domain
    assert (mesh_snapshot(floor), mesh_snapshot(crate)) == before


def test_rebake_replaces_only_our_result(level):
    bpy.ops.navmesh.bake()
    (first,) = navmesh_objects()
    bpy.context.scene.navmesh.agent_radius = 1.0
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert navmesh_objects() == [first]
    assert mesh_write.read_navmesh_object(first).params.agent_radius == pytest.approx(1.0)
    assert first["navmesh"]["area"] == pytest.approx((10 - 2.0) ** 2 - (2 + 2.0) ** 2, rel=0.1)
    assert {o.name for o in bpy.data.objects} == {"Floor", "Crate", first.name}


def test_collection_source_names_the_result_after_the_collection(blender):
    level = bpy.data.collections.new("Arena")
    blender.scene.collection.children.link(level)
    grid_object("Ground", 8.0, 8.0, collection=level)
    settings = blender.scene.navmesh
    settings.source, settings.collection, settings.cell_size = "COLLECTION", level, 0.25
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert [o.name for o in navmesh_objects()] == ["Arena_navmesh"]


def test_undo_removes_the_bake_and_restores_the_previous_one(level):
    # Scripts call operators without undo; passing undo=True runs them as a button press does.
    bpy.ops.ed.undo_push(message="scene built")
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True)
    first_area = navmesh_objects()[0]["navmesh"]["area"]
    bpy.context.scene.navmesh.agent_radius = 1.0
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True)
    assert navmesh_objects()[0]["navmesh"]["area"] < first_area
    bpy.ops.ed.undo()
    (restored,) = navmesh_objects()
    assert restored["navmesh"]["area"] == pytest.approx(first_area)
    bpy.ops.ed.undo()
    assert navmesh_objects() == []
    assert {o.name for o in bpy.data.objects} == {"Floor", "Crate"}
    assert len(bpy.data.objects["Floor"].data.polygons) == 1


def test_cancel_stops_the_bake_and_leaves_the_scene_unchanged(level):
    job = operators_bake.prepare(bpy.context, bpy.context.scene.navmesh)
    job.cancel()
    job.start()
    job.wait(timeout=60)
    assert job.done and job.cancelled and job.results == [] and job.error is None
    assert navmesh_objects() == []


def test_threaded_job_gives_the_same_navmesh_as_the_synchronous_bake(level):
    settings = bpy.context.scene.navmesh
    job = operators_bake.prepare(bpy.context, settings)
    job.start()
    job.wait(timeout=120)
    (obj,) = operators_bake.finish(job)
    threaded = mesh_write.read_navmesh_object(obj)
    sync = mesh_write.read_navmesh_object(operators_bake.bake_to_object(bpy.context))
    assert job.stage == "done" and job.fraction == 1.0
    np.testing.assert_allclose(threaded.vertices, sync.vertices)
    np.testing.assert_array_equal(threaded.poly_vertices, sync.poly_vertices)


def test_errors_are_reports_that_say_what_to_do(blender):
    settings = blender.scene.navmesh
    select_only()
    with pytest.raises(RuntimeError, match="nothing is selected"):
        bpy.ops.navmesh.bake()
    box_object("Crate", (0, 0, 0), (1, 1, 1)).navmesh_role = "OBSTACLE"
    settings.source = "VISIBLE"
    with pytest.raises(RuntimeError, match="nothing walkable"):
        bpy.ops.navmesh.bake()
    grid_object("Tiny", 0.3, 0.3, location=(5, 5, 0))
    with pytest.raises(RuntimeError, match="nothing walkable: .*Agent Radius"):
        bpy.ops.navmesh.bake()
    assert navmesh_objects() == []


def test_degenerate_input_is_reported(blender):
    sliver = bpy.data.meshes.new("Sliver")
    sliver.from_pydata([(0, 0, 0), (1, 0, 0), (2, 0, 0)], [], [(0, 1, 2)])
    blender.scene.collection.objects.link(bpy.data.objects.new("Sliver", sliver))
    blender.scene.navmesh.source = "VISIBLE"
    with pytest.raises(RuntimeError, match="degenerate input: .*zero area; fix the geometry"):
        bpy.ops.navmesh.bake()
    assert navmesh_objects() == []


class ModalHarness:
    """Drives NAVMESH_OT_bake.modal the way the window manager does, with a recorded status bar."""

    def __init__(self, job, agent_type: str = ""):
        self._job, self._timer, self.reports, self.status = job, "timer", [], []
        self.agent_type = agent_type  # the operator's property: "" bakes every agent type group
        op = operators_bake.NAVMESH_OT_bake
        self._show = lambda context, stage, fraction: op._show(self, context, stage, fraction)
        self._cleanup = lambda context: op._cleanup(self, context)
        self.context = SimpleNamespace(
            scene=bpy.context.scene,
            screen=SimpleNamespace(areas=[]),
            window_manager=SimpleNamespace(event_timer_remove=lambda timer: None),
            workspace=SimpleNamespace(status_text_set=self.status.append),
        )

    def report(self, kind, message):
        self.reports.append((kind.pop(), message))

    def send(self, event_type: str) -> set:
        return operators_bake.NAVMESH_OT_bake.modal(self, self.context, SimpleNamespace(type=event_type))


def test_modal_bake_polls_the_worker_then_writes_the_result(level):
    harness = ModalHarness(operators_bake.prepare(bpy.context, bpy.context.scene.navmesh))
    harness._job.start()
    assert harness.send("MOUSEMOVE") == {"PASS_THROUGH"}
    outcome = harness.send("TIMER")
    while outcome == {"RUNNING_MODAL"}:
        assert bpy.context.scene.navmesh.bake_stage  # the panel shows a progress bar meanwhile
        harness._job.wait(0.05)
        outcome = harness.send("TIMER")
    assert outcome == {"FINISHED"}
    assert len(navmesh_objects()) == 1 and harness.reports[-1][0] == "INFO"
    assert harness.status[-1] is None and bpy.context.scene.navmesh.bake_stage == ""


def test_modal_escape_cancels_and_writes_nothing(level):
    harness = ModalHarness(operators_bake.prepare(bpy.context, bpy.context.scene.navmesh))
    harness._job.start()
    assert harness.send("ESC") == {"CANCELLED"}
    assert harness._job.done
    assert navmesh_objects() == []
    assert harness.reports == [("WARNING", "Navmesh bake cancelled; the scene is unchanged")]
    assert harness.status[-1] is None


def test_settings_that_make_little_sense_are_shown_and_kept_with_the_bake(level):
    from navmesh_addon.panels import setting_warnings

    settings = bpy.context.scene.navmesh
    assert setting_warnings(settings) == []
    settings.agent_height = 0.3  # below the default climb of 0.5 m
    assert setting_warnings(settings) == ["agent_height 0.3 m is below agent_max_climb 0.5 m"]
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    assert [w.split(": ")[0] for w in obj["navmesh"]["warnings"]] == setting_warnings(settings)


@pytest.mark.parametrize("scale, height", [(0.01, "0.02 m"), (100.0, "200 m")])
def test_default_settings_in_a_centimetre_or_hectometre_scene_ask_for_the_unit_scale(blender, scale, height):
    """The defaults are Blender units: at Unit Scale 0.01 a 2 cm agent on 2 mm cells, every length
    alike, so no length is far from the cell size; the panel says so before the bake (which took
    3 GB and 73 s on a 10 m room)."""
    from navmesh_addon.panels import setting_warnings

    blender.scene.unit_settings.scale_length = scale
    word = "small" if scale < 1 else "large"
    assert setting_warnings(blender.scene.navmesh) == [
        f"agent_height {height} is implausibly {word} for an agent (is the Unit Scale right? choose an agent preset)"
    ]


@pytest.mark.parametrize("scale", [0.01, 1.0])
@pytest.mark.parametrize("preset", ["HUMAN", "CHILD", "LARGE"])
def test_a_preset_sets_every_length_in_meters_whatever_the_unit_scale(blender, scale, preset):
    """The presets set the agent and cell size in meters, and the other lengths too: they kept their
    defaults in the scene's units (in a centimetre scene edge and height errors of 2 mm, a 1 cm jump
    step, a 1 cm² min region), each then named by the settings warnings. Lengths whose 0 means none
    stay as set."""
    from navmesh_addon.panels import setting_warnings
    from navmesh_addon.presets import BUILTIN

    blender.scene.unit_settings.scale_length = scale
    settings = blender.scene.navmesh
    settings.jump_max_up = 0.5 / scale
    assert bpy.ops.navmesh.agent_preset_builtin(preset=preset) == {"FINISHED"}
    params = settings.to_bake_params()
    for name in ("max_edge_error", "max_height_error", "region_min_area", "jump_step"):
        assert getattr(params, name) == pytest.approx(getattr(lib.BakeParams(), name), rel=1e-5), name
    for name, value in BUILTIN[preset].items():
        assert getattr(params, name) == pytest.approx(value, rel=1e-5), name
    assert (params.max_edge_len, params.jump_max_distance, params.jump_max_up) == (0, 0, pytest.approx(0.5))
    assert setting_warnings(settings) == []


def test_clear_removes_only_our_navmesh_and_greys_out_when_there_is_none(level):
    floor, crate = level
    before = (mesh_snapshot(floor), mesh_snapshot(crate))
    with pytest.raises(RuntimeError, match="no navmesh baked in this scene"):
        bpy.ops.navmesh.clear()
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    data_name = obj.data.name
    assert bpy.ops.navmesh.clear() == {"FINISHED"}
    assert navmesh_objects() == [] and data_name not in bpy.data.meshes
    assert (mesh_snapshot(floor), mesh_snapshot(crate)) == before
    assert not bpy.ops.navmesh.clear.poll() and not bpy.ops.navmesh.add_path_test.poll()


def test_undo_brings_a_cleared_navmesh_back(level):
    bpy.ops.ed.undo_push(message="scene built")
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True)
    area = navmesh_objects()[0]["navmesh"]["area"]
    bpy.ops.navmesh.clear("EXEC_DEFAULT", True)
    assert navmesh_objects() == []
    bpy.ops.ed.undo()
    (restored,) = navmesh_objects()
    assert restored["navmesh"]["area"] == pytest.approx(area)
    assert mesh_write.read_navmesh_object(restored).polygon_count == restored["navmesh"]["polygons"]


def test_navmesh_is_out_of_date_when_a_source_moves_or_goes_or_a_setting_changes(level):
    floor, crate = level
    settings = bpy.context.scene.navmesh
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    assert operators_bake.out_of_date(obj, settings) is None
    assert obj["navmesh"]["islands"] == 1 and list(obj["navmesh"]["warnings"]) == []
    crate.location.x += 1.0
    bpy.context.view_layer.update()  # runs depsgraph_update_post, as a move in the viewport does
    assert operators_bake.out_of_date(obj, settings) == "Crate changed"
    bpy.ops.navmesh.bake()
    assert operators_bake.out_of_date(obj, settings) is None  # baking again clears it
    settings.agent_radius = 0.3
    assert operators_bake.out_of_date(obj, settings) == "agent_radius changed"
    settings.agent_radius = 0.5
    bpy.data.objects.remove(crate)
    assert operators_bake.out_of_date(obj, settings) == "Crate was renamed or deleted"


def test_a_changed_role_area_or_area_type_makes_the_navmesh_out_of_date(level):
    """Making the crate Walkable, or painting an area, changes the next bake but was not shown: those
    properties send no depsgraph update."""
    floor, crate = level
    settings = bpy.context.scene.navmesh
    mud = bpy.data.materials.new("Mud")
    floor.data.materials.append(mud)
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    changes = [
        (crate, "navmesh_role", "WALKABLE", "Crate's navmesh role, area or materials changed"),
        (floor, "navmesh_area", 5, "Floor's navmesh role, area or materials changed"),
        (mud, "navmesh_area", 3, "Floor's navmesh role, area or materials changed"),
    ]
    for block, name, value, reason in changes:
        before = getattr(block, name)
        setattr(block, name, value)
        bpy.context.view_layer.update()
        assert operators_bake.out_of_date(obj, settings) == reason
        setattr(block, name, before)
        assert operators_bake.out_of_date(obj, settings) is None
    settings.area_types.add()
    assert operators_bake.out_of_date(obj, settings) == "the area types changed"


def test_a_material_that_sets_no_area_keeps_the_navmesh_current(level):
    """Assigning or renaming a material whose Navmesh Area is -1 cannot change the bake, but showed
    "Floor's navmesh role, area or materials changed"."""
    floor, _ = level
    settings = bpy.context.scene.navmesh
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    concrete = bpy.data.materials.new("Concrete")
    floor.data.materials.append(concrete)
    assert operators_bake.out_of_date(obj, settings) is None
    concrete.name = "Concrete_v2"
    assert operators_bake.out_of_date(obj, settings) is None
    concrete.navmesh_area = 2
    assert operators_bake.out_of_date(obj, settings) == "Floor's navmesh role, area or materials changed"
    bpy.ops.navmesh.bake()
    concrete.name = "Concrete_v3"
    assert operators_bake.out_of_date(obj, settings) is None
    concrete.navmesh_area_cost = 3.0
    assert operators_bake.out_of_date(obj, settings) == "Floor's navmesh role, area or materials changed"


def test_settings_stored_by_an_earlier_version_compare_without_material_names():
    earlier = ["WALKABLE", 0, 1.0, True, 0.0, [["Concrete", -1, 1.0]]]
    assert scene_extract.same_settings(["WALKABLE", 0, 1.0, True, 0.0, []], earlier)
    earlier = ["WALKABLE", 0, 1.0, True, 0.0, [["Concrete", -1, 1.0], ["Mud", 3, 2.0]]]
    assert scene_extract.same_settings(["WALKABLE", 0, 1.0, True, 0.0, [None, [3, 2.0]]], earlier)
    assert not scene_extract.same_settings(["WALKABLE", 0, 1.0, True, 0.0, [None, [3, 4.0]]], earlier)


def test_updates_that_leave_the_geometry_as_it_was_keep_the_navmesh_current(level):
    """Tab into Edit Mode and out without editing, or Display As Wire, showed "Floor changed"."""
    floor, _ = level
    settings = bpy.context.scene.navmesh
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    select_only(floor)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.object.mode_set(mode="OBJECT")
    floor.display_type = "WIRE"
    floor.data.shade_smooth()
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) is None
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.transform.translate(value=(0.0, 0.0, 0.2))  # an edit that changes it
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "Floor changed"


def test_a_move_put_back_as_it_was_leaves_the_navmesh_current(level):
    """A grab cancelled with Esc evaluates the moved object, then restores its exact values: the
    navmesh showed "Crate changed" for good."""
    floor, crate = level
    settings = bpy.context.scene.navmesh
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    crate_at, floor_at = crate.location.copy(), floor.location.copy()
    crate.location.x += 0.7
    floor.location.y += 0.3
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "Crate changed"
    crate.location = crate_at
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "Floor changed"  # still moved
    floor.location = floor_at
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) is None


def test_editing_what_a_collection_instance_shows_makes_the_navmesh_out_of_date(blender):
    """A level of collection instances of a tile kept in another scene: Blender's update names the
    tile, never the instancers (the sources), so editing the tile left the navmesh current."""
    level = blender.scene
    assets = bpy.data.scenes.new("Assets")
    tiles = bpy.data.collections.new("Tile")
    assets.collection.children.link(tiles)
    tile = grid_object("Tile", 5.0, 5.0, collection=tiles)
    for k, x in enumerate((0.0, 5.0)):
        instancer = bpy.data.objects.new(f"TileInstance{k}", None)
        instancer.instance_type, instancer.instance_collection = "COLLECTION", tiles
        instancer.location.x = x
        level.collection.objects.link(instancer)
    settings = level.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.25
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    assert operators_bake.out_of_date(obj, settings) is None
    for vertex in tile.data.vertices:
        vertex.co.x *= 0.5
    tile.data.update()
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "TileInstance0 changed"
    for vertex in tile.data.vertices:
        vertex.co.x *= 2.0
    tile.data.update()
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) is None  # as baked again
    extra = grid_object("Step", 1.0, 1.0, location=(1.0, 1.0, 0.3), collection=tiles)
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "TileInstance0 changed"
    tiles.objects.unlink(extra)
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) is None
    tile.navmesh_area = 4  # what it instances is read for its settings too
    assert operators_bake.out_of_date(obj, settings) == "Tile's navmesh role, area or materials changed"


def test_moving_a_modifier_input_makes_the_navmesh_out_of_date(blender):
    floor = grid_object("Floor", 10.0, 10.0)
    cutter = box_object("Cutter", (4, 4, -1), (6, 6, 1))
    cutter.navmesh_role = "IGNORE"
    floor.modifiers.new("Hole", "BOOLEAN").object = cutter
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "SELECTED", 0.25
    select_only(floor)
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    cutter.location.x += 1.0
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "Floor changed"


def test_moving_the_navmesh_or_an_unrelated_object_keeps_it_current(level):
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    from tests.blender_scenes import grid_object

    settings = bpy.context.scene.navmesh
    settings.source = "SELECTED"  # the result stays what was baked; only its sources count
    other = grid_object("Elsewhere", 2.0, 2.0, location=(50.0, 0.0, 0.0))
    other.location.y += 3.0
    obj.location.z += 0.1
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) is None


def test_source_visible_bakes_the_background_scene_the_viewport_draws(blender):
    """Objects of the scene's Background Scene (Set) are drawn but were not baked, and nothing said so."""
    grid_object("Floor", 10.0, 10.0)
    base = bpy.data.scenes.new("BaseLevel")
    annex = grid_object("Annex", 10.0, 10.0, location=(10.0, 0.0, 0.0), collection=base.collection)
    hidden = grid_object("Attic", 10.0, 10.0, location=(0.0, 20.0, 0.0), collection=base.collection)
    hidden.hide_viewport = True  # not drawn: not baked
    blender.scene.background_set = base
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.25
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    assert sorted(obj["navmesh"]["sources"]) == ["Annex", "Floor"]
    mesh = mesh_write.read_navmesh_object(obj)
    assert mesh.vertices[:, 0].max() > 19.0 and mesh.vertices[:, 1].max() < 10.0
    annex.location.x += 1.0
    bpy.context.view_layer.update()
    assert operators_bake.out_of_date(obj, settings) == "Annex changed"
    settings.source = "SELECTED"  # only what is picked: the set's objects cannot be selected here
    select_only(bpy.data.objects["Floor"])
    bpy.ops.navmesh.bake()
    assert list(obj["navmesh"]["sources"]) == ["Floor"]


def flip_normals(obj) -> None:
    obj.data.flip_normals()
    obj.data.update()


def test_floors_facing_down_are_named_with_the_fix(blender):
    """A floor with flipped normals got "nothing is flat enough ... raise Max Slope", which cannot
    help; with half the level flipped, that half silently got no navmesh."""
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.25
    floor = grid_object("Floor", 10.0, 10.0)
    flip_normals(floor)
    with pytest.raises(RuntimeError, match="the floor faces of Floor face down .*Recalculate Outside"):
        bpy.ops.navmesh.bake()
    flip_normals(floor)
    annex = grid_object("Annex", 10.0, 10.0, location=(10.0, 0.0, 0.0))
    flip_normals(annex)
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    (warning,) = obj["navmesh"]["geometry_warnings"]
    assert warning.startswith("the floor faces of Annex face down") and "Recalculate Outside" in warning
    flip_normals(annex)
    bpy.ops.navmesh.bake()
    assert list(obj["navmesh"]["geometry_warnings"]) == []


def test_faces_facing_down_on_purpose_are_not_warned_about(blender):
    """A ceiling plane over the floor and the bottoms of slabs and crates face down legitimately."""
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.25
    grid_object("Floor", 10.0, 10.0)
    ceiling = grid_object("Ceiling", 10.0, 10.0, location=(0.0, 0.0, 3.0))
    flip_normals(ceiling)
    box_object("Slab", (12, 0, 2), (16, 4, 2.3))
    box_object("Crate", (4, 4, 0), (6, 6, 1.5))
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    assert list(obj["navmesh"]["geometry_warnings"]) == []


def test_a_walkable_seed_keeps_only_the_island_it_stands_on(blender):
    """The crate top is an island of its own; a seed on the floor drops it, and the bake says so."""
    grid_object("Floor", 10.0, 10.0)
    box_object("Crate", (4, 4, 0), (6.5, 6.5, 1.5))
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.25, 0.3
    bpy.ops.navmesh.bake()
    (obj,) = navmesh_objects()
    assert obj["navmesh"]["islands"] == 2 and obj["navmesh"]["seeds"] == 0
    blender.scene.cursor.location = (1.0, 1.0, 0.0)
    assert bpy.ops.navmesh.add_seed() == {"FINISHED"}
    bpy.ops.navmesh.bake()
    assert obj["navmesh"]["islands"] == 1 and obj["navmesh"]["seeds"] == 1
    mesh = mesh_write.read_navmesh_object(obj)
    assert mesh.vertices[:, 2].max() < 0.1  # the crate top is gone


def seed(name: str, location, collection) -> bpy.types.Object:
    obj = bpy.data.objects.new(name, None)
    obj[scene_extract.SEED_TAG] = True
    obj.location = location
    collection.objects.link(obj)
    return obj


def test_a_bake_reads_only_its_sources_seeds_and_names_a_seed_off_the_floor(blender):
    """Two levels in two collections, a seed each: a bake of one collection failed on the other's
    seed ("walkable seed 1 ... is 45.5 m from the navmesh"), which the message did not name."""
    settings = blender.scene.navmesh
    levels = []
    for name, x in (("LevelA", 0.0), ("LevelB", 50.0)):
        collection = bpy.data.collections.new(name)
        blender.scene.collection.children.link(collection)
        grid_object(f"{name}Floor", 10.0, 10.0, location=(x, 0.0, 0.0), collection=collection)
        seed(f"{name}Seed", (x + 2.0, 2.0, 0.0), collection)
        levels.append(collection)
    settings.source, settings.collection, settings.cell_size = "COLLECTION", levels[0], 0.25
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert navmesh_objects()[0]["navmesh"]["seeds"] == 1
    seed("Stray", (30.0, 2.0, 0.0), levels[0])
    with pytest.raises(RuntimeError, match=r"walkable seed 'Stray' at \(30, 2, 0\) is .* m from the navmesh"):
        bpy.ops.navmesh.bake()
    settings.source = "SELECTED"  # the selected seeds only
    select_only(bpy.data.objects["LevelBFloor"], bpy.data.objects["LevelBSeed"])
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert bpy.data.objects["Scene_navmesh"]["navmesh"]["seeds"] == 1


@pytest.mark.parametrize(
    "role, area, walkable, kept",
    [("AREA_VOLUME", 5, True, 1.0), ("NO_GO_VOLUME", 0, True, 0.0), ("AREA_VOLUME", 5, False, 0.0)],
    ids=["area", "no go", "area type not walkable"],
)
def test_a_volume_object_paints_or_removes_the_floor_inside_it(blender, role, area, walkable, kept):
    """A 4 m box across a 10 m floor: as an Area Volume its floor gets the box's area type, as a
    Not Walkable Volume, or an Area Volume of a type the table marks not walkable ("Lava": kept as
    walkable area 5, paths crossed it), it is gone; the box itself is never baked as geometry."""
    floor = grid_object("Floor", 10.0, 10.0)
    mud = box_object("Mud", (3, -1, -0.5), (7, 11, 1.0))
    mud.navmesh_role, mud.navmesh_area = role, area
    settings = blender.scene.navmesh
    lava = settings.area_types.add()
    lava.name, lava.area_id, lava.walkable = "Lava", 5, walkable
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.25, 0.3
    before = (mesh_snapshot(floor), mesh_snapshot(mud))
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    mesh = mesh_write.read_navmesh_object(obj)
    r = mesh.params.agent_radius
    strip = 4 * (10 - 2 * r)
    marked = float(mesh.polygon_areas()[mesh.areas == 5].sum())
    assert marked == pytest.approx(kept * strip, abs=0.2 * 2 * (4 + 10))
    total = (10 - 2 * r) ** 2 - (1 - kept) * (strip + 2 * 2 * r * (10 - 2 * r))
    assert mesh.area_xy() == pytest.approx(total, abs=0.25 * 2 * 20)
    assert "Mud" in obj["navmesh"]["sources"]
    assert (mesh_snapshot(floor), mesh_snapshot(mud)) == before


def link_curve(name: str, start, end) -> bpy.types.Object:
    """A two-point poly curve from start to end (world)."""
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points.foreach_set("co", [*start, 1.0, *end, 1.0])
    obj = bpy.data.objects.new(name, curve)
    bpy.context.scene.collection.objects.link(obj)
    obj.navmesh_role = "OFF_MESH_LINK"
    return obj


def test_a_two_point_curve_is_an_off_mesh_link_paths_cross(blender):
    from navmesh_addon import operators_path

    grid_object("West", 8.0, 8.0)
    grid_object("East", 8.0, 8.0, location=(10.0, 0.0, 1.0))
    jump = link_curve("Jump", (7.5, 4.0, 0.0), (10.5, 4.0, 1.0))
    jump.navmesh_link_bidirectional = False
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.25, 0.3
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    mesh = mesh_write.read_navmesh_object(obj)
    (link,) = mesh.links
    assert (link.name, link.bidirectional) == ("Jump", False)
    path = operators_path.navmesh_query(obj).find_path((2.0, 4.0, 0.0), (16.0, 4.0, 1.0))
    assert path.status == "found" and len(path.links) == 1


def test_a_links_area_cost_counts_once(blender):
    """A U-shaped level, 24.5 m round, a 3 m link of area 7 across with Area Cost 3: the link cost 9
    per metre (its area's cost times a link cost of 3), and the path test walked round."""
    from navmesh_addon import operators_path

    for name, x0, y0, sx, sy in (("West", 0, 0, 4, 12), ("East", 7, 0, 4, 12), ("South", 0, 0, 11, 3)):
        grid_object(name, sx, sy, location=(x0, y0, 0.0))
    rope = link_curve("Rope", (3.5, 10.0, 0.0), (7.5, 10.0, 0.0))
    rope.navmesh_area, rope.navmesh_area_cost = 7, 3.0
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.25, 0.3
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    mesh = mesh_write.read_navmesh_object(obj)
    assert dict(mesh.area_costs) == {7: 3.0} and [link.cost for link in mesh.links] == [1.0]
    path = operators_path.navmesh_query(obj).find_path((2.0, 10.0, 0.0), (9.0, 10.0, 0.0))
    assert path.status == "found" and len(path.links) == 1  # 4 m at cost 3 beats 24 m round


def test_a_link_whose_end_is_off_the_navmesh_is_named(blender):
    grid_object("West", 8.0, 8.0)
    link_curve("Rope", (7.5, 4.0, 0.0), (30.0, 4.0, 0.0))
    blender.scene.navmesh.source = "VISIBLE"
    with pytest.raises(RuntimeError, match="'Rope' \\(its end is"):
        bpy.ops.navmesh.bake()


def test_a_link_for_smaller_agents_left_out_of_this_navmesh_is_warned_of(blender):
    """A Rope for agents up to 0.3 m onto a 1 m wide ledge a 0.6 m agent does not fit on: this
    navmesh leaves it out, and the bake says so rather than dropping it unsaid."""
    grid_object("West", 8.0, 8.0)
    grid_object("Ledge", 1.0, 8.0, location=(10.0, 0.0, 1.0))
    rope = link_curve("Rope", (7.5, 4.0, 0.0), (10.5, 4.0, 1.0))
    rope.navmesh_link_radius = 0.3
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.2, 0.6
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = navmesh_objects()
    assert mesh_write.read_navmesh_object(obj).links == ()
    (warning,) = obj["navmesh"]["geometry_warnings"]
    assert "off-mesh link Rope (Link Radius below this agent's) left out" in warning


def test_a_level_modelled_in_centimetres_bakes_the_navmesh_it_would_in_metres(blender):
    """Unit Scale 0.01 (one Blender unit shown as 1 cm): the sidebar's lengths are the scene's
    units, lib bakes in meters, and the navmesh object, the path test and the overlay come back in
    Blender units. The same 10 m room bakes the same navmesh as in a scene in meters (the Human
    preset showed a 4 mm radius and a person walked through a 60 cm gap)."""
    from navmesh_addon import operators_path, presets, units

    def bake(scene, scale: float):
        scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", scale
        k = 1.0 / scale  # Blender units per meter
        floor = grid_object(f"Floor{scene.name}", 10.0 * k, 10.0 * k, collection=scene.collection)
        crate = box_object(f"Crate{scene.name}", (4.0 * k, 4.0 * k, 0.0), (6.0 * k, 6.0 * k, 1.5 * k), scene.collection)
        crate.navmesh_role = "OBSTACLE"
        settings = scene.navmesh
        presets.apply_builtin(settings, "HUMAN")
        for name, value in (("max_edge_error", 0.2), ("max_height_error", 0.2), ("region_min_area", 1.0)):
            settings.set_bake_parameter(name, value)
        settings.source = "VISIBLE"
        blender.window.scene = scene
        assert bpy.ops.navmesh.bake() == {"FINISHED"}
        (obj,) = mesh_write.find_navmesh_objects(scene)
        assert settings.agent_radius * units.meters_per_unit(scene) == pytest.approx(0.4)
        assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
        settings.path_start.location = (1.0 * k, 1.0 * k, 0.0)
        settings.path_goal.location = (9.0 * k, 9.0 * k, 0.0)
        bpy.context.view_layer.update()
        operators_path.update_path(scene)
        return obj, mesh_write.read_navmesh_object(obj), settings.path_length, floor

    metres = bake(blender.scene, 1.0)
    centimetres = bake(bpy.data.scenes.new("Centimetres"), 0.01)
    assert centimetres[1].params.agent_radius == pytest.approx(0.4)
    assert centimetres[1].polygon_count == metres[1].polygon_count
    assert np.allclose(centimetres[1].vertices, metres[1].vertices, atol=1e-5)
    blender_units = [np.array([v.co for v in obj.data.vertices]) for obj in (metres[0], centimetres[0])]
    assert np.allclose(blender_units[1], 100.0 * blender_units[0], atol=1e-3)
    assert centimetres[2] == pytest.approx(100.0 * metres[2], rel=1e-5) and metres[2] > 11.0
    # The overlay draws the navmesh (in meters) where the floor is in the scene's units.
    from tests import viewport_image
    from tests.test_addon_view import is_navmesh_colored

    view = viewport_image.look_at((500.0, 500.0, 2500.0), (500.0, 500.0, 0.0))
    projection = viewport_image.perspective(40.0, 1.0, near=1.0, far=5000.0)
    image = viewport_image.render(blender, view, projection, (300, 300))
    floor = [(150.0, 850.0, 0.0), (300.0, 850.0, 0.0), (850.0, 150.0, 0.0), (850.0, 300.0, 0.0), (150.0, 600.0, 0.0)]
    xy = np.floor(viewport_image.project(floor, view, projection, (300, 300))).astype(int)
    assert is_navmesh_colored(image[xy[:, 1], xy[:, 0], :3]).all()
