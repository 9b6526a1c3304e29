// onNextFrame: every UI update of a frame runs in one animation-frame callback.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onNextFrame } from '../src/ui/useEngine';

let frames: (() => void)[] = [];

beforeEach(() => {
  frames = [];
  (globalThis as any).requestAnimationFrame = (fn: () => void) => frames.push(fn);
});

afterEach(() => {
  delete (globalThis as any).requestAnimationFrame;
});

function runFrame(): void {
  const f = frames.shift();
  if (f) f();
}

describe('onNextFrame', () => {
  it('runs every callback scheduled before a frame in one frame callback, in order', () => {
    const ran: string[] = [];
    onNextFrame(() => ran.push('engine'));
    onNextFrame(() => ran.push('list'));
    expect(frames).toHaveLength(1);
    expect(ran).toEqual([]);
    runFrame();
    expect(ran).toEqual(['engine', 'list']);
    expect(frames).toHaveLength(0);
  });

  it('cancels, and defers what a callback schedules to the next frame', () => {
    const ran: string[] = [];
    const cancel = onNextFrame(() => ran.push('canceled'));
    onNextFrame(() => {
      ran.push('first');
      onNextFrame(() => ran.push('second'));
    });
    cancel();
    runFrame();
    expect(ran).toEqual(['first']);
    expect(frames).toHaveLength(1);
    runFrame();
    expect(ran).toEqual(['first', 'second']);
  });
});
