// The schema tools the checks of the daemon's documents share: the HTTP contract test
// (contract_test.mjs), the WebSocket contract test (ws_contract_test.mjs) and the web page's
// end-to-end tests (web/e2e/ws_frames.ts, which validate the page's own /ws traffic).
//
// No dependencies: each caller brings its own Ajv (the pinned ajv 8 of its package) and reads the
// documents itself, so the web tests need neither this directory's node_modules nor a YAML parser
// (they read docs/openapi.json, the YAML's JSON build that tools/lint.sh keeps equal to it).

// Sets additionalProperties: false on every object schema that names its properties and says
// nothing of other members, in place. Branches of if/then/else and not are left as they are (an
// `if` made strict would stop matching). The documents leave such objects open because clients
// must ignore members they do not know; the checks close them so that a member the daemon adds
// or drops without the document saying so fails.
export function strict(schema) {
  if (Array.isArray(schema)) return schema.forEach(strict);
  if (schema === null || typeof schema !== 'object') return;
  if (schema.properties && !('additionalProperties' in schema) &&
      !('unevaluatedProperties' in schema))
    schema.additionalProperties = false;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'if' || key === 'then' || key === 'else' || key === 'not') continue;
    if (key === 'properties' || key === 'patternProperties' || key === '$defs') {
      for (const sub of Object.values(value)) strict(sub);
    } else if (typeof value === 'object') {
      strict(value);
    }
  }
}

// The members a WebSocket message carries beside the HTTP body it holds (its `x-body`).
export const WS_ENVELOPE = ['type', 'id', 'agent', 'requestId', 'action'];

// The `type` each schema of a oneOf list accepts (its properties.type.const, or its branches').
function typesOf(schema, defs) {
  if (schema.$ref) return typesOf(defs[schema.$ref.split('/').pop()], defs);
  if (schema.oneOf) return schema.oneOf.flatMap((s) => typesOf(s, defs));
  const type = schema.properties?.type?.const;
  return type === undefined ? [] : [type];
}

// Ajv's errors, one line, naming the member an additionalProperties error is about.
export function errorsText(errors) {
  return (errors ?? []).map((e) => {
    const extra = e.params?.additionalProperty;
    return `${e.instancePath || '/'} ${e.message}${extra === undefined ? '' : ` (${JSON.stringify(extra)})`}`;
  }).join('; ');
}

// Adds `openapi` (the parsed docs/openapi.yaml or .json; a strict copy, under the id the
// WebSocket schema's references name) and `wsSchema` (docs/ws-protocol.schema.json) to `ajv` (an
// Ajv2020 made with strict: false, allErrors: true) and returns:
//   check(side, text): null when `text` (a frame's text) is a valid `side` ('client' or
//     'server') message, else what is wrong with it: not JSON, an unknown type, or Ajv's errors
//     against the schema of its type (more readable than the whole oneOf's);
//   types: {client: [...], server: [...]}, every message type the schema defines;
//   defs: type -> the $defs names of the schemas of that type, per side.
export function wsValidators(ajv, openapi, wsSchema) {
  const doc = structuredClone(openapi);
  strict(doc.components.schemas);
  ajv.addSchema(doc, 'openapi.json');
  ajv.addSchema(wsSchema);
  const id = wsSchema.$id;
  const sides = {client: 'ClientMessage', server: 'ServerMessage'};
  const validators = {};
  const types = {};
  const defs = {};
  for (const [side, name] of Object.entries(sides)) {
    validators[side] = ajv.compile({$ref: `${id}#/$defs/${name}`});
    defs[side] = {};
    for (const branch of wsSchema.$defs[name].oneOf) {
      const def = branch.$ref.split('/').pop();
      for (const type of typesOf(branch, wsSchema.$defs)) (defs[side][type] ??= []).push(def);
    }
    types[side] = Object.keys(defs[side]);
  }
  const byDef = new Map();
  const validatorOf = (def) => {
    if (!byDef.has(def)) byDef.set(def, ajv.compile({$ref: `${id}#/$defs/${def}`}));
    return byDef.get(def);
  };
  function check(side, text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return `not JSON: ${String(text).slice(0, 200)}`;
    }
    if (validators[side](msg)) return null;
    const named = defs[side][msg?.type];
    if (!named) return `${JSON.stringify(msg?.type)} is not a ${side} message type`;
    for (const def of named) {
      const validate = validatorOf(def);
      if (!validate(msg)) return `${def}: ${errorsText(validate.errors)}`;
    }
    return `matches more than one schema of ${sides[side]}`;
  }
  return {check, types, defs};
}
