/**
 * The sample-inbox e2e against the remaining sandbox dialects (see run-samples.test.ts and
 * test/helpers/samples-suite.ts).
 */
import { SAMPLE_MATRIX, sampleInboxSuite } from '../helpers/samples-suite.js';

const FIRST = ['default', 'pagingBase=0', 'cnpjFormat=masked', 'ownersCodeerpMatches=codeERP'];
for (const { name, dialect } of SAMPLE_MATRIX.filter((d) => !FIRST.includes(d.name))) {
  sampleInboxSuite(name, dialect, { rerun: name.startsWith('alt') || dialect.duplicates === 'refuse' });
}
