import { describe, expect, it } from 'vitest';
import { editDiff } from '../src/ui/render/edit_diff';
import { splitBlocks } from '../src/ui/render/blocks';
import { commandOf, toolKind } from '../src/ui/ToolCall';

const signs = (d: ReturnType<typeof editDiff>) => d!.files.map((f) => [f.path, f.action, ...f.lines.map((l) => l.sign + l.text)]);

describe('editDiff (the rules of src/cli/commands/edit_diff.cc)', () => {
  it('claude Edit: every old line removed, every new line added', () => {
    const d = editDiff('Edit', { file_path: '/w/a.ts', old_string: 'one\ntwo\n', new_string: 'one\nTWO\n' });
    expect(signs(d)).toEqual([['/w/a.ts', 'edit', '-one', '-two', '+one', '+TWO']]);
    expect(d!.more).toBe(0);
  });

  it('opencode edit in camelCase', () => {
    const d = editDiff('edit', { filePath: 'b.py', oldString: 'x = 1', newString: 'x = 2' });
    expect(signs(d)).toEqual([['b.py', 'edit', '-x = 1', '+x = 2']]);
  });

  it('MultiEdit: each edit in order; an edit that is not an object is skipped', () => {
    const d = editDiff('MultiEdit', {
      file_path: 'c.go',
      edits: [{ old_string: 'a', new_string: 'b' }, 7, { oldString: 'c', newString: 'd' }],
    });
    expect(signs(d)).toEqual([['c.go', 'edit', '-a', '+b', '-c', '+d']]);
  });

  it('Write: the whole content added', () => {
    expect(signs(editDiff('Write', { file_path: 'n.md', content: '# T\n\nbody' }))).toEqual([
      ['n.md', 'write', '+# T', '+', '+body'],
    ]);
  });

  it('a tool it does not know, or an input without the fields, gives nothing', () => {
    expect(editDiff('Bash', { command: 'ls' })).toBeNull();
    expect(editDiff('Edit', { file_path: 'a' })).toBeNull();
    expect(editDiff('Edit', { old_string: 'a', new_string: 'b' })).toBeNull();
    expect(editDiff('MultiEdit', { file_path: 'a', edits: 'x' })).toBeNull();
    expect(editDiff('Write', 'text')).toBeNull();
    expect(editDiff('Write', null)).toBeNull();
  });

  it('bounded: at most maxLines lines, then a count; long lines cut', () => {
    const content = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const d = editDiff('Write', { file_path: 'big', content }, 24, 160)!;
    expect(d.files[0].lines).toHaveLength(24);
    expect(d.more).toBe(6);
    const long = editDiff('Write', { file_path: 'l', content: 'x'.repeat(500) }, 24, 160)!;
    expect(long.files[0].lines[0].text).toBe(`${'x'.repeat(160)}...`);
  });

  it('codex apply_patch: files with their own hunk lines', () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: src/a.rs',
      '@@ fn main',
      ' keep',
      '-old',
      '+new',
      '*** Add File: b.txt',
      '+hello',
      '*** Delete File: c.txt',
      '*** Update File: d.txt',
      '*** Move to: e.txt',
      '*** End Patch',
    ].join('\n');
    expect(signs(editDiff('apply_patch', { input: patch }))).toEqual([
      ['src/a.rs', 'update', '@@@ fn main', ' keep', '-old', '+new'],
      ['b.txt', 'add', '+hello'],
      ['c.txt', 'delete'],
      ['d.txt → e.txt', 'move'],
    ]);
    expect(signs(editDiff('shell', { command: ['apply_patch', patch] }))[0][0]).toBe('src/a.rs');
  });

  it('codex fileChange items: a list or a map of changes with unified diffs', () => {
    const list = editDiff('fileChange', {
      type: 'fileChange',
      changes: [{ path: 'x.ts', kind: { type: 'update' }, diff: '--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-a\n+b' }],
    });
    expect(signs(list)).toEqual([['x.ts', 'update', '@@@ -1 +1 @@', '-a', '+b']]);
    const map = editDiff('fileChange', { changes: { 'y.ts': { type: 'add', content: 'z\n' } } });
    expect(signs(map)).toEqual([['y.ts', 'add', '+z']]);
  });

  it('ACP diff content: oldText removed, newText added', () => {
    expect(
      signs(editDiff('edit', { content: [{ type: 'content' }, { type: 'diff', path: '/p/f.c', oldText: 'a', newText: 'b' }] })),
    ).toEqual([['/p/f.c', 'edit', '-a', '+b']]);
    expect(signs(editDiff('edit', { path: '/p/new.c', oldText: null, newText: 'int x;' }))).toEqual([
      ['/p/new.c', 'write', '+int x;'],
    ]);
  });
});

describe('toolKind', () => {
  it('by name and input', () => {
    expect(toolKind('Bash', { command: 'ls' })).toBe('shell');
    expect(toolKind('commandExecution', { command: ['bash', '-lc', 'ls -la'] })).toBe('shell');
    expect(commandOf({ command: ['bash', '-lc', 'ls -la'] })).toBe('ls -la');
    expect(toolKind('Read', { file_path: '/a' })).toBe('read');
    expect(toolKind('Grep', { pattern: 'x' })).toBe('search');
    expect(toolKind('Edit', { file_path: 'a', old_string: 'x', new_string: 'y' })).toBe('edit');
    expect(toolKind('mcp__acp__Edit', { file_path: 'a', old_string: 'x', new_string: 'y' })).toBe('edit');
    expect(toolKind('TodoWrite', { todos: [] })).toBe('other');
  });
});

describe('splitBlocks', () => {
  it('splits at blank lines', () => {
    expect(splitBlocks('# Title\n\npara one\nline two\n\n\npara two')).toEqual(['# Title', 'para one\nline two', 'para two']);
  });
  it('keeps a fenced block whole, blank lines and all, also while it is still open', () => {
    const text = 'before\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nafter';
    expect(splitBlocks(text)).toEqual(['before', '```js\nconst a = 1;\n\nconst b = 2;\n```', 'after']);
    expect(splitBlocks('x\n\n```\nopen\n\nstill')).toEqual(['x', '```\nopen\n\nstill']);
    expect(splitBlocks('~~~\n```\n\n~~~\n\nz')).toEqual(['~~~\n```\n\n~~~', 'z']);
  });
  it('keeps a loose list in one block', () => {
    expect(splitBlocks('- a\n\n- b\n\n  more of b\n\nend')).toEqual(['- a\n\n- b\n\n  more of b', 'end']);
  });
  it('a growing text changes only its last block', () => {
    const a = splitBlocks('one\n\ntwo');
    const b = splitBlocks('one\n\ntwo three');
    expect(a[0]).toBe(b[0]);
    expect(splitBlocks('')).toEqual([]);
  });
});
