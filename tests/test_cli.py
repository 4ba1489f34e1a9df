"""The headless CLI (`python -m navmesh_addon`, same code as `blender -c navmesh`): bakes the bundled
demo level to every format, answers path queries for CI, and turns bad input into exit code 2 (bad
command line or file), 1 (the bake failed) or 3 (--fail-unreachable) with one clear stderr line."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blender_navmesh as lib
from tests.fixtures.io import navmeshes
from tests.fixtures.io.detour_tools import read_tile_set
from tests.fixtures.io.godot_tools import read_tres

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "tests" / "fixtures" / "levels" / "demo_level.obj"
ROOM_A, ROOM_B = [2.0, 1.5, 0.0], [12.0, 1.5, 0.0]
BALCONY = [14.5, 5.0, 1.6]
STAGE_TOP = [14.5, 1.5, 1.0]


def run_cli(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "navmesh_addon", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo level baked once with the Human preset to json, dae, glb, Detour bin in 4 m tiles and Godot tres."""
    out = tmp_path_factory.mktemp("demo") / "nested" / "demo_level.json"
    result = run_cli(
        "bake", DEMO, "--output", out, "--format", "json,dae,glb,bin,tres", "--preset", "human", "--tile-size", "4"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_bake_obj_writes_one_file_per_format(demo):
    mesh = lib.load(demo)
    assert mesh.polygon_count >= 5
    p = mesh.params
    assert (p.agent_radius, p.agent_height, p.agent_max_climb, p.agent_max_slope) == pytest.approx(
        (0.4, 1.8, 0.4, 45.0)
    )
    # The Y-up OBJ came in Z-up: floors inside the 16 m x 6 m building, the balcony at 1.6 m walkable.
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    assert lo[0] > 0 and hi[0] < 16 and lo[1] > 0 and hi[1] < 6
    assert hi[2] == pytest.approx(1.6, abs=0.05)

    import collada

    dae = collada.Collada(str(demo.with_suffix(".dae")))
    faces = sum(len(prim) for prim in dae.geometries[0].primitives)
    assert mesh.polygon_count <= faces <= len(mesh.detail_triangles), "polygons whole or as their detail triangles"

    glb = demo.with_suffix(".glb").read_bytes()
    magic, _, _, chunk_length, chunk_type = struct.unpack_from("<4sIII4s", glb)
    assert magic == b"glTF" and chunk_type == b"JSON"
    gltf = json.loads(glb[20 : 20 + chunk_length])
    assert [m["name"] for m in gltf["meshes"]] == ["demo_level-navmesh"]

    tile_set = read_tile_set(demo.with_suffix(".bin").read_bytes())
    assert tile_set["tile_width"] == 4.0 and len(tile_set["tiles"]) > 1
    assert sum(t["header"]["poly_count"] for t in tile_set["tiles"]) >= mesh.polygon_count

    tres = read_tres(demo.with_suffix(".tres").read_text())
    assert len(np.unique(tres["meta"]["face_polygons"])) == mesh.polygon_count


def test_paths_report_each_pair_and_fail_unreachable_sets_exit_code(demo, tmp_path):
    queries = tmp_path / "queries.json"
    off_level = [40.0, 1.5, 0.0]  # 30 m beyond the level's east wall: a key spot that moved
    queries.write_text(json.dumps([ROOM_A + ROOM_B, ROOM_A + BALCONY, ROOM_A + STAGE_TOP, ROOM_A + off_level]))
    out = tmp_path / "paths.json"

    strict = run_cli("paths", demo, queries, "--output", out, "--fail-unreachable")
    assert strict.returncode == 3
    assert "pair(s) 2, 3" in strict.stderr and "Traceback" not in strict.stderr
    assert "pair 3: unreachable, goal is" in strict.stderr
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["results"]][:2] == ["found", "found"]
    assert report["results"][2]["status"] != "found" and report["unreachable"] == [2, 3]
    far = report["results"][3]
    assert far["status"] == "unreachable" and far["points"] == [] and far["goal_distance"] > 20.0
    assert "from the navmesh" in far["reason"] and report["extent"][0] > 0
    assert report["results"][0]["start_distance"] < 0.5
    assert report["radius"] == pytest.approx(0.4)
    through_door, to_balcony = report["results"][:2]
    assert through_door["points"][0] == pytest.approx(ROOM_A, abs=0.05)
    assert through_door["points"][-1] == pytest.approx(ROOM_B, abs=0.05)
    assert through_door["length"] >= np.linalg.norm(np.subtract(ROOM_B, ROOM_A)) - 1e-6
    assert max(pt[2] for pt in to_balcony["points"]) == pytest.approx(1.6, abs=0.05)

    lenient = run_cli("paths", demo, queries, "--output", out)
    assert lenient.returncode == 0, lenient.stderr[-3000:]


def test_bake_into_blend_then_paths_read_the_navmesh_object(tmp_path):
    level = tmp_path / "level.blend"
    baked = run_cli("bake", DEMO, "--output", level, "--agent-radius", "0.3", "--max-slope", "40")
    assert baked.returncode == 0, baked.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["level.blend"]  # written whole, by rename
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([ROOM_A + ROOM_B]))
    out = tmp_path / "paths.json"
    result = run_cli("paths", level, queries, "--output", out)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["radius"] == pytest.approx(0.3)
    assert report["results"][0]["status"] == "found"


