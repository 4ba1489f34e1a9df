"""Viewport path test: handles on the navmesh, cached recompute on moves, status fields, Path to Curve."""

from __future__ import annotations

import math
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from navmesh_addon import mesh_write, operators_path
from tests.fixtures.io import navmeshes


@pytest.fixture
def corridor(blender):
    """The L-shaped corridor navmesh (floor at z = 0.5, baked radius 0.4) as our navmesh object."""
    obj = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "L_navmesh")
    blender.view_layer.objects.active = obj
    blender.scene.navmesh.path_radius = 0.4  # the bake radius
    return obj


def test_add_path_test_puts_handles_on_the_navmesh_and_finds_a_path(corridor):
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    settings = bpy.context.scene.navmesh
    start, goal = settings.path_start, settings.path_goal
    assert settings.path_navmesh == corridor
    assert start.get(operators_path.HANDLE_TAG) and goal.get(operators_path.HANDLE_TAG)
    # Centroid of the first polygon and the centroid farthest from it, on the detail surface (0.01 up).
    np.testing.assert_allclose(start.location, (4.0, 1.0, 0.51), atol=1e-6)
    np.testing.assert_allclose(goal.location, (9.0, 6.0, 0.51), atol=1e-6)
    assert settings.path_status == "found"
    result = operators_path.STATE.result
    np.testing.assert_allclose(result.points[0], start.location, atol=1e-6)
    np.testing.assert_allclose(result.points[-1], goal.location, atol=1e-6)
    assert settings.path_length == pytest.approx(result.length) and result.length >= math.dist((4, 1), (9, 6))
    assert settings.path_polygons == result.nodes_expanded > 0
    assert settings.path_time_ms > 0


def test_recompute_only_when_handles_radius_or_navmesh_change(corridor):
    bpy.ops.navmesh.add_path_test()
    scene = bpy.context.scene
    settings = scene.navmesh
    assert operators_path.update_path(scene) is False
    settings.path_start.location = (1.0, 1.0, 0.5)
    settings.path_goal.location = (9.0, 9.0, 0.5)
    bpy.context.view_layer.update()
    operators_path.update_path(scene)
    assert settings.path_length == pytest.approx(navmeshes.L_LENGTH, rel=1e-3)
    assert operators_path.update_path(scene) is False
    settings.path_radius = 0.7  # wider agent: the path keeps 0.3 m further from the inner corner
    assert operators_path.update_path(scene) is False  # setting it replanned already
    assert settings.path_status == "found" and settings.path_length > navmeshes.L_LENGTH
    settings.path_radius = 0.9  # wider than the first portal's clearance (0.75 in the fixture)
    assert settings.path_status.startswith("partial: ") and "closest reachable point" in settings.path_status
    mesh_write.write_navmesh_object(bpy.context.scene, navmeshes.l_corridor(), "L_navmesh")
    assert operators_path.update_path(scene) is True


def test_depsgraph_handler_follows_a_moved_handle(corridor):
    bpy.ops.navmesh.add_path_test()
    settings = bpy.context.scene.navmesh
    settings.path_goal.location = (1.0, 1.5, 0.5)
    bpy.context.view_layer.update()  # runs depsgraph_update_post, as a move in the viewport does
    np.testing.assert_allclose(operators_path.STATE.result.points[-1][:2], (1.0, 1.5), atol=1e-6)
    assert settings.path_length == pytest.approx(math.dist((4.0, 1.0), (1.0, 1.5)), rel=1e-6)


def test_handle_moves_reuse_one_query_until_the_navmesh_changes(corridor):
    """The navmesh is decoded once per revision; the Blender float radius of the bake is the bake radius."""
    bpy.ops.navmesh.add_path_test()
    scene = bpy.context.scene
    settings = scene.navmesh
    kept = operators_path.STATE.query
    assert kept.mesh.params.agent_radius == pytest.approx(0.4) and settings.path_radius != 0.4  # float32
    for x in (2.0, 3.0, 4.0):
        settings.path_start.location = (x, 1.0, 0.5)
        bpy.context.view_layer.update()  # the depsgraph handler recomputes the path
        assert operators_path.STATE.result.points[0][0] == pytest.approx(x)
        assert operators_path.STATE.query is kept
    assert kept.cache_sizes()["radii"] == 1  # the float32 radius was taken as the bake radius
    mesh_write.write_navmesh_object(bpy.context.scene, navmeshes.l_corridor(), "L_navmesh")
    operators_path.update_path(scene)
    assert operators_path.STATE.query is not kept


def test_radius_below_the_bake_radius_is_an_error_status(corridor):
    bpy.ops.navmesh.add_path_test()
    settings = bpy.context.scene.navmesh
    settings.path_radius = 0.1
    operators_path.update_path(bpy.context.scene)
    assert settings.path_status.startswith("error:") and "bake radius" in settings.path_status
    assert operators_path.STATE.result is None


def test_path_to_curve_writes_the_path_points(corridor):
    bpy.ops.navmesh.add_path_test()
    assert bpy.ops.navmesh.path_to_curve() == {"FINISHED"}
    curve = bpy.data.objects["Navmesh Path"]
    points = np.array([p.co[:3] for p in curve.data.splines[0].points])
    np.testing.assert_allclose(points, operators_path.STATE.result.points, atol=1e-6)


def test_add_path_test_without_a_navmesh_says_to_bake(blender):
    with pytest.raises(RuntimeError, match="bake a navmesh first"):
        bpy.ops.navmesh.add_path_test()


