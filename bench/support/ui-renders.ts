/**
 * UI-like screenshots drawn by a real 2D canvas (Skia, through @napi-rs/canvas, a devDependency): a
 * header with a gradient, a sidebar menu, cards with rounded corners, soft shadows, text runs in the
 * system's sans-serif font, gradient progress bars, anti-aliased line charts, avatars and buttons —
 * what a screenshot of a web app looks like to a pixel differ, anti-aliased edges included. Encoded by
 * Skia's own PNG encoder, as a browser screenshot tool would.
 *
 * Used by bench:visual and by the engine's oracle tests (test/axes/visual/oracle.test.ts). Every render
 * is deterministic on one machine (fonts are the system's, so counts can differ between machines; the
 * tests compare our engine with pixelmatch on the same renders, never with stored counts).
 */
import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';

export interface RenderOptions {
  /** Device pixels per layout pixel (2 for a 4K screenshot of the 1920×1080 layout). */
  scale?: number;
  /** Added to the x of every body text run: 0.5 re-rasterises the text at a half-pixel offset. */
  textDx?: number;
  /** Draws a solid banner over about `blockFraction` of the image (a badge or card that changed). */
  blockFraction?: number;
  /** Replaces the text of one card (a content change inside an otherwise equal screen). */
  changedCard?: number;
}

export interface Rendered {
  width: number;
  height: number;
  /** RGBA, row-major. */
  data: Uint8Array;
  png: Buffer;
}

const WORDS = 'review ledger event stream cohort verdict snapshot golden render pixel contract breaking change approval finding confirm dismiss resolve publish token workspace query fold projection'.split(' ');

/** mulberry32 (test/support/prng.ts): the same seed, the same sequence on every machine. */
import { mulberry32 as prng } from '../../test/support/prng';

export { prng };

