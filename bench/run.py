"""Benchmark: bake every scene and print one JSON line per scene, then the peers and the ratios.

    python -m bench.run [--repeats 5] [--rounds 3] [--no-peers] [--only NAME ...]

Each scene is baked in its own process so `peak_mb` (peak resident memory of that process,
interpreter and numpy included) belongs to that scene alone. The shared Recast demo scenes use
RecastDemo's parameters, and ../shared/bench/peers (Recast WASM, navcat) runs on the same scene,
parameters and queries in the same run, so ratios compare like with like.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
PEERS_SRC = REPO.parent / "shared" / "bench" / "peers"
PEERS_WORK = REPO / "bench" / "peers_work"

# RecastDemo's defaults, as in ../shared/bench/peers/params-recastdemo.json.
RECAST_DEMO = {
    "cell_size": 0.3,
    "agent_height": 2.0,
    "agent_radius": 0.6,
    "agent_max_climb": 0.9,
    "agent_max_slope": 45.0,
    "region_min_area": 8 * 8 * 0.3 * 0.3,
    "max_verts_per_poly": 6,
    "max_edge_error": 1.3 * 0.3,
    "max_height_error": 0.2,
}
# Copies of a shared scene side by side (N x N, named stem_NxN): 4 x 4 of each for scaling and query
# time against mesh size, and one past 150k triangles, a large real level.
TILED = [4]
LARGE = ("undulating", 6)
# Bakes per round of the large level (each takes about a minute).
LARGE_REPEATS = 1
OWN_SCENE_PARAMS = {
    "cell_size": 0.2,
    "agent_radius": 0.5,
    "agent_height": 2.0,
    "agent_max_climb": 0.5,
    "max_edge_error": 0.2,
}


def scene_arrays(name: str):
    from bench import scenes

    stem, tiles = tiled_name(name)
    for shared_stem, v, t, path in scenes.shared_scenes():
        if shared_stem == stem and tiles == 1:
            return v, t, None, RECAST_DEMO, scenes.shared_queries(path)
        if shared_stem == stem:
            # The queries of the tile in the middle of the grid: same paths, a mesh tiles² as large.
            v, t, shift = scenes.tiled(v, t, tiles)
            q = scenes.shared_queries(path)
            return v, t, None, RECAST_DEMO, None if q is None else q + np.tile(shift, 2)
    build = scenes.own_scenes().get(name)
    if build is not None:
        scene = build()
        return scene.vertices, scene.triangles, scene.walkable, OWN_SCENE_PARAMS, None
    raise SystemExit(f"unknown scene {name!r}")


def tiled_name(name: str) -> tuple[str, int]:
    """(scene, copies along each side) of a level name: stem_NxN is N x N copies of stem."""
    match = re.fullmatch(r"(.+)_(\d+)x\2", name)
    return (match.group(1), int(match.group(2))) if match else (name, 1)


def bake_one(name: str, repeats: int) -> dict:
    """Bake one scene `repeats` times in this process and measure it (called in a child process)."""
    from blender_navmesh import BakeParams, generate

    vertices, triangles, walkable, params, queries = scene_arrays(name)
    params = BakeParams(**params)
    times, gaps = [], []
    for _ in range(repeats):
        reports = []
        t0 = time.perf_counter()
        mesh = generate(
            vertices,
            triangles,
            params,
            walkable=walkable,
            progress=lambda stage, fraction: reports.append(time.perf_counter()),  # noqa: B023 (called within)
        )
        times.append(time.perf_counter() - t0)
        # The longest stretch without a progress report: how long the UI bar stands still, and
        # how long Esc can take to stop the bake.
        gaps.append(float(np.diff([t0, *reports, t0 + times[-1]]).max()))
    row = {
        "scene": name,
        "triangles": int(len(triangles)),
        "bake_s": round(statistics.median(times), 4),
        "progress_gap_s": round(statistics.median(gaps), 3),
        "polygons": mesh.polygon_count,
        "vertices": int(len(mesh.vertices)),
        "area": round(mesh.area_xy(), 3),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    row.update(export_figures(mesh))
    if queries is not None:
        row.update(query_figures(mesh, queries))
        single, tiles = tiled_name(name)
        if tiles > 1:
            row.update(tiled_query_figures(mesh, queries, single))
    return row


def tiled_query_figures(tiled, queries: np.ndarray, single_name: str, rounds: int = 5) -> dict:
    """Query time on the tiled level against the single one, the same paths, in turns in this
    process (a fresh NavMeshQuery each turn, so every query is a cache miss): each round's ratio of
    medians, and their median."""
    from blender_navmesh import BakeParams, generate, query

    vertices, triangles, walkable, params, single_queries = scene_arrays(single_name)
    single = generate(vertices, triangles, BakeParams(**params), walkable=walkable)

    def median_ms(mesh, pairs) -> float:
        nav_query = query.NavMeshQuery(mesh)
        times = []
        for q in pairs:
            t0 = time.perf_counter()
            nav_query.find_path(q[:3], q[3:])
            times.append(time.perf_counter() - t0)
        return 1000 * statistics.median(times)

    ratios = [round(median_ms(tiled, queries) / median_ms(single, single_queries), 3) for _ in range(rounds)]
    return {"query_vs_single_level": statistics.median(ratios), "query_vs_single_level_rounds": ratios}


def export_figures(mesh) -> dict:
    """The time to write the navmesh as a Detour tile set (default pieces and tiles), once, after
    the bake's peak memory was read."""
    from blender_navmesh import detour

    if mesh.is_empty or mesh.polygon_sizes.max() > detour.VERTS_PER_POLYGON:
        return {}
    t0 = time.perf_counter()
    data = detour.to_detour_bytes(mesh)
    return {"detour_export_s": round(time.perf_counter() - t0, 3), "detour_bytes": len(data)}


