"""Off-mesh links placed by hand (issue 15): a jump across a gap the floor does not bridge. Each end
snaps onto the navmesh; queries cross links (one way or both, within their radius and area), and the
path marks the link segment, where a game plays the jump."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blender_navmesh import BakeParams, NavMeshError, generate, load, save
from blender_navmesh.links import LinkSpec, attach_links
from blender_navmesh.query import NavMeshQuery, QueryFilter
from levels import Scene

PARAMS = BakeParams(cell_size=0.2, agent_radius=0.3)
WEST, EAST = (2.0, 4.0, 0.0), (16.0, 4.0, 1.0)
JUMP = LinkSpec(start=(7.5, 4.0, 0.0), end=(10.5, 4.0, 1.0), name="jump")


@pytest.fixture(scope="module")
def platforms():
    """Two 8 m platforms 2 m apart, the east one 1 m higher: no floor joins them."""
    scene = Scene().floor(0, 0, 8, 8).floor(10, 0, 18, 8, z=1.0)
    return generate(scene.vertices, scene.triangles, PARAMS)


def test_without_a_link_the_platforms_are_apart(platforms):
    assert NavMeshQuery(platforms).find_path(WEST, EAST).status == "partial"


def test_a_path_crosses_the_link_and_marks_its_segment(platforms):
    mesh = attach_links(platforms, [JUMP])
    (link,) = mesh.links
    assert link.start == pytest.approx((7.5, 4.0, 0.0)) and link.end == pytest.approx((10.5, 4.0, 1.0))
    path = NavMeshQuery(mesh).find_path(WEST, EAST)
    assert path.status == "found"
    (i,) = path.links
    np.testing.assert_allclose(path.points[i], link.start, atol=1e-9)
    np.testing.assert_allclose(path.points[i + 1], link.end, atol=1e-9)
    straight = math.dist(WEST, link.start) + math.dist(link.start, link.end) + math.dist(link.end, EAST)
    assert path.length == pytest.approx(straight, rel=1e-6)


def test_a_one_way_link_is_not_walked_back(platforms):
    mesh = attach_links(platforms, [LinkSpec(start=JUMP.end, end=JUMP.start, bidirectional=False, name="drop")])
    query = NavMeshQuery(mesh)
    assert query.find_path(EAST, WEST).status == "found"
    assert query.find_path(WEST, EAST).status == "partial"


def test_a_link_narrower_than_the_agent_or_in_an_excluded_area_is_not_taken(platforms):
    mesh = attach_links(platforms, [LinkSpec(JUMP.start, JUMP.end, radius=0.3, area=3, name="ledge")])
    query = NavMeshQuery(mesh)
    assert query.find_path(WEST, EAST).status == "found"
    assert query.find_path(WEST, EAST, radius=0.5).status == "partial"
    assert query.find_path(WEST, EAST, filter=QueryFilter(excluded={3})).status == "partial"


def test_a_costly_link_is_still_taken_when_it_is_the_only_way(platforms):
    mesh = attach_links(platforms, [LinkSpec(JUMP.start, JUMP.end, cost=10.0, name="ladder")])
    path = NavMeshQuery(mesh).find_path(WEST, EAST)
    assert path.status == "found" and len(path.links) == 1


def test_link_ends_off_the_navmesh_are_named_with_their_distance(platforms):
    with pytest.raises(NavMeshError, match=r"'far' \(its end is 9.3 m away\)"):
        attach_links(platforms, [JUMP, LinkSpec(start=(7.5, 4.0, 0.0), end=(27.0, 4.0, 1.0), name="far")])


@pytest.fixture(scope="module")
def crate():
    """A 10 m floor with a 2 m crate 1 m tall on it: at radius 0.9 the crate's top has no navmesh,
    and the floor round it is 1.9 m across and 1 m down from the top's middle."""
    scene = Scene().floor(0, 0, 10, 10).box((7, 5, 0), (2, 2, 1.0))
    return {r: generate(scene.vertices, scene.triangles, BakeParams(cell_size=0.2, agent_radius=r)) for r in (0.4, 0.9)}


