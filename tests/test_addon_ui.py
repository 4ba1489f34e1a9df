"""Agent presets and sidebar panels: presets set the documented values; panels only name real
properties and operators."""

from __future__ import annotations

import math
import os
from types import SimpleNamespace

import bpy
import pytest

import blender_navmesh as lib
from navmesh_addon import mesh_write, panels, presets
from tests.fixtures.io import navmeshes


@pytest.mark.parametrize(
    "key, radius, height, climb, slope",
    [("HUMAN", 0.4, 1.8, 0.4, 45.0), ("CHILD", 0.25, 1.1, 0.25, 45.0), ("LARGE", 1.2, 3.5, 0.8, 35.0)],
)
def test_builtin_presets_set_the_agent(blender, key, radius, height, climb, slope):
    assert bpy.ops.navmesh.agent_preset_builtin(preset=key) == {"FINISHED"}
    params = blender.scene.navmesh.to_bake_params()
    assert (params.agent_radius, params.agent_height, params.agent_max_climb) == (radius, height, climb)
    assert params.agent_max_slope == pytest.approx(slope)
    assert blender.scene.navmesh.path_radius == pytest.approx(radius)
    assert params.cell_size <= radius  # Recast: cells no wider than the agent radius


def test_user_preset_values_name_real_settings(blender):
    settings = blender.scene.navmesh
    names = [path.removeprefix("settings.") for path in presets.NAVMESH_OT_agent_preset_add.preset_values]
    assert all(hasattr(settings, name) for name in names)
    assert {p.name for p in lib.BAKE_PARAMETERS} <= set(names)
    assert presets.NAVMESH_MT_agent_presets.preset_subdir == presets.NAVMESH_OT_agent_preset_add.preset_subdir


def test_builtin_presets_use_the_bake_parameter_names():
    names = {p.name for p in lib.BAKE_PARAMETERS}
    for values in presets.BUILTIN.values():
        assert set(values) <= names
        lib.BakeParams(**values)


def test_settings_default_to_lib_defaults_rounded_from_float32_storage(blender):
    assert blender.scene.navmesh.to_bake_params() == lib.BakeParams()


def test_settings_are_the_bake_parameters_with_their_labels_and_ranges(blender):
    properties = blender.scene.navmesh.bl_rna.properties
    for parameter in lib.BAKE_PARAMETERS:
        prop = properties[parameter.name]
        assert prop.name == parameter.label
        assert prop.description.lower() == parameter.description.lower()
        # The hard limits are lib's valid range (an excluded bound is refused by lib, with its
        # message); the sliders stop inside an excluded bound.
        to_lib = (lambda v: v) if parameter.unit != "degrees" else math.degrees
        if parameter.maximum is not None:
            assert to_lib(prop.hard_max) == pytest.approx(parameter.maximum)
            if parameter.maximum_excluded:
                assert to_lib(prop.soft_max) == pytest.approx(parameter.maximum - 0.1)
        assert to_lib(prop.hard_min) == pytest.approx(parameter.minimum)
        if parameter.minimum_excluded:
            assert prop.soft_min > parameter.minimum
    assert "cell_height" not in properties


@pytest.mark.parametrize("scale", [1.0, 0.01])
@pytest.mark.parametrize(
    "name, value",
    [("agent_max_slope", 89.95), ("cell_size", 0.0005), ("max_height_error", 0.0005), ("jump_step", 1e-7)],
)
def test_settings_keep_every_value_lib_takes(blender, scale, name, value):
    """Values lib accepts near the edge of its range come back from the settings unchanged (they
    were clamped to 89.9 degrees and 0.001 Blender units, or rounded to 0), whatever the Unit Scale."""
    settings = blender.scene.navmesh
    blender.scene.unit_settings.scale_length = scale
    settings.set_bake_parameter(name, value)
    assert settings.bake_parameter(name) == pytest.approx(value, rel=1e-5)


class RecordingLayout:
    """Stands in for UILayout: records prop/operator/menu calls and checks every name exists."""

    def __init__(self, log):
        self.log = log
        self.use_property_split = False

    def _child(self, *args, **kwargs):
        return RecordingLayout(self.log)

    row = column = box = _child

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, f"{name} is not a property of {data}"
        self.log.append(("prop", name))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        assert name in data.bl_rna.properties and search_name in search_data.bl_rna.properties
        self.log.append(("prop", name))

    def operator(self, idname, **kwargs):
        module, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, module), name), f"no operator {idname}"
        self.log.append(("operator", idname))
        return SimpleNamespace()

    def menu(self, idname, **kwargs):
        assert hasattr(bpy.types, idname)
        self.log.append(("menu", idname))

    def label(self, text="", **kwargs):
        self.log.append(("label", text))

    def progress(self, **kwargs):
        self.log.append(("progress", kwargs["text"]))

    def template_list(self, list_type, list_id, data, collection, active_data, active_index, **kwargs):
        assert hasattr(bpy.types, list_type), f"no UI list {list_type}"
        assert collection in data.bl_rna.properties and active_index in active_data.bl_rna.properties
        self.log.append(("list", collection))

    def separator(self):
        pass


