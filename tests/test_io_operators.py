"""File > Import/Export operators on navmesh objects: lossless round trips and clean failures."""

from __future__ import annotations

import json

import bpy
import collada
import numpy as np
import pytest

import blender_navmesh as lib
from blender_navmesh import detour
from navmesh_addon import io_operators, mesh_write
from tests.fixtures.io import navmeshes
from tests.fixtures.io.detour_tools import read_tile_set
from tests.fixtures.io.gltf_tools import read_glb
from tests.fixtures.io.godot_tools import read_tres


def scene_state() -> tuple:
    return (sorted(o.name for o in bpy.data.objects), len(bpy.data.meshes), len(bpy.data.collections))


def import_json(path) -> bpy.types.Object:
    assert bpy.ops.import_scene.navmesh_json(filepath=str(path)) == {"FINISHED"}
    return bpy.context.view_layer.objects.active


@pytest.mark.parametrize("y_up", [False, True])
def test_import_recreates_the_navmesh_object_losslessly(blender, tmp_path, y_up):
    mesh = navmeshes.mixed()
    path = tmp_path / "level.json"
    lib.save(mesh, path, y_up=y_up)
    obj = import_json(path)
    assert obj.get("navmesh_generated")
    assert len(obj.data.polygons) == mesh.polygon_count
    corner_neighbors = np.zeros(len(obj.data.loops), dtype=np.int32)
    obj.data.attributes["nav_neighbor"].data.foreach_get("value", corner_neighbors)
    np.testing.assert_array_equal(corner_neighbors, mesh.neighbors)
    navmeshes.assert_equal(mesh_write.read_navmesh_object(obj), mesh)


def test_json_export_of_an_imported_object_gives_the_same_navmesh(blender, tmp_path):
    mesh = navmeshes.mixed()
    lib.save(mesh, tmp_path / "in.json")
    import_json(tmp_path / "in.json")
    out = tmp_path / "out.json"
    assert bpy.ops.export_scene.navmesh_json(filepath=str(out), y_up=True) == {"FINISHED"}
    assert json.loads(out.read_text())["up_axis"] == "Y"
    navmeshes.assert_equal(lib.load(out), mesh)


def test_collada_gltf_detour_and_godot_exports_of_the_navmesh_object(blender, tmp_path):
    mesh = navmeshes.l_corridor()
    lib.save(mesh, tmp_path / "Floor.json")
    obj = import_json(tmp_path / "Floor.json")
    before = scene_state()

    assert bpy.ops.export_scene.navmesh_dae(filepath=str(tmp_path / "floor.dae")) == {"FINISHED"}
    dae = collada.Collada(str(tmp_path / "floor.dae"))
    assert dae.scene.nodes[0].xmlnode.get("name") == f"{obj.name}-navmesh"
    faces = [p.indices for p in dae.geometries[0].primitives[0]]
    assert [len(f) for f in faces] == mesh.polygon_sizes.tolist(), "each flat polygon is one face"

    assert bpy.ops.export_scene.navmesh_glb(filepath=str(tmp_path / "floor.glb")) == {"FINISHED"}
    doc, _ = read_glb(tmp_path / "floor.glb")
    assert [n["name"] for n in doc["nodes"]] == [f"{obj.name}-navmesh"]

    assert bpy.ops.export_scene.navmesh_detour(filepath=str(tmp_path / "floor.bin")) == {"FINISHED"}
    assert (tmp_path / "floor.bin").read_bytes() == detour.to_detour_bytes(mesh), "one tile, cut for Detour's search"
    whole = tmp_path / "whole.bin"
    assert bpy.ops.export_scene.navmesh_detour(filepath=str(whole), whole_polygons=True) == {"FINISHED"}
    assert [t["header"]["poly_count"] for t in read_tile_set(whole.read_bytes())["tiles"]] == [mesh.polygon_count]
    assert bpy.ops.export_scene.navmesh_detour(filepath=str(tmp_path / "tiles.bin"), tile_size=2.0) == {"FINISHED"}
    assert len(read_tile_set((tmp_path / "tiles.bin").read_bytes())["tiles"]) > 1

    assert bpy.ops.export_scene.navmesh_godot(filepath=str(tmp_path / "floor.tres")) == {"FINISHED"}
    tres = read_tres((tmp_path / "floor.tres").read_text())
    assert [len(p) for p in tres["polygons"]] == mesh.polygon_sizes.tolist(), "the flat corridor's polygons, whole"
    assert scene_state() == before, "exports leave the scene as it was"


