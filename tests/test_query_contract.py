"""What a NavMeshQuery promises beyond path shape: honest statuses for points off the navmesh and
agents too wide to fit, clear errors for bad input, state that follows filter and flag changes,
and caches that stay bounded and never outlive their mesh."""

from __future__ import annotations

import dataclasses
import gc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blender_navmesh import generate
from blender_navmesh.errors import NavMeshError
from blender_navmesh.navmesh import NavMesh
from blender_navmesh.query import NavMeshQuery, QueryFilter, find_path
from blender_navmesh.query.navmesh_query import FILTER_SLOTS, PATH_CACHE_SIZE, RADIUS_SLOTS
from tests.test_generate_properties import PARAMS as SOUP_PARAMS
from tests.test_generate_properties import level_soups
from tests.test_query_scenes import PILLARS, ROOM, grid_mesh

DOOR_WALLS = [(4.8, 0.0, 5.2, 4.4), (4.8, 5.6, 5.2, 10.0)]  # a 1.2 m doorway at x = 5
START = [1.0, 1.0, 0.0]


@pytest.fixture(scope="module")
def baked():
    """The pillar room as if baked for a 0.3 m agent (the mesh is the free space at r0 = 0.3)."""
    return grid_mesh(ROOM, PILLARS, r0=0.3, step=0.5)


@pytest.fixture
def query(baked):
    return NavMeshQuery(baked)


