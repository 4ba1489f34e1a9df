"""Bake parameters: one list (lib.BAKE_PARAMETERS) behind BakeParams, the README table and the JSON
schema; their checks and messages; the legacy cell_height key; max_edge_len splits long walls."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

import blender_navmesh as lib
from blender_navmesh import BAKE_PARAMETERS, BakeParams, NavMeshError, generate
from blender_navmesh.contours import _split_long_wall_edges
from blender_navmesh.params import LEGACY_KEYS, BakeParameter
from levels import Scene
from tests.navmesh_checks import assert_valid_navmesh

ROOT = Path(__file__).resolve().parent.parent


def readme_table_row(parameter) -> str:
    recast = (f"`{parameter.recast}`" if parameter.recast else "—") + (
        " (in cells)" if parameter.recast_in_cells else ""
    )
    return f"| `{parameter.name}` | {parameter.default:g} | {parameter.unit} | {parameter.description} | {recast} |"


def test_bake_params_fields_are_the_list_in_order_with_its_defaults():
    fields = dataclasses.fields(BakeParams)
    assert [f.name for f in fields] == [p.name for p in BAKE_PARAMETERS]
    assert BakeParams().to_dict() == {p.name: p.default for p in BAKE_PARAMETERS}
    for parameter in BAKE_PARAMETERS:
        assert parameter.problem(parameter.default) is None, parameter.name


def test_readme_parameter_table_matches_the_list():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Parameters\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows == [readme_table_row(p) for p in BAKE_PARAMETERS]


def test_schema_params_are_the_list_plus_legacy_keys_with_the_same_bounds():
    schema = json.loads((ROOT / "schema" / "navmesh.schema.json").read_text())
    properties = schema["properties"]["params"]["properties"]
    assert set(properties) == {p.name for p in BAKE_PARAMETERS} | LEGACY_KEYS
    for parameter in BAKE_PARAMETERS:
        entry = properties[parameter.name]
        assert entry["type"] == ("integer" if parameter.unit == "count" else "number")
        assert entry["exclusiveMinimum" if parameter.minimum_excluded else "minimum"] == parameter.minimum
        if parameter.maximum is not None:
            assert entry["exclusiveMaximum" if parameter.maximum_excluded else "maximum"] == parameter.maximum


@pytest.mark.parametrize(
    "value, message",
    [
        (-1.0, "parameter max_edge_len must not be negative, got -1.0"),
        (float("inf"), "parameter max_edge_len must be a finite number, got inf"),
        ("5", "parameter max_edge_len must be a finite number, got '5'"),
    ],
)
def test_max_edge_len_is_checked_with_a_message_naming_it(value, message):
    with pytest.raises(NavMeshError, match=re.escape(message)):
        BakeParams(max_edge_len=value)


def test_max_edge_len_under_a_cell_is_an_error_naming_it_and_the_cell_size():
    """Wall edges are cut into pieces no longer than max_edge_len: 1e-6 m made millions of pieces on
    a 10 m room (a MemoryError after seconds); a value from 0 (no limit) or a cell up still bakes."""
    message = "parameter max_edge_len 1e-06 m is shorter than a cell (cell_size 0.2 m)"
    with pytest.raises(NavMeshError, match=re.escape(message)):
        BakeParams(max_edge_len=1e-6)
    with pytest.raises(NavMeshError, match="max_edge_len 0.05 m is shorter than a cell .cell_size 0.1 m.*set 0"):
        BakeParams(max_edge_len=0.05, cell_size=0.1)
    for value in (0.0, 0.2, 5.0):
        BakeParams(max_edge_len=value)


def test_a_file_baked_with_max_edge_len_under_a_cell_still_loads():
    floor = Scene().floor(0, 0, 2, 2)
    doc = generate(floor.vertices, floor.triangles, BakeParams(max_edge_len=0.5)).to_dict()
    doc["params"]["max_edge_len"] = 0.1  # as files baked before it was refused may hold
    assert lib.NavMesh.from_dict(doc).params.max_edge_len == 0.1
    with pytest.raises(NavMeshError, match="max_edge_len 0.1 m is shorter than a cell"):
        BakeParams.from_dict(doc["params"])


def test_messages_name_the_range():
    with pytest.raises(NavMeshError, match=re.escape("agent_max_slope must be in [0, 90) degrees, got 90")):
        BakeParams(agent_max_slope=90)
    with pytest.raises(NavMeshError, match="max_verts_per_poly must be a whole number from 3 to 32, got 33"):
        BakeParams(max_verts_per_poly=33)
    with pytest.raises(NavMeshError, match="agent_height must be greater than 0, got 0"):
        BakeParams(agent_height=0)


def test_numpy_scalars_are_numbers_and_become_plain_python_ones():
    """Settings read from arrays are numpy scalars: np.float32 and np.int64 were refused as "not a
    finite number"; they are kept as float and int, so files and messages get plain numbers."""
    params = BakeParams(cell_size=np.float32(0.25), max_verts_per_poly=np.int64(5), agent_radius=np.float64(0.5))
    assert (params.cell_size, params.max_verts_per_poly, params.agent_radius) == (0.25, 5, 0.5)
    assert [type(v) for v in (params.cell_size, params.max_verts_per_poly, params.agent_radius)] == [float, int, float]
    json.dumps(params.to_dict())
    for bad in (np.bool_(True), True, np.float32("nan")):
        with pytest.raises(NavMeshError, match="cell_size must be a finite number"):
            BakeParams(cell_size=bad)


