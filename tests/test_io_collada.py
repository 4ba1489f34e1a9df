"""COLLADA 1.4.1 export: valid against the official schema, readable by pycollada, faithful."""
from __future__ import annotations

from pathlib import Path
import xml.etree.ElementTree as ET

import collada
import numpy as np
import pytest
from lxml import etree

from lib.collada import fan_triangulate, to_collada, write_collada
from lib.navmesh import NavMesh, to_y_up
from lib.params import BakeParams
from tests.fixtures.io import navmeshes

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
@pytest.mark.parametrize("build", [navmeshes.l_corridor, navmeshes.mixed])
def test_document_is_valid_collada_1_4_1(schema, build, options):
    doc = etree.fromstring(to_collada(build(), **options).encode("utf-8"))
    assert schema.validate(doc), schema.error_log


def test_empty_navmesh_is_still_a_valid_document(schema):
    doc = etree.fromstring(to_collada(NavMesh.empty(BakeParams(), "nothing walkable")).encode("utf-8"))
    assert schema.validate(doc), schema.error_log


@pytest.mark.parametrize("y_up", [False, True])
def test_pycollada_reads_back_the_same_polygons(tmp_path, y_up):
    mesh = navmeshes.mixed()
    path = tmp_path / "mesh.dae"
    write_collada(mesh, path, y_up=y_up)
    dae = collada.Collada(str(path))
    assert dae.assetInfo.unitmeter == 1.0
    assert dae.assetInfo.upaxis == ("Y_UP" if y_up else "Z_UP")
    (geometry,) = dae.geometries
    (prim,) = geometry.primitives
    assert isinstance(prim, collada.polylist.Polylist)
    expected = to_y_up(mesh.vertices) if y_up else mesh.vertices
    np.testing.assert_allclose(prim.vertex, expected)
    assert [list(poly.indices) for poly in prim] == mesh.polygons


def test_triangulate_writes_fan_triangles_of_each_polygon(tmp_path):
    mesh = navmeshes.mixed()
    path = tmp_path / "tri.dae"
    write_collada(mesh, path, triangulate=True)
    (prim,) = collada.Collada(str(path)).geometries[0].primitives
    assert isinstance(prim, collada.triangleset.TriangleSet)
    assert len(prim) == int(np.sum(mesh.polygon_sizes - 2))
    triangles, owners = fan_triangulate(mesh)
    np.testing.assert_array_equal(prim.vertex_index, triangles)
    for tri, owner in zip(triangles, owners):
        assert set(tri) <= set(mesh.polygon(owner).tolist())
    total = sum(0.5 * np.cross(*(mesh.vertices[t[1:], :2] - mesh.vertices[t[0], :2])) for t in triangles)
    assert total == pytest.approx(mesh.area_xy())


@pytest.mark.parametrize("suffix, expected", [(True, "level-navmesh"), (False, "level")])
def test_node_and_geometry_names_carry_godots_suffix(suffix, expected):
    root = ET.fromstring(to_collada(navmeshes.l_corridor(), name="level", godot_suffix=suffix))
    assert root.find(".//c:node", NS).get("name") == expected
    assert root.find(".//c:geometry", NS).get("name") == expected


def test_metadata_block_holds_per_polygon_and_per_edge_data():
    mesh = navmeshes.mixed()
    root = ET.fromstring(to_collada(mesh))
    technique = root.find(".//c:geometry/c:extra/c:technique[@profile='navmesh']", NS)

    def values(tag, cast):
        return [cast(x) for x in technique.find(f"c:{tag}", NS).text.split()]

    assert values("polygon_regions", int) == mesh.regions.tolist()
    assert values("polygon_areas", int) == mesh.areas.tolist()
    assert values("edge_neighbors", int) == mesh.neighbors.tolist()
    np.testing.assert_array_equal(values("edge_clearance", float), mesh.edge_clearance)
    params = technique.find("c:bake_params", NS).attrib
    assert float(params["agent_radius"]) == mesh.params.agent_radius
