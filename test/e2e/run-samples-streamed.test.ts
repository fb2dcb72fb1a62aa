/**
 * The sample inbox with every file sent while it is mapped (sending.streamFrom 0: docs/ARCHITECTURE.md,
 * "Streaming"), against the default dialect: the same deliveries, field by field, and a second run creates
 * nothing new. See test/helpers/samples-suite.ts.
 */
import { SAMPLE_MATRIX, sampleInboxSuite } from '../helpers/samples-suite.js';

for (const { name, dialect } of SAMPLE_MATRIX.filter((d) => d.name === 'default')) sampleInboxSuite(name, dialect, { rerun: true, streamed: true });
