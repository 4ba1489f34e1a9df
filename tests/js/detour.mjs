// Loads a Detour .bin navmesh (MSET tile set) with recast-navigation-js and answers queries on it.
// Usage: node detour.mjs mesh.bin queries.json   (Detour coordinates: +Y up)
// queries.json: {"halfExtents": [x, y, z], "pairs": [[sx, sy, sz, gx, gy, gz], ...], "points": [[x, y, z], ...],
//                "areaCosts": {"area id": cost, ...} (optional: a dtQueryFilter with these costs for the pairs)}
// Prints JSON: tile and polygon counts, portal edges Detour left unlinked, per off-mesh connection
// its tile, userId, radius, ends and whether Detour attached each end to a polygon on loading, per
// pair the straight path (findNearestPoly + findPath + findStraightPath) and the userIds of the
// off-mesh connections its corridor crosses, per point the nearest polygon's height.
import { readFileSync } from 'node:fs';
import { init, importNavMesh, NavMeshQuery, QueryFilter } from '@recast-navigation/core';

const EXT_LINK = 0x8000;
const NULL_LINK = 0xffffffff;
const PARTIAL_RESULT = 1 << 6;

await init();
const [file, queryFile] = process.argv.slice(2);
const queries = JSON.parse(readFileSync(queryFile, 'utf8'));
const { navMesh } = importNavMesh(new Uint8Array(readFileSync(file)));
// Room for A* on big levels (Detour's node pool holds at most 65535).
const query = new NavMeshQuery(navMesh, { maxNodes: 65535 });
const vec = ([x, y, z]) => ({ x, y, z });
const halfExtents = vec(queries.halfExtents);
// Detour's default filter (every flag, every area cost 1) unless area costs are given.
let filter;
if (queries.areaCosts) {
  filter = new QueryFilter();
  filter.includeFlags = 0xffff;
  for (const [area, cost] of Object.entries(queries.areaCosts)) filter.setAreaCost(Number(area), cost);
}
const withFilter = (options) => (filter ? { ...options, filter } : options);

const OFF_MESH_CONNECTION = 1;

let tiles = 0;
let polygons = 0;
let portals = 0;
let unlinkedPortals = 0;
const offMeshConnections = [];
for (let i = 0; i < navMesh.getMaxTiles(); i++) {
  const tile = navMesh.getTile(i);
  const header = tile.header();
  if (!header) continue;
  tiles += 1;
  polygons += header.polyCount();
  for (let k = 0; k < header.offMeshConCount(); k++) {
    const con = tile.offMeshCons(k);
    // On loading Detour links the connection's polygon to the ground: edge 0 at its start, 1 at its end.
    const attached = [false, false];
    for (let l = tile.polys(con.poly()).firstLink() >>> 0; l !== NULL_LINK; l = tile.links(l).next() >>> 0) {
      const edge = tile.links(l).edge();
      if (edge <= 1) attached[edge] = true;
    }
    offMeshConnections.push({
      tile: [header.x(), header.y()],
      userId: con.userId(),
      rad: con.rad(),
      start: [0, 1, 2].map((j) => con.pos(j)),
      end: [3, 4, 5].map((j) => con.pos(j)),
      startAttached: attached[0],
      endAttached: attached[1],
    });
  }
  for (let p = 0; p < header.polyCount(); p++) {
    const poly = tile.polys(p);
    for (let e = 0; e < poly.vertCount(); e++) {
      if (!(poly.neis(e) & EXT_LINK)) continue;
      portals += 1;
      let linked = false;
      // Link indices come back signed: DT_NULL_LINK (0xffffffff) reads as -1.
      for (let l = poly.firstLink() >>> 0; l !== NULL_LINK; l = tile.links(l).next() >>> 0) {
        if (tile.links(l).edge() === e) linked = true;
      }
      if (!linked) unlinkedPortals += 1;
    }
  }
}

function nearest(point) {
  const found = query.findNearestPoly(vec(point), withFilter({ halfExtents }));
  return found.success && found.nearestRef ? found : null;
}

const paths = (queries.pairs || []).map((pair) => {
  const start = nearest(pair.slice(0, 3));
  const goal = nearest(pair.slice(3));
  if (!start || !goal) return { found: false, reason: 'off the navmesh' };
  const corridor = query.findPath(start.nearestRef, goal.nearestRef, start.nearestPoint, goal.nearestPoint,
    withFilter({ maxPathPolys: 4096 }));
  if (!corridor.success || corridor.polys.size === 0) return { found: false, reason: 'no corridor' };
  const polys = Array.from({ length: corridor.polys.size }, (_, i) => corridor.polys.get(i));
  const links = polys
    .filter((ref) => navMesh.getTileAndPolyByRefUnsafe(ref).poly.getType() === OFF_MESH_CONNECTION)
    .map((ref) => navMesh.getOffMeshConnectionByRef(ref).userId());
  const straight = query.findStraightPath(start.nearestPoint, goal.nearestPoint, polys,
    { maxStraightPathPoints: 4096 });
  const points = [];
  for (let i = 0; i < straight.straightPathCount; i++) {
    points.push([0, 1, 2].map((k) => straight.straightPath.get(i * 3 + k)));
  }
  let length = 0;
  for (let i = 1; i < points.length; i++) length += Math.hypot(...points[i].map((c, k) => c - points[i - 1][k]));
  return { found: true, partial: (corridor.status & PARTIAL_RESULT) !== 0, corridor: polys.length, points, length,
    links };
});

const heights = (queries.points || []).map((point) => {
  const found = nearest(point);
  if (!found) return null;
  const height = query.getPolyHeight(found.nearestRef, found.nearestPoint);
  const p = found.nearestPoint;
  return { nearest: [p.x, p.y, p.z], height: height.success ? height.height : null, overPoly: found.isOverPoly };
});

console.log(JSON.stringify({ tiles, polygons, portals, unlinkedPortals, offMeshConnections, paths, heights }));
