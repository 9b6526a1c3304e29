import { describe, expect, it } from 'vitest';
import { completeCommand, matchCommands, slashQuery } from '../src/ui/slash';

const commands = [
  { name: 'help', description: 'What the scripted agent understands' },
  { name: 'compact', description: 'Summarize the conversation' },
  { name: 'review', description: 'Review the changes' },
  { name: 'init', description: 'Write a help file' },
];

describe('slash completion', () => {
  it('is offered only while the prompt is a slash and one word', () => {
    expect(slashQuery('/')).toBe('');
    expect(slashQuery('/he')).toBe('he');
    expect(slashQuery('/help ')).toBeNull(); // completed: the arguments follow
    expect(slashQuery('/help\n')).toBeNull();
    expect(slashQuery('he/')).toBeNull();
    expect(slashQuery(' /he')).toBeNull();
    expect(slashQuery('')).toBeNull();
  });

  it('matches names by prefix, then names holding the text, then a word of the description', () => {
    expect(matchCommands(commands, '').map((c) => c.name)).toEqual(['help', 'compact', 'review', 'init']);
    expect(matchCommands(commands, 'he').map((c) => c.name)).toEqual(['help', 'init']); // not "the"
    expect(matchCommands(commands, 'HEL').map((c) => c.name)).toEqual(['help', 'init']);
    expect(matchCommands(commands, 'view').map((c) => c.name)).toEqual(['review']);
    expect(matchCommands(commands, 'pac').map((c) => c.name)).toEqual(['compact']);
    expect(matchCommands(commands, 'summ').map((c) => c.name)).toEqual(['compact']);
    expect(matchCommands(commands, 'zzz')).toEqual([]);
    expect(matchCommands([], '')).toEqual([]);
  });

  it('completes to the command and a space', () => {
    expect(completeCommand(commands[0])).toBe('/help ');
  });
});