def test_a_baked_navmesh_cannot_change_under_its_queries(baked):
    with pytest.raises(ValueError, match="read-only"):
        baked.vertices[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        baked.areas[:] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        baked.vertices = baked.vertices + 1.0
    moved = dataclasses.replace(baked, vertices=baked.vertices + [100.0, 0.0, 0.0])
    assert NavMeshQuery(moved).locate([101.0, 1.0, 0.0]).polygon >= 0
    assert NavMeshQuery(baked).locate([101.0, 1.0, 0.0]).polygon == -1


@pytest.mark.parametrize(
    "goal, far",
    [
        ([1.0, 9.0, 12.0], 12.0),  # 12 m above the floor
        ([1.0, 9.0, -12.0], 12.0),  # 12 m below it
        ([40.0, 5.0, 0.0], 30.0),  # 30 m beyond its edge
        ([5.0, 5.5, 0.0], 1.5),  # inside the 4 x 4 m crate, 1.5 m from its navmesh edge
    ],
)
def test_a_goal_off_the_navmesh_is_unreachable_and_says_how_far(goal, far):
    query = NavMeshQuery(grid_mesh(ROOM, [(3.0, 3.0, 7.0, 7.0)], r0=0.3))
    res = query.find_path(START, goal)
    assert res.status == "unreachable" and len(res.points) == 0
    assert "goal is" in res.reason and f"{far:.3g} m from the navmesh" in res.reason
    assert res.goal_distance == pytest.approx(far)


def test_a_start_far_from_the_navmesh_is_unreachable(query):
    for start in ([71.0, 1.0, 0.0], [700.0, 1.0, 0.0]):
        res = query.find_path(start, [9.0, 9.0, 0.0])
        assert res.status == "unreachable" and res.reason.startswith("start is")


def test_the_search_extent_is_a_parameter(baked):
    wide = NavMeshQuery(baked, extent=(40.0, 1.0))
    res = wide.find_path(START, [40.0, 5.0, 0.0])
    assert res.status == "found" and res.goal_distance == pytest.approx(30.0)
    assert np.allclose(res.points[-1], [10.0, 5.0, 0.0])
    with pytest.raises(NavMeshError, match="extent"):
        NavMeshQuery(baked, extent=(np.nan, 1.0))


def test_an_agent_wider_than_every_passage_is_never_found(query):
    res = query.find_path(START, [9.0, 9.0, 0.0], radius=100.0)
    assert res.status == "unreachable" and "radius 100" in res.reason
    door = NavMeshQuery(grid_mesh(ROOM, DOOR_WALLS, step=1.0))
    assert door.find_path([2.0, 5.0, 0.0], [8.0, 5.0, 0.0], radius=0.7).status == "partial"


def test_a_start_on_an_excluded_area_is_unreachable_with_a_reason(baked):
    centres = baked.vertices[baked.poly_vertices].reshape(-1, 4, 3).mean(axis=1)
    marked = dataclasses.replace(baked, areas=np.where(centres[:, 0] < 1.5, 4, 0))
    res = NavMeshQuery(marked).find_path(START, [9.0, 9.0, 0.0], filter=QueryFilter(excluded={4}))
    assert res.status == "unreachable" and "area 4" in res.reason and "excludes" in res.reason
    flagged = NavMeshQuery(baked)
    flagged.set_poly_flags(flagged.locate(START).polygon, 0)
    res = flagged.find_path(START, [9.0, 9.0, 0.0])
    assert res.status == "unreachable" and "flags 0x0" in res.reason


def test_absurd_coordinates_and_nan_get_a_clear_error(query):
    """Far beyond any level (1e200 m: squared distances overflow) is an error naming the point,
    for paths and for the surface queries alike (raycast raised an OverflowError)."""
    res = query.find_path([1e6, 1e6, 0.0], [9.0, 9.0, 0.0])
    assert res.status == "unreachable" and res.reason.startswith("start is 1.41e+06 m")
    for call in (
        lambda: query.find_path([1e200, 1e200, 0.0], [9.0, 9.0, 0.0]),
        lambda: query.find_path(START, [-1e200, 5.0, 1e200]),
        lambda: query.raycast(START, [1e300, 1.0, 0.0]),
        lambda: query.move_along_surface(START, [1e300, 1.0, 0.0]),
    ):
        with pytest.raises(NavMeshError, match="from the origin, on no level"):
            call()
    for radius in (1e200, [0.5]):
        with pytest.raises(NavMeshError, match="agent radius must be"):
            query.find_path(START, [9.0, 9.0, 0.0], radius=radius)
    with pytest.raises(NavMeshError, match="NaN"):
        query.find_path(START, [np.nan, 0.0, 0.0])
    with pytest.raises(NavMeshError, match="three numbers"):
        query.find_path(START, [1.0, 2.0])
    with pytest.raises(NavMeshError, match="bake radius"):
        query.find_path(START, [9.0, 9.0, 0.0], radius=0.1)
    with pytest.raises(NavMeshError, match="finite"):
        query.find_path(START, [9.0, 9.0, 0.0], radius=float("inf"))


def test_bad_filters_flags_and_rngs_are_clear_errors(query):
    """Wrong kinds of argument are named, never an AttributeError or TypeError from inside."""
    for bad in (None, {"excluded": {1}}):
        with pytest.raises(NavMeshError, match="must be a QueryFilter"):
            query.filter = bad
    with pytest.raises(NavMeshError, match="must be a QueryFilter"):
        query.find_path(START, [9.0, 9.0, 0.0], filter={"excluded": {1}})
    for options, words in (
        ({"area_cost": {0: "a"}}, "area_cost must map area ids to numbers"),
        ({"excluded": None}, "excluded must be area ids"),
        ({"include_flags": None}, "include_flags must be an integer"),
    ):
        with pytest.raises(NavMeshError, match=words):
            QueryFilter(**options)
        edited = QueryFilter()
        setattr(edited, *next(iter(options.items())))  # edited after it was made
        with pytest.raises(NavMeshError, match=words):
            query.find_path(START, [9.0, 9.0, 0.0], filter=edited)
    for polygon in (10**6, -1, 1.5):
        with pytest.raises(NavMeshError, match="polygon"):
            query.poly_flags(polygon)
    with pytest.raises(NavMeshError, match="flags must be an integer"):
        query.set_poly_flags(0, None)
    assert query.random_point(5)[0] == query.random_point(np.random.default_rng(5))[0]  # a seed
    with pytest.raises(NavMeshError, match="rng must be"):
        query.random_point("five")


def test_area_costs_must_be_real_numbers_named_when_not(query):
    """A cost float() would parse ("2") or a bool (True) is refused where the filter is validated,
    naming area_cost and the value, not a TypeError from inside the search."""
    for bad in ("2", True, None, 1j):
        with pytest.raises(NavMeshError, match=f"area_cost .*{bad!r}"):
            QueryFilter(area_cost={0: bad})
        edited = QueryFilter()
        edited.area_cost[0] = bad  # edited after it was made
        for method, args in (
            (query.find_path, (START, [9.0, 9.0, 0.0])),
            (query.search, (START, [9.0, 9.0, 0.0])),
            (query.reachable, (START,)),
        ):
            with pytest.raises(NavMeshError, match="area_cost"):
                method(*args, filter=edited)
    for good in (2, 2.5, np.float32(2.0), np.int64(3)):
        assert query.find_path(START, [9.0, 9.0, 0.0], filter=QueryFilter(area_cost={0: good})).status == "found"


def test_flags_that_do_not_fit_sixteen_bits_are_refused_not_truncated(query):
    """Detour's polygon flags are 16 bits: a wider value is a NavMeshError naming it, never stored cut."""
    for bad in (1 << 16, -1, 0x1FFFF):
        with pytest.raises(NavMeshError, match=f"flags must be a 16-bit mask .*{bad!r}"):
            query.set_poly_flags(0, bad)
        for name in ("include_flags", "exclude_flags"):
            with pytest.raises(NavMeshError, match=f"{name} must be a 16-bit mask"):
                QueryFilter(**{name: bad})
    assert query.poly_flags(0) == 1
    query.set_poly_flags(0, 0x8001)
    assert query.poly_flags(0) == 0x8001


def test_unpickled_and_copied_navmeshes_and_returned_paths_stay_read_only(baked, query):
    """pickle and deepcopy hand back writeable arrays; a navmesh is read-only again after both, and
    a path's arrays (the path cache hands the same ones out again) cannot be made writeable."""
    import copy
    import pickle

    for twin in (pickle.loads(pickle.dumps(baked)), copy.deepcopy(baked)):
        with pytest.raises(ValueError, match="read-only"):
            twin.vertices[0, 0] = 5.0
        assert np.array_equal(twin.vertices, baked.vertices)
    res = query.find_path(START, [9.0, 9.0, 0.0])
    for array in (res.points, res.polygons):
        with pytest.raises(ValueError):
            array.setflags(write=True)


def test_filter_changes_take_effect_on_the_next_query_and_cached_paths_follow():
    mesh = grid_mesh(ROOM, DOOR_WALLS, step=1.0)
    centres = mesh.vertices[mesh.poly_vertices].reshape(-1, 4, 3).mean(axis=1)
    door = (np.abs(centres[:, 0] - 5.0) < 1.0) & (np.abs(centres[:, 1] - 5.0) < 1.0)
    query = NavMeshQuery(dataclasses.replace(mesh, areas=np.where(door, 3, 0)))
    s, g = [2.0, 5.0, 0.0], [8.0, 5.0, 0.0]
    assert query.find_path(s, g).status == "found"
    query.filter.excluded = {3}  # the door closes
    assert query.find_path(s, g).status == "partial"
    query.filter.excluded = set()
    query.filter.area_cost[3] = 100.0  # open, but costly: no other way, so still through it
    assert query.find_path(s, g).status == "found"
    query.filter.area_cost.clear()
    for p in np.flatnonzero(door):
        query.set_poly_flags(int(p), 0)  # flags without the walk bit: the default filter refuses them
    assert query.find_path(s, g).status == "partial"
    assert query.find_path(s, g, filter=QueryFilter(include_flags=0xFFFF)).status == "partial"
    assert query.find_path(s, g, filter=QueryFilter(exclude_flags=0)).status == "partial"
    for p in np.flatnonzero(door):
        query.set_poly_flags(int(p), 1)
    assert query.find_path(s, g).status == "found"
    with pytest.raises(NavMeshError, match="polygon"):
        query.set_poly_flags(10_000, 1)


def _door_room():
    """The doorway room with the doorway's polygons in area 3, and those polygons."""
    mesh = grid_mesh(ROOM, DOOR_WALLS, step=1.0)
    centres = mesh.vertices[mesh.poly_vertices].reshape(-1, 4, 3).mean(axis=1)
    door = (np.abs(centres[:, 0] - 5.0) < 1.0) & (np.abs(centres[:, 1] - 5.0) < 1.0)
    return dataclasses.replace(mesh, areas=np.where(door, 3, 0)), np.flatnonzero(door)


@pytest.mark.parametrize("close", ["exclude the area", "clear the flags"])
def test_a_sliced_search_sees_the_door_close_between_its_updates(close):
    """Begun while the door is open, advanced after it closes: the search starts again under the new
    filter or flags, as Detour's updateSlicedFindPath reads its filter at every step. The goal was in
    plain sight through the doorway, so the answer was fixed when the search was made: 'found',
    6 m straight through the closed door."""
    mesh, door = _door_room()
    query = NavMeshQuery(mesh)
    s, g = [2.0, 5.0, 0.0], [8.0, 5.0, 0.0]
    search = query.search(s, g)
    assert search.status == "in_progress"  # nothing is searched before the first update
    if close == "exclude the area":
        query.filter.excluded = {3}
    else:
        for p in door:
            query.set_poly_flags(int(p), 0)
    while search.update(1) == "in_progress":
        pass
    assert search.status == "partial"
    assert not set(search.result().corridor) & set(door.tolist())


def test_a_sliced_search_restarts_when_the_door_closes_half_way():
    """Two expansions in, the doorway's polygons switched off: the corridor avoids them."""
    mesh, door = _door_room()
    query = NavMeshQuery(mesh)
    search = query.search([2.0, 2.0, 0.0], [8.0, 2.0, 0.0])
    assert search.update(2) == "in_progress"
    for p in door:
        query.set_poly_flags(int(p), 0)
    while search.update(3) == "in_progress":
        pass
    assert search.status == "partial" and not set(search.result().corridor) & set(door.tolist())


def test_a_straight_paths_corridor_is_every_polygon_it_crosses(query):
    """The goal in plain sight gives the segment itself; its corridor held only the start's polygon,
    hiding the polygons (a door's) the path crosses."""
    s, g = [4.0, 0.5, 0.0], [4.0, 9.5, 0.0]
    res = query.find_path(s, g)
    assert res.nodes_expanded == 0 and len(res.points) == 2
    crossed = query.raycast(s, g).polygons
    assert list(res.corridor) == list(crossed)
    assert res.corridor[0] == query.locate(s).polygon and res.corridor[-1] == query.locate(g).polygon


def test_a_straight_corridor_through_a_corner_goes_by_a_polygon_beside_both():
    """From (2.5, 2.5) to (4, 4) across 1 m squares the segment passes the corner (3, 3): its
    corridor was [22, 33], two squares that share only that corner. Every step of a corridor is to
    an edge neighbour, as a search's is."""
    mesh = grid_mesh(ROOM, [], step=1.0)
    query = NavMeshQuery(mesh)
    for s, g in (
        ([2.5, 2.5, 0.0], [4.0, 4.0, 0.0]),
        ([4.0, 4.0, 0.0], [2.5, 2.5, 0.0]),
        ([0.5, 0.5, 0.0], [9.5, 9.5, 0.0]),
    ):
        res = query.find_path(s, g)
        assert res.nodes_expanded == 0 and len(res.points) == 2
        for p, q in zip(res.corridor, res.corridor[1:]):
            assert q in mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]], (s, g, res.corridor)


