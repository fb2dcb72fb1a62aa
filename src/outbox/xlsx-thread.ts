/**
 * Entry of the workbook thread (see xlsx-worker.ts): loads exceljs's writer as soon as it starts, then writes
 * each workbook it is sent with writeXlsx, answering the rows written per sheet or the error.
 */
import { parentPort } from 'node:worker_threads';
import { isBridgeError, errorMessage } from '../shared/errors.js';
import { loadWorkbookWriter, writeXlsx } from './xlsx.js';
import { modeOption } from './atomic.js';
import type { XlsxRequest, XlsxResponse } from './xlsx-worker.js';

const port = parentPort;
if (!port) throw new Error('xlsx-thread runs as a worker thread only');
// the module load is most of a small workbook's cost (exceljs and archiver: ~80 ms): done while the run sends
const loaded = loadWorkbookWriter().catch(() => undefined);

port.on('message', (msg: XlsxRequest) => {
  void (async () => {
    await loaded;
    try {
      const counts = await writeXlsx(msg.path, msg.sheets, { timeZone: msg.timeZone, ...modeOption(msg.mode) });
      port.postMessage({ id: msg.id, counts } satisfies XlsxResponse);
    } catch (err) {
      const code = isBridgeError(err) ? err.code : undefined;
      const details = isBridgeError(err) ? cloneable(err.details) : undefined;
      port.postMessage({ id: msg.id, error: errorMessage(err), ...(code ? { code } : {}), ...(details ? { details } : {}) } satisfies XlsxResponse);
    }
  })();
});

/** what crosses back of an error's details: only what structured cloning keeps as it is */
function cloneable(details: Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    return structuredClone(details);
  } catch {
    return undefined;
  }
}
