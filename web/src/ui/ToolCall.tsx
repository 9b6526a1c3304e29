// A tool call, shown by what it does: a shell command and its output, a file read (its path), a
// file edit (the change as a diff, from the call's own input: render/edit_diff.ts), a search (its
// pattern and hits), or any other tool (its input as JSON). Collapsed to one line until opened,
// except edits, whose diff is the point.
import { useState } from 'preact/hooks';
import { DiffLines } from './DiffView';
import { editDiff } from './render/edit_diff';

// Tool output shown before "show all" (the item itself is bounded to 64 KiB by the daemon).
export const OUTPUT_PREVIEW_CHARS = 4096;

type Kind = 'shell' | 'read' | 'edit' | 'search' | 'other';

const SHELL = /^(bash|shell|local_shell|exec_command|run_shell_command|commandexecution|execute|terminal)$/i;
const READ = /^(read|read_file|view|notebookread|read_many_files)$/i;
const SEARCH = /^(grep|glob|search|find|ls|list|list_directory|websearch|codebase_search|search_file_content)$/i;

function bareName(name: string): string {
  return (name ?? '').replace(/^mcp__.+?__/, '');
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function commandOf(input: any): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const c = input.command ?? input.cmd;
  if (typeof c === 'string') return c;
  if (Array.isArray(c) && c.every((x) => typeof x === 'string')) {
    // ["bash", "-lc", "the command"] as codex sends it
    if (c.length === 3 && /(^|\/)(ba|z)?sh$/.test(c[0]) && c[1].startsWith('-')) return c[2];
    return c.join(' ');
  }
  return undefined;
}

function pathOf(input: any): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  return str(input.file_path) ?? str(input.filePath) ?? str(input.path) ?? str(input.absolute_path) ?? str(input.notebook_path);
}

function patternOf(input: any): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  return str(input.pattern) ?? str(input.query) ?? str(input.q) ?? str(input.glob) ?? str(input.regex);
}

export function toolKind(name: string, input: any): Kind {
  const n = bareName(name);
  if (editDiff(n, input)) return 'edit';
  if (SHELL.test(n) || (n === 'other' && commandOf(input))) return 'shell';
  if (READ.test(n)) return 'read';
  if (SEARCH.test(n) || (n === 'fetch' && patternOf(input))) return 'search';
  if (commandOf(input) && !pathOf(input)) return 'shell';
  return 'other';
}

function Output({ output, truncated }: { output: string; truncated: boolean }) {
  const [all, setAll] = useState(false);
  if (!output) return null;
  const shown = all ? output : output.slice(0, OUTPUT_PREVIEW_CHARS);
  return (
    <>
      <pre class="output" data-testid="tool-output">
        {shown}
      </pre>
      {output.length > OUTPUT_PREVIEW_CHARS && !all ? (
        <button type="button" onClick={() => setAll(true)}>
          Show all ({output.length} chars)
        </button>
      ) : null}
      {truncated ? <div class="muted">output truncated by the daemon (64 KiB)</div> : null}
    </>
  );
}

export function ToolCall({ common, item }: { common: Record<string, string>; item: any }) {
  const name: string = item.name ?? '';
  const input = item.input;
  const output: string = item.output ?? '';
  const kind = toolKind(name, input);
  const badge = <span class={`badge badge-${item.state}`}>{item.state}</span>;
  const error = item.error ? <div class="error-text">{item.error}</div> : null;

  if (kind === 'edit') {
    const diff = editDiff(bareName(name), input)!;
    const adds = diff.files.reduce((n, f) => n + f.lines.filter((l) => l.sign === '+').length, 0);
    const dels = diff.files.reduce((n, f) => n + f.lines.filter((l) => l.sign === '-').length, 0);
    return (
      <details {...common} data-testid="tool-call" data-tool-kind="edit" data-state={item.state} open>
        <summary>
          <span class="tool-kind">edit</span> <span class="tool-name">{name}</span>{' '}
          <span class="tool-main">{diff.files.map((f) => f.path).join(', ')}</span>{' '}
          <span class="diffstat">
            <span class="add">+{adds}</span> <span class="del">−{dels}</span>
          </span>{' '}
          {badge}
        </summary>
        {diff.files.map((f, i) => (
          <div class="edit-file" key={i} data-testid="edit-diff" data-path={f.path}>
            {diff.files.length > 1 || f.action !== 'edit' ? (
              <div class="edit-path">
                {f.path} <span class="muted">{f.action}</span>
              </div>
            ) : null}
            <DiffLines path={f.path} lines={f.lines} />
          </div>
        ))}
        {diff.more > 0 ? <div class="muted">… {diff.more} more lines</div> : null}
        {error}
        {item.state === 'failed' ? <Output output={output} truncated={!!item.truncated} /> : null}
      </details>
    );
  }

  let main: string;
  if (kind === 'shell') main = commandOf(input) ?? item.title ?? '';
  else if (kind === 'read') main = pathOf(input) ?? item.title ?? '';
  else if (kind === 'search') main = patternOf(input) ?? item.title ?? '';
  else main = item.title ?? pathOf(input) ?? '';
  const hits = kind === 'search' && output ? output.split('\n').filter((l) => l.trim() !== '').length : 0;

  return (
    <details {...common} data-testid="tool-call" data-tool-kind={kind} data-state={item.state}>
      <summary>
        <span class="tool-kind">{kind === 'other' ? 'tool' : kind}</span> <span class="tool-name">{name}</span>{' '}
        <code class="tool-main">{kind === 'shell' ? `$ ${main}` : main}</code>{' '}
        {kind === 'search' && item.state === 'completed' ? <span class="muted">{hits} hits</span> : null} {badge}
      </summary>
      {kind === 'other' || kind === 'search' ? <pre class="input">{JSON.stringify(input, null, 1)}</pre> : null}
      {kind === 'shell' && main.includes('\n') ? <pre class="input">{main}</pre> : null}
      <Output output={output} truncated={!!item.truncated} />
      {error}
    </details>
  );
}
