/**
 * The user's main job end to end, against the sandbox in its default dialect and the first alternative
 * dialects (the others: run-samples-dialects.test.ts, a second file so the two run in parallel).
 * See test/helpers/samples-suite.ts.
 */
import { SAMPLE_MATRIX, sampleInboxSuite } from '../helpers/samples-suite.js';

const FIRST = ['default', 'pagingBase=0', 'cnpjFormat=masked', 'ownersCodeerpMatches=codeERP'];
for (const { name, dialect } of SAMPLE_MATRIX.filter((d) => FIRST.includes(d.name))) sampleInboxSuite(name, dialect, { rerun: name === 'default' });
