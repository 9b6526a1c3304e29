// The message box of a pane: text, pasted or attached images, voice input where the browser
// has speech recognition, what to do while a turn runs; Enter sends, Shift+Enter breaks the
// line, Escape interrupts. A `/` starting the prompt offers the agent's slash commands
// (slash.ts): arrows move, Enter or Tab completes, Escape closes the list.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { Attachment, SlashCommand, WhileRunning } from '@agentstream/client';
import { completeCommand, matchCommands, slashQuery } from './slash';

// An attached image is sent inline in the WebSocket message (1 MiB per message).
export const MAX_IMAGE_BYTES = 700 * 1024;

// The browser's speech recognition (Chrome, Edge and Safari name it webkitSpeechRecognition);
// null where there is none, and then the page shows no voice control.
function speechRecognition(): (new () => any) | null {
  const w = window as any;
  return w.SpeechRecognition ?? w.webkitSpeechRecognition ?? null;
}

// Dictation into the composer: the words heard are appended to the text (shown as they are
// recognized, kept when final); a second tap, or silence, stops it.
function useVoice(append: (base: string, heard: string) => void, getText: () => string, onError: (m: string) => void) {
  const [listening, setListening] = useState(false);
  const rec = useRef<any>(null);
  useEffect(() => () => rec.current?.abort?.(), []);
  const Recognition = speechRecognition();
  if (!Recognition) return null;
  const toggle = () => {
    if (rec.current) {
      rec.current.stop();
      return;
    }
    const r = new Recognition();
    r.lang = navigator.language || 'en-US';
    r.interimResults = true;
    r.continuous = false;
    const base = getText();
    r.onresult = (e: any) => {
      let heard = '';
      for (let i = 0; i < e.results.length; i++) heard += e.results[i][0].transcript;
      append(base, heard);
    };
    r.onerror = (e: any) =>
      onError(`Voice input: ${e.error === 'not-allowed' ? 'the microphone is not allowed for this page' : e.error}`);
    r.onend = () => {
      rec.current = null;
      setListening(false);
    };
    rec.current = r;
    setListening(true);
    r.start();
  };
  return { listening, toggle };
}

