/**
 * The sandbox's state file: loaded at start (refusing a file that is not a sandbox state), saved
 * atomically (temp file in the same folder, then rename) after changes (debounced) and on close.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { ConfigError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isSandboxState, type SandboxState } from './state.js';

const SAVE_DEBOUNCE_MS = 100;

/** The state in the file, or undefined when there is no file (ConfigError when it is not a state file). */
export function loadStateFile(stateFile: string | undefined): SandboxState | undefined {
  if (!stateFile || !existsSync(stateFile)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(stateFile, 'utf8'));
  } catch (err) {
    throw new ConfigError(`sandbox: state file ${stateFile} is not valid JSON`, { cause: err });
  }
  if (!isSandboxState(parsed)) throw new ConfigError(`sandbox: ${stateFile} is not a sandbox state file (refusing to overwrite it)`);
  return parsed;
}

export interface StateSaver {
  /** writes the file now (atomic); rejects when it cannot */
  write(): Promise<void>;
  /** marks the state changed: saved SAVE_DEBOUNCE_MS later */
  changed(): void;
  /** cancels a pending debounced save and saves now (errors are logged) */
  flush(): Promise<void>;
}

export function createStateSaver(stateFile: string | undefined, state: () => SandboxState, log: Logger): StateSaver {
  let saveTimer: NodeJS.Timeout | null = null;
  let saving: Promise<void> = Promise.resolve();
  let saveCount = 0;
  /** temp file in the same folder, then rename: atomic within one filesystem */
  const write = async (): Promise<void> => {
    if (!stateFile) return;
    const tmp = `${stateFile}.${process.pid}.${++saveCount}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(state()));
      await rename(tmp, stateFile);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  };
  const saveNow = (): Promise<void> => {
    if (!stateFile) return Promise.resolve();
    saving = saving.then(() =>
      write().catch((err: unknown) => {
        log.error({ err, file: stateFile }, 'sandbox state not saved');
      }),
    );
    return saving;
  };
  return {
    write,
    changed() {
      if (!stateFile || saveTimer) return;
      saveTimer = setTimeout(() => {
        saveTimer = null;
        void saveNow();
      }, SAVE_DEBOUNCE_MS);
    },
    flush() {
      if (saveTimer) {
        clearTimeout(saveTimer);
        saveTimer = null;
      }
      return saveNow();
    },
  };
}