def test_legacy_cell_height_is_ignored_but_other_unknown_keys_are_errors():
    assert BakeParams.from_dict({"cell_size": 0.3, "cell_height": 0.1}) == BakeParams(cell_size=0.3)
    with pytest.raises(NavMeshError, match="unknown bake parameter\\(s\\): cell_heigth"):
        BakeParams.from_dict({"cell_size": 0.3, "cell_heigth": 0.1})
    with pytest.raises(TypeError):
        BakeParams(cell_height=0.1)


def test_a_file_written_with_cell_height_still_loads(tmp_path):
    floor = Scene().floor(0, 0, 6, 6)
    mesh = generate(floor.vertices, floor.triangles)
    doc = mesh.to_dict()
    doc["params"]["cell_height"] = 0.1  # as written before cell_height was removed
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    loaded = lib.load(path)
    assert loaded.params == mesh.params and loaded.polygon_count == mesh.polygon_count


def wall_edge_lengths(mesh) -> np.ndarray:
    start, end = mesh.vertices[mesh.poly_vertices, :2], mesh.vertices[mesh.edge_next_vertex, :2]
    return np.linalg.norm(end - start, axis=1)[mesh.neighbors < 0]


def test_a_20_m_floor_at_max_edge_len_5_has_no_longer_wall_edge():
    floor = Scene().floor(0, 0, 20, 20)
    unlimited = generate(floor.vertices, floor.triangles, BakeParams())
    limited = generate(floor.vertices, floor.triangles, BakeParams(max_edge_len=5.0))
    # Eroded by 0.5 m the outline is a 19 m square: each side in four pieces of 4.75 m.
    assert wall_edge_lengths(unlimited) == pytest.approx([19.0] * 4)
    assert sorted(wall_edge_lengths(limited)) == pytest.approx([4.75] * 16)
    assert limited.area_xy() == pytest.approx(unlimited.area_xy())
    assert_valid_navmesh(limited)


def test_max_edge_len_holds_around_obstacles_and_keeps_the_walkable_area():
    level = Scene().floor(0, 0, 20, 12).box((7, 6, 0), (3, 2, 2), 30.0).wall(12, 2, 18, 9, 2.0, 0.3)
    unlimited = generate(level.vertices, level.triangles, BakeParams())
    limited = generate(level.vertices, level.triangles, BakeParams(max_edge_len=2.0))
    assert wall_edge_lengths(unlimited).max() > 2.0
    assert wall_edge_lengths(limited).max() <= 2.0 + 1e-9
    assert limited.area_xy() == pytest.approx(unlimited.area_xy(), rel=1e-9)
    assert_valid_navmesh(limited)


