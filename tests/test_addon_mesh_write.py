"""NavMesh -> Blender object: faces, attribute domains and values, stored JSON, replacement rules."""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np
import pytest

import blender_navmesh as lib
from navmesh_addon import mesh_write
from tests.fixtures.io import navmeshes


def attribute(obj, name: str, domain: str, dtype) -> np.ndarray:
    attr = obj.data.attributes[name]
    assert attr.domain == domain
    field = "color" if attr.data_type == "FLOAT_COLOR" else "value"
    width = 4 if field == "color" else 1
    values = np.zeros(len(attr.data) * width, dtype=dtype)
    attr.data.foreach_get(field, values)
    return values


def test_faces_are_the_polygons_in_order(blender):
    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "Level_navmesh")
    assert [list(p.vertices) for p in obj.data.polygons] == mesh.polygons
    co = np.zeros(len(obj.data.vertices) * 3)
    obj.data.vertices.foreach_get("co", co)
    np.testing.assert_allclose(co.reshape(-1, 3), mesh.vertices, atol=1e-6)
    assert obj.hide_render and obj.get("navmesh_generated")
    assert [c.name for c in obj.users_collection] == ["Navmesh"]
    assert "Navmesh" in [c.name for c in blender.scene.collection.children]


def test_attributes_have_the_contract_domains_and_values(blender):
    mesh = replace(navmeshes.l_corridor(), regions=np.array([0, 0, 1]))
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "Level_navmesh")
    np.testing.assert_array_equal(attribute(obj, "nav_neighbor", "CORNER", np.int32), mesh.neighbors)
    np.testing.assert_array_equal(attribute(obj, "nav_region", "FACE", np.int32), [0, 0, 1])
    np.testing.assert_array_equal(attribute(obj, "nav_area", "FACE", np.int32), [0, 0, 3])
    portal = attribute(obj, "nav_portal", "EDGE", bool)
    clearance = attribute(obj, "nav_clearance", "EDGE", np.float32)
    edge_keys = [tuple(sorted(e.vertices)) for e in obj.data.edges]
    portal_keys = {tuple(sorted(k)) for k in [(1, 2), (2, 5)]}
    assert {k for k, p in zip(edge_keys, portal) if p} == portal_keys
    assert np.all(clearance[~portal] == 0.0)
    # navmeshes.from_polygons gives the first portal 0.75 and the second unlimited clearance.
    assert sorted(clearance[portal].tolist()) == [0.75, np.inf]


def test_the_object_shows_our_teal_material_just_above_the_floor(blender):
    user_material = bpy.data.materials.new("Navmesh")  # a user's material of our name stays theirs
    first = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "A_navmesh")
    second = mesh_write.write_navmesh_object(blender.scene, navmeshes.mixed(), "B_navmesh")
    (material,) = first.data.materials
    assert second.data.materials[:] == [material] and material != user_material
    assert material.get("navmesh_generated") and not user_material.get("navmesh_generated")
    assert material.diffuse_color[:3] == pytest.approx(mesh_write.NAVMESH_COLOR[:3])
    assert 0.0 < material.diffuse_color[3] < 1.0  # Solid mode draws it see-through
    assert tuple(first.color) == pytest.approx(mesh_write.NAVMESH_COLOR)
    assert tuple(first.matrix_world.translation) == pytest.approx((0.0, 0.0, mesh_write.DISPLAY_LIFT))


def test_stored_json_reads_back_losslessly(blender):
    mesh = navmeshes.mixed()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "Mixed", stats={"bake_time": 1.5})
    navmeshes.assert_equal(mesh_write.read_navmesh_object(obj), mesh)
    info = obj["navmesh"]
    assert info["polygons"] == mesh.polygon_count
    assert info["bake_time"] == 1.5
    assert info["params"]["agent_radius"] == pytest.approx(mesh.params.agent_radius)
    assert info["area"] == pytest.approx(mesh.area_xy())


def test_rewrite_replaces_only_our_object(blender):
    first = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "Level_navmesh")
    old_mesh_name = first.data.name
    second = mesh_write.write_navmesh_object(blender.scene, navmeshes.mixed(), "Level_navmesh")
    assert second == first
    assert old_mesh_name not in bpy.data.meshes or bpy.data.meshes[old_mesh_name].users > 0
    assert len([o for o in bpy.data.objects if o.get("navmesh_generated")]) == 1
    assert len(second.data.polygons) == navmeshes.mixed().polygon_count


