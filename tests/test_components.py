"""Graph helpers shared by the stages: components, twin edges, partners. Known answers, then random
graphs against plain dict and set computations."""

import numpy as np

from blender_navmesh.components import box_cells, connected_components, partners, run_positions, twin_edges


def test_two_triangles_sharing_an_edge():
    # Triangles 0-1-2 and 2-1-3, both counterclockwise: edge 1->2 of the first is 2->1 of the second.
    starts = np.array([0, 1, 2, 2, 1, 3])
    ends = np.array([1, 2, 0, 1, 3, 2])
    assert twin_edges(starts, ends).tolist() == [-1, 3, -1, 1, -1, -1]
    lo, hi = np.minimum(starts, ends), np.maximum(starts, ends)
    assert partners(lo, hi).tolist() == [-1, 3, -1, 1, -1, -1]
    assert connected_components(4, np.array([0, 2]), np.array([1, 1])).tolist() == [0, 0, 0, 3]


def test_empty_input():
    empty = np.zeros(0, dtype=np.int64)
    assert twin_edges(empty, empty).tolist() == []
    assert partners(empty, empty).tolist() == []


def test_random_edges_match_a_dict_of_edges():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 30))
        starts, ends = rng.integers(0, n, size=(2, int(rng.integers(1, 80))))
        first: dict[tuple[int, int], int] = {}
        for e, key in enumerate(zip(starts.tolist(), ends.tolist())):
            first.setdefault(key, e)
        expected = [first.get((w, u), -1) for u, w in zip(starts.tolist(), ends.tolist())]
        assert twin_edges(starts, ends).tolist() == expected


def test_partners_pair_items_with_equal_keys_in_listing_order():
    rng = np.random.default_rng(1)
    for _ in range(50):
        keys = rng.integers(0, 4, size=(2, int(rng.integers(1, 40))))
        got = partners(*keys)
        runs: dict[tuple[int, int], list[int]] = {}
        for i, key in enumerate(zip(*keys.tolist())):
            runs.setdefault(key, []).append(i)
        for run in runs.values():
            # Each item pairs with the one before it in its run, the first with the second; alone, with none.
            expected = [run[1], *run[:-1]] if len(run) > 1 else [-1]
            assert got[run].tolist() == expected


def test_components_label_each_node_with_the_smallest_node_of_its_component():
    rng = np.random.default_rng(2)
    for _ in range(30):
        n = int(rng.integers(1, 40))
        u, v = rng.integers(0, n, size=(2, int(rng.integers(0, 30))))
        label = connected_components(n, u, v)
        groups = [{i} for i in range(n)]
        for a, b in zip(u.tolist(), v.tolist()):
            merged = groups[a] | groups[b]
            for i in merged:
                groups[i] = merged
        assert label.tolist() == [min(groups[i]) for i in range(n)]


def test_run_positions_number_each_run_from_zero():
    assert run_positions(np.array([3, 0, 1, 2])).tolist() == [0, 1, 2, 0, 0, 1]
    assert run_positions(np.zeros(0, dtype=np.int64)).tolist() == []


def test_box_cells_list_every_cell_box_by_box_row_by_row():
    box, x, y = box_cells(np.array([[1, 5], [0, 0]]), np.array([[2, 6], [0, 0]]))
    assert list(zip(box.tolist(), x.tolist(), y.tolist())) == [(0, 1, 5), (0, 2, 5), (0, 1, 6), (0, 2, 6), (1, 0, 0)]
