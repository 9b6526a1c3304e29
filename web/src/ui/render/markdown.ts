// Markdown to safe HTML: marked (GitHub-flavoured, line breaks kept), code blocks highlighted,
// then DOMPurify. Agent output is untrusted, and the rules are:
//
// * raw HTML in the text is never HTML: marked's `html` tokens are rendered as escaped text, so
//   `<script>` or `<img onerror=...>` show as the characters they are;
// * Markdown images are not loaded (a remote image would tell its server you read the page):
//   they render as a link with the alt text;
// * links open in a new tab with rel="noopener noreferrer", and only http(s), mailto and
//   relative URLs are kept (DOMPurify drops `javascript:` and other schemes);
// * the HTML marked builds goes through DOMPurify with a fixed allowed set of tags and no
//   `style`, event handlers or forms; the page's Content-Security-Policy (index.html) forbids
//   inline scripts on top of that.
//
// Rendered blocks are cached by their text (at most MARKDOWN_CACHE_ENTRIES), so a streaming
// message re-renders only its growing last block (blocks.ts).
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { escapeHtml, highlight } from './highlight';

export const MARKDOWN_CACHE_ENTRIES = 2000;

const ALLOWED_TAGS = [
  'a',
  'b',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'i',
  'input',
  'li',
  'ol',
  'p',
  'pre',
  's',
  'span',
  'strong',
  'sub',
  'sup',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'target', 'rel', 'align', 'type', 'checked', 'disabled', 'start', 'data-lang'];

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    image(token: Tokens.Image): string {
      const label = escapeHtml(token.text || token.href);
      return `<a href="${escapeHtml(token.href)}" class="md-image">${label}</a>`;
    },
    code(token: Tokens.Code): string {
      const lang = (token.lang ?? '').trim().split(/\s+/)[0].toLowerCase();
      const body = highlight(token.text, lang || undefined);
      const label = lang ? ` data-lang="${escapeHtml(lang)}"` : '';
      return `<pre class="md-code"${label}><code class="hljs">${body}</code></pre>`;
    },
  },
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
  if (node.tagName === 'INPUT') {
    // Only task-list checkboxes, read-only.
    if (node.getAttribute('type') !== 'checkbox') node.remove();
    else node.setAttribute('disabled', '');
  }
});

const cache = new Map<string, string>();

// Safe HTML for one block of Markdown.
export function renderMarkdown(text: string): string {
  const hit = cache.get(text);
  if (hit !== undefined) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const raw = marked.parse(text) as string;
  const html = DOMPurify.sanitize(raw, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
  }) as string;
  cache.set(text, html);
  if (cache.size > MARKDOWN_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return html;
}
