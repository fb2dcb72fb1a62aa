#!/usr/bin/env node
// Lists the exports of src/ that nothing uses: not src, test or bench (any identifier, property access or
// destructuring that resolves to them), not the scripts and bin that load dist/src, not even their own module.
// `npm run dead-exports`; exits 1 when it finds one. It type-checks the tree (about 20 s of CPU), so it is not
// part of `npm run lint`: run it after a refactor. `--local` also lists the exports used only inside their own
// module (candidates to un-export; the report's second list, informative: it does not fail).
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(new URL('..', import.meta.url).pathname);
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
const program = ts.createProgram(config.fileNames, { ...config.options, noEmit: true });
const checker = program.getTypeChecker();
const inSrc = (f) => f.startsWith(join(root, 'src') + '/');

const realSymbol = (s) => (s && s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
const used = new Set(); // used by another module
const usedLocally = new Set(); // used inside its own module (not counting its declaration)
function mark(sym, fromFile, node) {
  sym = realSymbol(sym);
  if (!sym) return;
  for (const d of sym.declarations ?? []) {
    if (d.getSourceFile().fileName !== fromFile) used.add(sym);
    else if (!node || (d.name !== node && d !== node.parent)) usedLocally.add(sym);
  }
}
const local = process.argv.includes('--local');

// 1. uses from TypeScript: every identifier, and the property names of destructured `await import(...)`
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
  const visit = (node) => {
    if (ts.isIdentifier(node)) mark(checker.getSymbolAtLocation(node), sf.fileName, node);
    // `import('./x.js')` not destructured (cli/main.ts's lazy commands): every export of x counts as used
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      const destructured =
        ts.isAwaitExpression(node.parent) && ts.isVariableDeclaration(node.parent.parent) && ts.isObjectBindingPattern(node.parent.parent.name);
      const target = checker.getSymbolAtLocation(node.arguments[0]);
      if (!destructured && target) for (const e of checker.getExportsOfModule(target)) mark(e, sf.fileName);
    }
    // `mod.default` where mod is one of several modules (cli/main.ts's lazy commands): each module's export
    if (ts.isPropertyAccessExpression(node)) {
      const type = checker.getTypeAtLocation(node.expression);
      if (type.isUnion()) for (const t of type.types) mark(t.getProperty(node.name.text), sf.fileName);
    }
    if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const name = node.propertyName ?? node.name;
      if (ts.isIdentifier(name)) {
        const prop = checker.getTypeAtLocation(node.parent).getProperty(name.text);
        mark(prop, sf.fileName);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// 2. uses from the JavaScript that loads the build (scripts/*.mjs, bin/*.mjs): names destructured from dist/src
const byModule = new Map();
for (const dir of ['scripts', 'bin']) {
  for (const name of readdirSync(join(root, dir))) {
    if (!name.endsWith('.mjs')) continue;
    const text = readFileSync(join(root, dir, name), 'utf8');
    for (const m of text.matchAll(/(?:const\s*\{([^}]*)\}\s*=\s*await import\(|import\s*\{([^}]*)\}\s*from)[^;]*?dist\/src\/([\w/.-]+)\.js/g)) {
      const names = (m[1] ?? m[2])
        .split(',')
        .map((s) => s.trim().split(/\s*(?::|\sas\s)\s*/)[0])
        .filter(Boolean);
      const mod = join(root, 'src', `${m[3]}.ts`);
      byModule.set(mod, [...(byModule.get(mod) ?? []), ...names]);
    }
  }
}

// 3. the exports of src/ and whether anything outside their module uses them
const dead = [];
const localOnly = [];
for (const sf of program.getSourceFiles()) {
  if (!inSrc(sf.fileName)) continue;
  const moduleSymbol = checker.getSymbolAtLocation(sf);
  if (!moduleSymbol) continue;
  const external = new Set(byModule.get(sf.fileName) ?? []);
  for (const exp of checker.getExportsOfModule(moduleSymbol)) {
    const sym = realSymbol(exp);
    if (used.has(sym) || external.has(exp.name)) continue;
    // re-exported elsewhere and used through the re-export: the re-export's alias resolves to the same symbol
    const decl = sym.declarations?.[0];
    if (!decl || decl.getSourceFile().fileName !== sf.fileName) continue; // a re-export: judged in its own module
    const { line } = sf.getLineAndCharacterOfPosition(decl.getStart());
    (usedLocally.has(sym) ? localOnly : dead).push(`${relative(root, sf.fileName)}:${line + 1} ${exp.name}`);
  }
}
dead.sort();
for (const d of dead) process.stdout.write(`${d}\n`);
if (local) {
  process.stdout.write(`\nused only inside their own module (${localOnly.length}):\n`);
  for (const d of localOnly.sort()) process.stdout.write(`${d}\n`);
}
process.stderr.write(
  `dead-exports: ${dead.length} export(s) of src/ used nowhere; ${localOnly.length} used only in their own module${local ? '' : ' (--local lists them)'}\n`,
);
process.exit(dead.length ? 1 : 0);