def test_a_link_end_on_a_crate_top_the_agent_fits_on_snaps_onto_it(crate):
    (link,) = attach_links(crate[0.4], [LinkSpec((4.5, 5, 0), (7, 5, 1.0), name="onto_crate")]).links
    assert link.end == pytest.approx((7, 5, 1.0))


def test_a_link_end_on_a_crate_top_too_small_for_the_agent_is_an_error_not_the_floor_below(crate):
    """Snapped within the agent's search extent, the end slid 1.9 m across and 1 m down onto the
    floor beside the crate: a jump from the floor to the floor, written to every export."""
    with pytest.raises(NavMeshError, match=r"'onto_crate' \(its end is .* m away\)"):
        attach_links(crate[0.9], [LinkSpec((4.5, 5, 0), (7, 5, 1.0), name="onto_crate")])


def test_a_link_for_smaller_agents_onto_a_floor_this_agent_misses_is_left_out(crate):
    human_jump = LinkSpec((4.5, 5, 0), (7, 5, 1.0), radius=0.4, name="onto_crate")
    assert attach_links(crate[0.9], [human_jump]).links == ()
    assert len(attach_links(crate[0.4], [human_jump]).links) == 1


@pytest.mark.parametrize("height", [0.6, -0.6])
def test_a_link_end_above_or_below_the_floor_by_more_than_the_climb_is_an_error(platforms, height):
    """The end snaps up or down by the agent's climb (0.5 m) at most, as Detour attaches it."""
    end = (JUMP.end[0], JUMP.end[1], JUMP.end[2] + height)
    with pytest.raises(NavMeshError, match="'high' \\(its end is 0.6 m away\\)"):
        attach_links(platforms, [LinkSpec(JUMP.start, end, name="high")])
    close = (JUMP.end[0], JUMP.end[1], JUMP.end[2] + 0.8 * height)
    (link,) = attach_links(platforms, [LinkSpec(JUMP.start, close, name="close")]).links
    assert link.end == pytest.approx(JUMP.end)


@pytest.mark.parametrize("radius", [float("nan"), float("inf"), -1.0, 0.0])
def test_a_link_radius_that_is_no_width_is_named(platforms, radius):
    """A link usable by any agent (NaN compared false with every radius) or none is an error."""
    with pytest.raises(NavMeshError, match="'rope': its radius must be a number of meters > 0"):
        attach_links(platforms, [LinkSpec(JUMP.start, JUMP.end, radius=radius, name="rope")])


def test_links_round_trip_through_the_json_file(platforms, tmp_path):
    mesh = attach_links(
        platforms,
        [
            JUMP,
            LinkSpec(
                (1.0, 1.0, 0.0), (12.0, 7.0, 1.0), bidirectional=False, radius=0.5, area=4, cost=2.0, name="zip line"
            ),
        ],
    )
    for y_up in (False, True):
        save(mesh, tmp_path / "links.json", y_up=y_up)
        again = load(tmp_path / "links.json")
        assert len(again.links) == 2
        for a, b in zip(again.links, mesh.links):
            np.testing.assert_allclose(a.start, b.start, atol=1e-12)
            np.testing.assert_allclose(a.end, b.end, atol=1e-12)
            assert (a.start_polygon, a.end_polygon, a.radius, a.bidirectional, a.area, a.cost, a.name) == (
                b.start_polygon,
                b.end_polygon,
                b.radius,
                b.bidirectional,
                b.area,
                b.cost,
                b.name,
            )


def test_the_schema_describes_files_with_links(platforms, tmp_path):
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).parent.parent / "schema" / "navmesh.schema.json").read_text())
    save(attach_links(platforms, [JUMP]), tmp_path / "links.json")
    jsonschema.validate(json.loads((tmp_path / "links.json").read_text()), schema)


