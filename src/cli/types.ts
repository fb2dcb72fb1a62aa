export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}
export interface CommandModule {
  /** runs the command with its own arguments; resolves to the process exit code */
  default: (args: string[], io: CliIo) => Promise<number>;
}
