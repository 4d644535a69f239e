// Builds dist/ from src/ (served as <context-path>/console-ui/<file>): one ES-module entry (app) plus lazily loaded
// chunks (the editor), hashed names, index.html naming them, and the
// licenses of every bundled package. Deterministic: the same sources and
// package-lock give the same bytes (CI rebuilds and compares).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const out = 'dist';
fs.rmSync(out, { recursive: true, force: true });

const result = await esbuild.build({
  entryPoints: { app: 'src/main.jsx' },
  bundle: true,
  splitting: true,
  format: 'esm',
  minify: true,
  target: ['chrome105', 'firefox110', 'safari16'],
  outdir: `${out}/assets`,
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  charset: 'utf8',
  metafile: true,
  logLevel: 'warning',
});

const outputs = result.metafile.outputs;
const rel = (p) => path.relative(out, p).split(path.sep).join('/');
const entry = Object.entries(outputs).find(([, o]) => o.entryPoint === 'src/main.jsx');
if (!entry) throw new Error('no entry output');
const [jsFile, meta] = entry;
const cssFile = meta.cssBundle;

// Licenses of the bundled packages, sorted by package name.
const pkgs = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (!m || pkgs.has(m[1])) continue;
  const dir = path.join('node_modules', m[1]);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const lic = fs.readdirSync(dir).filter((f) => /^(licen[cs]e|copying)/i.test(f)).sort();
  const text = lic.map((f) => fs.readFileSync(path.join(dir, f), 'utf8').trim()).join('\n\n');
  pkgs.set(m[1], `${m[1]} ${pj.version} (${pj.license})\n\n${text || '(no license file shipped; license field: ' + pj.license + ')'}`);
}
const names = [...pkgs.keys()].sort();
fs.writeFileSync(`${out}/assets/third-party-licenses.txt`,
  'Packages bundled into the nacosd console (see ui/package-lock.json):\n\n' +
  names.map((n) => '=== ' + pkgs.get(n)).join('\n\n') + '\n');

const html = fs.readFileSync('src/index.html', 'utf8')
  .replace('%CSS%', 'console-ui/' + path.basename(cssFile))
  .replace('%JS%', 'console-ui/' + path.basename(jsFile));
fs.writeFileSync(`${out}/index.html`, html);

for (const [f, o] of Object.entries(outputs).sort()) console.log(`${rel(f).padEnd(40)} ${o.bytes} bytes`);
