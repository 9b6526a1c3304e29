// Reads a build's compile_commands.json and writes one where each unity source of a unity build
// (CMAKE_UNITY_BUILD: "Unity/unity_N_cxx.cxx", which #includes several of the project's sources)
// is replaced by the sources it includes, each with the unity source's command. Tools that read
// one source at a time (clang-tidy) then find every source. Other entries are copied as they are.
//   node tools/unity_compile_db.mjs IN OUT
import { readFileSync, writeFileSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node tools/unity_compile_db.mjs IN OUT');
  process.exit(2);
}
const entries = JSON.parse(readFileSync(input, 'utf8'));
const out = [];
for (const entry of entries) {
  if (!/\/Unity\/unity_[0-9]+_cxx\.cxx$/.test(entry.file)) {
    out.push(entry);
    continue;
  }
  const included = [...readFileSync(entry.file, 'utf8').matchAll(/^#include "([^"]+)"$/gm)].map(
    (m) => m[1]);
  for (const file of included) {
    out.push({ ...entry, command: entry.command.replaceAll(entry.file, file), file });
  }
}
writeFileSync(output, JSON.stringify(out, null, 2));