def test_bake_without_input_bakes_the_open_blend_file(blender, tmp_path):
    """`blender -b level.blend -c navmesh bake --output ...`: the level is the file Blender opened."""
    import bpy

    from navmesh_addon import cli

    bpy.ops.wm.obj_import(filepath=str(DEMO))
    level = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(level))
    bpy.ops.wm.open_mainfile(filepath=str(level))
    assert cli.main(["bake", "--output", str(tmp_path / "level.json"), "--preset", "Child / Small Creature"]) == 0
    mesh = lib.load(tmp_path / "level.json")
    assert mesh.polygon_count >= 5 and mesh.params.agent_radius == pytest.approx(0.25)


@pytest.mark.parametrize("suffix, exporter", [(".glb", "gltf"), (".gltf", "gltf"), (".fbx", "fbx")])
def test_bake_imports_gltf_and_fbx_levels_z_up(blender, tmp_path, suffix, exporter):
    """A 10 m floor 2 m up, exported by Blender and baked from the file: it comes back level at z = 2."""
    import bpy

    from navmesh_addon import cli

    bpy.ops.mesh.primitive_plane_add(size=10.0, location=(0.0, 0.0, 2.0))
    level = tmp_path / f"floor{suffix}"
    options = {"export_format": "GLB" if suffix == ".glb" else "GLTF_SEPARATE"} if exporter == "gltf" else {}
    getattr(bpy.ops.export_scene, exporter)(filepath=str(level), **options)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "floor.json")]) == 0
    mesh = lib.load(tmp_path / "floor.json")
    assert mesh.polygon_count >= 1
    assert mesh.vertices[:, 2] == pytest.approx(2.0, abs=0.05)
    assert mesh.area_xy() == pytest.approx((10 - 2 * mesh.params.agent_radius) ** 2, rel=0.1)


def test_y_up_json_reads_back_as_the_same_z_up_navmesh(blender, tmp_path):
    import bpy

    from navmesh_addon import cli

    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(1.0, 2.0, 0.5))
    level = tmp_path / "floor.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(level))
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "z.json")]) == 0
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "y.json"), "--y-up"]) == 0
    raw = json.loads((tmp_path / "y.json").read_text())
    assert raw["up_axis"] == "Y" and np.allclose(np.asarray(raw["vertices"])[:, 1], 0.5, atol=0.05)
    assert lib.load(tmp_path / "y.json").vertices == pytest.approx(lib.load(tmp_path / "z.json").vertices)


def test_bake_takes_every_bake_parameter_by_its_lib_name_and_the_old_spellings():
    from navmesh_addon import cli

    given = {
        "cell_size": 0.25,
        "agent_radius": 0.3,
        "agent_height": 1.7,
        "agent_max_climb": 0.35,
        "agent_max_slope": 40.0,
        "region_min_area": 2.0,
        "max_verts_per_poly": 5,
        "max_edge_len": 3.0,
        "max_edge_error": 0.3,
        "max_height_error": 0.15,
        "jump_max_distance": 2.5,
        "jump_max_up": 0.5,
        "jump_max_drop": 2.0,
        "jump_step": 1.5,
    }
    assert set(given) == {p.name for p in lib.BAKE_PARAMETERS}
    argv = ["bake", "level.obj", "--output", "x.json"]
    for name, value in given.items():
        argv += ["--" + name.replace("_", "-"), str(value)]
    assert cli.parameter_values(cli.build_parser().parse_args(argv)) == given
    old = cli.build_parser().parse_args(["bake", "-o", "x.json", "--max-climb", "0.3", "--max-slope", "30"])
    assert cli.parameter_values(old) == {"agent_max_climb": 0.3, "agent_max_slope": 30.0}


def test_bake_with_parameter_options_writes_them_into_the_navmesh(blender, tmp_path):
    from navmesh_addon import cli

    out = tmp_path / "level.json"
    assert (
        cli.main(
            [
                "bake",
                str(DEMO),
                "--output",
                str(out),
                "--preset",
                "human",
                "--max-edge-len",
                "2.5",
                "--max-verts-per-poly",
                "5",
                "--agent-max-slope",
                "40",
            ]
        )
        == 0
    )
    mesh = lib.load(out)
    assert (mesh.params.max_edge_len, mesh.params.max_verts_per_poly, mesh.params.agent_max_slope) == (2.5, 5, 40.0)
    assert mesh.params.agent_radius == pytest.approx(0.4)  # from the preset
    start, end = mesh.vertices[mesh.poly_vertices, :2], mesh.vertices[mesh.edge_next_vertex, :2]
    assert np.linalg.norm(end - start, axis=1)[mesh.neighbors < 0].max() <= 2.5 + 1e-9


def test_bake_takes_the_values_lib_takes_at_the_edge_of_its_range(blender, tmp_path):
    """Slope under 90 degrees and lengths above 0 (the README's ranges) bake; they were refused as
    outside the add-on's range (slope over 89.9, lengths under 0.001)."""
    from navmesh_addon import cli

    level = tmp_path / "floor.obj"  # a 5 cm floor: fine cells stay few
    level.write_text("v 0 0 0\nv 0.05 0 0\nv 0.05 0 -0.05\nv 0 0 -0.05\nf 1 2 3\nf 1 3 4\n")
    out = tmp_path / "floor.json"
    small = ["--agent-radius", "0.001", "--agent-height", "0.01", "--agent-max-climb", "0.001"]
    argv = ["bake", str(level), "-o", str(out), *small, "--region-min-area", "0", "--max-edge-error", "0.0007"]
    argv += ["--agent-max-slope", "89.95", "--cell-size", "0.0005", "--max-height-error", "0.0005"]
    assert cli.main(argv) == 0
    params = lib.load(out).params
    assert (params.agent_max_slope, params.cell_size, params.max_height_error) == (89.95, 0.0005, 0.0005)