def query_figures(mesh, queries: np.ndarray) -> dict:
    """Path queries on one NavMeshQuery, as a game would run them: its setup time, each query's time
    on first asking (a path-cache miss), then the same queries again (hits). `found` and `partial`
    count the paths of each status; `reached` those (of either) that end within 0.5 m of the goal."""
    from blender_navmesh import query

    t0 = time.perf_counter()
    nav_query = query.NavMeshQuery(mesh)
    setup = time.perf_counter() - t0
    times, found, partial, reached, on_floor, lengths = [], 0, 0, 0, 0, []
    paths = []
    for q in queries:
        t0 = time.perf_counter()
        result = nav_query.find_path(q[:3], q[3:])
        times.append(time.perf_counter() - t0)
        ok = result.status in ("found", "partial") and len(result.points) > 0
        hit = bool(ok and np.linalg.norm(result.points[-1] - q[3:]) < 0.5)
        found += result.status == "found"
        partial += result.status == "partial"
        reached += hit
        # The shared query goals were sampled on Recast's coarse detail mesh, up to ~1.5 m off the
        # real floor: also count paths that end under or over the goal within the agent's height.
        gap = result.points[-1] - q[3:] if ok else None
        on_floor += bool(ok and np.hypot(gap[0], gap[1]) < 0.5 and abs(gap[2]) <= mesh.params.agent_height)
        if hit:
            lengths.append(result.length)
        xy = float(np.linalg.norm(np.diff(result.points[:, :2], axis=0), axis=1).sum()) if ok else None
        paths.append({"reached": hit, "length": float(result.length) if ok else None, "length_xy": xy})
    hits = []
    for q in queries:
        t0 = time.perf_counter()
        nav_query.find_path(q[:3], q[3:])
        hits.append(time.perf_counter() - t0)
    return {
        "query_setup_ms": round(1000 * setup, 2),
        "query_ms_median": round(1000 * statistics.median(times), 4),
        "queries": len(queries),
        "query_ms_p90": round(1000 * float(np.percentile(times, 90)), 4),
        "cache_hit_ms_median": round(1000 * statistics.median(hits), 5),
        "cache_hit_speedup": round(statistics.median(times) / statistics.median(hits), 1),
        "found": int(found),
        "partial": int(partial),
        "reached": int(reached),
        "reached_on_floor": int(on_floor),
        "mean_length": round(float(np.mean(lengths)), 3) if lengths else None,
        "paths": paths,
    }


