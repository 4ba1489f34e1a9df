"""COLLADA 1.4.1 export: valid against the official schema, readable by pycollada, faithful to the
polygons and edges, and on the real floor (the detail surface, not the flat polygons)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import collada
import numpy as np
import pytest
from lxml import etree

from blender_navmesh.collada import to_collada, write_collada
from blender_navmesh.export_surface import corner_fans
from blender_navmesh.navmesh import NavMesh, to_y_up
from blender_navmesh.params import BakeParams
from tests.fixtures.io import navmeshes, rolling

FIXTURES = Path(__file__).parent / "fixtures" / "io"
NS = {"c": "http://www.collada.org/2005/11/COLLADASchema"}


class _LocalXmlNamespace(etree.Resolver):
    """The COLLADA schema imports the W3C xml.xsd by URL; serve the shipped copy (no network)."""

    def resolve(self, url, pubid, context):
        if url.endswith("xml.xsd"):
            return self.resolve_filename(str(FIXTURES / "xml.xsd"), context)
        return None


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    parser = etree.XMLParser(load_dtd=False, no_network=True)
    parser.resolvers.add(_LocalXmlNamespace())
    return etree.XMLSchema(etree.parse(str(FIXTURES / "collada_schema_1_4_1.xsd"), parser))


def _options():
    return [
        {},
        {"y_up": True},
        {"triangulate": True},
        {"godot_suffix": False, "name": "3 level/nav"},
    ]


@pytest.mark.parametrize("options", _options(), ids=["default", "y_up", "triangulate", "odd_name"])
@pytest.mark.parametrize("build", [navmeshes.l_corridor, navmeshes.mixed, rolling.navmesh])
def test_document_is_valid_collada_1_4_1(schema, build, options):
    doc = etree.fromstring(to_collada(build(), **options).encode("utf-8"))
    assert schema.validate(doc), schema.error_log


def test_empty_navmesh_is_still_a_valid_document(schema):
    doc = etree.fromstring(to_collada(NavMesh.empty(BakeParams(), "nothing walkable")).encode("utf-8"))
    assert schema.validate(doc), schema.error_log


def _technique(root: ET.Element) -> ET.Element:
    return root.find(".//c:geometry/c:extra/c:technique[@profile='navmesh']", NS)


def _values(technique: ET.Element, tag: str, cast) -> list:
    return [cast(x) for x in technique.find(f"c:{tag}", NS).text.split()]


@pytest.mark.parametrize("y_up", [False, True])
def test_pycollada_reads_back_the_polygons_through_their_corners(tmp_path, y_up):
    mesh = navmeshes.mixed()
    path = tmp_path / "mesh.dae"
    write_collada(mesh, path, y_up=y_up)
    dae = collada.Collada(str(path))
    assert dae.assetInfo.unitmeter == 1.0
    assert dae.assetInfo.upaxis == ("Y_UP" if y_up else "Z_UP")
    (geometry,) = dae.geometries
    (prim,) = geometry.primitives
    assert isinstance(prim, collada.polylist.Polylist)
    technique = _technique(ET.parse(path).getroot())
    sizes = _values(technique, "polygon_sizes", int)
    corners = np.split(np.array(_values(technique, "polygon_corners", int)), np.cumsum(sizes)[:-1])
    assert sizes == mesh.polygon_sizes.tolist()
    for polygon, corner_ids in zip(mesh.polygons, corners):
        expected = to_y_up(mesh.vertices[polygon]) if y_up else mesh.vertices[polygon]
        got = prim.vertex[corner_ids]
        # Seen from above the corners are the polygon's; heights are the detail surface's.
        horizontal = [0, 2] if y_up else [0, 1]
        np.testing.assert_allclose(got[:, horizontal], expected[:, horizontal])


def test_polygons_whose_detail_is_a_corner_fan_stay_whole_faces():
    mesh = navmeshes.mixed()
    root = ET.fromstring(to_collada(mesh))
    technique = _technique(root)
    assert _values(technique, "face_polygons", int) == [0, 1, 2], "every fixture polygon's detail is its corner fan"
    assert root.find(".//c:polylist/c:vcount", NS).text.split() == ["4", "3", "6"]


def test_polygons_with_finer_detail_become_their_detail_triangles(tmp_path):
    mesh = rolling.navmesh()
    root = ET.fromstring(to_collada(mesh))
    face_polygons = np.array(_values(_technique(root), "face_polygons", int))
    sizes = np.array(root.find(".//c:polylist/c:vcount", NS).text.split(), dtype=int)
    detail_count = np.bincount(mesh.detail_polygons, minlength=mesh.polygon_count)
    face_count = np.bincount(face_polygons, minlength=mesh.polygon_count)
    whole = face_count == 1
    assert np.all(face_count[~whole] == detail_count[~whole]), "a split polygon is all its detail triangles"
    assert np.all(sizes[np.isin(face_polygons, np.flatnonzero(~whole))] == 3)
    assert np.all(np.diff(face_polygons) >= 0), "faces come in polygon order"
    assert whole.any() and (~whole).any(), "the hills need both kinds"


@pytest.mark.parametrize("triangulate", [False, True])
def test_surface_lies_on_the_real_floor_within_max_height_error(tmp_path, triangulate):
    mesh = rolling.navmesh()
    path = tmp_path / "hills.dae"
    write_collada(mesh, path, triangulate=triangulate)
    (prim,) = collada.Collada(str(path)).geometries[0].primitives
    triangles = prim.triangleset() if not triangulate else prim
    assert isinstance(triangles, collada.triangleset.TriangleSet)
    gaps = rolling.gap_to_floor(triangles.vertex, triangles.vertex_index)
    assert gaps.max() <= mesh.params.max_height_error + rolling.SAMPLING_SLACK
    flat_gaps = rolling.gap_to_floor(mesh.vertices, corner_fans(mesh)[0])
    assert flat_gaps.max() > 3 * mesh.params.max_height_error, "the flat polygons alone would be off the floor"


def test_triangulate_writes_the_detail_triangles_of_each_polygon(tmp_path):
    mesh = rolling.navmesh()
    path = tmp_path / "tri.dae"
    write_collada(mesh, path, triangulate=True)
    (prim,) = collada.Collada(str(path)).geometries[0].primitives
    assert isinstance(prim, collada.triangleset.TriangleSet)
    assert len(prim) == len(mesh.detail_triangles)
    owners = np.array(_values(_technique(ET.parse(path).getroot()), "face_polygons", int))
    np.testing.assert_array_equal(owners, mesh.detail_polygons)
    corners = prim.vertex[prim.vertex_index]
    area = 0.5 * np.cross(corners[:, 1, :2] - corners[:, 0, :2], corners[:, 2, :2] - corners[:, 0, :2])
    assert area.min() > 0, "counter-clockwise seen from +Z, none degenerate"
    assert area.sum() == pytest.approx(mesh.area_xy())
    assert len(prim.vertex) < 3 * len(prim), "faces share their vertices"


@pytest.mark.parametrize("suffix, expected", [(True, "level-navmesh"), (False, "level")])
def test_node_and_geometry_names_carry_godots_suffix(suffix, expected):
    root = ET.fromstring(to_collada(navmeshes.l_corridor(), name="level", godot_suffix=suffix))
    assert root.find(".//c:node", NS).get("name") == expected
    assert root.find(".//c:geometry", NS).get("name") == expected


def test_metadata_block_holds_per_polygon_and_per_edge_data():
    mesh = navmeshes.mixed()
    technique = _technique(ET.fromstring(to_collada(mesh)))
    assert _values(technique, "polygon_regions", int) == mesh.regions.tolist()
    assert _values(technique, "polygon_areas", int) == mesh.areas.tolist()
    assert _values(technique, "edge_neighbors", int) == mesh.neighbors.tolist()
    np.testing.assert_array_equal(_values(technique, "edge_clearance", float), mesh.edge_clearance)
    np.testing.assert_array_equal(_values(technique, "cross_clearance", float), mesh.cross_clearance)
    params = technique.find("c:bake_params", NS).attrib
    assert float(params["agent_radius"]) == mesh.params.agent_radius
