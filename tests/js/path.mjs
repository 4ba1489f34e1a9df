// Loads an exported navmesh .glb into three-pathfinding and prints the path between two points.
// Usage: node path.mjs mesh.glb sx sy sz gx gy gz   (glTF coordinates: +Y up)
// Prints JSON {"points": [[x, y, z], ...], "length": L, "nodes": N}; points start at the start point.
import { readFileSync } from 'node:fs';
import { BufferAttribute, BufferGeometry, Vector3 } from 'three';
import { Pathfinding } from 'three-pathfinding';

const COMPONENT_ARRAYS = { 5121: Uint8Array, 5123: Uint16Array, 5125: Uint32Array, 5126: Float32Array };
const COMPONENT_COUNTS = { SCALAR: 1, VEC3: 3 };

function readGlb(path) {
  const bytes = readFileSync(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== 0x46546c67) throw new Error(`${path} is not a binary glTF file`);
  let offset = 12;
  let json = null;
  let bin = null;
  while (offset < bytes.byteLength) {
    const length = view.getUint32(offset, true);
    const type = view.getUint32(offset + 4, true);
    const chunk = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(chunk));
    if (type === 0x004e4942) bin = chunk;
    offset += 8 + length;
  }
  return { json, bin };
}

function accessorArray({ json, bin }, index) {
  const accessor = json.accessors[index];
  const bufferView = json.bufferViews[accessor.bufferView];
  const Type = COMPONENT_ARRAYS[accessor.componentType];
  const count = accessor.count * COMPONENT_COUNTS[accessor.type];
  const start = bin.byteOffset + (bufferView.byteOffset || 0) + (accessor.byteOffset || 0);
  return new Type(bin.buffer.slice(start, start + count * Type.BYTES_PER_ELEMENT));
}

// The navmesh is the one mesh in the file, at the origin with no transform.
function navmeshGeometry(glb) {
  const positions = [];
  const indices = [];
  for (const mesh of glb.json.meshes) {
    for (const primitive of mesh.primitives) {
      const base = positions.length / 3;
      positions.push(...accessorArray(glb, primitive.attributes.POSITION));
      for (const i of accessorArray(glb, primitive.indices)) indices.push(base + i);
    }
  }
  const geometry = new BufferGeometry();
  geometry.setAttribute('position', new BufferAttribute(new Float32Array(positions), 3));
  geometry.setIndex(indices);
  return geometry;
}

const [file, ...coords] = process.argv.slice(2);
const [sx, sy, sz, gx, gy, gz] = coords.map(Number);
const start = new Vector3(sx, sy, sz);
const goal = new Vector3(gx, gy, gz);
const glb = readGlb(file);
const pathfinding = new Pathfinding();
const zone = Pathfinding.createZone(navmeshGeometry(glb));
pathfinding.setZoneData('level', zone);
const group = pathfinding.getGroup('level', start);
const path = pathfinding.findPath(start, goal, 'level', group) || [];
const points = [start, ...path];
let length = 0;
for (let i = 1; i < points.length; i++) length += points[i].distanceTo(points[i - 1]);
console.log(JSON.stringify({
  points: points.map((p) => [p.x, p.y, p.z]),
  length,
  nodes: zone.groups.reduce((n, g) => n + g.length, 0),
  extras: glb.json.nodes.map((n) => ({ name: n.name, extras: n.extras ?? null })),
  meshes: glb.json.meshes.map((m) => m.name),
}));
