// Casts rays and moves along the surface on a Detour .bin navmesh (MSET tile set) with recast-navigation-js.
// Usage: node detour_rays.mjs mesh.bin queries.json   (Detour coordinates: +Y up)
// queries.json: {"halfExtents": [x, y, z], "rays": [[start, end], ...], "moves": [[start, end], ...]}
// Prints JSON: per ray Detour's hit parameter t (null when the start is off the navmesh; above 1e30
// when nothing is hit), per move the point moveAlongSurface reaches (null when the start is off).
// Each query starts from findNearestPoly's polygon and point for its start.
import { readFileSync } from 'node:fs';
import { init, importNavMesh, NavMeshQuery } from '@recast-navigation/core';

await init();
const [file, queryFile] = process.argv.slice(2);
const queries = JSON.parse(readFileSync(queryFile, 'utf8'));
const { navMesh } = importNavMesh(new Uint8Array(readFileSync(file)));
const query = new NavMeshQuery(navMesh);
const vec = ([x, y, z]) => ({ x, y, z });
const halfExtents = vec(queries.halfExtents);

function nearest(point) {
  const found = query.findNearestPoly(vec(point), { halfExtents });
  return found.success && found.nearestRef ? found : null;
}

const rays = (queries.rays || []).map(([start, end]) => {
  const from = nearest(start);
  return from ? query.raycast(from.nearestRef, from.nearestPoint, vec(end)).t : null;
});
const moves = (queries.moves || []).map(([start, end]) => {
  const from = nearest(start);
  if (!from) return null;
  const p = query.moveAlongSurface(from.nearestRef, from.nearestPoint, vec(end)).resultPosition;
  return [p.x, p.y, p.z];
});
console.log(JSON.stringify({ rays, moves }));
