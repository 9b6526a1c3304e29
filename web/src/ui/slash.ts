// Slash command completion in the composer (Composer.tsx): while the whole prompt is one word
// starting with `/`, the agent's commands that match what follows the slash.
import type { SlashCommand } from '@agentstream/client';

// What follows the slash while the prompt is `/` and one word (no space or line yet); null
// otherwise: the list is offered only at the start of the prompt, until the command is typed.
export function slashQuery(text: string): string | null {
  const m = /^\/(\S*)$/.exec(text);
  return m ? m[1] : null;
}

// The commands matching `query` (case-insensitive): names starting with it first, then names
// holding it, then descriptions with a word starting with it; each group in the runtime's order.
export function matchCommands(commands: readonly SlashCommand[], query: string): SlashCommand[] {
  const q = query.toLowerCase();
  const groups: SlashCommand[][] = [[], [], []];
  for (const c of commands) {
    const name = c.name.toLowerCase();
    if (name.startsWith(q)) groups[0].push(c);
    else if (name.includes(q)) groups[1].push(c);
    else if (
      q &&
      c.description
        .toLowerCase()
        .split(/[^\p{L}\p{N}_-]+/u)
        .some((w) => w.startsWith(q))
    )
      groups[2].push(c);
  }
  return groups.flat();
}

// The prompt once a command is picked: the command and a space, ready for its arguments.
export function completeCommand(c: SlashCommand): string {
  return `/${c.name} `;
}
