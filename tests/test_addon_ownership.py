"""Which navmesh a bake replaces, in real Blender: only the scene's own result, never one linked or
appended from another file, seen through a Linked Copy of another scene, or of another source
collection; a modal bake writes where it was started, whatever the window or the settings show when
it ends."""

from __future__ import annotations

import bpy
import pytest

from navmesh_addon import mesh_write, operators_bake
from tests.blender_scenes import grid_object
from tests.test_addon_bake import ModalHarness


def navmeshes(scene) -> list[tuple[str, float]]:
    """(name, walkable area) of every navmesh object the scene shows."""
    return sorted((o.name, round(o["navmesh"]["area"], 1)) for o in mesh_write.find_navmesh_objects(scene))


def bake_visible(scene) -> None:
    scene.navmesh.source, scene.navmesh.cell_size = "VISIBLE", 0.25
    with bpy.context.temp_override(scene=scene, view_layer=scene.view_layers[0]):
        assert bpy.ops.navmesh.bake() == {"FINISHED"}


def other_file(blender, tmp_path, scene_name: str) -> str:
    """A saved level whose scene `scene_name` holds a 4 x 4 m floor and its navmesh (9 m²), then a
    new empty file in its place, as File > New gives."""
    blender.scene.name = scene_name
    grid_object("OtherFloor", 4.0, 4.0, location=(20.0, 0.0, 0.0))
    bake_visible(blender.scene)
    path = str(tmp_path / f"{scene_name}.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    grid_object("Floor", 10.0, 10.0)  # this level: 81 m² of navmesh at the default radius
    return path


def bring_in(path: str, name: str, link: bool):
    with bpy.data.libraries.load(path, link=link) as (_, into):
        into.objects = [name]
    (obj,) = into.objects
    bpy.context.scene.collection.objects.link(obj)
    return obj


def test_a_navmesh_linked_from_another_file_is_read_but_never_baked_into(blender, tmp_path):
    """File > Link of another level's navmesh, both scenes "Scene": the bake was written onto the
    linked object, which Blender does not save: after reopening, this level's bake was gone."""
    path = other_file(blender, tmp_path, "Scene")
    linked = bring_in(path, "Scene_navmesh", link=True)
    bake_visible(bpy.context.scene)
    assert navmeshes(bpy.context.scene) == [("Scene_navmesh", 9.0), ("Scene_navmesh", 81.0)]
    assert mesh_write.own_navmesh_objects(bpy.context.scene) != [linked]
    mine = str(tmp_path / "mine.blend")
    bpy.ops.wm.save_as_mainfile(filepath=mine)
    bpy.ops.wm.open_mainfile(filepath=mine)
    local = [o for o in mesh_write.find_navmesh_objects(bpy.context.scene) if o.library is None]
    assert [round(o["navmesh"]["area"], 1) for o in local] == [81.0]
    assert bpy.ops.navmesh.clear() == {"FINISHED"}  # the linked one stays
    assert navmeshes(bpy.context.scene) == [("Scene_navmesh", 9.0)]


@pytest.mark.parametrize("scene_name", ["Scene", "Level2"])
def test_a_navmesh_appended_from_another_file_stays_as_it_was(blender, tmp_path, scene_name):
    """File > Append of another level's navmesh: a bake overwrote it when that file's scene had this
    scene's name, and deleted it (as the result of a renamed scene) when not."""
    path = other_file(blender, tmp_path, scene_name)
    appended = bring_in(path, f"{scene_name}_navmesh", link=False)
    appended.name = "Level2 navmesh (appended)"
    bake_visible(bpy.context.scene)
    assert navmeshes(bpy.context.scene) == [("Level2 navmesh (appended)", 9.0), ("Scene_navmesh", 81.0)]
    bake_visible(bpy.context.scene)
    assert navmeshes(bpy.context.scene) == [("Level2 navmesh (appended)", 9.0), ("Scene_navmesh", 81.0)]


def test_a_linked_copy_of_a_scene_bakes_its_own_navmesh(blender):
    """Scene > New > Linked Copy shares the scene's collections, ours included: a bake in the copy
    deleted the first scene's navmesh (as a renamed scene's) and showed its own in both scenes."""
    first = blender.scene
    grid_object("Floor", 10.0, 10.0)
    bake_visible(first)
    bpy.ops.scene.new(type="LINK_COPY")
    copy = bpy.context.scene
    copy.navmesh.agent_radius = 1.0
    bake_visible(copy)
    assert navmeshes(first) == [("Scene_navmesh", 81.0)]
    assert navmeshes(copy) == [("Scene.001_navmesh", 64.0), ("Scene_navmesh", 81.0)]
    bake_visible(first)  # the first scene still replaces its own
    assert navmeshes(first) == [("Scene_navmesh", 81.0)]
    assert [o.name for o in mesh_write.own_navmesh_objects(copy)] == ["Scene.001_navmesh"]


def test_renaming_the_source_collection_replaces_its_navmesh(blender):
    """A rename of the source collection left the navmesh under its old name beside the new one (two
    navmeshes of one level: the path test and exports refused); another collection's stays."""
    settings = blender.scene.navmesh
    arena, hub = bpy.data.collections.new("Arena"), bpy.data.collections.new("Hub")
    for collection in (arena, hub):
        blender.scene.collection.children.link(collection)
    grid_object("Ground", 10.0, 10.0, collection=arena)
    grid_object("HubFloor", 4.0, 4.0, location=(30.0, 0.0, 0.0), collection=hub)
    settings.source, settings.cell_size = "COLLECTION", 0.25
    for collection in (hub, arena):
        settings.collection = collection
        assert bpy.ops.navmesh.bake() == {"FINISHED"}
    arena.name = "Level01"
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert navmeshes(blender.scene) == [("Hub_navmesh", 9.0), ("Level01_navmesh", 81.0)]


def finish_modal(harness: ModalHarness) -> set:
    harness._job.start()
    harness._job.wait(60)
    return harness.send("TIMER")


def test_a_modal_bake_writes_into_the_scene_it_was_started_in(blender):
    """The window switched to another scene while the bake ran: the result landed there, that scene's
    own navmesh was deleted, and the scene baked got nothing."""
    first = blender.scene
    first.name = "LevelA"
    grid_object("FloorA", 10.0, 10.0)
    second = bpy.data.scenes.new("LevelB")
    grid_object("FloorB", 4.0, 4.0, collection=second.collection)
    bake_visible(second)
    first.navmesh.source, first.navmesh.cell_size = "VISIBLE", 0.25
    harness = ModalHarness(operators_bake.prepare(bpy.context, first.navmesh))
    harness.context.scene = second  # what the window shows when the bake ends
    assert finish_modal(harness) == {"FINISHED"}
    assert navmeshes(first) == [("LevelA_navmesh", 81.0)]
    assert navmeshes(second) == [("LevelB_navmesh", 9.0)]
    assert first.navmesh.bake_stage == "" and harness.status[-1] is None


def test_a_modal_bake_keeps_the_sources_it_was_started_with(blender):
    """Source switched from Visible back to Collection while the bake ran: the bake then deleted the
    collection's navmesh and recorded its own as that collection's."""
    settings = blender.scene.navmesh
    arena = bpy.data.collections.new("Arena")
    blender.scene.collection.children.link(arena)
    grid_object("ArenaFloor", 10.0, 10.0, collection=arena)
    grid_object("Hub", 6.0, 6.0, location=(30.0, 0.0, 0.0))
    settings.source, settings.collection, settings.cell_size = "COLLECTION", arena, 0.25
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    settings.source = "VISIBLE"
    harness = ModalHarness(operators_bake.prepare(bpy.context, settings))
    settings.source = "COLLECTION"
    assert finish_modal(harness) == {"FINISHED"}
    found = {
        o.name: (o["navmesh"]["source"], o["navmesh"]["result"]) for o in mesh_write.find_navmesh_objects(blender.scene)
    }
    assert found == {"Arena_navmesh": ("collection", "Arena_navmesh"), "Scene_navmesh": ("scene", "Scene_navmesh")}


def test_a_scene_deleted_while_its_bake_runs_gets_nothing_and_says_so(blender):
    grid_object("Floor", 10.0, 10.0)
    doomed = bpy.data.scenes.new("Doomed")
    grid_object("DoomedFloor", 4.0, 4.0, collection=doomed.collection)
    doomed.navmesh.source, doomed.navmesh.cell_size = "VISIBLE", 0.25
    with bpy.context.temp_override(scene=doomed, view_layer=doomed.view_layers[0]):
        harness = ModalHarness(operators_bake.prepare(bpy.context, doomed.navmesh))
    harness._job.start()
    harness._job.wait(60)
    bpy.data.scenes.remove(doomed)
    assert harness.send("TIMER") == {"CANCELLED"}
    assert harness.reports[-1] == ("ERROR", "the scene was deleted while the navmesh baked: nothing was written")
    assert navmeshes(blender.scene) == []


def linked_collection(blender, tmp_path, parent=None):
    """A collection linked from a library file (a 10 x 10 m floor in it), made the active one."""
    level = bpy.data.collections.new("LevelLib")
    blender.scene.collection.children.link(level)
    floor = grid_object("LibFloor", 10.0, 10.0, collection=level)
    path = str(tmp_path / "levellib.blend")
    bpy.data.libraries.write(path, {level})
    bpy.data.collections.remove(level)
    bpy.data.objects.remove(floor)
    with bpy.data.libraries.load(path, link=True) as (_, into):
        into.collections = ["LevelLib"]
    (linked,) = into.collections
    (parent or blender.scene.collection).children.link(linked)
    return linked


def layer_of(layer, collection):
    """The layer collection of `collection` under `layer` (a view layer's root), or None."""
    if layer.collection == collection:
        return layer
    return next((found for child in layer.children if (found := layer_of(child, collection))), None)


@pytest.mark.parametrize("nested", [False, True])
def test_seeds_and_path_curves_added_in_a_linked_active_collection_go_to_an_editable_one(blender, tmp_path, nested):
    """Add Walkable Seed and Path to Curve linked their object into the active collection: linked from
    a library, that raised a traceback and left the object orphaned. As Blender's Add menu does, they
    go to the nearest editable parent (a local collection holding the linked one), else the scene's."""
    parent = None
    if nested:
        parent = bpy.data.collections.new("Local")
        blender.scene.collection.children.link(parent)
    linked = linked_collection(blender, tmp_path, parent)
    blender.view_layer.active_layer_collection = layer_of(blender.view_layer.layer_collection, linked)
    assert blender.collection == linked and linked.library is not None
    expected = parent or blender.scene.collection
    blender.scene.navmesh.source, blender.scene.navmesh.cell_size = "VISIBLE", 0.25
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    before = set(bpy.data.objects)
    assert bpy.ops.navmesh.add_seed() == {"FINISHED"}
    assert bpy.ops.navmesh.path_to_curve() == {"FINISHED"}
    added = set(bpy.data.objects) - before
    assert sorted(o.name for o in added) == ["Navmesh Path", "Walkable Seed"]
    assert all(o.users_collection == (expected,) for o in added)
    assert not [o.name for o in bpy.data.objects if not o.users_collection]
