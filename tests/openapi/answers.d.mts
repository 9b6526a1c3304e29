// Types of answers.mjs, for the web page's end-to-end tests (web/e2e/http_answers.ts).
export function escape(s: string): string;
export interface AnswerChecks {
  validator(pointer: string): ((data: unknown) => boolean) & { errors?: unknown };
  templateOf(method: string, target: string): string | null;
  problems(
    template: string,
    method: string,
    res: { status: number; headers: Record<string, string>; text: string },
  ): { problems: string[]; body?: unknown };
}
export function compileAnswers(
  doc: object,
  ajv: {
    addSchema(schema: object, key?: string): unknown;
    compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
    errorsText(errors: unknown, options?: object): string;
  },
): AnswerChecks;
export function loadAnswers(test: string): Promise<AnswerChecks & { doc: object; ajv: unknown }>;
