import { BridgeError, ErrorCode, type BridgeErrorOptions } from '../shared/errors.js';

/** The journal could not be opened, migrated, read or written. */
export class JournalError extends BridgeError {
  constructor(message: string, options: BridgeErrorOptions = {}) {
    super(ErrorCode.JOURNAL, message, options);
    this.name = 'JournalError';
  }
}