def test_help_shows_every_bake_parameters_default_with_its_unit(capsys):
    from navmesh_addon import cli

    assert cli.main(["bake", "--help"]) == 0
    out = capsys.readouterr().out
    entries = [" ".join(entry.split()) for entry in out.split("options:", 1)[1].split("\n  -")]
    for parameter in lib.BAKE_PARAMETERS:
        option = "-" + parameter.name.replace("_", "-") + " "
        [entry] = [entry for entry in entries if entry.startswith(option)]
        assert f"(default: {parameter.default:g}" in entry, option
    help_text = " ".join(entries)
    for text in ("(default: 0.2 m)", "(default: 45 degrees)", "(default: 1 m²)", "(default: 6)"):
        assert text in help_text


def test_help_exits_0_without_raising(capsys):
    from navmesh_addon import cli

    assert cli.main(["bake", "--help"]) == 0
    assert "--fail-unreachable" not in capsys.readouterr().out
    assert cli.main(["paths", "--help"]) == 0
    assert "--fail-unreachable" in capsys.readouterr().out


def test_module_entry_point_reports_errors_on_stderr_without_traceback(tmp_path):
    result = run_cli("bake", tmp_path / "missing.obj", "--output", tmp_path / "x.json")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("does not exist") and "Traceback" not in result.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "output, formats, expected",
    [
        ("out/level.json", None, [("json", "out/level.json")]),
        ("out/level.GLB", None, [("glb", "out/level.GLB")]),
        (
            "out/level.json",
            "json, dae,glb,dae",
            [("json", "out/level.json"), ("dae", "out/level.dae"), ("glb", "out/level.glb")],
        ),
        ("out/level", "blend", [("blend", "out/level.blend")]),
        ("out/level.v2", "json", [("json", "out/level.v2.json")]),
        ("out/level.bin", None, [("bin", "out/level.bin")]),
        ("out/level", "json,bin", [("json", "out/level.json"), ("bin", "out/level.bin")]),
        ("out/level.tres", None, [("tres", "out/level.tres")]),
    ],
)
def test_output_paths_follow_the_extension_or_format_list(output, formats, expected):
    from navmesh_addon import cli

    assert cli.output_paths(Path(output), formats) == [(fmt, Path(path)) for fmt, path in expected]


def test_exports_godot_cannot_path_on_are_warned_of(tmp_path):
    """A room 11 km from the origin: written in every format, with a warning for the ones Godot loads."""
    level = tmp_path / "far.obj"
    level.write_text("o Floor\nv 11000 0 0\nv 11010 0 0\nv 11010 0 -10\nv 11000 0 -10\nf 1 2 3 4\n")  # Y-up
    result = run_cli("bake", level, "--output", tmp_path / "far.json", "--format", "json,tres,glb")
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "Godot 3 paths only within" in line]
    assert [line.split(":")[2].strip() for line in warned] == ["far.tres", "far.glb"]
    assert {p.name for p in tmp_path.iterdir()} >= {"far.json", "far.tres", "far.glb"}


