// gdrbench heatmap: one bandwidth matrix (rows: initiator, columns: target)
// drawn on a canvas, fast at 1024 nodes (a million cells): the cells are
// coloured once into an n x n bitmap, and every frame is one drawImage of
// its visible part (no per-cell DOM, no per-cell draw calls). Hover shows a
// cell's values, the wheel and the buttons zoom, dragging pans, a click opens
// the link's page. Colour by verdict or by Gb/s; a compare mode draws the
// change between two runs. Needs matrix_data.js (window.GdrMatrix).
//
//   const view = GdrHeatmap.mount(div, matrix, {colorBy: 'verdict',
//       cellHref: (src, dst, rail) => url, onDrawn: (ms) => ...});
//   GdrHeatmap.mountDiff(div, GdrMatrix.diff(a, b), {range: 0.5});
//   GdrHeatmap.mountEmbedded()   // report.html: <div class="gdr-heatmap" data-blob="ID">
(function (global) {
  'use strict';
  const M = global.GdrMatrix;
  const LEFT = 120, TOP = 92, MAX_CELL = 56, LABEL_MIN = 9, VALUE_MIN = 44;

  // "2", or "0->1" for a cross-rail lane (initiators' rail -> targets').
  function laneName(d) {
    return d.dstRail === undefined || d.dstRail === d.rail ? String(d.rail) : d.rail + '->' + d.dstRail;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function injectStyle() {
    if (document.getElementById('gdr-heatmap-style')) return;
    const s = el('style');
    s.id = 'gdr-heatmap-style';
    s.textContent = [
      '.gdr-hm{position:relative;margin:6px 0 14px;max-width:100%}',
      '.gdr-hm canvas{display:block;cursor:crosshair;touch-action:none;max-width:100%}',
      '.gdr-hm-bar{display:flex;gap:6px;align-items:center;font:12px system-ui,sans-serif;margin:2px 0 4px;flex-wrap:wrap}',
      '.gdr-hm-bar button{font:12px system-ui,sans-serif;padding:2px 8px;border:1px solid #aab;background:#f6f7fa;border-radius:3px;cursor:pointer}',
      '.gdr-hm-bar button.on{background:#1d2330;color:#fff;border-color:#1d2330}',
      '.gdr-hm-tip{position:absolute;pointer-events:none;background:#1d2330;color:#fff;font:12px/1.45 system-ui,sans-serif;',
      'padding:6px 9px;border-radius:4px;max-width:360px;z-index:10;box-shadow:0 2px 8px rgba(0,0,0,.3);display:none;white-space:normal}',
      '.gdr-hm-tip b{font-weight:600}',
      '.gdr-hm-legend{display:flex;gap:10px;align-items:center;flex-wrap:wrap;font:12px system-ui,sans-serif;color:#445;margin-top:4px}',
      '.gdr-hm-legend i{display:inline-block;width:12px;height:12px;vertical-align:-2px;margin-right:3px;border:1px solid #889}',
      '.gdr-hm-legend .ramp{width:120px;height:10px;display:inline-block;border:1px solid #889;vertical-align:-1px}',
      '@media print{.gdr-hm-bar,.gdr-hm-tip{display:none!important}}',
    ].join('');
    document.head.appendChild(s);
  }

  class View {
    constructor(container, data, opts) {
      injectStyle();
      this.opts = opts || {};
      this.data = data;
      this.diffMode = !!data.change;
      this.mode = this.opts.colorBy || 'verdict';
      this.range = this.opts.range || 0.5;
      this.n = data.n;
      this.root = el('div', 'gdr-hm');
      this.root.setAttribute('data-rail', data.rail);
      this.bar = el('div', 'gdr-hm-bar');
      this.canvas = el('canvas');
      this.canvas.tabIndex = 0;
      this.canvas.setAttribute('role', 'img');
      this.canvas.setAttribute('aria-label', (this.diffMode ? 'change heatmap' : 'bandwidth heatmap') +
        ' rail ' + laneName(data) + ', ' + M.sizeName(data.sizeBytes) + ', ' + this.n + ' nodes');
      this.tip = el('div', 'gdr-hm-tip');
      this.legend = el('div', 'gdr-hm-legend');
      this.root.append(this.bar, this.canvas, this.tip, this.legend);
      container.appendChild(this.root);
      this.buildBar();
      this.k = 1; this.vx = 0; this.vy = 0; this.hover = null;
      this.bitmap = document.createElement('canvas');
      this.bitmap.width = this.n; this.bitmap.height = this.n;
      this.layout();
      const t0 = performance.now();
      this.recolour();
      this.draw();
      this.drawnMs = performance.now() - t0;
      this.root.setAttribute('data-drawn', 'true');
      // When the page's first heatmap was on screen (ms since navigation start; the bench reads it).
      if (global.gdrFirstDrawnAt === undefined) global.gdrFirstDrawnAt = performance.now();
      if (this.opts.onDrawn) this.opts.onDrawn(this.drawnMs, this);
      this.bind();
    }

    buildBar() {
      const b = this.bar;
      const btn = (text, title, fn) => {
        const x = el('button', '', text);
        x.type = 'button'; x.title = title; x.addEventListener('click', fn); b.appendChild(x); return x;
      };
      if (!this.diffMode) {
        b.appendChild(el('span', '', 'colour by'));
        this.bVerdict = btn('verdict', 'pass / low / fail', () => this.setMode('verdict'));
        this.bGbps = btn('Gb/s', 'bandwidth against the link rate (or the fleet\'s best)', () => this.setMode('gbps'));
        this.bVerdict.dataset.mode = 'verdict'; this.bGbps.dataset.mode = 'gbps';
      }
      btn('+', 'zoom in (wheel, double-click, +)', () => this.zoomAt(1.6));
      btn('\u2212', 'zoom out (wheel, -)', () => this.zoomAt(1 / 1.6));
      btn('fit', 'show the whole matrix (0)', () => this.reset());
      this.zoomText = el('span', 'gdr-hm-zoom');
      b.appendChild(this.zoomText);
      this.syncBar();
    }

    syncBar() {
      if (this.bVerdict) {
        this.bVerdict.classList.toggle('on', this.mode === 'verdict');
        this.bGbps.classList.toggle('on', this.mode === 'gbps');
      }
      const shown = Math.min(this.n, Math.ceil(this.side / this.cellPx() || this.n));
      this.zoomText.textContent = this.k > 1.001 ? 'zoom ' + this.k.toFixed(1) + '\u00d7, ' + shown + ' of ' + this.n + ' nodes' : this.n + ' nodes';
    }

    setMode(mode) {
      if (mode === this.mode) return;
      this.mode = mode;
      this.recolour();
      this.draw();
      this.syncBar();
    }

    layout() {
      const avail = Math.max(200, (this.opts.width || this.root.parentElement.clientWidth || 900) - LEFT - 8);
      this.side = Math.min(avail, this.opts.maxSide || 900, this.n * MAX_CELL);
      this.base = this.side / this.n;
      const dpr = global.devicePixelRatio || 1;
      this.cssW = LEFT + this.side + 8;
      this.cssH = TOP + this.side + 8;
      this.canvas.width = Math.round(this.cssW * dpr);
      this.canvas.height = Math.round(this.cssH * dpr);
      this.canvas.style.width = this.cssW + 'px';
      this.canvas.style.height = this.cssH + 'px';
      this.dpr = dpr;
    }

    cellPx() { return this.base * this.k; }

    recolour() {
      const ctx = this.bitmap.getContext('2d');
      const img = ctx.createImageData(this.n, this.n);
      const px = new Uint32Array(img.data.buffer);
      if (this.diffMode) M.colourDiff(this.data, px, this.range);
      else this.ref = M.colour(this.data, this.mode, px, this.opts.reference);
      ctx.putImageData(img, 0, 0);
      this.renderLegend();
    }

    renderLegend() {
      const L = this.legend;
      L.textContent = '';
      const sw = (colour, text) => {
        const s = el('span'); const i = el('i'); i.style.background = colour; s.append(i, text); L.appendChild(s);
      };
      const ramp = (left, right, css) => {
        const s = el('span'); const r = el('span', 'ramp'); r.style.background = css;
        s.append(left + ' ', r, ' ' + right); L.appendChild(s);
      };
      const C = M.CSS;
      if (this.diffMode) {
        const p = Math.round(this.range * 100);
        ramp('\u2212' + p + ' %', '+' + p + ' % (b against a)', 'linear-gradient(90deg,rgb(200,30,30),#fff,rgb(30,80,200))');
        for (const [colour, text] of M.DIFF_LEGEND) sw(colour, text);
      } else {
        if (this.mode === 'verdict') {
          sw(C.pass, 'pass'); sw(C.flagged, 'pass, flagged by link counters'); sw(C.low, 'low'); sw(C.fail, 'fail');
        }
        const ref = this.ref || M.reference(this.data, this.opts.reference);
        const of = ref.kind === 'link' ? 'of the link rate' : 'of the fleet\'s best (' + M.gbpsText(ref.gbps) + ' Gb/s)';
        ramp('0', '100 % ' + of + (this.mode === 'verdict' ? ' (cells without a verdict)' : ''),
          'linear-gradient(90deg,' + M.RAMP_CSS.join(',') + ')');
        sw(C.failed, 'failed / error'); sw(C.skipped, 'not run'); sw(C.untested, 'not tested');
      }
      if (this.data.fleet && !this.diffMode) {
        const f = this.data.fleet;
        L.appendChild(el('span', 'gdr-hm-fleet', 'fleet median ' + M.gbpsText(f.medianGbps) + ' Gb/s, min ' +
          M.gbpsText(f.minGbps) + ', max ' + M.gbpsText(f.maxGbps)));
      }
    }

    clampView() {
      const vis = this.n / this.k;
      this.vx = Math.max(0, Math.min(this.n - vis, this.vx));
      this.vy = Math.max(0, Math.min(this.n - vis, this.vy));
    }

    draw() {
      const ctx = this.canvas.getContext('2d');
      const cp = this.cellPx(), vis = this.n / this.k;
      ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, this.cssW, this.cssH);
      ctx.imageSmoothingEnabled = false;
      ctx.save();
      ctx.beginPath(); ctx.rect(LEFT, TOP, this.side, this.side); ctx.clip();
      ctx.drawImage(this.bitmap, this.vx, this.vy, vis, vis, LEFT, TOP, this.side, this.side);
      const r0 = Math.floor(this.vy), c0 = Math.floor(this.vx);
      const r1 = Math.min(this.n, Math.ceil(this.vy + vis)), c1 = Math.min(this.n, Math.ceil(this.vx + vis));
      if (cp >= 4) this.drawGrid(ctx, cp, r0, r1, c0, c1);
      if (cp >= VALUE_MIN) this.drawValues(ctx, cp, r0, r1, c0, c1);
      if (this.hover) {
        const x = LEFT + (this.hover[1] - this.vx) * cp, y = TOP + (this.hover[0] - this.vy) * cp;
        ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
        ctx.strokeRect(x, y, Math.max(cp, 2), Math.max(cp, 2));
      }
      ctx.restore();
      this.drawLabels(ctx, cp, r0, r1, c0, c1);
    }

    drawGrid(ctx, cp, r0, r1, c0, c1) {
      ctx.strokeStyle = 'rgba(255,255,255,0.9)';
      ctx.lineWidth = cp >= 12 ? 1 : 0.5;
      ctx.beginPath();
      for (let r = r0; r <= r1; r++) { const y = TOP + (r - this.vy) * cp; ctx.moveTo(LEFT, y); ctx.lineTo(LEFT + this.side, y); }
      for (let c = c0; c <= c1; c++) { const x = LEFT + (c - this.vx) * cp; ctx.moveTo(x, TOP); ctx.lineTo(x, TOP + this.side); }
      ctx.stroke();
      if (this.diffMode) return;
      // Low cells get a dark outline, as in the SVG report before.
      ctx.strokeStyle = '#000'; ctx.lineWidth = Math.min(2, cp / 6);
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          if (((this.data.code[r * this.n + c] >> 3) & 3) !== 2) continue;
          const inset = ctx.lineWidth;
          ctx.strokeRect(LEFT + (c - this.vx) * cp + inset, TOP + (r - this.vy) * cp + inset, cp - 2 * inset, cp - 2 * inset);
        }
      }
    }

    drawValues(ctx, cp, r0, r1, c0, c1) {
      ctx.font = '600 ' + Math.min(13, cp / 3.6).toFixed(0) + 'px system-ui,sans-serif';
      ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          const t = this.valueText(r, c);
          if (!t) continue;
          ctx.fillStyle = '#fff';
          ctx.fillText(t, LEFT + (c - this.vx + 0.5) * cp, TOP + (r - this.vy + 0.5) * cp);
        }
      }
    }

    valueText(r, c) {
      const i = r * this.n + c;
      if (this.diffMode) {
        const k = this.data.kind[i];
        if (k === M.KIND.compared) return (this.data.change[i] >= 0 ? '+' : '') + Math.round(this.data.change[i] * 100) + '%';
        return k === M.KIND.skipped ? 'skip' : '';
      }
      const st = this.data.code[i] & 7;
      if (st === 0) return '';
      if (st === 1) return M.gbpsText(this.data.gbps[i]);
      return st === 4 ? 'skip' : 'fail';
    }

    drawLabels(ctx, cp, r0, r1, c0, c1) {
      ctx.fillStyle = '#1d2330';
      ctx.font = '11px system-ui,sans-serif';
      ctx.textBaseline = 'middle';
      if (cp >= LABEL_MIN) {
        ctx.textAlign = 'right';
        for (let r = r0; r < r1; r++) {
          const y = TOP + (r - this.vy + 0.5) * cp;
          if (y < TOP || y > TOP + this.side) continue;
          ctx.fillText(this.clip(ctx, this.data.nodes[r], LEFT - 10), LEFT - 5, y);
        }
        ctx.textAlign = 'left';
        for (let c = c0; c < c1; c++) {
          const x = LEFT + (c - this.vx + 0.5) * cp;
          if (x < LEFT || x > LEFT + this.side) continue;
          ctx.save(); ctx.translate(x, TOP - 5); ctx.rotate(-Math.PI / 3);
          ctx.fillText(this.clip(ctx, this.data.nodes[c], TOP + 10), 0, 0);
          ctx.restore();
        }
      } else {
        ctx.textAlign = 'right';
        ctx.fillText('initiator \u2193', LEFT - 6, TOP + 8);
        ctx.textAlign = 'left';
        ctx.fillText('target \u2192  (' + this.n + ' nodes: zoom in for names)', LEFT, TOP - 8);
      }
    }

    clip(ctx, text, width) {
      if (ctx.measureText(text).width <= width) return text;
      let s = text;
      while (s.length > 1 && ctx.measureText(s + '\u2026').width > width) s = s.slice(0, -1);
      return s + '\u2026';
    }

    // The cell under canvas point (x, y) in CSS px: [row, col] or null.
    cellAt(x, y) {
      const cp = this.cellPx();
      if (x < LEFT || y < TOP || x >= LEFT + this.side || y >= TOP + this.side) return null;
      const c = Math.floor(this.vx + (x - LEFT) / cp), r = Math.floor(this.vy + (y - TOP) / cp);
      return r >= 0 && c >= 0 && r < this.n && c < this.n ? [r, c] : null;
    }

    // The page coordinates of a cell's centre (for tests and links).
    pointOf(src, dst) {
      const cp = this.cellPx(), box = this.canvas.getBoundingClientRect();
      return { x: box.left + LEFT + (dst - this.vx + 0.5) * cp, y: box.top + TOP + (src - this.vy + 0.5) * cp };
    }

    zoomAt(factor, x, y) {
      if (x === undefined) { x = LEFT + this.side / 2; y = TOP + this.side / 2; }
      const cp = this.cellPx();
      const cx = this.vx + (x - LEFT) / cp, cy = this.vy + (y - TOP) / cp;
      const maxK = Math.max(1, (this.n * 80) / this.side);
      this.k = Math.max(1, Math.min(maxK, this.k * factor));
      const np = this.cellPx();
      this.vx = cx - (x - LEFT) / np; this.vy = cy - (y - TOP) / np;
      this.clampView(); this.draw(); this.syncBar();
    }

    reset() { this.k = 1; this.vx = 0; this.vy = 0; this.draw(); this.syncBar(); }

    showTip(r, c, x, y) {
      const tip = this.tip;
      tip.textContent = '';
      const line = (label, value) => {
        const d = el('div');
        if (label) d.append(el('b', '', label + ' '));
        d.append(value);
        tip.appendChild(d);
      };
      const d = this.data;
      line('', d.nodes[r] + ' \u2192 ' + d.nodes[c]);
      line('rail', laneName(d) + ' \u00b7 ' + M.sizeName(d.sizeBytes));
      if (this.diffMode) this.diffTip(line, r * d.n + c);
      else this.cellTip(line, M.cell(d, r, c));
      tip.style.display = 'block';
      const w = tip.offsetWidth, h = tip.offsetHeight;
      tip.style.left = Math.min(x + 14, this.cssW - w) + 'px';
      tip.style.top = (y + 14 + h > this.cssH ? Math.max(0, y - h - 8) : y + 14) + 'px';
      tip.dataset.src = d.nodes[r]; tip.dataset.dst = d.nodes[c];
    }

    cellTip(line, c) {
      if (c.status === 'ok') {
        const pct = c.expectedGbps > 0 ? ' (' + Math.round(100 * c.gbps / c.expectedGbps) + ' % of ' + M.gbpsText(c.expectedGbps) + ' Gb/s link)' : '';
        line('BW average', M.gbpsText(c.gbps) + ' Gb/s' + pct);
      } else {
        line('status', c.status);
      }
      line('verdict', c.verdict || (c.status === 'ok' ? 'none (not the verdict size)' : '-'));
      if (c.reason) line('reason', c.reason);
      if (c.baselineGbps > 0) {
        const ch = c.status === 'ok' ? ' (' + (c.gbps >= c.baselineGbps ? '+' : '') + Math.round(100 * (c.gbps / c.baselineGbps - 1)) + ' %)' : '';
        line('baseline', M.gbpsText(c.baselineGbps) + ' Gb/s' + ch);
      } else {
        line('baseline', 'none');
      }
    }

    diffTip(line, i) {
      const d = this.data, a = d.ai[i], b = d.bi[i];
      const val = (m, j) => j < 0 ? 'not in the run' : (m.code[j] & 7) === 1 ? M.gbpsText(m.gbps[j]) + ' Gb/s' : M.STATUS[m.code[j] & 7];
      line('a', val(d.a, a));
      line('b', val(d.b, b));
      if (d.kind[i] === M.KIND.compared) line('change', (d.change[i] >= 0 ? '+' : '') + (100 * d.change[i]).toFixed(1) + ' %');
    }

    bind() {
      const cv = this.canvas;
      let drag = null;
      const local = (e) => { const b = cv.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
      cv.addEventListener('mousemove', (e) => {
        const [x, y] = local(e);
        if (drag) {
          const cp = this.cellPx();
          if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
          this.vx = drag.vx - (x - drag.x) / cp; this.vy = drag.vy - (y - drag.y) / cp;
          this.clampView(); this.draw();
          return;
        }
        const cell = this.cellAt(x, y);
        const same = cell && this.hover && cell[0] === this.hover[0] && cell[1] === this.hover[1];
        if (!cell) { this.hover = null; this.tip.style.display = 'none'; this.draw(); return; }
        if (!same) { this.hover = cell; this.draw(); }
        this.showTip(cell[0], cell[1], x, y);
      });
      cv.addEventListener('mouseleave', () => { this.hover = null; this.tip.style.display = 'none'; this.draw(); });
      cv.addEventListener('mousedown', (e) => { const [x, y] = local(e); drag = { x, y, vx: this.vx, vy: this.vy, moved: false }; });
      global.addEventListener('mouseup', () => { if (drag) setTimeout(() => { drag = null; }, 0); });
      cv.addEventListener('click', (e) => {
        if (drag && drag.moved) return;
        const [x, y] = local(e);
        const cell = this.cellAt(x, y);
        if (cell && this.opts.cellHref) {
          const href = this.opts.cellHref(this.data.nodes[cell[0]], this.data.nodes[cell[1]], this.data.rail);
          if (href) global.location.href = href;
        }
      });
      cv.addEventListener('dblclick', (e) => { const [x, y] = local(e); this.zoomAt(2, x, y); });
      cv.addEventListener('wheel', (e) => {
        const [x, y] = local(e);
        if (!this.cellAt(x, y)) return;
        e.preventDefault();
        this.zoomAt(Math.pow(1.0015, -e.deltaY), x, y);
      }, { passive: false });
      cv.addEventListener('keydown', (e) => {
        const step = Math.max(1, this.n / this.k / 10);
        const keys = {
          '+': () => this.zoomAt(1.6), '=': () => this.zoomAt(1.6), '-': () => this.zoomAt(1 / 1.6), '0': () => this.reset(),
          ArrowLeft: () => { this.vx -= step; }, ArrowRight: () => { this.vx += step; },
          ArrowUp: () => { this.vy -= step; }, ArrowDown: () => { this.vy += step; },
        };
        if (!keys[e.key]) return;
        e.preventDefault(); keys[e.key](); this.clampView(); this.draw(); this.syncBar();
      });
      if (global.ResizeObserver && !this.opts.width) {
        let last = this.root.parentElement.clientWidth;
        new ResizeObserver(() => {
          const w = this.root.parentElement.clientWidth;
          if (Math.abs(w - last) < 8) return;
          last = w; this.layout(); this.clampView(); this.draw(); this.syncBar();
        }).observe(this.root.parentElement);
      }
    }
  }

  function mount(container, matrix, opts) { return new View(container, matrix, opts); }
  function mountDiff(container, d, opts) { return new View(container, d, opts); }

  // report.html: every <div class="gdr-heatmap" data-blob="ID"> gets the
  // heatmap of the base64 matrix in <script type="application/octet-stream"
  // id="ID">; the first at once, the others as they scroll into view (and all
  // before printing).
  function mountEmbedded(root) {
    root = root || document;
    const views = [];
    const pending = new Set();
    const one = (div) => {
      if (!pending.delete(div)) return;
      const src = document.getElementById(div.dataset.blob);
      try {
        views.push(mount(div, M.decodeBase64(src.textContent),
          { colorBy: div.dataset.colorBy || 'verdict', reference: div.dataset.reference }));
      } catch (err) {
        div.textContent = 'cannot draw this heatmap: ' + err.message;
      }
    };
    const divs = Array.from(root.querySelectorAll('div.gdr-heatmap[data-blob]'));
    divs.forEach((d) => pending.add(d));
    if (divs.length) one(divs[0]);
    if (global.IntersectionObserver) {
      const io = new IntersectionObserver((entries) => entries.forEach((e) => { if (e.isIntersecting) one(e.target); }),
        { rootMargin: '400px' });
      divs.slice(1).forEach((d) => io.observe(d));
    } else {
      divs.forEach(one);
    }
    global.addEventListener('beforeprint', () => divs.forEach(one));
    return views;
  }

  global.GdrHeatmap = { mount, mountDiff, mountEmbedded, View };
})(typeof window !== 'undefined' ? window : this);
