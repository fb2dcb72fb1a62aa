// Completion of mapping keys from the mapping JSON schema (`wmsbridge schema`): at the cursor, the YAML key path
// from the indentation above, then the properties the schema allows there, each with its description.
import { autocompletion } from '@codemirror/autocomplete';

function deref(schema, root) {
  let s = schema;
  for (let i = 0; i < 20 && s && s.$ref; i++) {
    const path = s.$ref.replace(/^#\//, '').split('/');
    s = path.reduce((o, k) => (o ? o[k] : undefined), root);
  }
  return s;
}

/** Every object schema reachable from `schema` through anyOf/oneOf/allOf. */
function objects(schema, root, out = []) {
  const s = deref(schema, root);
  if (!s || typeof s !== 'object') return out;
  if (s.properties) out.push(s);
  for (const k of ['anyOf', 'oneOf', 'allOf']) for (const x of s[k] || []) objects(x, root, out);
  return out;
}

function child(schemas, key, root) {
  const next = [];
  for (const s of schemas) {
    const p = s.properties?.[key];
    if (p) next.push(p);
    else if (s.additionalProperties && typeof s.additionalProperties === 'object') next.push(s.additionalProperties);
  }
  return next.flatMap((n) => {
    const d = deref(n, root);
    return d?.items ? [d, d.items] : [d];
  });
}

/** The keys above the cursor's line, from indentation ("fields:" > "sku:" > ...). */
function keyPath(doc, lineNo, indent) {
  const path = [];
  let want = indent;
  for (let n = lineNo - 1; n >= 1 && want > 0; n--) {
    const text = doc.line(n).text;
    const m = /^(\s*)(?:- )?([A-Za-z_$][\w$.-]*)\s*:/.exec(text);
    if (!m) continue;
    const ind = m[1].length;
    if (ind < want) {
      path.unshift(m[2]);
      want = ind;
    }
  }
  return path;
}

export function schemaCompletion(loadSchema) {
  let schema;
  const get = () => (schema ??= loadSchema().catch(() => undefined));
  return autocompletion({
    override: [
      async (ctx) => {
        const line = ctx.state.doc.lineAt(ctx.pos);
        const before = line.text.slice(0, ctx.pos - line.from);
        const m = /^(\s*)(- )?([A-Za-z_$][\w$-]*)?$/.exec(before);
        if (!m) return null;
        const root = await get();
        if (!root) return null;
        const indent = m[1].length + (m[2] ? 2 : 0);
        let here = [root];
        for (const k of keyPath(ctx.state.doc, line.number, indent))
          here = child(
            here.flatMap((s) => objects(s, root)),
            k,
            root,
          );
        const props = new Map();
        for (const o of here.flatMap((s) => objects(s, root)))
          for (const [k, v] of Object.entries(o.properties)) if (!props.has(k)) props.set(k, deref(v, root)?.description ?? '');
        if (!props.size) return null;
        return {
          from: ctx.pos - (m[3]?.length ?? 0),
          options: [...props].map(([label, info]) => ({ label, type: 'property', apply: `${label}: `, info: info || undefined })),
          validFor: /^[\w$-]*$/,
        };
      },
    ],
  });
}
