// Checks the includes between the module folders of src/ against the diagram that opens
// docs/architecture.md (its ```mermaid block). There, `A --> B` lets module A include module B and
// everything B may include. The arrows must form no cycle, so no module includes one that
// includes it back; any other kind of arrow is refused. Every quoted include "X/..." from a
// file under src/A/ (tests included) whose X is another module folder must be allowed;
// src/testing/ (test support) may be included from anywhere.
//   node tools/module_deps.mjs            (from the checkout; exits 1 on a violation)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const doc = readFileSync('docs/architecture.md', 'utf8');
const block = doc.match(/```mermaid\n([\s\S]*?)```/);
if (!block) {
  console.error('module_deps: docs/architecture.md has no ```mermaid block');
  process.exit(1);
}
const solid = new Map();  // module -> modules it may include directly
const problems = [];
for (const line of block[1].split('\n')) {
  if (/^\s*(graph\b|$)/.test(line)) continue;
  const m = line.match(/^\s*([a-z_]+)\s*-->\s*([a-z_]+)\s*$/);
  if (!m) {
    problems.push(`the diagram's line "${line.trim()}" is not an arrow A --> B`);
    continue;
  }
  const [, from, to] = m;
  if (!solid.has(from)) solid.set(from, new Set());
  if (!solid.has(to)) solid.set(to, new Set());
  solid.get(from).add(to);
}

// Test support, includable from anywhere, includes no module itself.
if (!solid.has('testing')) solid.set('testing', new Set());

// What each module may include: the arrows' closure. A module found in its own closure is
// a cycle.
const closure = new Map();
for (const start of solid.keys()) {
  const seen = new Set();
  const stack = [...solid.get(start)];
  while (stack.length > 0) {
    const next = stack.pop();
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(solid.get(next) ?? []));
  }
  if (seen.has(start)) problems.push(`the diagram's arrows make a cycle through ${start}`);
  closure.set(start, seen);
}

const files = execFileSync('git', ['ls-files', 'src/*.cc', 'src/*.h'], { encoding: 'utf8' })
    .split('\n').filter(Boolean);
const modules = new Set(
    files.map((f) => f.split('/')).filter((parts) => parts.length > 2).map((parts) => parts[1]));
for (const file of files) {
  const from = file.split('/')[1];
  if (!modules.has(from)) continue;  // src/precompiled.h
  if (!solid.has(from)) {
    problems.push(`${file}: module ${from} is not in the diagram`);
    continue;
  }
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^#include "([a-z_]+)\//gm)) {
    const to = m[1];
    if (to === from || to === 'testing' || !modules.has(to)) continue;
    if (closure.get(from).has(to)) continue;
    problems.push(`${file}: ${from} may not include ${to}/ (docs/architecture.md, the diagram)`);
  }
}
if (problems.length > 0) {
  for (const p of problems) console.error(`module_deps: ${p}`);
  process.exit(1);
}
console.log(`module_deps: ${files.length} files include only what the diagram allows ` +
            `(${solid.size} modules)`);