def path_test_one(name: str, moves: int = 200) -> dict:
    """The viewport path test in real Blender (bpy) on this scene's navmesh: handle moves through the
    shared queries' starts, each timed from the move to the path being redrawn (the depsgraph handler)."""
    import bpy

    import navmesh_addon
    from blender_navmesh import BakeParams, generate
    from navmesh_addon import mesh_write, operators_path

    vertices, triangles, walkable, params, queries = scene_arrays(name)
    mesh = generate(vertices, triangles, BakeParams(**params), walkable=walkable)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    navmesh_addon.register()
    obj = mesh_write.write_navmesh_object(bpy.context.scene, mesh, f"{name}_navmesh")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.navmesh.add_path_test()
    settings = bpy.context.scene.navmesh
    settings.path_radius = mesh.params.agent_radius  # stored as a float32, as a user would type it
    times = []
    for q in queries[:moves]:
        settings.path_start.location = q[:3]
        settings.path_goal.location = q[3:]
        t0 = time.perf_counter()
        bpy.context.view_layer.update()
        times.append(time.perf_counter() - t0)
        assert operators_path.STATE.key is not None
    return {
        "scene": name,
        "path_test_moves": len(times),
        "path_test_ms_median": round(1000 * statistics.median(times), 3),
        "path_test_ms_p90": round(1000 * float(np.percentile(times, 90)), 3),
    }


def run_child(name: str, repeats: int, kind: str = "--child") -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.run", kind, name, "--repeats", str(repeats)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        return {"scene": name, "error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def peers_ready() -> bool:
    if not PEERS_SRC.exists() or shutil.which("node") is None:
        return False
    if not (PEERS_WORK / "node_modules").exists():
        shutil.copytree(PEERS_SRC, PEERS_WORK, dirs_exist_ok=True)
        for f in PEERS_WORK.iterdir():
            f.chmod(0o644 if f.is_file() else 0o755)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=PEERS_WORK, check=True)
    return True


def peer_obj(name: str, shared: dict[str, pathlib.Path]) -> pathlib.Path:
    """The OBJ the peers bake for this level: the shared file itself, or for a tiled level the tiled
    copy (Y-up, as the shared files are) with its queries beside it, written into the peers' folder."""
    stem, tiles = tiled_name(name)
    if tiles == 1:
        return shared[stem]
    vertices, triangles, _, _, queries = scene_arrays(name)
    obj = PEERS_WORK / f"{name}.obj"
    y_up = np.column_stack([vertices[:, 0], vertices[:, 2], -vertices[:, 1]])
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in y_up.tolist()]
    lines += [f"f {a} {b} {c}" for a, b, c in (triangles + 1).tolist()]
    obj.write_text("\n".join(lines) + "\n")
    if queries is not None:
        q = queries.reshape(-1, 3)
        q = np.column_stack([q[:, 0], q[:, 2], -q[:, 1]]).reshape(-1, 6)
        obj.with_suffix(".queries.json").write_text(json.dumps(q.tolist()))
    return obj


