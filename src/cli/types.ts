import type { CommandIo } from '../app/with-app.js';

/** stdout and stderr of a command (app/with-app.ts CommandIo: the app writes what a person reads to them) */
export type CliIo = CommandIo;
export interface CommandModule {
  /** runs the command with its own arguments; resolves to the process exit code */
  default: (args: string[], io: CliIo) => Promise<number>;
}