export function Composer({
  onSend,
  onInterrupt,
  running,
  autofocus,
  commands = [],
  toolbar,
}: {
  onSend(text: string, attachments: Attachment[], whileRunning: WhileRunning): void;
  onInterrupt(): void;
  running: boolean;
  autofocus: boolean;
  commands?: readonly SlashCommand[]; // offered after a `/` starting the prompt
  toolbar?: ComponentChildren; // under the text (the agent's settings)
}) {
  const [text, setText] = useState('');
  const [images, setImages] = useState<Attachment[]>([]);
  const [mode, setMode] = useState<WhileRunning>('queue');
  const [error, setError] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  const textRef = useRef(text);
  textRef.current = text;
  const voice = useVoice(
    (base, heard) => setText(base && heard ? `${base.replace(/\s+$/, '')} ${heard.trim()}` : base || heard.trim()),
    () => textRef.current,
    setError,
  );
  useEffect(() => {
    if (autofocus) area.current?.focus();
  }, [autofocus]);

  // Slash completion: open while the prompt is `/word` with matching commands, unless Escape
  // closed it for this very text.
  const listId = useId();
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const query = slashQuery(text);
  const matches = query === null || text === dismissed ? [] : matchCommands(commands, query);
  const menuOpen = matches.length > 0;
  const selected = Math.min(active, matches.length - 1);
  const optionId = (i: number) => `${listId}-cmd-${i}`;
  useEffect(() => {
    if (menuOpen) document.getElementById(optionId(selected))?.scrollIntoView?.({ block: 'nearest' });
  });
  const complete = (c: SlashCommand) => {
    setText(completeCommand(c));
    setActive(0);
    area.current?.focus();
  };

  const send = () => {
    if (!text.trim() && images.length === 0) return;
    onSend(text, images, mode);
    setText('');
    setImages([]);
  };
  const addFiles = async (files: FileList | File[]) => {
    for (const f of Array.from(files)) {
      if (!f.type.startsWith('image/')) continue;
      if (f.size > MAX_IMAGE_BYTES) {
        setError(`${f.name} is larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
        continue;
      }
      const data = await new Promise<string>((resolve) => {
        const r = new FileReader();
        r.onload = () => resolve(String(r.result).split(',')[1] ?? '');
        r.readAsDataURL(f);
      });
      setImages((prev) => [...prev, { kind: 'image', mimeType: f.type, name: f.name, data }]);
    }
  };

  return (
    <div class="composer">
      {images.length ? (
        <div class="attachments">
          {images.map((a, i) => (
            <span class="chip" key={i}>
              <img alt={a.name} src={`data:${a.mimeType};base64,${a.data}`} />
              <button type="button" aria-label={`Remove ${a.name}`} onClick={() => setImages(images.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
        </div>
      ) : null}
      {error ? <div class="error-text">{error}</div> : null}
      <div class="composer-input">
        {menuOpen ? (
          <ul class="slash-menu" role="listbox" id={listId} aria-label="Slash commands" data-testid="slash-menu">
            {matches.map((c, i) => (
              <li
                key={c.name}
                id={optionId(i)}
                role="option"
                aria-selected={i === selected}
                class={i === selected ? 'on' : ''}
                data-testid="slash-option"
                // mousedown, not click: the text keeps the focus.
                onMouseDown={(e) => {
                  e.preventDefault();
                  complete(c);
                }}
                onMouseMove={() => i !== selected && setActive(i)}
              >
                <span class="slash-name">/{c.name}</span>
                {c.description ? <span class="slash-desc">{c.description}</span> : null}
              </li>
            ))}
          </ul>
        ) : null}
        <textarea
          ref={area}
          data-testid="composer"
          rows={3}
          aria-label="Message"
          aria-autocomplete={commands.length ? 'list' : undefined}
          aria-controls={menuOpen ? listId : undefined}
          aria-activedescendant={menuOpen ? optionId(selected) : undefined}
          placeholder={`Message (Enter sends, Shift+Enter new line, Escape interrupts${commands.length ? ', / for commands' : ''})`}
          value={text}
          onInput={(e) => {
            const value = (e.target as HTMLTextAreaElement).value;
            setText(value);
            setActive(0);
            if (value !== dismissed) setDismissed(null);
          }}
          onPaste={(e) => {
            const files = e.clipboardData?.files;
            if (files && files.length) void addFiles(files);
          }}
          onKeyDown={(e) => {
            if (menuOpen && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing) {
              if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                e.preventDefault();
                const by = e.key === 'ArrowDown' ? 1 : -1;
                setActive((selected + by + matches.length) % matches.length);
                return;
              }
              if ((e.key === 'Enter' && !e.shiftKey) || (e.key === 'Tab' && !e.shiftKey)) {
                e.preventDefault();
                complete(matches[selected]);
                return;
              }
              if (e.key === 'Escape') {
                // Closes the list only: no interrupt, and not the drawer or help either.
                e.preventDefault();
                e.stopPropagation();
                setDismissed(text);
                return;
              }
            }
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              send();
            } else if (e.key === 'Escape') {
              e.preventDefault();
              onInterrupt();
            }
          }}
        />
      </div>
      {toolbar}
      <div class="composer-bar">
        <label>
          While running:{' '}
          <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as WhileRunning)}>
            <option value="queue">queue</option>
            <option value="interrupt">interrupt</option>
            <option value="steer">steer</option>
          </select>
        </label>
        <label class="file">
          Image
          <input
            type="file"
            accept="image/*"
            multiple
            data-testid="attach"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              if (input.files) void addFiles(input.files);
              input.value = '';
            }}
          />
        </label>
        <span class="spacer" />
        {voice ? (
          <button
            type="button"
            class={`voice ${voice.listening ? 'on' : ''}`}
            aria-pressed={voice.listening}
            aria-label={voice.listening ? 'Stop voice input' : 'Voice input'}
            title={voice.listening ? 'Stop voice input' : 'Voice input'}
            onClick={voice.toggle}
            data-testid="voice"
          >
            {voice.listening ? 'Listening…' : 'Voice'}
          </button>
        ) : null}
        {running ? (
          <button type="button" onClick={onInterrupt} data-testid="interrupt">
            Interrupt
          </button>
        ) : null}
        <button type="button" class="primary" onClick={send} data-testid="send">
          Send
        </button>
      </div>
    </div>
  );
}