def test_export_picks_the_active_navmesh_object_and_refuses_to_guess(blender, tmp_path):
    lib.save(navmeshes.l_corridor(), tmp_path / "a.json")
    lib.save(navmeshes.mixed(), tmp_path / "b.json")
    import_json(tmp_path / "a.json")
    b = import_json(tmp_path / "b.json")
    bpy.context.view_layer.objects.active = b
    out = tmp_path / "active.json"
    bpy.ops.export_scene.navmesh_json(filepath=str(out))
    assert lib.load(out).polygon_count == navmeshes.mixed().polygon_count
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="2 navmesh objects"):
        bpy.ops.export_scene.navmesh_json(filepath=str(tmp_path / "ambiguous.json"))
    assert not (tmp_path / "ambiguous.json").exists()


def test_export_without_a_navmesh_object_says_to_bake_first(blender, tmp_path):
    with pytest.raises(RuntimeError, match="bake a navmesh first"):
        bpy.ops.export_scene.navmesh_glb(filepath=str(tmp_path / "none.glb"))
    assert not (tmp_path / "none.glb").exists()


def _bad(doc_change) -> str:
    doc = navmeshes.mixed().to_dict()
    doc_change(doc)
    return json.dumps(doc)


BAD_IMPORTS = {
    "corrupt JSON": ('{"format": "navmesh", "vers', "not valid JSON"),
    "wrong version": (_bad(lambda d: d.update(version=7)), "unsupported navmesh version 7"),
    "missing field": (_bad(lambda d: d.pop("neighbors")), "missing the field 'neighbors'"),
    "index out of range": (_bad(lambda d: d["polygons"][0].__setitem__(0, 500)), "out of range"),
    "repeated vertex": (_bad(lambda d: d["polygons"].__setitem__(1, [1, 1, 2])), "same vertex twice"),
}


@pytest.mark.parametrize("name", list(BAD_IMPORTS))
def test_bad_files_report_an_error_and_leave_nothing_behind(blender, tmp_path, name):
    text, message = BAD_IMPORTS[name]
    path = tmp_path / "bad.json"
    path.write_text(text)
    before = scene_state()
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.import_scene.navmesh_json(filepath=str(path))
    assert scene_state() == before


def test_exports_other_than_json_are_refused_on_import(blender, tmp_path):
    path = tmp_path / "level.dae"
    path.write_text("<COLLADA/>")
    with pytest.raises(RuntimeError, match="cannot be read back"):
        bpy.ops.import_scene.navmesh_json(filepath=str(path))


def test_file_menus_offer_the_operators(blender):
    assert io_operators.menu_export in bpy.types.TOPBAR_MT_file_export._dyn_ui_initialize()
    assert io_operators.menu_import in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()


def test_import_never_replaces_a_navmesh_of_the_same_name(blender, tmp_path):
    baked = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "level")
    path = tmp_path / "level.json"
    lib.save(navmeshes.mixed(), path)
    first, second = import_json(path), import_json(path)
    assert len({baked, first, second}) == 3
    navmeshes.assert_equal(mesh_write.read_navmesh_object(baked), navmeshes.l_corridor())
    assert [o.get("navmesh_generated") for o in (first, second)] == ["level.001", "level.002"]


def test_an_imported_navmesh_is_never_out_of_date(blender, tmp_path):
    from navmesh_addon import operators_bake

    path = tmp_path / "level.json"
    lib.save(navmeshes.mixed(), path)
    obj = import_json(path)
    blender.scene.navmesh.cell_size = 0.77  # settings unlike the file's
    assert operators_bake.out_of_date(obj, blender.scene.navmesh) is None
