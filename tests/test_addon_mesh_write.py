"""NavMesh -> Blender object: faces, attribute domains and values, stored JSON, replacement rules."""

from __future__ import annotations

import math
from dataclasses import replace

import bpy
import numpy as np
import pytest

import blender_navmesh as lib
from blender_navmesh.navmesh import OffMeshLink
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


def _delete_last_face(obj) -> None:
    """Deletes the navmesh object's last face, as a hand edit in Object Mode (bmesh) would."""
    import bmesh

    edited = bmesh.new()
    edited.from_mesh(obj.data)
    edited.faces.ensure_lookup_table()
    bmesh.ops.delete(edited, geom=[edited.faces[-1]], context="FACES_ONLY")
    edited.to_mesh(obj.data)
    edited.free()


def test_faces_deleted_by_hand_are_the_navmesh_from_then_on(blender, tmp_path):
    """Delete faces of the baked object (as in Edit Mode): reading it, the path test and export
    use the edited faces; the stored navmesh is the fallback only while the faces are untouched."""

    from navmesh_addon import io_formats, operators_path
    from tests.fixtures.io import navmeshes

    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "L_navmesh")
    assert not mesh_write.edited_by_hand(obj)
    _delete_last_face(obj)
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


def _turned(points, angle: float, offset) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.asarray(points, dtype=np.float64).reshape(-1, 3) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T + offset


@pytest.mark.parametrize("unit_scale", [1.0, 0.01])
def test_a_navmesh_object_moved_in_object_mode_is_read_where_it_is_drawn(blender, tmp_path, unit_scale):
    """G/R of the navmesh object (here under a moved parent) moves what Blender draws: reading it
    (exports, overlay, path test) turns and moves every point, links included, keeping clearances."""
    from navmesh_addon import operators_path, overlay

    blender.scene.unit_settings.scale_length = unit_scale  # a level modelled in centimetres: units != meters
    link = OffMeshLink(start=(1.0, 1.0, 0.0), end=(5.5, 1.0, 0.1), start_polygon=0, end_polygon=2, radius=0.5)
    mesh = replace(navmeshes.mixed(), links=(link,))
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "Mixed")
    blender.view_layer.objects.active = obj
    before = mesh_write.revision(obj)
    assert overlay.MESHES.get(obj).vertices.tolist() == mesh.vertices.tolist()
    parent = bpy.data.objects.new("Parent", None)
    blender.scene.collection.objects.link(parent)
    obj.parent = parent
    parent.location = (0.0, 0.0, 1.0 / unit_scale)  # the navmesh 1 m higher
    obj.location.x += 5.0 / unit_scale
    obj.rotation_euler.z = 0.3
    blender.view_layer.update()
    offset = np.array([5.0, 0.0, 1.0])
    assert mesh_write.moved_by_hand(obj) and not mesh_write.edited_by_hand(obj)
    assert mesh_write.revision(obj) != before
    read = mesh_write.read_navmesh_object(obj)
    np.testing.assert_allclose(read.vertices, _turned(mesh.vertices, 0.3, offset), atol=1e-5)
    np.testing.assert_allclose(read.detail_vertices, _turned(mesh.detail_vertices, 0.3, offset), atol=1e-5)
    np.testing.assert_allclose(read.links[0].start, _turned(link.start, 0.3, offset)[0], atol=1e-5)
    np.testing.assert_allclose(read.links[0].end, _turned(link.end, 0.3, offset)[0], atol=1e-5)
    np.testing.assert_array_equal(read.edge_clearance, mesh.edge_clearance)
    np.testing.assert_array_equal(read.poly_vertices, mesh.poly_vertices)
    # What Blender draws (the object's faces, in world units) is what is read, less the display lift.
    drawn = np.array([obj.matrix_world @ v.co for v in obj.data.vertices]) * unit_scale
    drawn[:, 2] -= mesh_write.DISPLAY_LIFT
    np.testing.assert_allclose(read.vertices, drawn, atol=1e-5)
    assert overlay.MESHES.get(obj).vertices.tolist() == read.vertices.tolist()
    assert operators_path.navmesh_query(obj).mesh.vertices.tolist() == read.vertices.tolist()
    path = tmp_path / "moved.json"
    assert bpy.ops.export_scene.navmesh_json(filepath=str(path)) == {"FINISHED"}
    np.testing.assert_allclose(lib.load(path).vertices, read.vertices, atol=1e-12)
    # Moved back where the bake put it, it reads exactly as stored again.
    obj.parent = None
    obj.matrix_world = mesh_write.written_matrix(obj)
    blender.view_layer.update()
    assert not mesh_write.moved_by_hand(obj)
    navmeshes.assert_equal(mesh_write.read_navmesh_object(obj), mesh)


def test_a_moved_navmesh_edited_by_hand_is_the_edited_faces_moved(blender):

    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "L_navmesh")
    _delete_last_face(obj)
    obj.location.y -= 3.0
    obj.rotation_euler.z = -math.pi / 2
    blender.view_layer.update()
    read = mesh_write.read_navmesh_object(obj)
    assert read.polygon_count == mesh.polygon_count - 1
    np.testing.assert_allclose(
        read.vertices, _turned(mesh.vertices[: len(read.vertices)], -math.pi / 2, (0.0, -3.0, 0.0)), atol=1e-5
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda obj: setattr(obj.rotation_euler, "x", 0.2), "tilted"),
        (lambda obj: setattr(obj, "scale", (2.0, 2.0, 2.0)), "scaled"),
        (lambda obj: setattr(obj, "scale", (1.0, -1.0, 1.0)), "mirrored"),
    ],
)
def test_a_tilted_or_scaled_navmesh_object_is_refused_saying_how_to_clear_it(blender, tmp_path, change, words):
    """Tilting or scaling a navmesh would break its slopes and agent sizes: reading it (export, path
    test, overlay) is a clear error naming the transform and Alt+R / Alt+S; clearing them restores it."""
    mesh = navmeshes.l_corridor()
    obj = mesh_write.write_navmesh_object(blender.scene, mesh, "L_navmesh")
    blender.view_layer.objects.active = obj
    obj.location.x += 2.0
    change(obj)
    blender.view_layer.update()
    assert mesh_write.moved_by_hand(obj)
    with pytest.raises(lib.NavMeshError, match=rf"'L_navmesh' is {words}.*Alt\+R.*Alt\+S"):
        mesh_write.read_navmesh_object(obj)
    path = tmp_path / "tilted.json"
    with pytest.raises(RuntimeError, match="Alt\\+R"):
        bpy.ops.export_scene.navmesh_json(filepath=str(path))
    assert not path.exists()
    obj.rotation_euler = (0.0, 0.0, 0.0)  # Alt+R
    obj.scale = (1.0, 1.0, 1.0)  # Alt+S
    blender.view_layer.update()
    np.testing.assert_allclose(mesh_write.read_navmesh_object(obj).vertices, mesh.vertices + (2.0, 0.0, 0.0))