def test_a_detour_export_warns_of_the_links_it_leaves_out(blender, tmp_path):
    """A .blend whose off-mesh link is for agents narrower than the bake radius: the .bin is written
    without it and stderr names it; the JSON keeps it without a warning."""
    import bpy

    from tests.blender_scenes import grid_object

    grid_object("West", 8.0, 8.0)
    grid_object("East", 8.0, 8.0, location=(10.0, 0.0, 1.0))
    curve = bpy.data.curves.new("Flap", "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points.foreach_set("co", [7.5, 4.0, 0.0, 1.0, 10.5, 4.0, 1.0, 1.0])
    flap = bpy.data.objects.new("Flap", curve)
    bpy.context.scene.collection.objects.link(flap)
    flap.navmesh_role, flap.navmesh_link_radius = "OFF_MESH_LINK", 0.1
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.agent_radius = "VISIBLE", 0.25, 0.3
    path = tmp_path / "flap.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    result = run_cli("bake", path, "--output", tmp_path / "flap.json", "--format", "json,bin")
    assert result.returncode == 0, result.stderr[-3000:]
    warned = [line for line in result.stderr.splitlines() if "off-mesh link" in line]
    assert len(warned) == 1 and warned[0].startswith("navmesh: warning: flap.bin: off-mesh link 'Flap' is for agents")
    assert "left out of the .bin" in warned[0]
    assert [link.name for link in lib.load(tmp_path / "flap.json").links] == ["Flap"]
    assert read_tile_set((tmp_path / "flap.bin").read_bytes())["tiles"][0]["header"]["off_mesh_con_count"] == 0


def _bad_obj(tmp_path) -> Path:
    """A level with only a wall: nothing to stand on."""
    path = tmp_path / "wall.obj"
    path.write_text("o Wall\nv 0 0 0\nv 4 0 0\nv 4 3 0\nv 0 3 0\nf 1 2 3 4\n")
    return path


BAD_BAKES = {
    "unsupported input": (["bake", "{tmp}/level.txt", "--output", "{tmp}/x.json"], 2, "use a .blend, .obj"),
    "gltf buffer and detour": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--format", "gltf,bin"],
        2,
        "gltf writes its buffer to <name>.bin",
    ),
    "unknown format": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--format", "json,usd"],
        2,
        "unknown --format 'usd'",
    ),
    "no format": (["bake", "{demo}", "--output", "{tmp}/x.nav"], 2, "cannot tell the format"),
    "unknown preset": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--preset", "elephant"],
        2,
        "choose from child, human, large",
    ),
    "negative radius": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--agent-radius", "-1"],
        2,
        "agent_radius must not be negative",
    ),
    "nan slope": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--max-slope", "nan"],
        2,
        "agent_max_slope must be a finite number",
    ),
    "negative edge length": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--max-edge-len", "-2"],
        2,
        "max_edge_len must not be negative",
    ),
    "fractional vertex limit": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--max-verts-per-poly", "5.5"],
        2,
        "--max-verts-per-poly: invalid int value",
    ),
    "missing collection": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--collection", "Props"],
        2,
        "no collection named 'Props'",
    ),
    "no output": (["bake", "{demo}"], 2, "--output"),
    "no input and no open file": (["bake", "--output", "{tmp}/x.json"], 2, "no level to bake"),
    "no command": ([], 2, "required"),
    "nothing walkable": (["bake", "{wall}", "--output", "{tmp}/x.json"], 1, "nothing walkable"),
    "folder as input": (["bake", "{tmp}", "--output", "{tmp}/x.json"], 2, "is a folder, not a file"),
    "NaN in the OBJ": (["bake", "{nan_obj}", "--output", "{tmp}/x.json"], 2, "nan.obj:2: vertex needs three finite"),
    "face index beyond the OBJ's vertices": (
        ["bake", "{far_obj}", "--output", "{tmp}/x.json"],
        2,
        "far.obj:5: face index 9 is out of range (4 vertices so far)",
    ),
    "NaN in a glTF": (
        ["bake", "{nan_gltf}", "--output", "{tmp}/x.json"],
        2,
        "'nan.gltf': mesh 'Floor' has NaN or infinite vertex positions",
    ),
    "NaN in a GLB": (["bake", "{nan_glb}", "--output", "{tmp}/x.json"], 2, "'nan.glb': mesh 'Floor' has NaN"),
    "an output that is the input": (
        ["bake", "{floor_glb}", "--output", "{tmp}/x.json", "--format", "json,glb"],
        2,
        "is the level read: it would be replaced",
    ),
    "Detour tiles under 4 cells, before the bake": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--format", "json,bin", "--tile-size", "0.01"],
        2,
        "tile_size 0.01 m is under 4 cells",
    ),
    "more vertices than Detour holds, before the bake": (
        ["bake", "{demo}", "--output", "{tmp}/x.json", "--format", "json,bin", "--max-verts-per-poly", "12"],
        2,
        "max_verts_per_poly 12 makes polygons Detour cannot hold",
    ),
    "a file where the output's folder would be": (
        ["bake", "{demo}", "--output", "{tmp}/level.txt/x.json"],
        2,
        "level.txt' is a file, not a folder",
    ),
}