def test_only_wall_edges_are_split_evenly_and_the_corners_stay_bitwise():
    ring = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 1.0], [10.0, 10.0, 1.0], [0.0, 10.0, 0.0]]) + 0.1
    nb = np.array([-1, 7, -1, -1])  # edge 1 -> 2 is shared with region 7
    split, split_nb = _split_long_wall_edges(ring, nb, 4.0)
    assert len(split) == 3 + 1 + 3 + 3
    assert split_nb.tolist() == [-1, -1, -1, 7, -1, -1, -1, -1, -1, -1]
    assert (split[[0, 3, 4, 7]] == ring).all()
    lengths = np.linalg.norm(np.roll(split[:, :2], -1, axis=0) - split[:, :2], axis=1)
    assert lengths[split_nb < 0] == pytest.approx([10 / 3] * 9)
    assert split[1] == pytest.approx(ring[0] + (ring[1] - ring[0]) / 3)  # heights along the edge
    assert _split_long_wall_edges(ring, nb, 0.0)[0] is ring


RECAST_DEMO = {
    "cell_size": 0.3,
    "agent_radius": 0.6,
    "agent_height": 2.0,
    "agent_max_climb": 0.9,
    "max_edge_error": 0.39,
}


@pytest.mark.parametrize("values", [{}, RECAST_DEMO], ids=["defaults", "recast_demo"])
def test_sensible_settings_have_no_warnings(values):
    assert BakeParams(**values).warnings() == []


@pytest.mark.parametrize(
    "values, parameter, hint",
    [
        ({"cell_size": 0.3, "agent_radius": 0.4}, "cell_size", "0.133 to 0.2 m"),
        ({"agent_height": 0.01}, "agent_height", "taller than itself"),
        ({"max_verts_per_poly": 32}, "max_verts_per_poly", "Detour's limit of 6"),
        ({"cell_size": 0.2, "max_edge_error": 0.05}, "max_edge_error", "0.22 to 0.3 m"),
        ({"jump_max_distance": 2.0}, "jump_max_distance", "makes no links"),
        ({"cell_size": 0.2, "agent_radius": 0.0}, "cell_size", "about 3 cells (0.6 m)"),
    ],
)
def test_settings_that_make_little_sense_are_warned_about_by_name(values, parameter, hint):
    warnings = BakeParams(**values).warnings()
    assert [w for w in warnings if w.startswith(f"{parameter} ") and hint in w]


def test_every_builtin_agent_preset_bakes_without_warnings():
    from navmesh_addon.presets import BUILTIN

    for values in BUILTIN.values():
        assert BakeParams(**values).warnings() == []


# Parameters that are no agent dimension but a length (area) the voxel grid resolves: each has a range
# of cells (cell areas) that makes sense, whatever units the level was modelled in.
GRID_RELATIVE = [
    p for p in BAKE_PARAMETERS if p.unit in ("m", "m²") and p.name != "cell_size" and not p.name.startswith("agent_")
]


def test_every_length_and_area_that_is_no_agent_dimension_has_a_range_in_cells():
    assert {p.name for p in GRID_RELATIVE} == {
        "region_min_area",
        "max_edge_len",
        "max_edge_error",
        "max_height_error",
        "jump_max_distance",
        "jump_max_up",
        "jump_max_drop",
        "jump_step",
    }
    for parameter in GRID_RELATIVE:
        assert parameter.cells is not None, parameter.name
        low, high = parameter.cells
        assert 0 < low and (high is None or high > low)


