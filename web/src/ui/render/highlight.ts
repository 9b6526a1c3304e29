// Syntax highlighting with highlight.js's core and a small set of common languages (the full
// build is about ten times larger). Output is highlight.js's escaped HTML: spans with classes
// around the code's text, which is always escaped.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['cc', 'cxx', 'hpp', 'h++'], { languageName: 'cpp' });

// Code longer than this is shown without highlighting (highlighting is linear but not cheap).
export const MAX_HIGHLIGHT_CHARS = 100_000;

const EXTENSIONS: Record<string, string> = {
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  c: 'c',
  h: 'cpp',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  css: 'css',
  diff: 'diff',
  patch: 'diff',
  go: 'go',
  java: 'java',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  json: 'json',
  md: 'markdown',
  py: 'python',
  rs: 'rust',
  sql: 'sql',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  html: 'xml',
  xml: 'xml',
  svg: 'xml',
  yml: 'yaml',
  yaml: 'yaml',
};

// The language registered for a file's name, by its extension (undefined if none).
export function languageOfPath(path: string): string | undefined {
  const base = path.split('/').pop() ?? '';
  if (base === 'CMakeLists.txt' || base === 'Makefile') return undefined;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? EXTENSIONS[base.slice(dot + 1).toLowerCase()] : undefined;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// Highlighted HTML of `code` in `language` (a name or alias); plain escaped text when the
// language is not registered or the code is too long.
export function highlight(code: string, language: string | undefined): string {
  if (!language || code.length > MAX_HIGHLIGHT_CHARS || !hljs.getLanguage(language)) return escapeHtml(code);
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return escapeHtml(code);
  }
}

export { escapeHtml };
