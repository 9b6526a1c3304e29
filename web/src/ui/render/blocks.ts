// Splits Markdown text into top-level blocks that render independently: at blank lines outside
// fenced code blocks, keeping a list, a quote or an indented code block that continues after a
// blank line in one block. A streaming message then re-renders only its last block: every
// earlier block is unchanged text, rendered once (markdown.ts caches by text).
//
// Pure. Concatenating the blocks with "\n\n" gives back the text up to blank-line runs.

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// Lines that continue the block before a blank line: list items, indented lines, quotes.
const CONTINUES = /^(\s{2,}\S|\t|\s*([-*+]|\d{1,9}[.)])\s|\s*>)/;

export function splitBlocks(text: string): string[] {
  const lines = text.split('\n');
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  let blank = false;
  const flush = () => {
    if (current.length) blocks.push(current.join('\n'));
    current = [];
  };
  for (const line of lines) {
    if (fence) {
      current.push(line);
      const m = FENCE.exec(line);
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
      continue;
    }
    if (line.trim() === '') {
      blank = current.length > 0;
      continue;
    }
    if (blank) {
      blank = false;
      const inList = current.length > 0 && CONTINUES.test(current[0]);
      if (inList && CONTINUES.test(line)) current.push('');
      else flush();
    }
    const m = FENCE.exec(line);
    if (m) fence = m[1];
    current.push(line);
  }
  flush();
  return blocks;
}