def _floor_gltf(path: Path, nan: bool = False) -> None:
    """A 10 m floor quad (glTF, Y-up) as .gltf (buffer in a data URI) or .glb; one position NaN if asked."""
    import base64

    positions = np.array([[0, 0, 0], [10, 0, 0], [10, 0, -10], [0, 0, -10]], dtype="<f4")
    if nan:
        positions[1, 1] = np.nan
    blob = positions.tobytes() + np.array([0, 1, 2, 0, 2, 3], dtype="<u2").tobytes()
    document = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": "Floor"}],
        "meshes": [{"name": "Floor", "primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [0, 0, -10], "max": [10, 0, 0]},
            {"bufferView": 1, "componentType": 5123, "count": 6, "type": "SCALAR"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 48},
            {"buffer": 0, "byteOffset": 48, "byteLength": 12},
        ],
        "buffers": [{"byteLength": len(blob)}],
    }
    if path.suffix == ".gltf":
        document["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
        path.write_text(json.dumps(document))
        return
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    size = 12 + 8 + len(text) + 8 + len(blob)
    path.write_bytes(
        b"glTF"
        + struct.pack("<II", 2, size)
        + struct.pack("<I", len(text))
        + b"JSON"
        + text
        + struct.pack("<I", len(blob))
        + b"BIN\0"
        + blob
    )


@pytest.mark.parametrize("case", sorted(BAD_BAKES))
def test_bad_bake_input_exits_with_a_clear_message(blender, tmp_path, capsys, case):
    from navmesh_addon import cli

    argv, code, message = BAD_BAKES[case]
    (tmp_path / "level.txt").write_text("not a level")
    (tmp_path / "nan.obj").write_text("v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n")
    (tmp_path / "far.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 9\n")
    for name, nan in (("nan.gltf", True), ("nan.glb", True), ("x.glb", False)):
        _floor_gltf(tmp_path / name, nan)
    names = {
        "tmp": tmp_path,
        "demo": DEMO,
        "wall": _bad_obj(tmp_path),
        "nan_obj": tmp_path / "nan.obj",
        "far_obj": tmp_path / "far.obj",
        "nan_gltf": tmp_path / "nan.gltf",
        "nan_glb": tmp_path / "nan.glb",
        "floor_glb": tmp_path / "x.glb",
    }
    before = (tmp_path / "x.glb").read_bytes()
    assert cli.main([a.format(**names) for a in argv]) == code
    lines = capsys.readouterr().err.splitlines()
    # Progress lines may come first; the error is one line, the last.
    assert all(line.startswith("navmesh: baking: ") for line in lines[:-1])
    assert lines[-1].startswith("navmesh: error:") and message in lines[-1]
    assert not (tmp_path / "x.json").exists()
    assert (tmp_path / "x.glb").read_bytes() == before


BAD_QUERIES = {
    "missing navmesh": ("{tmp}/none.json", "[[0,0,0,1,1,0]]", [], "does not exist"),
    "navmesh not json": ("{tmp}/garbage.json", "[[0,0,0,1,1,0]]", [], "garbage.json"),
    "navmesh wrong type": ("{tmp}/level.dae", "[[0,0,0,1,1,0]]", [], "use a navmesh .json or a .blend"),
    "blend without navmesh": ("{tmp}/empty.blend", "[[0,0,0,1,1,0]]", [], "no baked navmesh object"),
    "queries not json": ("{tmp}/mesh.json", "[[0,0,0,", [], "is not valid JSON"),
    "empty queries": ("{tmp}/mesh.json", "[]", [], "non-empty JSON list"),
    "short pair": ("{tmp}/mesh.json", "[[0,0,0,1,1,0],[1,2,3]]", [], "entry 1 must be 6 finite numbers"),
    "negative radius": (
        "{tmp}/mesh.json",
        "[[0,0,0,1,1,0]]",
        ["--radius", "-0.5"],
        "--radius must be a finite number >= 0",
    ),
    "area id out of range": ("{tmp}/mesh.json", "[[0,0,0,1,1,0]]", ["--exclude-area", "999"], "not an area id 0..63"),
    "radius below the bake radius": (
        "{tmp}/small.json",
        "[[0,0,0,1,1,0]]",
        ["--radius", "0.1"],
        "below the bake radius 0.4",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_QUERIES))
def test_bad_paths_input_exits_2_with_a_clear_message(blender, tmp_path, capsys, case):
    import bpy

    from navmesh_addon import cli

    navmesh, queries, extra, message = BAD_QUERIES[case]
    empty = lib.NavMesh.empty(lib.BakeParams(), "nothing to bake")
    lib.save(empty, tmp_path / "mesh.json")
    lib.save(navmeshes.l_corridor(), tmp_path / "small.json")
    (tmp_path / "garbage.json").write_text('{"format": 3}')
    (tmp_path / "level.dae").write_text("<COLLADA/>")
    if case == "blend without navmesh":
        bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "empty.blend"), copy=True)
    (tmp_path / "queries.json").write_text(queries)
    argv = [
        "paths",
        navmesh.format(tmp=tmp_path),
        str(tmp_path / "queries.json"),
        "--output",
        str(tmp_path / "out.json"),
        *extra,
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("navmesh: error:") and message in err
    assert not (tmp_path / "out.json").exists()


def test_bake_warns_about_settings_that_make_little_sense_and_still_bakes(tmp_path):
    out = tmp_path / "coarse.json"
    result = run_cli("bake", DEMO, "--output", out, "--cell-size", "0.6", "--agent-radius", "0.4")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "navmesh: warning: cell_size 0.6 m is more than half the agent radius" in result.stderr
    assert lib.load(out).polygon_count > 0


def test_bake_progress_is_one_line_per_stage_in_a_log():
    import io

    from navmesh_addon.cli import ProgressPrinter

    log = io.StringIO()
    progress = ProgressPrinter(log)
    for stage, fraction in [("input", 0.0), ("heightfield", 0.05), ("heightfield", 0.2), ("done", 1.0)]:
        progress(stage, fraction)
    progress.close()
    assert log.getvalue().splitlines() == [
        "navmesh: baking: input (0%)",
        "navmesh: baking: heightfield (5%)",
        "navmesh: baking: done (100%)",
    ]


def test_bake_progress_is_a_bar_redrawn_in_place_on_a_terminal():
    import io

    from navmesh_addon.cli import ProgressPrinter

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    progress = ProgressPrinter(screen)
    progress("contours", 0.5)
    progress.close()  # a bake that stopped early still ends its line
    progress("done", 1.0)
    progress.close()
    first, second = screen.getvalue().split("\n")[:2]
    assert first == "\rnavmesh: baking [###############               ]  50% contours    "
    assert second.startswith("\rnavmesh: baking [" + "#" * 30 + "] 100% done")
    assert screen.getvalue().endswith("\n") and screen.getvalue().count("\n") == 2


def test_cli_bake_reports_each_stage_on_stderr(tmp_path):
    result = run_cli("bake", DEMO, "--output", tmp_path / "level.json")
    assert result.returncode == 0, result.stderr[-3000:]
    stages = [
        line.split(": ")[2].split(" (")[0]
        for line in result.stderr.splitlines()
        if line.startswith("navmesh: baking: ")
    ]
    assert stages == ["input", "heightfield", "regions", "contours", "polygons", "detail", "clearance", "done"]


def test_bake_of_a_blend_uses_the_source_saved_in_it(blender, tmp_path):
    """The panel's Source (here the collection "Level", not the big "Backdrop" floor) is what the CLI bakes."""
    import bpy

    from tests.blender_scenes import grid_object

    level, backdrop = bpy.data.collections.new("Level"), bpy.data.collections.new("Backdrop")
    for collection in (level, backdrop):
        bpy.context.scene.collection.children.link(collection)
    grid_object("Room", 10.0, 10.0, collection=level)
    grid_object("Field", 60.0, 60.0, location=(20.0, 0.0, -5.0), collection=backdrop)
    settings = bpy.context.scene.navmesh
    settings.source, settings.collection = "COLLECTION", level
    path = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    result = run_cli("bake", path, "--output", tmp_path / "level.json")
    assert result.returncode == 0, result.stderr[-3000:]
    r = lib.load(tmp_path / "level.json").params.agent_radius
    assert lib.load(tmp_path / "level.json").area_xy() == pytest.approx((10 - 2 * r) ** 2, rel=0.02)


def test_seeds_prune_the_islands_and_the_bake_reports_them(tmp_path):
    full = run_cli("bake", DEMO, "--output", tmp_path / "full.json")
    seeded = run_cli("bake", DEMO, "--output", tmp_path / "seeded.json", "--seed", ",".join(map(str, ROOM_A)))
    assert full.returncode == seeded.returncode == 0, seeded.stderr[-3000:]
    islands = lib.load(tmp_path / "full.json").islands()
    assert len(set(islands.tolist())) > 1, "the demo level has islands to prune"
    assert f"navmesh: {len(set(islands.tolist()))} islands: " in full.stderr
    assert "navmesh: 1 island (kept by 1 walkable seed): " in seeded.stderr
    kept = lib.load(tmp_path / "seeded.json")
    assert len(set(kept.islands().tolist())) == 1 and kept.area_xy() < lib.load(tmp_path / "full.json").area_xy()


@pytest.mark.parametrize(
    "seed, code, message",
    [
        ("1,2", 2, "'1,2' is not X,Y,Z"),
        ("500,500,0", 2, "walkable seed '--seed 1' at (500, 500, 0) is"),
    ],
)
def test_bad_seeds_are_named(tmp_path, seed, code, message):
    result = run_cli("bake", DEMO, "--output", tmp_path / "x.json", "--seed", seed)
    assert result.returncode == code and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_paths_weigh_areas_by_the_baked_costs_unless_told_otherwise(tmp_path):
    """A mud strip (area 5) across most of a floor: with its baked cost of 10 the path goes round
    its end, with --area-cost 5=1 straight through, with --exclude-area 5 round it as well."""
    from levels import Scene

    scene = Scene().floor(0, 0, 20, 10)
    scene.floor(9, 0, 11, 8, z=0.0)
    areas = np.zeros(len(scene.triangles), dtype=np.int64)
    areas[2:] = 5
    mesh = lib.generate(
        scene.vertices,
        scene.triangles,
        lib.BakeParams(cell_size=0.2, agent_radius=0.3),
        areas=areas,
        area_costs={5: 10.0},
    )
    assert dict(mesh.area_costs) == {5: 10.0}
    navmesh = tmp_path / "mud.json"
    lib.save(mesh, navmesh)
    assert dict(lib.load(navmesh).area_costs) == {5: 10.0}
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([[2.0, 2.0, 0.0, 18.0, 2.0, 0.0]]))

    def length(*options):
        out = tmp_path / "paths.json"
        result = run_cli("paths", navmesh, queries, "--output", out, *options)
        assert result.returncode == 0, result.stderr[-3000:]
        report = json.loads(out.read_text())
        return report["results"][0]["length"], report

    around, report = length()
    through, _ = length("--area-cost", "5=1")
    avoided, excluded = length("--exclude-area", "5")
    assert report["area_costs"] == {"5": 10.0} and excluded["excluded_areas"] == [5]
    assert through == pytest.approx(16.0, abs=0.05)
    # Round the strip's end at y = 8 + r: 2 x 9.2 m of diagonals and 2.6 m along it, give or take the outline.
    assert around == pytest.approx(21.0, abs=1.0) and avoided == pytest.approx(around, rel=0.02)


