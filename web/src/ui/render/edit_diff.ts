// The change a file-editing tool call makes, read from the call's own input, as diff lines: the
// web page's counterpart of the terminal client's `EditDiffLines` (src/cli/commands/edit_diff.h),
// with the same rules and wider bounds.
//
// * claude Edit / MultiEdit / Write and opencode edit / write (the same fields in camelCase:
//   file_path / filePath, old_string / oldString, new_string / newString, edits, content);
// * ACP `diff` content items ({type: "diff", path, oldText, newText}) in the input, or an input
//   of that shape itself (an ACP agent's rawInput);
// * codex file changes (item `changes`: [{path, kind: {type}, diff}] or {PATH: {...}}) and
//   `apply_patch` patches ("*** Begin Patch" ... "*** End Patch").
//
// Every old line is shown removed and every new line added (no line matching), except for
// patches and unified diffs, whose own lines are kept. The worktree's real diff is the Changes
// view (GET /v1/agents/{id}/diff).
//
// Pure; never throws: a tool it does not know, or an input without the fields, gives null.
// Bounded: at most `maxLines` lines over all files (then one "N more lines" count), each line
// cut to `maxLineChars` characters (then "...").

export const MAX_DIFF_LINES = 400;
export const MAX_DIFF_LINE_CHARS = 400;

export type DiffSign = '+' | '-' | ' ' | '@';

export interface DiffLine {
  sign: DiffSign;
  text: string;
}

export interface FileEdit {
  path: string;
  // "edit", "write" (the whole content written), "add", "delete", "update", "move"
  action: string;
  lines: DiffLine[];
}

export interface EditDiff {
  files: FileEdit[];
  // Lines left out past the bound.
  more: number;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function field(o: Obj, snake: string, camel: string): string | undefined {
  for (const name of [snake, camel]) {
    const v = o[name];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

// Collects lines under the bounds.
class Builder {
  readonly files: FileEdit[] = [];
  private count = 0;
  private more = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxChars: number,
  ) {}

  file(path: string, action: string): FileEdit {
    const f = { path, action, lines: [] as DiffLine[] };
    this.files.push(f);
    return f;
  }

  add(f: FileEdit, sign: DiffSign, text: string): void {
    if (this.count >= this.maxLines) {
      this.more++;
      return;
    }
    this.count++;
    f.lines.push({ sign, text: text.length > this.maxChars ? `${text.slice(0, this.maxChars)}...` : text });
  }

  // Each line of `text` with `sign`; a final newline ends the last line, it makes none.
  addText(f: FileEdit, sign: DiffSign, text: string): void {
    if (text === '') return;
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) this.add(f, sign, line);
  }

  // The lines of a unified diff or a patch hunk: each keeps its first character as its sign.
  addUnified(f: FileEdit, text: string): void {
    for (const line of text.split('\n')) {
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) continue;
      if (line.startsWith('@@')) this.add(f, '@', line);
      else if (line.startsWith('+') || line.startsWith('-') || line.startsWith(' '))
        this.add(f, line[0] as DiffSign, line.slice(1));
      else if (line !== '') this.add(f, ' ', line);
    }
  }

  result(): EditDiff | null {
    return this.files.length ? { files: this.files, more: this.more } : null;
  }
}

// The Begin/End Patch format of codex's apply_patch.
function addPatch(b: Builder, patch: string): void {
  let f: FileEdit | null = null;
  for (const line of patch.split('\n')) {
    const header = /^\*\*\* (Add|Delete|Update) File: (.+)$/.exec(line);
    if (header) {
      f = b.file(header[2].trim(), header[1].toLowerCase());
      continue;
    }
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move && f) {
      f.path = `${f.path} → ${move[1].trim()}`;
      f.action = 'move';
      continue;
    }
    if (line.startsWith('*** ') || !f) continue;
    if (line.startsWith('@@')) b.add(f, '@', line);
    else if (line.startsWith('+') || line.startsWith('-') || line.startsWith(' ')) b.add(f, line[0] as DiffSign, line.slice(1));
  }
}

