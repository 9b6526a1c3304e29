import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadAgents, MAX_CACHED_AGENTS, saveAgents } from '../src/core/agent_cache';
import {
  DEVICE_TOKEN_KEY,
  exchangePairing,
  parseFragment,
  pickCredential,
  TAB_TOKEN_KEY,
  type KeyValueStore,
} from '../src/core/auth';
import { inboxEntries, MAX_SEEN_AGENTS, meetAgents, SeenCursors } from '../src/core/inbox';
import type { AgentSnapshot } from '@agentstream/client';
import { isNewer, MAX_PUSH_BYTES, noticeTitle, parsePush } from '../src/sw/push';
import { drawIcon, encodePng, ICONS, renderIcon } from '../pwa/icons';

class MemoryStore implements KeyValueStore {
  readonly map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

const agent = (id: string, status: AgentSnapshot['status'], cursor: string, createdAt = 0): AgentSnapshot =>
  ({ id, status, cursor, createdAt, title: id, provider: 'scripted', cwd: '/', queue: [], permissions: [] }) as any;

describe('the inbox', () => {
  it('lists permission first, then failed and finished agents not seen since their cursor moved', () => {
    const seen = new SeenCursors(new MemoryStore());
    meetAgents(seen, [agent('a', 'idle', '1:5'), agent('b', 'idle', '1:3'), agent('c', 'running', '1:9')]);
    // Met while idle: not news. Met while running: news once it stops.
    expect(inboxEntries([agent('a', 'idle', '1:5'), agent('b', 'idle', '1:3'), agent('c', 'running', '1:9')], seen)).toEqual([]);
    const now = [agent('a', 'idle', '1:8', 1), agent('b', 'permission', '1:4', 2), agent('c', 'error', '1:12', 3)];
    expect(inboxEntries(now, seen).map((e) => `${e.agent.id}:${e.kind}`)).toEqual(['b:permission', 'c:failed', 'a:finished']);
    seen.mark('a', '1:8');
    expect(inboxEntries(now, seen).map((e) => e.agent.id)).toEqual(['b', 'c']);
  });

  it('keeps seen cursors across page loads, at most MAX_SEEN_AGENTS, dropping the oldest', () => {
    const store = new MemoryStore();
    const seen = new SeenCursors(store);
    for (let i = 0; i < MAX_SEEN_AGENTS + 5; i++) seen.mark(`s${i}`, '1:1');
    const again = new SeenCursors(store);
    expect(again.has('s0')).toBe(false);
    expect(again.has('s5')).toBe(true);
    expect(again.get(`s${MAX_SEEN_AGENTS + 4}`)).toBe('1:1');
    expect(Object.keys(JSON.parse(store.getItem('agentstream.seen')!))).toHaveLength(MAX_SEEN_AGENTS);
  });
});

describe('the last known agents', () => {
  it('keeps the newest MAX_CACHED_AGENTS with when they were confirmed, without live state', () => {
    const store = new MemoryStore();
    const many = Array.from({ length: MAX_CACHED_AGENTS + 10 }, (_, i) => ({
      ...agent(`s${i}`, 'permission', '1:1', i),
      permissions: [{ requestId: 'r', callId: null, toolName: 'Bash' }],
      capabilities: { commands: [{ name: 'help', description: 'a long description' }] },
    }));
    saveAgents(store, many, 1234);
    const back = loadAgents(store)!;
    expect(back.confirmedMs).toBe(1234);
    expect(back.agents).toHaveLength(MAX_CACHED_AGENTS);
    expect(back.agents[0].id).toBe(`s${MAX_CACHED_AGENTS + 9}`);
    expect(back.agents.every((a) => a.permissions.length === 0)).toBe(true);
    expect(back.agents.every((a) => a.capabilities === null)).toBe(true); // not kept: they can be long
  });

  it('reads nothing from a missing or damaged entry', () => {
    const store = new MemoryStore();
    expect(loadAgents(store)).toBeNull();
    store.setItem('agentstream.agents', '{not json');
    expect(loadAgents(store)).toBeNull();
    store.setItem('agentstream.agents', JSON.stringify({ confirmedMs: 'x', agents: [] }));
    expect(loadAgents(store)).toBeNull();
  });
});

describe('credentials and fragments', () => {
  it('prefers ?token= (kept for the tab), then the tab token, then the device token', () => {
    const tab = new MemoryStore();
    const device = new MemoryStore();
    expect(pickCredential('', tab, device)).toEqual({ kind: 'none', token: '' });
    device.setItem(DEVICE_TOKEN_KEY, 'asd_x');
    expect(pickCredential('', tab, device)).toEqual({ kind: 'device', token: 'asd_x' });
    expect(pickCredential('?token=owner', tab, device)).toEqual({ kind: 'tab', token: 'owner' });
    expect(tab.getItem(TAB_TOKEN_KEY)).toBe('owner');
    expect(pickCredential('', tab, device)).toEqual({ kind: 'tab', token: 'owner' });
  });

  it('refuses a malformed pairing code without asking the daemon', async () => {
    let asked = false;
    const fetchFn = (async () => {
      asked = true;
      throw new Error('no request expected');
    }) as unknown as typeof fetch;
    for (const code of ['', 'asp_short', `asd_${'A'.repeat(32)}`, `asp_${'A'.repeat(31)}!`]) {
      const r = await exchangePairing('http://127.0.0.1:1', code, fetchFn);
      expect(r).toEqual({ ok: false, message: expect.stringContaining('malformed') });
    }
    expect(asked).toBe(false);
  });

  it('reads #pair= and #agent=&cursor=, refusing malformed ids and cursors', () => {
    expect(parseFragment('#pair=asp_abc')).toEqual({ pair: 'asp_abc' });
    expect(parseFragment('#agent=ses_1&cursor=1:42')).toEqual({ agent: 'ses_1', cursor: '1:42' });
    expect(parseFragment('#agent=ses_1&cursor=1:4x')).toEqual({ agent: 'ses_1' });
    expect(parseFragment('#agent=<script>&cursor=1:2')).toEqual({});
    expect(parseFragment('')).toEqual({});
  });
});

describe('push messages in the service worker', () => {
  const payload = { agent: 'ses_1', cursor: '1:42', kind: 'permission', title: 'Parser', body: 'wants Bash', url: '/#x' };

  it('reads the daemon payload and links to the agent itself, never to a URL the payload names', () => {
    const n = parsePush(JSON.stringify({ ...payload, url: 'https://evil.example/' }))!;
    expect(n).toEqual({ ...payload, url: '/#agent=ses_1&cursor=1%3A42' });
    expect(noticeTitle(n)).toBe('Parser needs your permission');
  });

  it('refuses what is not a notice', () => {
    for (const bad of [
      '',
      'not json',
      '[]',
      JSON.stringify({ ...payload, kind: 'other' }),
      JSON.stringify({ ...payload, cursor: '42' }),
      JSON.stringify({ ...payload, agent: 'a b' }),
      JSON.stringify({ ...payload, body: 'x'.repeat(MAX_PUSH_BYTES) }),
    ])
      expect(parsePush(bad)).toBeNull();
  });

  it('shows a cursor only when it is after the last one shown for the agent', () => {
    expect(isNewer(null, '1:42')).toBe(true);
    expect(isNewer('1:41', '1:42')).toBe(true);
    expect(isNewer('1:42', '1:42')).toBe(false);
    expect(isNewer('1:100', '1:42')).toBe(false);
    expect(isNewer('1:100', '2:3')).toBe(true); // a later epoch (a rewind)
    expect(isNewer('1:9', '1:10')).toBe(true); // numerically, not as text
  });
});

describe('icons', () => {
  // The pixels of a PNG written by encodePng (filter 0 on every row).
  const decode = (png: Buffer) => {
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    const idatLength = png.readUInt32BE(33);
    const raw = inflateSync(png.subarray(41, 41 + idatLength));
    return { width, height, raw };
  };

  it('writes each icon at its size, the rounded one with transparent corners, the maskable one full-bleed', () => {
    for (const spec of ICONS) {
      const { width, height, raw } = decode(renderIcon(spec));
      expect([width, height]).toEqual([spec.size, spec.size]);
      expect(raw.length).toBe(spec.size * (spec.size * 4 + 1));
      const cornerAlpha = raw[1 + 3];
      expect(cornerAlpha).toBe(spec.shape === 'rounded' ? 0 : 255);
    }
  });

  it('round-trips pixels through encodePng', () => {
    const px = drawIcon(16, 'full-bleed');
    const { raw } = decode(encodePng(16, 16, px));
    for (let y = 0; y < 16; y++)
      expect([...raw.subarray(y * 65 + 1, y * 65 + 65)]).toEqual([...px.subarray(y * 64, y * 64 + 64)]);
    expect(() => encodePng(2, 2, new Uint8Array(3))).toThrow();
  });
});