def test_bake_of_a_blend_bakes_its_agent_types_one_file_per_navmesh(blender, tmp_path, capsys):
    import bpy

    from navmesh_addon import cli
    from tests.blender_scenes import grid_object

    grid_object("Room", 10.0, 10.0)
    settings = bpy.context.scene.navmesh
    settings.source = "VISIBLE"
    for name, radius, height in (("Human", 0.3, 1.8), ("Ogre", 0.8, 1.8), ("Giant", 0.5, 3.0)):
        agent = settings.agent_types.add()
        agent.name, agent.radius, agent.height = name, radius, height
    level = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(level))
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "out" / "level.json")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["level_Giant.json", "level_Human.json"]
    human, giant = (lib.load(tmp_path / "out" / f"level_{name}.json").params for name in ("Human", "Giant"))
    assert (human.agent_radius, human.agent_height) == pytest.approx((0.3, 1.8))  # Ogre's too, by clearance
    assert (giant.agent_radius, giant.agent_height) == pytest.approx((0.5, 3.0))
    assert "for Human, Ogre ->" in capsys.readouterr().out
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "giant.json"), "--agent-type", "Giant"]) == 0
    assert lib.load(tmp_path / "giant.json").params.agent_height == pytest.approx(3.0)
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "x.json"), "--agent-type", "Elf"]) == 2
    assert "no agent type named 'Elf' (agent types: Human, Ogre, Giant)" in capsys.readouterr().err
    # Agent options on the command line bake that one agent instead of the saved types.
    assert cli.main(["bake", str(level), "--output", str(tmp_path / "child.json"), "--preset", "child"]) == 0
    assert lib.load(tmp_path / "child.json").params.agent_radius == pytest.approx(0.25)