def draw_all(context) -> list:
    log = []
    for cls in panels.CLASSES:
        assert cls.bl_category == "Navmesh" and cls.bl_space_type == "VIEW_3D"
        cls.draw(SimpleNamespace(layout=RecordingLayout(log)), context)
    return log


def test_panels_draw_parameters_bake_stats_path_and_export(blender):
    obj = mesh_write.write_navmesh_object(blender.scene, navmeshes.l_corridor(), "L_navmesh", stats={"bake_time": 0.25})
    blender.view_layer.objects.active = obj
    log = draw_all(blender)
    props = [name for kind, name in log if kind == "prop"]
    assert {"source", "color_by", "show_boundary", "show_portals", "show_clearance", "path_radius"} <= set(props)
    bake_props = [name for name in props if name in {p.name for p in lib.BAKE_PARAMETERS}]
    assert sorted(bake_props) == sorted(p.name for p in lib.BAKE_PARAMETERS)  # each exactly once
    operators = {name for kind, name in log if kind == "operator"}
    assert {
        "navmesh.bake",
        "navmesh.add_path_test",
        "navmesh.path_to_curve",
        "export_scene.navmesh_json",
        "export_scene.navmesh_dae",
        "export_scene.navmesh_glb",
        "export_scene.navmesh_detour",
        "export_scene.navmesh_godot",
    } <= operators
    labels = [text for kind, text in log if kind == "label"]
    assert "Polygons: 3" in labels and "Area: 36.0 m²" in labels and "Bake time: 0.25 s" in labels


def test_panel_shows_progress_instead_of_the_button_while_baking(blender):
    settings = blender.scene.navmesh
    settings.bake_stage, settings.bake_progress = "regions", 0.35
    log = draw_all(blender)
    assert ("progress", "regions (Esc to cancel)") in log
    assert ("operator", "navmesh.bake") not in log


def test_sources_panel_shows_the_active_objects_role_and_material_area(blender):
    mesh = bpy.data.meshes.new("Crate")
    mesh.materials.append(bpy.data.materials.new("Mud"))
    crate = bpy.data.objects.new("Crate", mesh)
    blender.scene.collection.objects.link(crate)
    blender.view_layer.objects.active = crate
    log = []
    panels.VIEW3D_PT_navmesh_sources.draw(SimpleNamespace(layout=RecordingLayout(log)), blender)
    props = [name for kind, name in log if kind == "prop"]
    assert props.count("navmesh_area") == 2 and "navmesh_role" in props


def test_minus_removes_only_the_user_preset_the_menu_shows(blender):
    """Save a user preset, apply a built-in one: the menu names the built-in one and "-" removes
    nothing; back on the user preset, "-" removes its file and the menu shows its title again."""
    name = "Pytest Scout"
    assert bpy.ops.navmesh.agent_preset_add(name=name) == {"FINISHED"}
    path = bpy.utils.preset_find(name, presets.PRESET_SUBDIR, display_name=True)
    try:
        assert presets.menu_label() == presets.active_user_preset() == name
        bpy.ops.navmesh.agent_preset_builtin(preset="CHILD")
        assert presets.menu_label() == "Child / Small Creature" and presets.active_user_preset() is None
        assert bpy.ops.navmesh.agent_preset_add(remove_active=True) == {"CANCELLED"}
        assert bpy.utils.preset_find(name, presets.PRESET_SUBDIR, display_name=True) == path
        bpy.ops.script.execute_preset(filepath=path, menu_idname=presets.NAVMESH_MT_agent_presets.__name__)
        assert presets.active_user_preset() == name
        assert bpy.ops.navmesh.agent_preset_add(remove_active=True) == {"FINISHED"}
        assert bpy.utils.preset_find(name, presets.PRESET_SUBDIR, display_name=True) is None
        assert presets.menu_label() == presets.MENU_TITLE
    finally:
        if path and os.path.exists(path):
            os.remove(path)
