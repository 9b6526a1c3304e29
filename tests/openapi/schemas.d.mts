// Types of schemas.mjs, for the web page's end-to-end tests (web/e2e/ws_frames.ts).
export function strict(schema: unknown): void;
export function errorsText(errors: unknown): string;
export const WS_ENVELOPE: string[];
export type Side = 'client' | 'server';
export interface WsValidators {
  check(side: Side, text: string): string | null;
  types: Record<Side, string[]>;
  defs: Record<Side, Record<string, string[]>>;
}
export function wsValidators(
  ajv: {
    addSchema(schema: object, key?: string): unknown;
    compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
  },
  openapi: object,
  wsSchema: object,
): WsValidators;
