#!/usr/bin/env node
// Lists the functions of src/ longer than a limit (default 100 lines), longest first: a function declaration,
// method, arrow function or function expression, counted from its first line to its last (comments inside
// included). `node scripts/function-lengths.mjs [limit] [path-substring...]`. Informative: it never fails.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(new URL('..', import.meta.url).pathname);
const args = process.argv.slice(2);
const limit = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 100;
const filters = args;

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && ts.isStringLiteral(node.name)) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

const found = [];
for (const file of walk(join(root, 'src'))) {
  const rel = relative(root, file);
  if (filters.length > 0 && !filters.some((f) => rel.includes(f))) continue;
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.end).line;
      const lines = end - start + 1;
      if (lines > limit) found.push({ lines, name: nameOf(node), where: `${rel}:${start + 1}` });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.lines - a.lines);
for (const f of found) console.log(`${String(f.lines).padStart(4)}  ${f.name}  ${f.where}`);
console.log(`${found.length} function(s) over ${limit} lines`);
