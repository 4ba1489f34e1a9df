"""The navmesh JSON format: lossless round trips (Z-up and Y-up), the schema, and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import blender_navmesh as lib
from blender_navmesh.navmesh import NavMesh, from_y_up, to_y_up
from blender_navmesh.navmesh.reading import check_convex
from tests.fixtures.io import navmeshes

SCHEMA = json.loads((Path(__file__).parent.parent / "schema" / "navmesh.schema.json").read_text())


def validate(doc: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("build", [navmeshes.l_corridor, navmeshes.mixed])
@pytest.mark.parametrize("y_up", [False, True])
def test_file_round_trip_is_lossless_and_matches_schema(tmp_path, build, y_up):
    mesh = build()
    path = tmp_path / "mesh.json"
    lib.save(mesh, path, y_up=y_up)
    doc = json.loads(path.read_text())
    validate(doc)
    assert doc["up_axis"] == ("Y" if y_up else "Z")
    assert doc["units"] == "meter"
    navmeshes.assert_equal(lib.load(path), mesh)


def test_y_up_maps_blender_xyz_to_x_z_minus_y():
    mesh = navmeshes.l_corridor()
    doc = mesh.to_dict(y_up=True)
    x, y, z = mesh.vertices.T
    np.testing.assert_array_equal(np.array(doc["vertices"]), np.stack([x, z, -y], axis=1))
    dx, dy, dz = mesh.detail_vertices.T
    np.testing.assert_array_equal(np.array(doc["detail"]["vertices"]), np.stack([dx, dz, -dy], axis=1))
    assert doc["polygons"] == mesh.polygons


def test_y_up_keeps_polygons_counter_clockwise_seen_from_up():
    """Seen from +Y looking down, the (x, -z) plane is Blender's (x, y) plane: winding is kept."""
    mesh = navmeshes.mixed()
    yup = np.array(mesh.to_dict(y_up=True)["vertices"])
    for poly in mesh.polygons:
        p = yup[poly]
        u, w = p[:, 0], -p[:, 2]
        assert 0.5 * np.sum(u * np.roll(w, -1) - np.roll(u, -1) * w) > 0


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.tuples(st.integers(1, 20), st.just(3)), elements=finite))
def test_y_up_conversion_is_an_exact_rotation(points):
    converted = to_y_up(points)
    np.testing.assert_array_equal(from_y_up(converted), points)
    np.testing.assert_array_equal(converted[:, 1], points[:, 2])
    np.testing.assert_allclose(np.linalg.norm(converted, axis=1), np.linalg.norm(points, axis=1))


def test_empty_mesh_round_trips_with_its_reason(tmp_path):
    mesh = NavMesh.empty(lib.BakeParams(), "no walkable surface")
    doc = mesh.to_dict()
    validate(doc)
    navmeshes.assert_equal(NavMesh.from_dict(doc), mesh)


def test_unlimited_clearance_is_written_as_null():
    doc = navmeshes.l_corridor().to_dict()
    flat = [c for row in doc["edge_clearance"] for c in row]
    assert None in flat and 0.0 in flat and 0.75 in flat


def _doc() -> dict:
    return navmeshes.mixed().to_dict()


def _with(**changes) -> str:
    doc = _doc()
    for key, value in changes.items():
        if value is KeyError:
            del doc[key]
        else:
            doc[key] = value
    return json.dumps(doc)


def _with_params(**changes) -> str:
    doc = _doc()
    for key, value in changes.items():
        if value is KeyError:
            del doc["params"][key]
        else:
            doc["params"][key] = value
    return json.dumps(doc)