def test_a_search_ends_while_the_flags_are_set_to_what_they_are_every_update():
    """A game loop that sets a polygon's flags every frame, to the value they have: each set restarted
    the search, which never ended (in progress after 1,000 updates). Only a change in what the filter
    admits or costs starts it again."""
    mesh, door = _door_room()
    query = NavMeshQuery(mesh)
    search = query.search([2.0, 2.0, 0.0], [8.0, 2.0, 0.0])
    for _ in range(1000):
        if search.update(5) != "in_progress":
            break
        query.set_poly_flags(0, 1)
        query.set_poly_flags(int(door[0]), 1)
    assert search.status == "found"
    assert search.result().length == pytest.approx(
        NavMeshQuery(mesh).find_path([2.0, 2.0, 0.0], [8.0, 2.0, 0.0]).length
    )


def test_the_search_extent_is_checked_when_set_and_paths_follow_it(baked):
    query = NavMeshQuery(baked)
    goal = [40.0, 5.0, 0.0]
    assert query.find_path(START, goal).status == "unreachable"
    query.extent = (40.0, 1.0)
    assert query.find_path(START, goal).status == "found"  # not the cached 'unreachable'
    for bad in ((-1.0, 1.0), (1.0, "x"), None):
        with pytest.raises(NavMeshError, match="extent"):
            query.extent = bad
    assert query.extent == (40.0, 1.0)


