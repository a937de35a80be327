// What the dashboard's browser tests and bench/dashboard share: Debian's
// headless Chromium driven over the DevTools protocol (playwright-core, no
// browser download), a real gdrbench-server on loopback, PNG screenshots
// decoded and checked pixel by pixel (node:zlib inflates; the PNG filters are
// the five of the PNG specification, W3C REC-PNG section 9), and a check list
// that prints one line per check and fails at the end.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

export const CHROMIUM = '/usr/bin/chromium';
// The flags that work on this machine (no sandbox as root, no GPU, nothing
// fetched from the network by the browser itself).
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

// One browser for every check, with a new empty profile.
export async function launch(work, viewport) {
  const profile = fs.mkdtempSync(path.join(work || os.tmpdir(), 'chromium-profile-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
    viewport: viewport || { width: 1366, height: 900 }, deviceScaleFactor: 1, acceptDownloads: true,
  });
  return ctx;
}

export async function waitForFile(file, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim()) return fs.readFileSync(file, 'utf8').trim();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(file + ' did not appear within ' + ms + ' ms');
}

// gdrbench-server on loopback ports picked by the kernel.
export async function startServer({ bin, work, db, tokens, extra = [], name = 'server' }) {
  const grpcFile = path.join(work, name + '.grpc'), httpFile = path.join(work, name + '.http');
  for (const f of [grpcFile, httpFile]) fs.rmSync(f, { force: true });
  const args = ['--insecure', '--db', db, '--grpc-listen', '127.0.0.1:0', '--http-listen', '127.0.0.1:0',
    '--grpc-port-file', grpcFile, '--http-port-file', httpFile, '--log-level', 'warn', ...extra];
  if (tokens) args.push('--tokens', tokens);
  const log = fs.openSync(path.join(work, name + '.log'), 'w');
  const proc = spawn(path.join(bin, 'gdrbench-server'), args, { stdio: ['ignore', log, log] });
  let exited = null;
  proc.on('exit', (code) => { exited = code; });
  try {
    const http = await waitForFile(httpFile, 20000);
    const grpc = await waitForFile(grpcFile, 5000);
    return {
      proc, http: 'http://127.0.0.1:' + http, grpc: '127.0.0.1:' + grpc, log: path.join(work, name + '.log'),
      stop: () => new Promise((r) => { if (exited !== null) return r(); proc.on('exit', r); proc.kill('SIGTERM'); }),
    };
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error('gdrbench-server did not start: ' + fs.readFileSync(path.join(work, name + '.log'), 'utf8').slice(-2000));
  }
}

export function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, Object.assign({ stdio: ['ignore', 'pipe', 'pipe'] }, opts || {}));
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(cmd + ' ' + args.join(' ') + ' exited ' + code + ': ' + err.slice(-2000)))));
  });
}

// --- PNG (RGB or RGBA, 8 bits, not interlaced: what Chromium writes)
export function decodePng(buf) {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8, width = 0, height = 0, ctype = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), kind = buf.toString('ascii', pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (kind === 'IHDR') { width = body.readUInt32BE(0); height = body.readUInt32BE(4); ctype = body[9]; if (body[8] !== 8 || body[12] !== 0) throw new Error('unsupported PNG'); }
    if (kind === 'IDAT') idat.push(body);
    pos += 12 + len;
  }
  const bpp = { 2: 3, 6: 4 }[ctype];
  if (!bpp) throw new Error('PNG colour type ' + ctype + ' unsupported');
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const px = Buffer.alloc(width * height * 3);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let add = 0;
      if (f === 1) add = a;
      else if (f === 2) add = b;
      else if (f === 3) add = (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      line[i] = (line[i] + add) & 255;
    }
    for (let x = 0; x < width; x++) line.copy(px, (y * width + x) * 3, x * bpp, x * bpp + 3);
    prev = line;
  }
  return { width, height, rgb: (x, y) => { const o = (y * width + x) * 3; return [px[o], px[o + 1], px[o + 2]]; } };
}

// Pixels of `png` inside `box` ({x, y, width, height} in px) that `pred` accepts.
export function countPixels(png, box, pred) {
  const b = box || { x: 0, y: 0, width: png.width, height: png.height };
  let n = 0;
  for (let y = Math.max(0, Math.floor(b.y)); y < Math.min(png.height, b.y + b.height); y++) {
    for (let x = Math.max(0, Math.floor(b.x)); x < Math.min(png.width, b.x + b.width); x++) if (pred(png.rgb(x, y))) n++;
  }
  return n;
}
export const isGreen = ([r, g, b]) => g > 100 && g > r + 40 && g > b + 30;
// A pass that its link counters flagged (matrix_data.js CSS.flagged, #00899e).
export const isTeal = ([r, g, b]) => r < 60 && g > 100 && b > 120 && Math.abs(g - b) < 40;
export const isPassColour = (rgb) => isGreen(rgb) || isTeal(rgb);
export const isAmber = ([r, g, b]) => r > 200 && g > 110 && g < 210 && b < 90;
export const isRed = ([r, g, b]) => r > 150 && r > g + 70 && r > b + 70;
export const notWhite = ([r, g, b]) => r < 245 || g < 245 || b < 245;

// Writes the page's screenshot to DIR/NAME.png and returns it decoded.
export async function shot(page, dir, name, opts) {
  const file = path.join(dir, name + '.png');
  const buf = await page.screenshot(Object.assign({ path: file }, opts || {}));
  return { file, png: decodePng(buf) };
}

export class Checks {
  constructor() { this.failed = 0; this.passed = 0; }
  ok(cond, what, detail) {
    if (cond) { this.passed++; console.log('  ok   ' + what); }
    else { this.failed++; console.log('  FAIL ' + what + (detail !== undefined ? ': ' + (typeof detail === 'string' ? detail : JSON.stringify(detail)) : '')); }
    return !!cond;
  }
  eq(a, b, what) { return this.ok(a === b, what, 'got ' + JSON.stringify(a) + ', expected ' + JSON.stringify(b)); }
  done() {
    console.log((this.failed ? 'FAILED' : 'PASS') + ': ' + this.passed + ' checks passed, ' + this.failed + ' failed');
    return this.failed ? 1 : 0;
  }
}
