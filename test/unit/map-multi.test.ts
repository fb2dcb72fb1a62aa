/**
 * Several mappings on one file (src/map/multi.ts): each row to every mapping in turn, in line order; a row none
 * selects told as not selected; a line that cannot be parsed is one reject; a mapping's failure ends the whole
 * without hanging; undeclared sharing refused; `check`'s pattern overlap. Declared skips (src/map/skips.ts).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseMapping } from '../../src/map/load.js';
import { channelSharing, composeMappings, globExamples } from '../../src/map/multi.js';
import { UnsentTally } from '../../src/map/unsent.js';
import type { MapContext, MapOutput, MapStats } from '../../src/map/types.js';
import type { ParsedItem } from '../../src/parse/types.js';
import { MappingError } from '../../src/shared/errors.js';

const source = { format: 'delimited', delimiter: ';' };
const categories = (extra: Record<string, unknown> = {}) =>
  parseMapping(
    {
      name: 'cats',
      match: { files: 'GRU_*.csv' },
      sharesFilesWith: ['fams'],
      source,
      target: 'Category',
      filter: { col: 'grau', equals: '1' },
      fields: { codeERP: 'cod', name: 'nome' },
      ...extra,
    },
    'cats.yaml',
  );
const families = (extra: Record<string, unknown> = {}) =>
  parseMapping(
    {
      name: 'fams',
      match: { files: 'GRU_*.csv' },
      source,
      target: 'Family',
      filter: { col: 'grau', equals: '2' },
      fields: { codeERP: 'cod', name: 'nome', categoryID: { ref: 'Category', from: 'pai' } },
      ...extra,
    },
    'fams.yaml',
  );

function row(line: number, cod: string, nome: string, grau: string, pai = ''): ParsedItem {
  const cells = [cod, nome, grau, pai];
  return { kind: 'row', row: { line, cells, fields: { cod, nome, grau, pai } } };
}

async function* items(list: ParsedItem[]): AsyncGenerator<ParsedItem> {
  for (const i of list) yield i;
}

async function collect(outs: AsyncIterable<MapOutput>): Promise<MapOutput[]> {
  const all: MapOutput[] = [];
  for await (const o of outs) all.push(o);
  return all;
}

const NO_REFS = { find: () => undefined, has: () => false };

describe('several mappings on one file', () => {
  test('every row to each mapping, outputs in line order; rows none selects are not selected', async () => {
    const m = composeMappings([categories(), families()], 'GRU_1.csv');
    assert.equal(m.target, 'Category', 'the lowest tier');
    const unsent = new UnsentTally();
    const stats: MapStats = { rows: 0, skipped: 0, records: 0, rejects: 0 };
    const ctx: MapContext = { file: 'GRU_1.csv', refs: NO_REFS, now: new Date(), unsent, stats };
    const list = [row(2, 'A', 'Alimentos', '1'), row(3, 'A1', 'Grãos', '2', 'A'), row(4, 'A11', 'Arroz', '3', 'A1'), row(5, 'B', 'Bebidas', '1')];
    list.push({ kind: 'error', line: 6, issue: { code: 'ragged_row', message: 'expected 4 columns, found 2' } } as ParsedItem);
    list.push(row(7, 'X', 'Velho', '9'), row(8, 'Y', 'Velho', '9'));
    const outs = await collect(m.mapItems(items(list), ctx));
    assert.deepEqual(
      outs.map((o) =>
        o.ok ? `${o.record.source.line} ${o.record.mapping} ${o.record.target} ${o.record.key}` : `${o.reject.source.line} reject ${o.reject.mapping}`,
      ),
      ['2 cats Category A', '3 fams Family A1', '5 cats Category B', '6 reject cats'],
    );
    assert.deepEqual(unsent.toJSON(), {
      groups: [
        {
          kind: 'not-selected',
          count: 3,
          ranges: [
            [4, 4],
            [7, 8],
          ],
        },
      ],
    });
    assert.deepEqual(stats, { rows: 7, skipped: 3, records: 3, rejects: 1, excluded: 0 });
  });

  test('not declared, or read differently: the file is refused naming the mappings and their patterns', async () => {
    const undeclared = composeMappings([categories({ sharesFilesWith: undefined }), families()], 'GRU_1.csv');
    await assert.rejects(
      collect(undeclared.mapItems(items([row(2, 'A', 'a', '1')]), { file: 'GRU_1.csv', refs: NO_REFS, now: new Date() })),
      /GRU_1\.csv: taken by 2 mappings: cats \(GRU_\*\.csv\); fams \(GRU_\*\.csv\)\. .*sharesFilesWith: \[fams\] in mapping cats/,
    );
    const differently = composeMappings([categories(), families({ source: { format: 'delimited', delimiter: ',' } })], 'GRU_1.csv');
    await assert.rejects(collect(differently.mapItems(items([]), { file: 'GRU_1.csv', refs: NO_REFS, now: new Date() })), /different source options/);
  });

  test('a mapping that fails ends the whole, without waiting for the others', async () => {
    const throwing = {
      ...families(),
      // fails on its second row, while the other mapping waits for its next one
      mapItems: async function* (input: AsyncIterable<ParsedItem>): AsyncGenerator<MapOutput> {
        for await (const i of input) if (i.kind === 'row' && i.row.line === 3) throw new Error('boom');
        yield* [];
      },
    };
    const m = composeMappings([categories(), throwing], 'GRU_1.csv');
    await assert.rejects(
      collect(m.mapItems(items([row(2, 'A', 'a', '1'), row(3, 'B', 'b', '1')]), { file: 'GRU_1.csv', refs: NO_REFS, now: new Date() })),
      /boom/,
    );
  });

  test('check: patterns that take the same files, declared or not; a declaration naming no mapping', () => {
    assert.deepEqual(globExamples('PARC{EIROS,}_*.csv').sort(), ['PARCEIROS_.csv', 'PARCEIROS_0.csv', 'PARC_.csv', 'PARC_0.csv']);
    const ok = channelSharing('cadastros', [categories(), families()], []);
    assert.deepEqual(ok.problems, []);
    assert.ok(ok.notes.some((n) => /files like 'GRU_\.csv' are read by cats and fams \(declared: sharesFilesWith\)/.test(n)));
    const other = parseMapping({ name: 'others', match: { files: 'G*.csv' }, source, target: 'Category', fields: { codeERP: 'cod', name: 'nome' } }, 'o.yaml');
    const bad = channelSharing('cadastros', [categories(), families(), other], ['GRU_20241105.csv']);
    assert.equal(bad.problems.length, 2);
    assert.match(bad.problems[0]!, /^channel cadastros: a file like 'GRU_20241105\.csv' is taken by 2 mappings: cats \(GRU_\*\.csv\); others \(G\*\.csv\)/);
    const dangling = channelSharing('cadastros', [categories()], []);
    assert.match(dangling.problems[0]!, /mapping cats declares sharesFilesWith fams, which is not a mapping of this channel/);
  });
});

describe('declared skips', () => {
  test('excluded rows are told with the reason, not rejected; after the filter', async () => {
    const m = parseMapping(
      {
        name: 'stock',
        match: { files: '*.csv' },
        source,
        target: 'Category',
        filter: { col: 'grau', notEquals: '0' },
        skip: [{ when: { col: 'nome', regex: '^-' }, reason: 'negative' }],
        fields: { codeERP: 'cod', name: 'nome' },
      },
      's.yaml',
    );
    const unsent = new UnsentTally();
    const outs = await collect(
      m.mapItems(items([row(2, 'A', 'ok', '1'), row(3, 'B', '-1', '1'), row(4, 'C', '-2', '0')]), { file: 'x.csv', refs: NO_REFS, now: new Date(), unsent }),
    );
    assert.deepEqual(
      outs.map((o) => o.ok && o.record.key),
      ['A'],
    );
    assert.deepEqual(
      unsent.toJSON().groups.map((g) => [g.kind, g.reason, g.ranges]),
      [
        ['excluded', 'negative', [[3, 3]]],
        ['not-selected', undefined, [[4, 4]]],
      ],
    );
  });

  test('the model: onRejected outside StockSync and sharing with itself are mapping errors', () => {
    assert.throws(
      () =>
        parseMapping(
          {
            name: 'c',
            match: { files: '*.csv' },
            source,
            target: 'Category',
            onRejected: 'sendValid',
            sharesFilesWith: ['c'],
            fields: { codeERP: 'cod', name: 'nome' },
          },
          'c.yaml',
        ),
      (err: unknown) =>
        err instanceof MappingError && /onRejected: onRejected decides what a stock sync/.test(err.message) && /sharesFilesWith\[0\]/.test(err.message),
    );
  });
});