def run_peer(script: str, obj: pathlib.Path, repeats: int | None = None) -> dict:
    """A peer's build (median of `repeats` builds, the peers' own default when None) and queries."""
    params = "params-recastdemo.json"
    if repeats is not None:
        demo = json.loads((PEERS_WORK / params).read_text())
        params = f"params-recastdemo-{repeats}.json"
        (PEERS_WORK / params).write_text(json.dumps({**demo, "repeats": repeats}))
    args = ["node", script, str(obj), params]
    qpath = obj.with_suffix(".queries.json")
    if qpath.exists():
        args.append(str(qpath))
    out = subprocess.run(args, cwd=PEERS_WORK, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ratios(ours: dict, recast: dict, navcat: dict) -> dict:
    row = {
        "scene": ours["scene"],
        "bake_vs_navcat": round(ours["bake_s"] * 1000 / navcat["build_ms_median"], 2),
        "bake_vs_recast": round(ours["bake_s"] * 1000 / recast["build_ms_median"], 2),
        "polygons_vs_recast": round(ours["polygons"] / recast["polys"], 3),
        "area_vs_recast": round(ours["area"] / recast["area_xz"], 3),
        # Recast's detail surface on the 187k-triangle level holds triangles of thousands of m²,
        # so its area is no measure there: navcat's builds the same polygons.
        "area_vs_navcat": round(ours["area"] / navcat["area_xz"], 3),
    }
    if "query_ms_median" in ours and "query_ms_median" in navcat:
        row["query_vs_navcat"] = round(ours["query_ms_median"] / navcat["query_ms_median"], 2)
        both = [(a, b) for a, b in zip(ours["paths"], recast["paths"]) if a["reached"] and b["reached"]]
        if both:
            row["length_vs_detour"] = round(sum(a["length"] for a, _ in both) / sum(b["length"] for _, b in both), 4)
            # Seen from above: ours follows the floor's slope changes, Detour's joins its corners.
            theirs_xy = [
                float(np.linalg.norm(np.diff(np.asarray(b["points"])[:, [0, 2]], axis=0), axis=1).sum())
                for _, b in both
            ]
            row["length_xy_vs_detour"] = round(sum(a["length_xy"] for a, _ in both) / sum(theirs_xy), 4)
            row["length_pairs"] = len(both)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="turns of ours and the peers on each shared scene")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-path-test", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(bake_one(args.child, args.repeats)))
        return
    if args.child_path_test:
        print(json.dumps(path_test_one(args.child_path_test)))
        return

    from bench import scenes

    shared = {stem: path for stem, _, _, path in scenes.shared_scenes()}
    if not shared:
        print(json.dumps({"note": f"shared scenes not found at {scenes.SHARED_SCENES}; skipped"}))
    tiled = [f"{stem}_{n}x{n}" for n in TILED for stem in shared]
    if LARGE[0] in shared:
        tiled.append(f"{LARGE[0]}_{LARGE[1]}x{LARGE[1]}")
    names = list(shared) + tiled + list(scenes.own_scenes())
    if args.only:
        names = [n for n in names if n in args.only]
    use_peers = not args.no_peers and bool(shared) and peers_ready()
    for name in names:
        if not (use_peers and tiled_name(name)[0] in shared):
            row = run_child(name, args.repeats)
            print(json.dumps({k: v for k, v in row.items() if k != "paths"}), flush=True)
            continue
        # Ours and the peers take turns, round after round, so a slow spell of the machine
        # weighs on both sides of a ratio; each ratio is the median of the rounds' ratios.
        obj = peer_obj(name, shared)
        repeats = LARGE_REPEATS if tiled_name(name) == LARGE else args.repeats
        rounds = []
        for _ in range(args.rounds):
            row = run_child(name, repeats)
            if "error" in row:
                break
            rounds.append((row, run_peer("recast.mjs", obj, repeats), run_peer("navcat.mjs", obj, repeats)))
        if not rounds:
            print(json.dumps(row), flush=True)
            continue
        row, recast, navcat = rounds[-1]
        row = {
            **row,
            "bake_s": round(statistics.median(r[0]["bake_s"] for r in rounds), 4),
            "bake_s_rounds": [r[0]["bake_s"] for r in rounds],
            "query_ms_median": round(statistics.median(r[0]["query_ms_median"] for r in rounds), 4),
        }
        print(json.dumps({k: v for k, v in row.items() if k != "paths"}), flush=True)
        for label, k in (("recast", 1), ("navcat", 2)):
            peer = rounds[-1][k]
            print(
                json.dumps(
                    {
                        "scene": name,
                        "peer": label,
                        "build_ms_median": round(statistics.median(r[k]["build_ms_median"] for r in rounds), 3),
                        "build_ms_rounds": [round(r[k]["build_ms_median"], 1) for r in rounds],
                        "polys": peer["polys"],
                        "verts": peer["verts"],
                        "area_xz": round(peer["area_xz"], 3),
                        "query_ms_median": statistics.median(r[k].get("query_ms_median") or 0.0 for r in rounds),
                        "reached": sum(p["reached"] for p in peer.get("paths", [])),
                    }
                ),
                flush=True,
            )
        per_round = [ratios(*r) for r in rounds]
        summary = {**per_round[-1]}
        for key in ("bake_vs_navcat", "bake_vs_recast", "query_vs_navcat"):
            if key in summary:
                summary[key] = round(statistics.median(r[key] for r in per_round), 2)
                summary[f"{key}_rounds"] = [r[key] for r in per_round]
        print(json.dumps({"ratios": summary}), flush=True)
    for name in shared:
        if not args.only or name in args.only:
            print(json.dumps(run_child(name, args.repeats, "--child-path-test")), flush=True)


if __name__ == "__main__":
    main()
