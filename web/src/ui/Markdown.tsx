// Markdown text (assistant and user messages): one element per top-level block, each rendered
// once per distinct text (render/blocks.ts, render/markdown.ts). The HTML is sanitized.
import { memo } from 'preact/compat';
import { splitBlocks } from './render/blocks';
import { renderMarkdown } from './render/markdown';

const Block = memo(function Block({ text }: { text: string }) {
  return <div class="md-block" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
});

export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const blocks = splitBlocks(text);
  return (
    <div class={`text md${streaming ? ' streaming' : ''}`}>
      {blocks.map((b, i) => (
        <Block key={i} text={b} />
      ))}
    </div>
  );
}