@pytest.mark.parametrize(
    "parameter, factor",
    [(p, 1e-3) for p in GRID_RELATIVE] + [(p, 1e3) for p in GRID_RELATIVE if p.cells[1] is not None],
    ids=lambda v: v.name if isinstance(v, BakeParameter) else ("far_below" if v < 1 else "far_above"),
)
def test_a_length_or_area_far_outside_its_range_in_cells_is_warned_about_by_name(parameter, factor):
    """A thousandth or a thousand times a plausible value (a level in mm or km read as meters) is
    named, with a range in meters to set instead (above a range that has an upper bound); 0 where 0
    means none is no warning."""
    low, high = parameter.cells
    cell = 0.2
    plausible = (low if high is None else (low * high) ** 0.5) * (cell**2 if parameter.unit == "m²" else cell)
    if parameter.name == "max_edge_len" and factor < 1:
        factor = 0.6  # 1.2 cells: under a cell is an error (see above)
    values = {"cell_size": cell, "agent_radius": 0.4, parameter.name: plausible * factor}
    if parameter.name == "jump_max_distance":
        values["jump_max_up"] = 0.5
    named = [w for w in BakeParams(**values).warnings() if w.startswith(f"{parameter.name} ")]
    assert len(named) == 1 and " to " in named[0].split(": ", 1)[1], named
    assert not [
        w for w in BakeParams(**{**values, parameter.name: plausible}).warnings() if w.startswith(f"{parameter.name} ")
    ]
    if parameter.minimum == 0 and not parameter.minimum_excluded:
        assert BakeParams(**{**values, parameter.name: 0.0}).warnings() == []


def scaled_defaults(factor: float) -> BakeParams:
    """The default settings of a scene whose Unit Scale is `factor`, in meters: every length times it."""
    values = {
        p.name: p.default * (factor**2 if p.unit == "m²" else factor) for p in BAKE_PARAMETERS if p.unit in ("m", "m²")
    }
    return BakeParams(**values)


@pytest.mark.parametrize("factor, word", [(0.01, "small"), (0.001, "small"), (100.0, "large")])
def test_an_agent_of_implausible_height_asks_whether_the_unit_scale_is_right(factor, word):
    """Every length scaled alike (a centimetre scene's defaults: cell 2 mm, agent 2 cm tall) is no
    length far from the cell size, so only the agent's absolute height can tell."""
    height = 2.0 * factor
    named = [w for w in scaled_defaults(factor).warnings() if w.startswith("agent_height")]
    assert named == [
        f"agent_height {height:g} m is implausibly {word} for an agent (is the Unit Scale right? choose an agent "
        f"preset): bake parameters are meters (in Blender, the scene's lengths times its Unit Scale, 0.01 for a level "
        "modelled in centimetres), and an agent outside 0.1 to 100 m tall usually means settings left in other units; "
        "an agent preset sets the agent, the cell size and the other lengths in meters"
    ]


@pytest.mark.parametrize("height", [0.1, 0.3, 1.8, 20.0, 100.0])
def test_an_agent_of_plausible_height_is_no_warning(height):
    params = BakeParams(agent_height=height, agent_max_climb=min(height, 0.5))
    assert not [w for w in params.warnings() if w.startswith("agent_height")]


def test_a_centimetre_scenes_default_lengths_with_the_human_preset_are_all_named():
    """A Human agent and cell in meters with the other lengths left at their defaults in a centimetre
    scene's units (as typed values or a user preset saved in a meter scene may leave them; the
    built-in presets set them in meters) hands lib a hundredth of them (areas a ten-thousandth)."""
    from navmesh_addon.presets import BUILTIN

    values = dict(BUILTIN["HUMAN"])
    for parameter in GRID_RELATIVE:
        values[parameter.name] = parameter.default * (1e-4 if parameter.unit == "m²" else 1e-2)
    named = {w.split(" ")[0] for w in BakeParams(**values).warnings()}
    assert named == {"max_edge_error", "max_height_error", "region_min_area", "jump_step"}