def test_a_user_object_with_the_same_name_is_left_alone(blender):
    user_mesh = bpy.data.meshes.new("Mine")
    user = bpy.data.objects.new("Level_navmesh", user_mesh)
    blender.scene.collection.objects.link(user)
    ours = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "Level_navmesh")
    assert ours != user and ours.get("navmesh_generated")
    assert user.data == user_mesh and not user.get("navmesh_generated")
    assert user.name == "Level_navmesh"


def test_reading_an_object_without_navmesh_data_is_a_clear_error(blender):
    plain = bpy.data.objects.new("Plain", bpy.data.meshes.new("Plain"))
    with pytest.raises(lib.NavMeshError, match="carries no navmesh data"):
        mesh_write.read_navmesh_object(plain)


def test_a_users_object_and_collection_of_our_names_are_left_alone(blender):
    """The user has an object named like our output and a collection called Navmesh: re-baking
    replaces our object (found by its tag) and never touches theirs."""
    theirs = bpy.data.objects.new("L_navmesh", None)
    their_collection = bpy.data.collections.new("Navmesh")
    blender.scene.collection.children.link(their_collection)
    their_collection.objects.link(theirs)
    ours = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "L_navmesh")
    again = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "L_navmesh")
    assert again == ours and ours != theirs and ours.name.startswith("L_navmesh.")
    assert sorted(o.name for o in bpy.data.objects) == sorted([theirs.name, ours.name])
    assert not their_collection.hide_render and list(their_collection.objects) == [theirs]
    assert ours.users_collection[0] != their_collection and ours.users_collection[0].hide_render
    assert mesh_write.find_navmesh_objects(blender.scene) == [ours]


def test_faces_deleted_by_hand_are_the_navmesh_from_then_on(blender, tmp_path):
    """Delete faces of the baked object (as in Edit Mode): reading it, the path test and export
    use the edited faces; the stored navmesh is the fallback only while the faces are untouched."""
    import bmesh

    from navmesh_addon import io_formats, operators_path
    from tests.fixtures.io import navmeshes

    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "L_navmesh")
    assert not mesh_write.edited_by_hand(obj)
    edited = bmesh.new()
    edited.from_mesh(obj.data)
    edited.faces.ensure_lookup_table()
    bmesh.ops.delete(edited, geom=[edited.faces[-1]], context="FACES_ONLY")
    edited.to_mesh(obj.data)
    edited.free()
    assert mesh_write.edited_by_hand(obj)
    read = mesh_write.read_navmesh_object(obj)
    assert read.polygon_count == mesh.polygon_count - 1
    assert read.area_xy() == pytest.approx(mesh.area_xy() - mesh.polygon_areas()[-1])
    assert (read.neighbors < 0).sum() > (mesh.neighbors < 0).sum() - mesh.polygon_sizes[-1]
    path = tmp_path / "edited.json"
    io_formats.write_navmesh_file(read, path, "json")
    assert lib.load(path).polygon_count == read.polygon_count
    assert operators_path.navmesh_query(obj).mesh.polygon_count == read.polygon_count


def test_in_edit_mode_the_navmesh_is_the_mesh_being_edited_and_a_bake_asks_to_leave_it(blender):
    """Blender keeps a mesh's arrays out of step with Edit Mode's until it is left: reading,
    exporting and the path test read the mesh being edited (an export raised a TypeError), and a
    bake, which cannot swap the mesh of an object in Edit Mode (it kept the old navmesh while
    reporting the new one), and Clear say to leave Edit Mode first."""
    import bmesh

    from tests.blender_scenes import grid_object, select_only

    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "L_navmesh")
    written = mesh_write.revision(obj)
    select_only(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        assert obj.data.is_editmode
        assert mesh_write.revision(obj) == written and not mesh_write.edited_by_hand(obj)
        edited = bmesh.from_edit_mesh(obj.data)
        edited.faces.ensure_lookup_table()
        bmesh.ops.delete(edited, geom=[edited.faces[-1]], context="FACES_ONLY")
        bmesh.update_edit_mesh(obj.data)
        assert mesh_write.edited_by_hand(obj)
        assert mesh_write.read_navmesh_object(obj).polygon_count == mesh.polygon_count - 1
        in_edit_mode = mesh_write.revision(obj)
        grid_object("Floor", 4.0, 4.0)
        blender.scene.navmesh.source = "VISIBLE"
        for operator in (bpy.ops.navmesh.bake, bpy.ops.navmesh.clear):
            with pytest.raises(RuntimeError, match="'L_navmesh' is in Edit Mode: leave Edit Mode"):
                operator()
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
    assert mesh_write.revision(obj) == in_edit_mode
    assert mesh_write.read_navmesh_object(obj).polygon_count == mesh.polygon_count - 1
