"""io_formats.write_navmesh_file / read_navmesh_file: the entry point shared by operators and CLI."""

from __future__ import annotations

import json

import collada
import pytest

import blender_navmesh as lib
from blender_navmesh import detour, godot
from navmesh_addon import io_formats
from tests.fixtures.io import navmeshes
from tests.fixtures.io.detour_tools import read_tile_set


@pytest.mark.parametrize("y_up", [False, True])
def test_json_written_by_io_formats_reads_back_identical(tmp_path, y_up):
    mesh = navmeshes.mixed()
    path = io_formats.write_navmesh_file(mesh, tmp_path / "m.json", "json", y_up=y_up)
    assert json.loads(path.read_text())["up_axis"] == ("Y" if y_up else "Z")
    navmeshes.assert_equal(io_formats.read_navmesh_file(path), mesh)


def test_dae_options_reach_the_collada_writer(tmp_path):
    mesh = navmeshes.mixed()
    path = io_formats.write_navmesh_file(mesh, tmp_path / "Level.dae", ".DAE", y_up=True, triangulate=True)
    dae = collada.Collada(str(path))
    assert dae.assetInfo.upaxis == "Y_UP"
    assert dae.scene.nodes[0].xmlnode.get("name") == "Level-navmesh"
    assert isinstance(dae.geometries[0].primitives[0], collada.triangleset.TriangleSet)


def test_unknown_format_is_refused_by_name(tmp_path):
    with pytest.raises(lib.NavMeshError, match="unknown navmesh export format 'obj'"):
        io_formats.write_navmesh_file(navmeshes.mixed(), tmp_path / "m.obj", "obj")


@pytest.mark.parametrize("fmt", ["json", "dae", "glb", "bin", "tres"])
def test_missing_folder_is_a_navmesh_error(tmp_path, fmt):
    with pytest.raises(lib.NavMeshError, match="does not exist"):
        io_formats.write_navmesh_file(navmeshes.mixed(), tmp_path / "missing" / f"m.{fmt}", fmt)


def test_unwritable_file_is_a_navmesh_error(tmp_path):
    (tmp_path / "m.json").mkdir()
    with pytest.raises(lib.NavMeshError, match="cannot write"):
        io_formats.write_navmesh_file(navmeshes.mixed(), tmp_path / "m.json", "json")


def test_detour_export_goes_through_lib_with_its_tile_and_piece_sizes(tmp_path):
    path = io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "level.bin", "bin", tile_size=2.0)
    tile_set = read_tile_set(path.read_bytes())
    assert tile_set["tile_width"] == 2.0 and len(tile_set["tiles"]) > 1
    assert path.read_bytes() == detour.to_detour_bytes(navmeshes.l_corridor(), tile_size=2.0)
    path = io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "whole.bin", "bin", piece_size=0.0)
    assert path.read_bytes() == detour.to_detour_bytes(navmeshes.l_corridor(), piece_size=0.0)
    assert path.read_bytes() != detour.to_detour_bytes(navmeshes.l_corridor())


def test_detour_export_warnings_are_lib_s_for_bin_only():
    """File > Export and the command line report `export_warnings`: for .bin the Detour export's
    (a link no agent fits, left out; a cost factor Detour cannot price), for no other format."""
    from dataclasses import replace

    from blender_navmesh.navmesh import OffMeshLink

    mesh = navmeshes.l_corridor()
    r0 = float(mesh.params.agent_radius)
    links = (
        OffMeshLink((1, 1, 0.5), (9, 9, 0.5), 0, 0, radius=r0 / 2, name="flap"),
        OffMeshLink((1, 1, 0.5), (8, 2, 0.5), 0, 0, radius=r0, cost=3.0, name="ladder"),
    )
    mesh = replace(mesh, links=links)
    warnings = io_formats.export_warnings(mesh, ".BIN")
    assert warnings == detour.export_warnings(mesh) and len(warnings) == 2
    assert "'flap'" in warnings[0] and "left out" in warnings[0] and "'ladder' costs 3 times" in warnings[1]
    assert all(io_formats.export_warnings(mesh, fmt) == [] for fmt in ("json", "dae", "glb", "tres"))


def test_godot_export_goes_through_lib(tmp_path):
    path = io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "level.tres", "TRES")
    assert path.read_text() == godot.to_tres(navmeshes.l_corridor())


def test_only_json_reads_back(tmp_path):
    path = tmp_path / "m.dae"
    io_formats.write_navmesh_file(navmeshes.mixed(), path, "dae")
    with pytest.raises(lib.NavMeshError, match="cannot be read back"):
        io_formats.read_navmesh_file(path)