def test_a_blend_cut_short_is_never_taken_for_saved(blender, tmp_path):
    """Blender reports a save cut short by a full disk as saved: the end of the file is checked
    (compressed or not), so a truncated .blend never replaces a good one."""
    import bpy

    from navmesh_addon import cli

    for compress in (True, False):
        whole = tmp_path / f"whole_{compress}.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(whole), copy=True, compress=compress)
        assert cli._whole_blend(whole)
        cut = tmp_path / f"cut_{compress}.blend"
        cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
        assert not cli._whole_blend(cut)


def test_the_gltf_buffer_and_a_detour_file_never_overwrite_each_other(blender, tmp_path):
    """A .gltf writes its buffer to <name>.bin, where a Detour navmesh of the same name goes: across
    two runs either would silently replace the other."""
    from navmesh_addon import io_formats

    mesh = navmeshes.l_corridor()
    io_formats.write_navmesh_file(mesh, tmp_path / "a.bin", "bin")
    detour_bytes = (tmp_path / "a.bin").read_bytes()
    with pytest.raises(lib.NavMeshError, match="would replace .*a.bin', a Detour navmesh"):
        io_formats.write_navmesh_file(mesh, tmp_path / "a.gltf", "gltf", context=blender)
    assert (tmp_path / "a.bin").read_bytes() == detour_bytes and not (tmp_path / "a.gltf").exists()
    io_formats.write_navmesh_file(mesh, tmp_path / "b.gltf", "gltf", context=blender)
    buffer = (tmp_path / "b.bin").read_bytes()
    with pytest.raises(lib.NavMeshError, match="would replace the buffer of"):
        io_formats.write_navmesh_file(mesh, tmp_path / "b.bin", "bin")
    assert (tmp_path / "b.bin").read_bytes() == buffer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.bin", "b.gltf"]  # no partial files


def test_blender_errors_are_told_by_the_line_that_says_what_went_wrong():
    from navmesh_addon.io_formats import blender_error

    traceback = (
        'Error: Python: Traceback (most recent call last):\n  File "io_import_scene_gltf2.py", line 9, in'
        " execute\n    return self.unit()\nIndexError: index 9 is out of bounds for axis 0 with size 4\n\n"
        "Location: /bpy/ops.py:109\n"
    )
    assert blender_error(RuntimeError(traceback)) == "IndexError: index 9 is out of bounds for axis 0 with size 4"
    plain = "Error: Cannot open file /x/y.gltf for writing: No space left on device\nLocation: /bpy/ops.py:109"
    assert blender_error(RuntimeError(plain)) == "Cannot open file /x/y.gltf for writing: No space left on device"


def test_agent_type_names_become_file_names_and_outputs_never_replace_their_inputs(tmp_path, capsys):
    from navmesh_addon import cli

    assert cli._file_part("Human/Small") == "Human_Small" and cli._file_part('a\\b:c*"') == "a_b_c__"
    lib.save(navmeshes.l_corridor(), tmp_path / "nav.json")
    (tmp_path / "q.json").write_text("[[0.5, 0.5, 0, 1.5, 0.5, 0]]")
    before = (tmp_path / "nav.json").read_bytes()
    assert (
        cli.main(["paths", str(tmp_path / "nav.json"), str(tmp_path / "q.json"), "-o", str(tmp_path / "nav.json")]) == 2
    )
    assert "is the navmesh read: it would be replaced" in capsys.readouterr().err
    assert (tmp_path / "nav.json").read_bytes() == before


def test_paths_report_the_link_segments_a_path_takes(blender, tmp_path, capsys):
    """Two floors 2 m apart joined by an off-mesh link: the report's `links` names the segment that
    crosses it (as PathResult.links), and is empty for a path that takes no link."""
    from blender_navmesh.links import LinkSpec
    from levels import Scene
    from navmesh_addon import cli

    scene = Scene().floor(0, 0, 4, 4).floor(6, 0, 10, 4)
    mesh = lib.generate(
        scene.vertices,
        scene.triangles,
        lib.BakeParams(agent_radius=0.3),
        links=[LinkSpec((3, 2, 0), (7, 2, 0), name="Jump")],
    )
    lib.save(mesh, tmp_path / "mesh.json")
    (tmp_path / "queries.json").write_text(json.dumps([[1, 2, 0, 9, 2, 0], [1, 1, 0, 3, 3, 0]]))
    out = tmp_path / "paths.json"
    assert cli.main(["paths", str(tmp_path / "mesh.json"), str(tmp_path / "queries.json"), "-o", str(out)]) == 0
    across, same_floor = json.loads(out.read_text())["results"]
    assert across["status"] == same_floor["status"] == "found"
    assert len(across["links"]) == 1
    k = across["links"][0]
    assert across["points"][k][0] == pytest.approx(3, abs=0.1) and across["points"][k + 1][0] == pytest.approx(
        7, abs=0.1
    )
    assert same_floor["links"] == []


