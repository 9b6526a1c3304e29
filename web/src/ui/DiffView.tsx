// Diff lines with their sign and syntax-highlighted text (the language from the file's name):
// an edit tool call's change, or a hunk of the Changes view.
import { memo } from 'preact/compat';
import { highlight, languageOfPath } from './render/highlight';

export interface ShownLine {
  sign: string; // '+', '-', ' ', '@' (a hunk header), '\\' (no newline at end of file)
  text: string;
}

const CLASS: Record<string, string> = { '+': 'add', '-': 'del', '@': 'hunk', '\\': 'meta' };

export const DiffLines = memo(function DiffLines({ path, lines }: { path: string; lines: ShownLine[] }) {
  const lang = languageOfPath(path);
  return (
    <pre class="diff" data-testid="diff-lines">
      {lines.map((l, i) => {
        const cls = CLASS[l.sign] ?? 'ctx';
        const html = l.sign === '@' || l.sign === '\\' ? highlight(l.text, undefined) : highlight(l.text, lang);
        return (
          <div key={i} class={`dl dl-${cls}`}>
            <span class="dl-sign" aria-hidden="true">
              {l.sign === '@' || l.sign === '\\' ? '' : l.sign}
            </span>
            <code class="hljs" dangerouslySetInnerHTML={{ __html: html || ' ' }} />
          </div>
        );
      })}
    </pre>
  );
});