def test_wrong_kinds_of_budget_radius_and_area_are_named(baked):
    query = NavMeshQuery(baked)
    search = query.search(START, [9.0, 9.0, 0.0])
    for bad in (None, "3", 0, True, 1.5):
        with pytest.raises(NavMeshError, match="max_iterations"):
            search.update(bad)
    assert search.update(np.int64(1_000_000)) == "found"
    for radius in (True, np.bool_(True), "0.5", b"0.5", [0.5]):
        with pytest.raises(NavMeshError, match="agent radius must be a number"):
            query.find_path(START, [9.0, 9.0, 0.0], radius=radius)
    for radius in (0.45, np.float32(0.45), np.array(0.45), 1):  # numbers of every kind numpy gives
        assert query.find_path(START, [9.0, 9.0, 0.0], radius=radius).status == "found"
    for options in ({"excluded": {-1}}, {"excluded": {500}}, {"area_cost": {64: 2.0}}):
        with pytest.raises(NavMeshError, match="area ids are 0 to 63"):
            QueryFilter(**options)


def test_nothing_reachable_says_why(baked):
    mesh, _ = _door_room()
    query = NavMeshQuery(mesh)
    excluded = query.reachable([5.0, 5.0, 0.0], filter=QueryFilter(excluded={3}))
    assert len(excluded.polygons) == 0 and "area 3" in excluded.reason and "excludes" in excluded.reason
    assert query.reachable([2.0, 5.0, 0.0]).reason == ""


