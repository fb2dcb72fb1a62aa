/**
 * The workspace of the one-big-file cluster tests (cluster-bigfile, cluster-runs, cluster-stream): one channel
 * `cadastros` whose files of categories (`codigo;nome`) go through one mapping, against a sandbox, with a
 * PostgreSQL journal in a fresh schema.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from './tmp.js';
import { categoryMapping } from './fixtures.js';
import { PG_TEST_URL } from './postgres.js';
import type { Sandbox } from './sandbox.js';

export interface CategoryCluster {
  dir: string;
  /** the config every instance is started with */
  configPath: string;
  /** where a file is dropped */
  inbox: string;
  cleanup: () => Promise<void>;
}

export async function categoryCluster(o: {
  prefix: string;
  /** the mapping's file pattern */
  files: string;
  sb: Pick<Sandbox, 'url' | 'accessKeyID'>;
  schema: string;
  leaseTtlMs: number;
  readiness: { checks: number; intervalMs: number };
  sending: Record<string, number>;
  watch?: Record<string, number>;
}): Promise<CategoryCluster> {
  const tmp = await makeTempDir(o.prefix);
  const inbox = join(tmp.dir, 'inbox', 'cadastros');
  await mkdir(inbox, { recursive: true });
  await mkdir(join(tmp.dir, 'mappings'));
  await writeFile(join(tmp.dir, 'mappings', 'cat.yaml'), categoryMapping({ channel: 'cadastros', files: o.files }));
  const configPath = join(tmp.dir, 'wmsbridge.config.json');
  await writeFile(
    configPath,
    JSON.stringify({
      journal: { kind: 'postgres', url: PG_TEST_URL, schema: o.schema, leaseTtlMs: o.leaseTtlMs },
      channels: [{ name: 'cadastros', readiness: { mode: 'stable', ...o.readiness } }],
      wms: { url: o.sb.url, accessKeyId: o.sb.accessKeyID },
      sending: o.sending,
      ...(o.watch ? { watch: o.watch } : {}),
    }),
  );
  return { dir: tmp.dir, configPath, inbox, cleanup: tmp.cleanup };
}
