"""Agent types through real bpy: types sharing height, climb and slope share one navmesh baked at
their smallest radius, another height gets its own object, the path test and the overlay follow
the chosen type's radius.

The level: a 10 m x 10 m floor with a 2 m x 2 m crate (1.5 m high) in the middle.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from navmesh_addon import mesh_write, operators_bake, operators_path, overlay, panels
from tests import viewport_image
from tests.blender_scenes import box_object, grid_object, mesh_snapshot
from tests.test_addon_view import PROJECTION, SIZE, is_navmesh_colored, pixels_at

CRATE = ((4.0, 4.0), (6.0, 6.0))
TOP = viewport_image.look_at((5.0, 5.0, 16.0), (5.0, 5.0, 0.0))
TYPES = {"Human": (0.3, 1.8), "Ogre": (0.8, 1.8), "Giant": (0.5, 3.0)}  # name: radius, height


@pytest.fixture
def level(blender):
    """The level with the three agent types (all climb 0.4 m, slope 45°); nothing baked yet."""
    floor = grid_object("Floor", 10.0, 10.0)
    crate = box_object("Crate", (*CRATE[0], 0.0), (*CRATE[1], 1.5))
    crate.navmesh_role = "OBSTACLE"
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.1
    for name, (radius, height) in TYPES.items():
        assert bpy.ops.navmesh.agent_type_add() == {"FINISHED"}
        agent = settings.agent_types[-1]
        agent.name, agent.radius, agent.height, agent.max_climb = name, radius, height, 0.4
    return floor, crate


def navmesh(scene, name: str):
    return operators_bake.agent_navmesh(scene, scene.navmesh.agent_types[name])


def distance_to_walls(points) -> np.ndarray:
    """Each point's distance (seen from above) to the crate's footprint and the floor's edges."""
    xy = np.asarray(points)[:, :2]
    (x0, y0), (x1, y1) = CRATE
    dx = np.maximum.reduce([x0 - xy[:, 0], np.zeros(len(xy)), xy[:, 0] - x1])
    dy = np.maximum.reduce([y0 - xy[:, 1], np.zeros(len(xy)), xy[:, 1] - y1])
    to_floor_edge = np.minimum(xy, 10.0 - xy).min(axis=1)
    return np.minimum(np.hypot(dx, dy), to_floor_edge)


def test_types_sharing_height_climb_and_slope_share_one_navmesh_baked_at_the_smallest_radius(level, blender):
    floor, crate = level
    before = (mesh_snapshot(floor), mesh_snapshot(crate))
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    objects = mesh_write.find_navmesh_objects(blender.scene)
    assert sorted(obj.name for obj in objects) == ["Scene_navmesh_Giant", "Scene_navmesh_Human"]
    human, giant = navmesh(blender.scene, "Human"), navmesh(blender.scene, "Giant")
    assert navmesh(blender.scene, "Ogre") == human
    assert list(human["navmesh"]["agent_types"]) == ["Human", "Ogre"]
    assert list(giant["navmesh"]["agent_types"]) == ["Giant"]
    assert human["navmesh"]["params"]["agent_radius"] == pytest.approx(0.3)
    assert giant["navmesh"]["params"]["agent_height"] == pytest.approx(3.0)
    assert giant["navmesh"]["params"]["agent_radius"] == pytest.approx(0.5)
    assert (mesh_snapshot(floor), mesh_snapshot(crate)) == before
    assert all(operators_bake.out_of_date(obj, blender.scene.navmesh) is None for obj in objects)