def test_area_costs_from_the_bake_become_the_query_filter(blender):
    from dataclasses import replace

    obj = mesh_write.write_navmesh_object(
        blender.scene, replace(navmeshes.l_corridor(), area_costs={3: 5.0}), "L_navmesh"
    )
    flt = operators_path.navmesh_query(obj).filter
    assert flt.cost(3) == 5.0 and flt.cost(0) == 1.0
    blender.view_layer.objects.active = obj
    bpy.ops.navmesh.add_path_test()
    assert blender.scene.navmesh.path_status == "found"


def test_add_path_test_again_keeps_handles_the_user_moved_on_the_navmesh(corridor):
    bpy.ops.navmesh.add_path_test()
    settings = bpy.context.scene.navmesh
    settings.path_start.location = (1.0, 1.0, 0.5)  # moved along the corridor
    settings.path_goal.location = (50.0, 50.0, 0.5)  # dragged off the navmesh
    bpy.context.view_layer.update()
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    np.testing.assert_allclose(settings.path_start.location, (1.0, 1.0, 0.5))
    np.testing.assert_allclose(settings.path_goal.location, (9.0, 6.0, 0.51), atol=1e-6)  # put back on it
    assert settings.path_status == "found"


def test_path_to_curve_greys_out_without_a_path_test(corridor):
    with pytest.raises(RuntimeError, match="add a path test first"):
        bpy.ops.navmesh.path_to_curve()
    bpy.ops.navmesh.add_path_test()
    assert bpy.ops.navmesh.path_to_curve.poll()


def test_changing_path_radius_replans_at_once(corridor):
    """Path Radius is an input of the path as the handles are: setting it replans (status, length and
    the path the overlay draws with the new radius), with no handle move and no depsgraph update."""
    bpy.ops.navmesh.add_path_test()
    settings = bpy.context.scene.navmesh
    settings.path_start.location = (1.0, 1.0, 0.5)
    settings.path_goal.location = (9.0, 9.0, 0.5)
    bpy.context.view_layer.update()
    assert settings.path_length == pytest.approx(navmeshes.L_LENGTH, rel=1e-3)
    settings.path_radius = 0.7
    assert operators_path.STATE.key[2] == pytest.approx(0.7)
    assert settings.path_status == "found" and settings.path_length > navmeshes.L_LENGTH
    settings.path_radius = 0.9  # wider than the first portal's clearance
    assert settings.path_status.startswith("partial: ")
    assert operators_path.update_path(bpy.context.scene) is False  # nothing left to replan


def test_the_navmesh_field_picks_which_navmesh_the_path_test_runs_on(corridor, blender):
    """With several navmeshes and no Agent Type, the Path Test panel's Navmesh field (navmesh objects
    only) chooses the one the path runs on: setting it replans there, and Add Path Test uses it when
    no navmesh is active."""
    from navmesh_addon import panels, properties
    from tests.test_addon_ui import RecordingLayout

    other = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "Other_navmesh")
    bpy.ops.navmesh.add_path_test()
    settings = blender.scene.navmesh
    assert settings.path_navmesh == corridor and operators_path.STATE.query_key[0] == corridor.name_full
    log = []
    panels.VIEW3D_PT_navmesh_path.draw(SimpleNamespace(layout=RecordingLayout(log)), blender)
    assert ("prop", "path_navmesh") in log and ("prop", "path_radius") in log
    picker = settings.bl_rna.properties["path_navmesh"]
    assert picker.fixed_type.identifier == "Object"
    assert properties.is_navmesh(settings, other) and not properties.is_navmesh(settings, settings.path_start)
    settings.path_navmesh = other
    assert settings.path_status == "found" and operators_path.STATE.query_key[0] == other.name_full
    blender.view_layer.objects.active = None
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}  # two navmeshes, none active: the field's
    assert settings.path_navmesh == other


@pytest.mark.parametrize(
    "system, scale, length_unit, shown",
    [
        ("METRIC", 0.01, "CENTIMETERS", lambda m: f"{m * 100:.2f} cm"),  # a level modelled in centimetres
        ("METRIC", 1.0, "MILLIMETERS", lambda m: f"{m * 1000:.2f} mm"),
        ("IMPERIAL", 1.0, "FEET", lambda m: f"{m / 0.3048:.2f}'"),
        ("METRIC", 1.0, "ADAPTIVE", lambda m: f"{m:.3f} m"),  # 8.246 m
        ("METRIC", 0.001, "ADAPTIVE", lambda m: f"{m:.3f} m"),
        ("NONE", 0.01, "ADAPTIVE", lambda m: f"{m:.4g}"),  # no unit system: plain Blender units, unscaled
    ],
)
def test_path_length_is_shown_in_the_scenes_units(blender, system, scale, length_unit, shown):
    """The panel gives the path's length as Blender gives lengths: in the scene's unit system and Length
    unit, after its Unit Scale (a centimetre scene's 1336.5 units are 1336.50 cm, not 13.37 m)."""
    from navmesh_addon import panels
    from navmesh_addon import units as units_module
    from tests.test_addon_ui import RecordingLayout

    units = blender.scene.unit_settings
    units.system, units.scale_length = system, scale
    if system != "NONE":
        units.length_unit = length_unit
    blender.scene.navmesh.path_radius = 0.4 / units_module.meters_per_unit(blender.scene)  # the bake radius
    obj = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "L_navmesh")
    blender.view_layer.objects.active = obj
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    meters = operators_path.STATE.result.length
    log = []
    panels.VIEW3D_PT_navmesh_path.draw(SimpleNamespace(layout=RecordingLayout(log)), blender)
    assert ("label", f"Length: {shown(meters)}") in log