def test_a_cache_hit_returns_the_stored_path_itself(query):
    first = query.find_path(START, [9.0, 9.0, 0.0], radius=0.45)
    again = query.find_path(START, [9.0, 9.0, 0.0], radius=0.45)
    assert again is first and query.cache_hits == 1 and query.cache_misses == 1
    with pytest.raises(ValueError, match="read-only"):
        again.points[0, 0] = 3.0


def test_caches_stay_bounded_over_ten_thousand_queries_with_random_radii():
    query = NavMeshQuery(grid_mesh((0.0, 0.0, 6.0, 6.0), [(2.0, 2.0, 4.0, 4.0)], r0=0.2, step=2.0), path_cache_size=256)
    rng = np.random.default_rng(5)
    for _ in range(10_000):
        s, g = rng.uniform(0.5, 5.5, size=(2, 2))
        query.find_path([*s, 0.0], [*g, 0.0], radius=float(rng.uniform(0.2, 1.0)))
    sizes = query.cache_sizes()
    assert sizes["paths"] <= 256 and sizes["radii"] <= RADIUS_SLOTS and sizes["filter_states"] <= FILTER_SLOTS
    assert query.cache_misses >= 9_990
    assert PATH_CACHE_SIZE >= 256


def test_nothing_outlives_the_meshes_queried_once():
    text = grid_mesh(ROOM, PILLARS, step=1.0).to_json()
    alive = []
    for _ in range(1000):
        mesh = NavMesh.from_json(text)
        assert find_path(mesh, START, [9.0, 9.0, 0.0]).status == "found"
        alive.append(weakref.ref(mesh))
        del mesh
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(level_soups(), st.integers(0, 2**32 - 1))
def test_random_soups_answer_every_query_with_a_status(scene, seed):
    """Random level soups (boxes, ramps, slabs, duplicates, degenerate triangles), random pairs on and
    off the navmesh, random radii: every path query answers with a status, found paths are on the
    navmesh, and the other queries answer too."""
    mesh = generate(scene.vertices, scene.triangles, SOUP_PARAMS, walkable=scene.walkable)
    if mesh.is_empty:
        return
    query = NavMeshQuery(mesh)
    rng = np.random.default_rng(seed)
    up = SOUP_PARAMS.agent_max_climb + SOUP_PARAMS.max_height_error
    for _ in range(10):
        s, g = query.random_point(rng)[1], query.random_point(rng)[1]
        if rng.random() < 0.3:
            g = g + rng.normal(0.0, 2.0, 3)  # maybe off the navmesh
        radius = float(rng.uniform(SOUP_PARAMS.agent_radius, 3 * SOUP_PARAMS.agent_radius))
        res = query.find_path(s, g, radius=radius)
        assert res.status in ("found", "partial", "unreachable")
        assert res.status == "found" or res.reason
        for a, b in zip(res.points[:-1], res.points[1:]):
            for t in np.linspace(0.0, 1.0, 1 + int(np.linalg.norm(b - a) / 0.2)):
                assert query.locate(a + t * (b - a), extent=(0.01, up)).polygon >= 0
        query.raycast(s, g)
        query.move_along_surface(s, g)
        # reachable agrees with the path search: it floods from the start cleared as find_path does.
        assert set(res.corridor) <= set(query.reachable(s, radius).polygons.tolist())