def test_an_options_no_output_uses_is_refused_not_ignored(blender, capsys):
    from navmesh_addon import cli

    for option, output in ((["--tile-size", "32"], "x.json"), (["--piece-size", "0"], "x.glb"), (["--y-up"], "x.tres")):
        assert cli.main(["bake", str(DEMO), "--output", f"/nonexistent/{output}", *option]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"navmesh: error: {option[0]} applies to ") and "output only" in err, err


def test_a_read_only_output_is_refused_before_the_bake(blender, tmp_path, capsys):
    """Exit 2, before any bake stage runs, nothing written, the read-only file as it was (both for
    bake and for paths)."""
    from navmesh_addon import cli

    readonly = tmp_path / "ro.json"
    readonly.write_text("keep")
    readonly.chmod(0o444)
    assert cli.main(["bake", str(DEMO), "--output", str(tmp_path / "ro.dae"), "--format", "dae,json"]) == 2
    err = capsys.readouterr().err
    assert "navmesh: baking:" not in err and "read-only" in err and err.startswith("navmesh: error:"), err
    assert readonly.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["ro.json"]
    lib.save(navmeshes.l_corridor(), tmp_path / "mesh.json")
    (tmp_path / "queries.json").write_text("[[0, 0, 0, 1, 1, 0]]")
    assert cli.main(["paths", str(tmp_path / "mesh.json"), str(tmp_path / "queries.json"), "-o", str(readonly)]) == 2
    assert "read-only" in capsys.readouterr().err and readonly.read_text() == "keep"


def test_two_costs_for_one_area_id_are_unusable_input(blender, tmp_path, capsys):
    import bpy

    from navmesh_addon import cli
    from tests.blender_scenes import grid_object

    grid_object("Room", 10.0, 10.0)
    mud, bog = grid_object("Mud", 2.0, 2.0, location=(2, 2, 0)), grid_object("Bog", 2.0, 2.0, location=(-2, -2, 0))
    for obj, cost in ((mud, 2.0), (bog, 4.0)):
        obj.navmesh_area, obj.navmesh_area_cost = 3, cost
    bpy.context.scene.navmesh.source = "VISIBLE"
    path = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    assert cli.main(["bake", str(path), "--output", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "area 3 has cost" in err and "navmesh: baking:" not in err


def test_the_collection_help_says_a_blend_bakes_its_saved_source(capsys):
    from navmesh_addon import cli

    assert cli.main(["bake", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "all visible objects" not in help_text and "a .blend's saved Source" in help_text


def test_a_one_polygon_navmesh_is_reported_in_the_singular(tmp_path):
    level = tmp_path / "square.obj"
    level.write_text("v 0 0 0\nv 6 0 0\nv 6 0 -6\nv 0 0 -6\nf 1 2 3 4\n")
    result = run_cli("bake", level, "--output", tmp_path / "square.json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert lib.load(tmp_path / "square.json").polygon_count == 1
    assert "navmesh: 1 polygon, " in result.stdout, result.stdout


def test_the_wrapper_script_runs_the_cli_from_any_folder(tmp_path):
    """scripts/navmesh from a level's folder (not the checkout, no PYTHONPATH): relative paths are
    the folder's, the checkout's .venv and add-on are found from the script's own place."""
    (tmp_path / "square.obj").write_text("v 0 0 0\nv 6 0 0\nv 6 0 -6\nv 0 0 -6\nf 1 2 3 4\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(ROOT / "scripts" / "navmesh"), "bake", "square.obj", "--output", "out/square.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert lib.load(tmp_path / "out" / "square.json").polygon_count == 1


def test_max_edge_len_is_checked_against_the_cell_size_the_preset_gives(blender, tmp_path, capsys):
    """The Child preset's cells are 0.1 m: a 0.15 m max_edge_len is more than a cell there. It was
    checked against the default 0.2 m cell before the preset was applied, and refused."""
    from navmesh_addon import cli

    out = tmp_path / "child.json"
    assert cli.main(["bake", str(DEMO), "--preset", "child", "--max-edge-len", "0.15", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["params"]["max_edge_len"] == pytest.approx(0.15)
    capsys.readouterr()
    code = cli.main(["bake", str(DEMO), "--cell-size", "0.5", "--max-edge-len", "0.3", "-o", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "max_edge_len 0.3 m is shorter than a cell" in err and "navmesh: baking:" not in err, err


def test_a_usage_error_leaves_no_output_folder_behind(blender, tmp_path, capsys):
    """Output folders are made once every check has passed: a wrong collection name made them
    empty before it was found; a file where a folder should be is exit 2, before the bake."""
    from navmesh_addon import cli

    out = tmp_path / "new" / "deeper" / "level.json"
    assert cli.main(["bake", str(DEMO), "--collection", "Nope", "--output", str(out)]) == 2
    assert "no collection named 'Nope'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    (tmp_path / "file").write_text("")
    assert cli.main(["bake", str(DEMO), "--output", str(tmp_path / "file" / "level.json")]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "navmesh: baking:" not in err, err