function sentence(rand: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

function roundRect(g: SKRSContext2D, x: number, y: number, w: number, h: number, r: number): void {
  g.beginPath();
  g.moveTo(x + r, y);
  g.arcTo(x + w, y, x + w, y + h, r);
  g.arcTo(x + w, y + h, x, y + h, r);
  g.arcTo(x, y + h, x, y, r);
  g.arcTo(x, y, x + w, y, r);
  g.closePath();
}

/** Renders the app screen at `width`×`height` device pixels (layout width = width / scale). */
export function renderUi(width: number, height: number, options: RenderOptions = {}): Rendered {
  const scale = options.scale ?? 1;
  const dx = options.textDx ?? 0;
  const canvas = createCanvas(width, height);
  const g = canvas.getContext('2d');
  g.scale(scale, scale);
  const W = width / scale;
  const H = height / scale;
  const rand = prng(7);
  const mobile = W < 800;

  g.fillStyle = '#f7f8fa';
  g.fillRect(0, 0, W, H);

  // Header: a gradient bar, a logo with a radial gradient, navigation text.
  const headerH = mobile ? 56 : 64;
  const header = g.createLinearGradient(0, 0, W, 0);
  header.addColorStop(0, '#1c3a76');
  header.addColorStop(1, '#3b5fb0');
  g.fillStyle = header;
  g.fillRect(0, 0, W, headerH);
  const logo = g.createRadialGradient(32, headerH / 2 - 4, 2, 32, headerH / 2, 16);
  logo.addColorStop(0, '#ffe27a');
  logo.addColorStop(1, '#f29b1d');
  g.fillStyle = logo;
  g.beginPath();
  g.arc(32, headerH / 2, 15, 0, Math.PI * 2);
  g.fill();
  g.fillStyle = '#ffffff';
  g.font = 'bold 20px sans-serif';
  g.fillText('Review Studio', 58 + dx, headerH / 2 + 7);
  if (!mobile) {
    g.font = '15px sans-serif';
    ['Reviews', 'Cohorts', 'Contracts', 'Snapshots', 'Settings'].forEach((item, i) => g.fillText(item, 260 + i * 110 + dx, headerH / 2 + 5));
  }

  // Sidebar: a menu with a selected item and round icons.
  const sidebarW = mobile ? 0 : 232;
  if (sidebarW) {
    g.fillStyle = '#eceef2';
    g.fillRect(0, headerH, sidebarW, H - headerH);
    g.font = '14px sans-serif';
    for (let i = 0; i < 16; i++) {
      const y = headerH + 24 + i * 40;
      if (i === 2) {
        g.fillStyle = '#d5dcf0';
        roundRect(g, 12, y - 8, sidebarW - 24, 34, 8);
        g.fill();
      }
      g.fillStyle = ['#5b7bd5', '#2fa36b', '#d5705b', '#8a63c9'][i % 4];
      g.beginPath();
      g.arc(32, y + 9, 7, 0, Math.PI * 2);
      g.fill();
      g.fillStyle = '#303540';
      g.fillText(sentence(rand, 2), 50 + dx, y + 14);
    }
  }

  // Cards: shadow, rounded corners, title, body text, a progress bar, a chart, an avatar, a button.
  const pad = mobile ? 12 : 24;
  const cardW = mobile ? W - 2 * pad : 400;
  const cardH = 236;
  let card = 0;
  for (let cy = headerH + pad; cy + cardH <= H - 8; cy += cardH + pad) {
    for (let cx = sidebarW + pad; cx + cardW <= W - 8; cx += cardW + pad, card++) {
      const cardRand = prng(1000 + card + (options.changedCard === card ? 77 : 0));
      g.save();
      g.shadowColor = 'rgba(20, 30, 60, 0.16)';
      g.shadowBlur = 10;
      g.shadowOffsetY = 3;
      g.fillStyle = '#ffffff';
      roundRect(g, cx, cy, cardW, cardH, 12);
      g.fill();
      g.restore();
      g.strokeStyle = '#dfe3ea';
      g.lineWidth = 1;
      roundRect(g, cx + 0.5, cy + 0.5, cardW - 1, cardH - 1, 12);
      g.stroke();

      g.fillStyle = ['#7aa2f7', '#e0af68', '#9ece6a', '#f7768e'][card % 4];
      g.beginPath();
      g.arc(cx + 30, cy + 32, 14, 0, Math.PI * 2);
      g.fill();
      g.fillStyle = '#1d2230';
      g.font = 'bold 17px sans-serif';
      g.fillText(sentence(cardRand, 3), cx + 54 + dx, cy + 38);
      g.fillStyle = '#4a5060';
      g.font = '13px sans-serif';
      for (let line = 0; line < 4; line++) g.fillText(sentence(cardRand, 6), cx + 18 + dx, cy + 72 + line * 19);

      const bar = g.createLinearGradient(cx + 18, 0, cx + cardW - 18, 0);
      bar.addColorStop(0, '#34c38f');
      bar.addColorStop(1, '#1f8ef1');
      g.fillStyle = '#e8ebf0';
      roundRect(g, cx + 18, cy + 160, cardW - 36, 8, 4);
      g.fill();
      g.fillStyle = bar;
      roundRect(g, cx + 18, cy + 160, (cardW - 36) * (0.2 + cardRand() * 0.8), 8, 4);
      g.fill();

      g.strokeStyle = '#6c5ce7';
      g.lineWidth = 2;
      g.beginPath();
      for (let k = 0; k <= 12; k++) {
        const px = cx + 18 + k * ((cardW * 0.55) / 12);
        const py = cy + 212 - cardRand() * 26;
        if (k === 0) g.moveTo(px, py);
        else g.lineTo(px, py);
      }
      g.stroke();

      const button = g.createLinearGradient(0, cy + 188, 0, cy + 220);
      button.addColorStop(0, '#4c7cf3');
      button.addColorStop(1, '#3557c9');
      g.fillStyle = button;
      roundRect(g, cx + cardW - 120, cy + 188, 100, 32, 16);
      g.fill();
      g.fillStyle = '#ffffff';
      g.font = 'bold 13px sans-serif';
      g.fillText('Open', cx + cardW - 88 + dx, cy + 209);
    }
  }

  if (options.blockFraction) {
    const side = Math.sqrt(width * height * options.blockFraction) / scale;
    g.fillStyle = '#e5484d';
    g.fillRect(Math.round(W * 0.55), Math.round(H * 0.4), Math.round(side * 2), Math.round(side / 2));
  }

  const image = g.getImageData(0, 0, width, height);
  const data = new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return { width, height, data: new Uint8Array(data), png: canvas.toBuffer('image/png') };
}

/**
 * A copy of `base` with `fraction` of its pixels changed at pseudo-random positions (each channel
 * moved by a visible amount), re-encoded by Skia: noise scattered over the whole image.
 */
export function scatterPixels(base: Rendered, fraction: number, seed = 11): Rendered {
  const data = new Uint8Array(base.data);
  const rand = prng(seed);
  const pixels = base.width * base.height;
  const count = Math.round(pixels * fraction);
  for (let n = 0; n < count; n++) {
    const o = Math.floor(rand() * pixels) * 4;
    data[o] = (data[o] + 128) & 255;
    data[o + 1] = (data[o + 1] + 64) & 255;
    data[o + 2] = 255 - data[o + 2];
  }
  return { width: base.width, height: base.height, data, png: encodeRgba(base.width, base.height, data) };
}

/** Encodes opaque RGBA with Skia's PNG encoder. */
export function encodeRgba(width: number, height: number, data: Uint8Array): Buffer {
  const canvas = createCanvas(width, height);
  const g = canvas.getContext('2d');
  const image = g.createImageData(width, height);
  image.data.set(data);
  g.putImageData(image, 0, 0);
  return canvas.toBuffer('image/png');
}
