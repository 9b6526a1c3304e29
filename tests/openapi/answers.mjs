// docs/openapi.yaml made strict (schemas.mjs) and compiled by Ajv, and the check of one HTTP answer
// against it. Shared by the contract test (contract_test.mjs), which drives every operation, and
// the contract proxy (contract_proxy.mjs), which checks what the end-to-end suites receive.
import fs from 'node:fs';
import path from 'node:path';

import {loadPackages, root} from './common.mjs';
import {strict} from './schemas.mjs';

// A JSON pointer token for `s`.
export const escape = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

// Loads docs/openapi.yaml and compiles it (compileAnswers) with this directory's pinned Ajv and
// formats; `test` names the caller in the message printed when the pinned packages are missing
// (then the process exits 77, skipped).
export async function loadAnswers(test) {
  const {Ajv2020, addFormats, parseYaml} = await loadPackages(test);
  const doc = parseYaml(fs.readFileSync(path.join(root, 'docs/openapi.yaml'), 'utf8'));
  const ajv = new Ajv2020({strict: false, allErrors: true, validateFormats: true});
  addFormats(ajv);
  return {doc, ajv, ...compileAnswers(doc, ajv)};
}

// The checks of answers against `doc` (the parsed document), compiled by `ajv` (an Ajv 2020
// instance the caller made, with or without formats): the web page's end-to-end tests bring their
// own (web/e2e/contract.ts) and the JSON build of the document.
export function compileAnswers(doc, ajv) {
  // Its object schemas made strict: a member it does not name fails.
  const strictDoc = structuredClone(doc);
  strict(strictDoc.components.schemas);
  for (const response of Object.values(strictDoc.components.responses)) strict(response);
  for (const item of Object.values(strictDoc.paths))
    for (const op of Object.values(item)) if (op?.responses) strict(op.responses);

  ajv.addSchema(strictDoc, 'openapi.json');
  const compiled = new Map();
  function validator(pointer) {
    if (!compiled.has(pointer)) compiled.set(pointer, ajv.compile({$ref: 'openapi.json#' + pointer}));
    return compiled.get(pointer);
  }

  // The response object (and its JSON pointer) of an operation and status, $ref followed.
  function responseOf(template, method, status) {
    const op = doc.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`the document has no ${method} ${template}`);
    let pointer = `/paths/${escape(template)}/${method.toLowerCase()}/responses/${status}`;
    let response = op.responses[String(status)];
    if (response?.$ref) {
      pointer = response.$ref.slice(1);
      response = pointer.split('/').slice(1).reduce(
          (o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    return response ? {response, pointer} : null;
  }

  // The path templates as patterns: a parameter is one segment, but `{path}` (a stream's name)
  // any number. Literal templates win over ones with parameters (`/v1/stream/__ds/jwks.json`
  // over `/v1/stream/{path}`).
  const templates = Object.keys(doc.paths).map((template) => {
    const parameters = (template.match(/\{[^}]+\}/g) ?? []).length;
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{path\}/g, '.+').replace(/\{[^}]+\}/g, '[^/]+');
    return {template, parameters, regex: new RegExp(`^${pattern}$`)};
  }).sort((a, b) => a.parameters - b.parameters || b.template.length - a.template.length);

  // The template of `method` and a request target (its query ignored); null when the document
  // has no such operation.
  function templateOf(method, target) {
    const pathname = decodeURIComponent(target.split('?')[0]);
    const found = templates.find((t) => t.regex.test(pathname));
    return found && doc.paths[found.template][method.toLowerCase()] ? found.template : null;
  }

  // What is wrong with an answer `res` ({status, headers, text}) of `method template`: its
  // status not listed, a documented header malformed, a content type or body the document does
  // not have, a JSON body its schema refuses. Empty when it is right; `body` is the parsed JSON.
  function problems(template, method, res) {
    const found = responseOf(template, method, res.status);
    if (!found) return {problems: ['status not in the document']};
    const {response, pointer} = found;
    const out = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) continue;
      const schema = header.$ref ? doc.components.headers[header.$ref.split('/').pop()] : header;
      const hp = header.$ref ? header.$ref.slice(1) + '/schema'
                             : `${pointer}/headers/${escape(name)}/schema`;
      if (schema.schema && !validator(hp)(value)) out.push(`header ${name}: ${value} does not match`);
    }
    const type = (res.headers['content-type'] ?? '').split(';')[0].trim();
    const content = response.content;
    if (!content) {
      if (res.text.length > 0 && method !== 'HEAD')
        out.push(`a body the document does not have: ${res.text.slice(0, 200)}`);
      return {problems: out};
    }
    if (method === 'HEAD') return {problems: out};
    const key = content[type] ? type : (content['*/*'] ? '*/*' : null);
    if (!key) return {problems: [...out, `content type ${type} not in the document (${Object.keys(content)})`]};
    if (key !== 'application/json' && !key.endsWith('+json')) return {problems: out};
    let body;
    try {
      body = JSON.parse(res.text);
    } catch {
      return {problems: [...out, `not JSON: ${res.text.slice(0, 200)}`]};
    }
    const validate = validator(`${pointer}/content/${escape(key)}/schema`);
    if (!validate(body)) {
      const detail = ajv.errorsText(validate.errors, {separator: '; '}).slice(0, 600);
      out.push(`${detail}\n  body: ${res.text.slice(0, 300)}`);
    }
    return {problems: out, body};
  }

  return {validator, responseOf, templateOf, problems};
}