def test_the_path_test_plans_for_the_chosen_type_on_its_navmesh_at_its_radius(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    settings.path_agent = "Human"
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    settings.path_start.location, settings.path_goal.location = (1.0, 1.0, 0.0), (9.0, 9.0, 0.0)
    clearances = {}
    for name in ("Human", "Ogre"):
        settings.path_agent = name
        blender.view_layer.update()
        operators_path.update_path(blender.scene)
        assert settings.path_status == "found"
        nav, radius = operators_path.path_target(blender.scene)
        assert nav == navmesh(blender.scene, name) and radius == pytest.approx(TYPES[name][0])
        points = np.asarray(operators_path.STATE.result.points)
        samples = np.concatenate([a + np.linspace(0, 1, 50)[:, None] * (b - a) for a, b in zip(points, points[1:])])
        clearances[name] = distance_to_walls(samples).min()
    # Each keeps at least its own radius from the crate and the floor's edges (the navmesh cuts the
    # crate's corners, so a path rounding one passes a little farther: measured 0.43 m and 0.91 m).
    assert 0.3 - 0.02 <= clearances["Human"] < 0.8 - 0.2, clearances
    assert clearances["Ogre"] >= 0.8 - 0.02, clearances
    assert clearances["Ogre"] < 0.8 + 0.2, clearances


def test_baking_one_type_never_changes_another_types_navmesh(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    human, giant = navmesh(blender.scene, "Human"), navmesh(blender.scene, "Giant")
    human_revision, human_json = mesh_write.revision(human), human.data[mesh_write.JSON_KEY]
    giant_revision = mesh_write.revision(giant)
    blender.scene.navmesh.agent_types["Giant"].max_climb = 0.2
    assert operators_bake.out_of_date(giant, blender.scene.navmesh) == "agent_max_climb changed"
    assert bpy.ops.navmesh.bake(agent_type="Giant") == {"FINISHED"}
    assert navmesh(blender.scene, "Giant") == giant and mesh_write.revision(giant) != giant_revision
    assert giant["navmesh"]["params"]["agent_max_climb"] == pytest.approx(0.2)
    assert mesh_write.revision(human) == human_revision and human.data[mesh_write.JSON_KEY] == human_json
    assert len(mesh_write.find_navmesh_objects(blender.scene)) == 2


def test_a_users_object_with_a_types_navmesh_name_is_never_replaced(level, blender):
    mine = grid_object("Scene_navmesh_Giant", 1.0, 1.0, location=(20.0, 0.0, 0.0))
    mine.hide_set(True)  # not a bake source
    snapshot = mesh_snapshot(mine)
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    giant = navmesh(blender.scene, "Giant")
    assert giant != mine and mesh_snapshot(mine) == snapshot and not mine.get(mesh_write.TAG)


def test_removing_a_type_removes_its_own_navmesh_and_keeps_a_shared_one(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    shared = navmesh(blender.scene, "Human")
    settings.agent_types_index = list(settings.agent_types.keys()).index("Giant")
    assert bpy.ops.navmesh.agent_type_remove() == {"FINISHED"}
    assert [obj.name for obj in mesh_write.find_navmesh_objects(blender.scene)] == ["Scene_navmesh_Human"]
    settings.agent_types_index, settings.path_agent = 0, "Human"  # Ogre keeps the shared navmesh, now named for it
    assert bpy.ops.navmesh.agent_type_remove() == {"FINISHED"}
    assert list(settings.agent_types.keys()) == ["Ogre"] and settings.path_agent == ""
    assert navmesh(blender.scene, "Ogre") == shared and shared.name == "Scene_navmesh_Ogre"
    assert operators_bake.out_of_date(shared, settings) == "its agent types changed"
    assert bpy.ops.navmesh.bake() == {"FINISHED"}  # replaces it, now baked at Ogre's radius
    assert mesh_write.find_navmesh_objects(blender.scene) == [shared]
    assert shared["navmesh"]["params"]["agent_radius"] == pytest.approx(0.8)
    assert bpy.ops.navmesh.agent_type_remove() == {"FINISHED"}
    assert mesh_write.find_navmesh_objects(blender.scene) == []
    with pytest.raises(RuntimeError, match="no agent type is selected"):
        bpy.ops.navmesh.agent_type_remove()


def test_the_overlay_shows_where_the_active_type_fits(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    # 0.55 m from the crate: 0.25 m inside the navmesh's edge, room for Human, not for Ogre (0.8 m).
    near_crate, open_floor = (6.55, 5.0, 0.0), (2.0, 2.0, 0.0)
    coverage, seen = {}, {}
    for name in ("Human", "Ogre"):
        settings.agent_types_index = list(settings.agent_types.keys()).index(name)
        image = viewport_image.render(blender, TOP, PROJECTION, SIZE)
        teal = is_navmesh_colored(image[..., :3])
        coverage[name] = teal.sum()
        seen[name] = is_navmesh_colored(pixels_at(image, [near_crate, open_floor], TOP)[:, 0, :3])
    assert seen["Human"].tolist() == [True, True]
    assert seen["Ogre"].tolist() == [False, True]
    assert coverage["Ogre"] < 0.85 * coverage["Human"]
    # The reach the panel reports: the floor minus the crate, each eroded by the radius (corners rounded).
    human = navmesh(blender.scene, "Human")
    for radius in (0.3, 0.8):
        expected = (10 - 2 * radius) ** 2 - (2 + 2 * radius) ** 2 + (4 - np.pi) * radius**2
        assert panels.reach_area(human, radius) == pytest.approx(expected, rel=0.03)
    assert panels.reach_area(human, 0.8) / coverage["Ogre"] == pytest.approx(
        panels.reach_area(human, 0.3) / coverage["Human"], rel=0.05
    )  # pixels and m² agree


def test_without_agent_types_the_settings_agent_bakes_as_before(blender):
    grid_object("Floor", 4.0, 4.0)
    blender.scene.navmesh.source = "VISIBLE"
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = mesh_write.find_navmesh_objects(blender.scene)
    assert obj.name == "Scene_navmesh" and "agent_types" not in obj["navmesh"]
    assert overlay.shown_agent(blender.scene) is None


def test_the_panel_lists_the_types_and_reports_the_active_ones_navmesh_and_reach(level, blender):
    from tests.test_addon_ui import draw_all

    settings = blender.scene.navmesh
    settings.agent_types_index = 1  # Ogre
    log = draw_all(blender)
    assert ("list", "agent_types") in log and ("label", "Ogre: not baked yet") in log
    assert not {"agent_radius", "agent_height"} & {name for kind, name in log if kind == "prop"}  # the list rules
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings.path_agent = "Ogre"
    labels = [text for kind, text in draw_all(blender) if kind == "label"]
    assert "Serves: Human, Ogre" in labels and "On Scene_navmesh_Human at radius 0.80 m" in labels
    reach = next(text for text in labels if text.startswith("Ogre reaches "))
    usable = panels.reach_area(navmesh(blender.scene, "Ogre"), 0.8)
    assert (
        reach.startswith(f"Ogre reaches {usable:.1f} of ")
        and usable < 0.8 * navmesh(blender.scene, "Ogre")["navmesh"]["area"]
    )


def test_renaming_the_path_tests_agent_type_keeps_the_path_on_it(level, blender):
    """Ogre (0.8 m) picked in Path Test, then renamed Brute: the field kept "Ogre", and the path was
    planned at Path Radius (0.5 m), 0.62 m from the crate instead of 0.91."""
    from tests.test_addon_ui import draw_all

    settings = blender.scene.navmesh
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings.path_agent = "Ogre"
    settings.agent_types["Ogre"].name = "Brute"
    assert settings.path_agent == "Brute"
    assert operators_path.path_target(blender.scene)[1] == pytest.approx(0.8)
    settings.path_agent = "Nobody"  # a name no type has: no path, and the panel says so
    assert operators_path.path_target(blender.scene)[0] is None
    assert ("label", "Nobody is no agent type: pick one") in draw_all(blender)


def test_a_rebake_after_renaming_or_regrouping_types_leaves_one_navmesh_per_group(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    settings.agent_types["Human"].name = "Scout"  # the first type names the shared navmesh
    settings.agent_types["Giant"].height = 1.8  # Giant joins Scout and Ogre
    stale = navmesh(blender.scene, "Ogre")
    assert stale is None  # no object carries the renamed group's name yet
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (shared,) = mesh_write.find_navmesh_objects(blender.scene)
    assert shared.name == "Scene_navmesh_Scout"
    assert list(shared["navmesh"]["agent_types"]) == ["Scout", "Ogre", "Giant"]
    assert len([m for m in bpy.data.meshes if m.get(mesh_write.JSON_KEY)]) == 1  # the old meshes went too


def test_baking_one_type_keeps_the_other_groups_navmeshes_even_when_renamed(level, blender):
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    settings.agent_types["Human"].name = "Scout"
    assert bpy.ops.navmesh.bake(agent_type="Giant") == {"FINISHED"}
    # Only a bake of every type clears what no type bakes to any more.
    assert sorted(o.name for o in mesh_write.find_navmesh_objects(blender.scene)) == [
        "Scene_navmesh_Giant",
        "Scene_navmesh_Human",
    ]


def test_undo_of_a_types_bake_restores_the_other_navmeshes(level, blender):
    bpy.ops.ed.undo_push(message="types added")
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True)
    giant_revision = mesh_write.revision(navmesh(blender.scene, "Giant"))
    blender.scene.navmesh.agent_types["Human"].max_climb = 0.2  # Human leaves Ogre's group
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True, agent_type="Human")
    assert navmesh(blender.scene, "Ogre") is None  # its group is now its own, not baked yet
    bpy.ops.navmesh.bake("EXEC_DEFAULT", True)
    assert sorted(o.name for o in mesh_write.find_navmesh_objects(blender.scene)) == [
        "Scene_navmesh_Giant",
        "Scene_navmesh_Human",
        "Scene_navmesh_Ogre",
    ]
    assert navmesh(blender.scene, "Ogre")["navmesh"]["params"]["agent_radius"] == pytest.approx(0.8)
    bpy.ops.ed.undo()
    assert sorted(o.name for o in mesh_write.find_navmesh_objects(blender.scene)) == [
        "Scene_navmesh_Giant",
        "Scene_navmesh_Human",
    ]
    assert mesh_write.revision(navmesh(blender.scene, "Giant")) == giant_revision
    bpy.ops.ed.undo()
    bpy.ops.ed.undo()
    assert mesh_write.find_navmesh_objects(blender.scene) == []
    assert {o.name for o in bpy.data.objects} == {"Floor", "Crate"}


def test_the_modal_bake_writes_every_group_and_names_the_one_it_is_on(level, blender):
    from tests.test_addon_bake import ModalHarness

    harness = ModalHarness(operators_bake.prepare(blender, blender.scene.navmesh))
    harness._job.start()
    stages = set()
    outcome = harness.send("TIMER")
    while outcome == {"RUNNING_MODAL"}:
        stages.add(blender.scene.navmesh.bake_stage.split(":")[0])
        harness._job.wait(0.01)
        outcome = harness.send("TIMER")
    assert outcome == {"FINISHED"}
    assert stages <= {"Scene_navmesh_Human", "Scene_navmesh_Giant", "starting"}
    assert sorted(o.name for o in mesh_write.find_navmesh_objects(blender.scene)) == [
        "Scene_navmesh_Giant",
        "Scene_navmesh_Human",
    ]
    assert [kind for kind, _ in harness.reports] == ["INFO", "INFO"]


def test_the_panel_warns_about_each_groups_settings(level, blender):
    settings = blender.scene.navmesh
    assert panels.setting_warnings(settings) == []
    settings.agent_types["Giant"].height = 0.3  # below its climb of 0.4 m
    assert panels.setting_warnings(settings) == ["agent_height 0.3 m is below agent_max_climb 0.4 m"]


def test_two_types_with_one_name_are_refused_before_anything_is_written(level, blender):
    settings = blender.scene.navmesh
    settings.agent_types["Giant"].name = "Human"
    with pytest.raises(RuntimeError, match="two agent types are named 'Human': rename one"):
        bpy.ops.navmesh.bake()
    assert mesh_write.find_navmesh_objects(blender.scene) == []


def test_a_rebake_replaces_the_scenes_earlier_result_whatever_it_was_named(blender):
    """The agent before agent types were added, the types after they are all removed, and the
    result under the scene's old name are all this scene's result: a re-bake leaves only what it
    wrote (they were left behind, and Export then refused a scene of two navmeshes). A navmesh
    baked from a source collection is another result, and stays."""
    grid_object("Floor", 4.0, 4.0)
    level = bpy.data.collections.new("Level2")
    blender.scene.collection.children.link(level)
    grid_object("Upper", 4.0, 4.0, location=(0.0, 0.0, 5.0), collection=level)
    settings = blender.scene.navmesh
    settings.source, settings.collection = "COLLECTION", level
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings.source = "VISIBLE"

    def names() -> list[str]:
        return sorted(o.name for o in mesh_write.find_navmesh_objects(blender.scene))

    assert bpy.ops.navmesh.bake() == {"FINISHED"} and names() == ["Level2_navmesh", "Scene_navmesh"]
    assert bpy.ops.navmesh.agent_type_add() == {"FINISHED"}
    settings.agent_types[-1].name = "Human"
    assert bpy.ops.navmesh.bake() == {"FINISHED"} and names() == ["Level2_navmesh", "Scene_navmesh_Human"]
    settings.agent_types.clear()
    assert bpy.ops.navmesh.bake() == {"FINISHED"} and names() == ["Level2_navmesh", "Scene_navmesh"]
    blender.scene.name = "Level01"
    assert bpy.ops.navmesh.bake() == {"FINISHED"} and names() == ["Level01_navmesh", "Level2_navmesh"]


def test_each_scene_keeps_its_own_navmesh(blender):
    """Two levels in one file, one per scene: each bake writes into its own scene's Navmesh
    collection, so one level's navmesh never shows in the other, and Clear in one leaves the
    other's (the scenes shared one collection: both navmeshes showed in both, Export and the path
    test refused, and Clear removed the other level's)."""
    first = blender.scene
    grid_object("FloorA", 10.0, 10.0)
    first.navmesh.source = "VISIBLE"
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    second = bpy.data.scenes.new("LevelB")
    blender.window.scene = second
    grid_object("FloorB", 30.0, 4.0, collection=second.collection)
    second.navmesh.source = "VISIBLE"
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert [o.name for o in mesh_write.find_navmesh_objects(first)] == ["Scene_navmesh"]
    assert [o.name for o in mesh_write.find_navmesh_objects(second)] == ["LevelB_navmesh"]
    assert bpy.ops.navmesh.clear() == {"FINISHED"}
    assert [o.name for o in mesh_write.find_navmesh_objects(first)] == ["Scene_navmesh"]
    assert mesh_write.find_navmesh_objects(second) == []


def test_changing_the_path_agent_type_or_its_radius_replans_at_once(level, blender):
    """Path Test > Agent Type and the chosen type's radius are inputs of the path as the handles are:
    changing either replans at once, with no handle move."""
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings = blender.scene.navmesh
    settings.path_agent = "Human"
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    settings.path_start.location, settings.path_goal.location = (1.0, 1.0, 0.0), (9.0, 9.0, 0.0)
    blender.view_layer.update()
    assert settings.path_status == "found"
    human_length = settings.path_length
    settings.path_agent = "Ogre"
    assert operators_path.STATE.key[2] == pytest.approx(0.8)
    assert settings.path_status == "found" and settings.path_length > human_length
    settings.path_agent = "Giant"  # another navmesh
    assert operators_path.STATE.key[3] == mesh_write.revision(navmesh(blender.scene, "Giant"))
    assert operators_path.STATE.key[2] == pytest.approx(0.5)
    settings.agent_types["Giant"].radius = 0.6
    assert operators_path.STATE.key[2] == pytest.approx(0.6)
    assert operators_path.update_path(blender.scene) is False