function patchText(input: Obj): string | undefined {
  for (const name of ['patch', 'input']) {
    const v = input[name];
    if (typeof v === 'string' && v.includes('*** Begin Patch')) return v;
  }
  const cmd = input.command;
  if (Array.isArray(cmd)) {
    const p = cmd.find((c) => typeof c === 'string' && c.includes('*** Begin Patch'));
    if (typeof p === 'string') return p;
  }
  return undefined;
}

// ACP diff items: the input itself, or its `content` list.
function acpDiffs(input: Obj): Obj[] {
  const isDiff = (o: unknown): boolean =>
    isObj(o) && typeof o.path === 'string' && typeof o.newText === 'string' && (o.type === undefined || o.type === 'diff');
  if (isDiff(input)) return [input];
  const content = input.content;
  return Array.isArray(content) ? (content.filter((c) => isObj(c) && c.type === 'diff' && isDiff(c)) as Obj[]) : [];
}

// Codex file changes: a list of {path, kind, diff}, or an object keyed by path.
function codexChanges(input: Obj): { path: string; kind: string; diff?: string; content?: string }[] {
  const changes = input.changes;
  const out: { path: string; kind: string; diff?: string; content?: string }[] = [];
  const kindOf = (c: Obj): string => {
    const k = c.kind ?? c.type;
    if (typeof k === 'string') return k;
    if (isObj(k) && typeof k.type === 'string') return k.type;
    return 'update';
  };
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (Array.isArray(changes)) {
    for (const c of changes)
      if (isObj(c) && typeof c.path === 'string')
        out.push({ path: c.path, kind: kindOf(c), diff: str(c.diff) ?? str(c.unified_diff), content: str(c.content) });
  } else if (isObj(changes)) {
    for (const [path, c] of Object.entries(changes))
      if (isObj(c)) out.push({ path, kind: kindOf(c), diff: str(c.unified_diff) ?? str(c.diff), content: str(c.content) });
  }
  return out;
}

export function editDiff(
  tool: string,
  input: unknown,
  maxLines = MAX_DIFF_LINES,
  maxLineChars = MAX_DIFF_LINE_CHARS,
): EditDiff | null {
  if (!isObj(input)) return null;
  const b = new Builder(maxLines, maxLineChars);
  const path = field(input, 'file_path', 'filePath');
  const name = tool.replace(/^mcp__[^_]+__/, '');
  if (path && (name === 'Edit' || name === 'edit')) {
    const oldText = field(input, 'old_string', 'oldString');
    const newText = field(input, 'new_string', 'newString');
    if (oldText === undefined || newText === undefined) return null;
    const f = b.file(path, 'edit');
    b.addText(f, '-', oldText);
    b.addText(f, '+', newText);
    return b.result();
  }
  if (path && name === 'MultiEdit') {
    if (!Array.isArray(input.edits)) return null;
    const f = b.file(path, 'edit');
    for (const e of input.edits) {
      if (!isObj(e)) continue;
      b.addText(f, '-', field(e, 'old_string', 'oldString') ?? '');
      b.addText(f, '+', field(e, 'new_string', 'newString') ?? '');
    }
    return b.result();
  }
  if (path && (name === 'Write' || name === 'write')) {
    const content = field(input, 'content', 'content');
    if (content === undefined) return null;
    b.addText(b.file(path, 'write'), '+', content);
    return b.result();
  }
  const patch = patchText(input);
  if (patch) {
    addPatch(b, patch);
    return b.result();
  }
  const changes = codexChanges(input);
  if (changes.length) {
    for (const c of changes) {
      const f = b.file(c.path, c.kind);
      if (c.diff) b.addUnified(f, c.diff);
      else if (c.content) b.addText(f, c.kind === 'delete' ? '-' : '+', c.content);
    }
    return b.result();
  }
  for (const d of acpDiffs(input)) {
    const oldText = typeof d.oldText === 'string' ? d.oldText : '';
    const f = b.file(d.path as string, oldText ? 'edit' : 'write');
    b.addText(f, '-', oldText);
    b.addText(f, '+', d.newText as string);
  }
  return b.result();
}