BAD_FILES = {
    "corrupt JSON": ('{"format": "navmesh", "version": 1, "vert', "not valid JSON"),
    "top level list": ("[1, 2, 3]", "object at the top level"),
    "other format": (_with(format="gltf"), "not a navmesh file"),
    "newer version": (_with(version=2), "unsupported navmesh version 2"),
    "missing polygons": (_with(polygons=KeyError), "missing the field 'polygons'"),
    "missing params": (_with(params=KeyError), "missing the field 'params'"),
    "polygon index out of range": (
        _with(polygons=[[0, 1, 2, 3], [1, 4, 99], [5, 6, 7, 8, 9, 10]]),
        "vertex indices out of range",
    ),
    "repeated polygon vertex": (_with(polygons=[[0, 1, 2, 3], [1, 1, 2], [5, 6, 7, 8, 9, 10]]), "same vertex twice"),
    "neighbour out of range": (
        _with(neighbors=[[-1, 7, -1, -1], [-1, -1, 0], [-1] * 6]),
        "polygon indices out of range",
    ),
    "neighbour list too short": (_with(neighbors=[[-1, 1, -1], [-1, -1, 0], [-1] * 6]), "wrong length"),
    "detail triangle out of range": (
        _with(detail={"vertices": [[0, 0, 0]] * 3, "triangles": [[0, 1, 5]], "polygons": [0]}),
        "detail.triangles refer to vertex indices out of range",
    ),
    "detail polygon out of range": (
        _with(detail={"vertices": [[0, 0, 0]] * 3, "triangles": [[0, 1, 2]], "polygons": [9]}),
        "detail.polygons refer to polygon indices out of range",
    ),
    "vertices not triples": (_with(vertices=[[0, 0], [1, 1]]), "list of \\[x, y, z\\] points"),
    "vertex not a number": (_with(vertices=[["a", 0, 0]]), "wrong type"),
    "regions per polygon": (_with(regions=[0]), "one entry per polygon"),
    "unknown up axis": (_with(up_axis="X"), "up_axis 'X'"),
    "other units": (_with(units="inch"), "units 'inch'"),
    "params not an object": (_with(params=[1, 2]), "bake parameters"),
    "unknown parameter": (_with(params={"cell_sise": 0.3}), "unknown bake parameter"),
    "invalid parameter": (_with(params={"cell_size": -1}), "cell_size must be greater than 0"),
    "cross clearance size": (_with(cross_clearance=[[1.0], [1.0], [1.0]]), "cross_clearance"),
    "links not a list": (_with(links="none"), "'links' must be a list"),
    "clockwise polygon": (_with(polygons=[[0, 1, 2, 3], [1, 2, 4], [5, 6, 7, 8, 9, 10]]), "polygon 1 is clockwise"),
    "polygon not convex": (_with(polygons=[[0, 1, 2, 3], [1, 4, 2], [5, 6, 8, 7, 9, 10]]), "polygon 2 is not convex"),
    "fractional vertex index": (
        _with(polygons=[[0, 1, 2, 3], [1, 4, 2.5], [5, 6, 7, 8, 9, 10]]),
        "'polygons' entry 1 must hold whole numbers, got 2.5",
    ),
    "NaN vertex": (
        _with(vertices=[[0, 0, 0], [1, 0, 0], [0, float("nan"), 0]] + [[0, 0, 0]] * 8),
        "'vertices' entry 2 has a NaN or infinite value: \\[0.0, nan, 0.0\\]",
    ),
    "infinite detail vertex": (
        _with(
            detail={"vertices": [[0, 0, 0], [0, 0, float("inf")], [1, 0, 0]], "triangles": [[0, 1, 2]], "polygons": [0]}
        ),
        "'detail.vertices' entry 1 has a NaN or infinite value",
    ),
    "fractional detail triangle": (
        _with(detail={"vertices": [[0, 0, 0]] * 3, "triangles": [[0, 1, 2], [0, 1.5, 2]], "polygons": [0, 0]}),
        "'detail.triangles' entry 1 is \\[0.0, 1.5, 2.0\\]: whole numbers are needed",
    ),
    "fractional neighbour": (_with(neighbors=[[-1, 1.5, -1, -1], [-1, -1, 0], [-1] * 6]), "1.5 for polygon 0"),
    "fractional region": (_with(regions=[0, 0.5, 1]), "'regions' entry 1 is 0.5: whole numbers are needed"),
    "NaN clearance": (_with(edge_clearance=[[0, float("nan"), 0, 0], [0, 0, 0], [0] * 6]), "nan for polygon 0"),
    "area costs not an object": (_with(area_costs=[5, 2.0]), "'area_costs' must be an object"),
    "area id not a number": (_with(area_costs={"mud": 2.0}), "key 'mud' must be an area id"),
    "area id too large": (_with(area_costs={"64": 2.0}), "area id 64 must be a whole number from 0 to 63"),
    "area cost not positive": (_with(area_costs={"5": 0}), "area 5 has cost 0; costs must be finite and > 0"),
    "vertex coordinates as text": (_with(vertices=[["1", "0", "0"]] * 11), "'vertices' has entries of the wrong type"),
    "polygon area id out of range": (_with(areas=[0, 10**9, 1]), "area ids must be 0..63, the file has 0..1000000000"),
    "negative clearance": (_with(edge_clearance=[[0, -1.0, 0, 0], [0, 0, 0], [0] * 6]), "-1.0 for polygon 0"),
    "missing agent radius": (_with_params(agent_radius=KeyError), "params is missing 'agent_radius'"),
    "missing max height error": (_with_params(max_height_error=KeyError), "params is missing 'max_height_error'"),
    "missing detail": (_with(detail=KeyError), "missing the field 'detail'"),
    "detail without triangles": (_with(detail={"vertices": [], "polygons": []}), "'detail' must be an object with"),
    "missing edge clearance": (_with(edge_clearance=KeyError), "missing the field 'edge_clearance'"),
    "missing cross clearance": (_with(cross_clearance=KeyError), "missing the field 'cross_clearance'"),
    "missing links": (_with(links=KeyError), "missing the field 'links'"),
    "links null": (_with(links=None), "'links' must be a list"),
    "missing units": (_with(units=KeyError), "missing the field 'units'"),
    "missing up axis": (_with(up_axis=KeyError), "missing the field 'up_axis'"),
    "wall edge naming a polygon that does not share it": (
        _with(neighbors=[[-1, 1, -1, 2], [-1, -1, 0], [-1] * 6]),
        "polygon 0 edge 3 \\(vertices 3-0\\) names polygon 2, which has no edge 0-3",
    ),
    "portal on one side only": (
        _with(neighbors=[[-1, 1, -1, -1], [-1, -1, -1], [-1] * 6]),
        "polygon 0 edge 1 \\(vertices 1-2\\) names polygon 1, which has no edge 2-1 naming polygon 0 back",
    ),
    "polygon its own neighbour": (
        _with(neighbors=[[-1, 1, -1, 0], [-1, -1, 0], [-1] * 6]),
        "polygon 0 edge 3 \\(vertices 3-0\\) names the polygon itself",
    ),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_files_raise_a_navmesh_error_naming_the_problem(tmp_path, name):
    text, message = BAD_FILES[name]
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(lib.NavMeshError, match=message):
        lib.load(path)


def test_area_costs_round_trip_and_costs_of_one_are_left_out(tmp_path):
    from dataclasses import replace

    mesh = replace(navmeshes.mixed(), area_costs={5: 3.5, 2: 1.0, 0: 0.5})
    assert mesh.area_costs == ((0, 0.5), (5, 3.5))
    path = tmp_path / "costs.json"
    lib.save(mesh, path)
    validate(json.loads(path.read_text()))
    assert json.loads(path.read_text())["area_costs"] == {"0": 0.5, "5": 3.5}
    navmeshes.assert_equal(lib.load(path), mesh)


def test_a_version_1_file_from_before_later_parameters_and_area_costs_loads_with_their_defaults(tmp_path):
    """Within version 1, max_edge_len, the jump_* parameters and area_costs came later: a file
    without them (and with the cell_height older writers wrote) loads, and the schema accepts it."""
    doc = _doc()
    for key in ("max_edge_len", "jump_max_distance", "jump_max_up", "jump_max_drop", "jump_step"):
        del doc["params"][key]
    doc["params"]["cell_height"] = 0.1
    del doc["area_costs"]
    validate(doc)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    navmeshes.assert_equal(lib.load(path), navmeshes.mixed())


def test_schema_rejects_what_the_reader_rejects():
    for name in (
        "missing agent radius",
        "missing max height error",
        "missing detail",
        "detail without triangles",
        "missing edge clearance",
        "missing cross clearance",
        "missing links",
        "links null",
        "missing units",
        "missing up axis",
        "newer version",
        "other format",
        "missing polygons",
        "unknown up axis",
        "vertices not triples",
        "area id too large",
        "area cost not positive",
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate(json.loads(BAD_FILES[name][0]))


def test_missing_and_binary_files_are_navmesh_errors(tmp_path):
    with pytest.raises(lib.NavMeshError, match="cannot read navmesh file"):
        lib.load(tmp_path / "nowhere.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(lib.NavMeshError, match="not UTF-8"):
        lib.load(binary)


@st.composite
def ngon_meshes(draw) -> NavMesh:
    """Separate convex polygons (regular n-gons at random places, sizes and heights)."""
    vertices, polygons = [], []
    for _ in range(draw(st.integers(1, 6))):
        n = draw(st.integers(3, 8))
        cx, cy, z = draw(finite), draw(finite), draw(finite)
        r = draw(st.floats(0.01, 100.0))
        angles = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
        polygons.append(list(range(len(vertices), len(vertices) + n)))
        vertices += [(cx + r * np.cos(a), cy + r * np.sin(a), z) for a in angles]
    return navmeshes.from_polygons(vertices, polygons)


@given(ngon_meshes(), st.booleans())
def test_any_navmesh_survives_the_json_text_round_trip(mesh, y_up):
    navmeshes.assert_equal(NavMesh.from_json(mesh.to_json(y_up=y_up)), mesh)


def test_a_navmesh_far_from_the_origin_loads():
    """10 cm cells 10,000 km out keep their area when the loader checks their winding."""
    from dataclasses import replace

    from tests.test_query_scenes import grid_mesh

    mesh = grid_mesh((0.0, 0.0, 1.0, 1.0), [], step=0.1)
    far = replace(mesh, vertices=mesh.vertices + [1e7, 1e7, 0.0])
    assert NavMesh.from_json(far.to_json()).polygon_count == mesh.polygon_count


def test_a_star_polygon_is_refused_though_every_corner_turns_left():
    """A pentagram's corners all turn left and its signed area is positive, but it winds twice round
    its middle: it was loaded (and taken from hand edits) as a convex polygon of 94 m² covering 72."""
    angles = np.radians(90.0 + 72.0 * np.arange(5))
    vertices = np.column_stack([5 * np.cos(angles), 5 * np.sin(angles), np.zeros(5)])
    check_convex(vertices, np.array([0, 5]), np.arange(5))  # the pentagon
    with pytest.raises(lib.NavMeshError, match="polygon 0 is not convex"):
        check_convex(vertices, np.array([0, 5]), np.array([0, 2, 4, 1, 3]))
