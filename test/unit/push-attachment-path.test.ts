/** resolveAttachmentPath: attachments come from inside the inbox only (relative, no symlink, no hard link). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp.js';
import { resolveAttachmentPath } from '../../src/push/senders.js';

test('an attachment inside the inbox resolves; .., absolute, a symlink or a hard link out of it are refused', async () => {
  const tmp = await makeTempDir('wmsbridge-attach-');
  try {
    const inbox = join(tmp.dir, 'inbox');
    await mkdir(join(inbox, 'anexos'), { recursive: true });
    await writeFile(join(tmp.dir, 'secret.txt'), 'secret');
    await writeFile(join(inbox, 'anexos', 'ok.pdf'), '%PDF');
    await symlink(join(tmp.dir, 'secret.txt'), join(inbox, 'anexos', 'sym.txt'));
    await link(join(tmp.dir, 'secret.txt'), join(inbox, 'anexos', 'hard.txt'));
    assert.equal(await resolveAttachmentPath(inbox, 'anexos/ok.pdf'), join(inbox, 'anexos', 'ok.pdf'));
    await assert.rejects(resolveAttachmentPath(inbox, '../secret.txt'), /escapes the inbox/);
    await assert.rejects(resolveAttachmentPath(inbox, join(tmp.dir, 'secret.txt')), /is absolute/);
    await assert.rejects(resolveAttachmentPath(inbox, 'anexos/sym.txt'), /outside the inbox folder \(symlink\)/);
    await assert.rejects(resolveAttachmentPath(inbox, 'anexos/hard.txt'), /is a hard link \(2 names/);
  } finally {
    await tmp.cleanup();
  }
});