def test_seeds_keep_an_island_reached_only_through_a_link(platforms):
    from blender_navmesh.prune import keep_seeded

    scene = Scene().floor(0, 0, 8, 8).floor(10, 0, 18, 8, z=1.0).floor(30, 0, 34, 4)
    mesh = generate(scene.vertices, scene.triangles, PARAMS, links=[JUMP], seeds=[WEST])
    assert len(mesh.links) == 1
    assert mesh.area_xy() == pytest.approx(platforms.area_xy(), rel=1e-9)  # both platforms, not the far floor
    alone = keep_seeded(attach_links(platforms, []), [WEST])
    assert alone.area_xy() < mesh.area_xy()


@pytest.mark.parametrize("tile_size", [None, 4.0])
def test_detour_crosses_the_link_in_the_exported_file(platforms, tmp_path, tile_size):
    """recast-navigation loads the link as a dtOffMeshConnection and its path takes it, one way only
    when the link is (in one tile, and with the link's ends in different tiles)."""
    from blender_navmesh.detour import write_detour
    from tests.fixtures.io.detour_tools import detour_queries

    mesh = attach_links(platforms, [LinkSpec(JUMP.start, JUMP.end, bidirectional=False, name="drop")])
    path = tmp_path / "links.bin"
    write_detour(mesh, path, tile_size=tile_size)
    forward, backward = detour_queries(path, [[*WEST, *EAST], [*EAST, *WEST]], half_extents=(0.5, 2.0, 0.5))["paths"]
    assert forward["found"] and not forward["partial"]
    points = np.asarray(forward["points"])
    (link,) = mesh.links
    for end in (link.start, link.end):
        assert np.min(np.linalg.norm(points - np.array(end), axis=1)) < 1e-3, "the path runs through the link's ends"
    np.testing.assert_allclose(points[-1], EAST, atol=1e-3)
    assert not backward["found"] or backward["partial"]


def test_links_and_area_costs_ride_along_in_collada_and_godot(platforms):
    import xml.etree.ElementTree as ET
    from dataclasses import replace

    from blender_navmesh.collada import to_collada
    from blender_navmesh.godot import to_tres
    from blender_navmesh.navmesh import to_y_up

    mesh = replace(attach_links(platforms, [JUMP]), area_costs={4: 2.5})
    ns = {"c": "http://www.collada.org/2005/11/COLLADASchema"}
    extra = ET.fromstring(to_collada(mesh, y_up=True)).find(".//c:extra/c:technique", ns)
    ends = [float(v) for v in extra.find("c:link_ends", ns).text.split()]
    expected = to_y_up(np.array([mesh.links[0].start, mesh.links[0].end])).ravel()
    np.testing.assert_allclose(ends, expected)
    assert extra.find("c:link_bidirectional", ns).text.split() == ["1"]
    assert extra.find("c:area_costs", ns).attrib == {"areas": "4", "costs": "2.5"}
    tres = to_tres(mesh)
    assert '"link_bidirectional": PoolIntArray( 1 )' in tres and '"area_costs": {\n"4": 2.5\n}' in tres
    assert f'"link_polygons": PoolIntArray( {mesh.links[0].start_polygon}, {mesh.links[0].end_polygon} )' in tres


def test_a_link_cheaper_than_walking_is_taken_even_with_the_goal_in_plain_sight():
    """A zipline at cost 0.05 across one open 60 m floor: the path walked straight (cost 38) instead
    of riding it (cost about 16), as the straight-line shortcut and the search's estimate took
    walking as the cheapest way to travel."""
    scene = Scene().floor(0, 0, 60, 10)
    mesh = generate(scene.vertices, scene.triangles, PARAMS)
    zipline = LinkSpec(start=(5.0, 2.0, 0.0), end=(55.0, 2.0, 0.0), bidirectional=False, cost=0.05, name="zipline")
    query = NavMeshQuery(attach_links(mesh, [zipline]))
    start, goal = (2.0, 5.0, 0.0), (40.0, 5.0, 0.0)
    path = query.find_path(start, goal)
    assert path.status == "found" and len(path.links) == 1
    walked = math.dist(start, (5.0, 2.0, 0.0)) + math.dist((55.0, 2.0, 0.0), goal)
    assert path.length == pytest.approx(walked + 50.0, rel=1e-3)  # costing walked + 2.5 < 38 straight
    assert query.find_path(goal, start).links == ()  # one way: walked back
