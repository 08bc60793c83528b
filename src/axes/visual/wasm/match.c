/*
 * The visual engine's hot loops in WebAssembly (issue 18): pixelmatch 7.2.0's comparison with
 * `checkerboard: false` (match.ts is the same algorithm in TypeScript, and pixelmatch the oracle in
 * test/axes/visual/oracle.test.ts and wasm-kernel.test.ts), and the diff image's palette indices
 * (diff.ts `indexDiffRows`).
 *
 * Exactness: every colour computation is the one pixelmatch does in JavaScript doubles, in the same
 * operations and the same order. WebAssembly has no fused multiply-add and this file is built with
 * -ffp-contract=off and without -ffast-math (tools/build-visual-wasm.sh), so each + and * rounds as
 * JavaScript's does. SIMD (simd128) only decides which pixels are equal words, which is exact.
 *
 * The module imports its memory (a shared WebAssembly.Memory laid out by wasm.ts) and uses neither
 * static data nor the shadow stack, so several threads may run it on one memory at once as long as
 * they write disjoint rows (tools/build-visual-wasm.sh checks the built module for both).
 */
#include <stdint.h>
#include <wasm_simd128.h>

#define MARK_DIFF 1
#define MARK_DIFF_DARKER 2
#define MARK_AA 3

#define EXPORT(name) __attribute__((export_name(name)))

static inline double color_delta(const uint8_t *a, const uint8_t *b) {
  int r1 = a[0], g1 = a[1], b1 = a[2], a1 = a[3];
  int r2 = b[0], g2 = b[1], b2 = b[2], a2 = b[3];
  double dr = (double)(r1 - r2);
  double dg = (double)(g1 - g2);
  double db = (double)(b1 - b2);
  int da = a1 - a2;
  if (a1 < 255 || a2 < 255) {
    dr = (double)(r1 * a1 - r2 * a2 - 255 * da) / 255.0;
    dg = (double)(g1 * a1 - g2 * a2 - 255 * da) / 255.0;
    db = (double)(b1 * a1 - b2 * a2 - 255 * da) / 255.0;
  }
  double y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
  double i = dr * 0.59597799 - dg * 0.2741761 - db * 0.32180189;
  double q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
  double delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
  return y > 0 ? -delta : delta;
}

static inline double brightness_delta(const uint8_t *m, int r1, int g1, int b1, int a1) {
  int r2 = m[0], g2 = m[1], b2 = m[2], a2 = m[3];
  int ir = r1 - r2, ig = g1 - g2, ib = b1 - b2, da = a1 - a2;
  if (!ir && !ig && !ib && !da) return 0;
  double dr = (double)ir, dg = (double)ig, db = (double)ib;
  if (a1 < 255 || a2 < 255) {
    dr = (double)(r1 * a1 - r2 * a2 - 255 * da) / 255.0;
    dg = (double)(g1 * a1 - g2 * a2 - 255 * da) / 255.0;
    db = (double)(b1 * a1 - b2 * a2 - 255 * da) / 255.0;
  }
  return dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
}

static int has_many_siblings(const int32_t *img, int x1, int y1, int width, int height) {
  int x0 = x1 > 0 ? x1 - 1 : 0;
  int y0 = y1 > 0 ? y1 - 1 : 0;
  int x2 = x1 < width - 1 ? x1 + 1 : width - 1;
  int y2 = y1 < height - 1 ? y1 + 1 : height - 1;
  int32_t val = img[y1 * width + x1];
  int zeroes = (x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2) ? 1 : 0;
  for (int x = x0; x <= x2; x++) {
    for (int y = y0; y <= y2; y++) {
      if (x == x1 && y == y1) continue;
      if (val == img[y * width + x]) zeroes++;
      if (zeroes > 2) return 1;
    }
  }
  return 0;
}

/*
 * pixelmatch's antialiased(): `img` is the image whose neighbourhood is examined (as bytes and as
 * words), `other` the other image's words (both are asked for siblings).
 */
static int antialiased(const uint8_t *img, const int32_t *img32, const int32_t *other32, int x1, int y1, int width, int height) {
  int x0 = x1 > 0 ? x1 - 1 : 0;
  int y0 = y1 > 0 ? y1 - 1 : 0;
  int x2 = x1 < width - 1 ? x1 + 1 : width - 1;
  int y2 = y1 < height - 1 ? y1 + 1 : height - 1;
  int border = (x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2) ? 1 : 0;
  int32_t centre = img32[y1 * width + x1];
  /*
   * Early exit, exact: the detector answers false as soon as it has seen three zero deltas (the border
   * counts as one), whatever the order; a neighbour with the centre's very word has a zero delta. So
   * three equal words (with the border) decide it without any floating point.
   */
  int equal = border;
  for (int y = y0; y <= y2; y++) {
    const int32_t *row = img32 + y * width;
    for (int x = x0; x <= x2; x++) equal += row[x] == centre;
  }
  /* The loop above also counted the centre itself. */
  if (equal - 1 > 2) return 0;
  const uint8_t *c = img + (y1 * width + x1) * 4;
  int cr = c[0], cg = c[1], cb = c[2], ca = c[3];
  int zeroes = border;
  double min = 0, max = 0;
  int minX = 0, minY = 0, maxX = 0, maxY = 0;
  for (int x = x0; x <= x2; x++) {
    for (int y = y0; y <= y2; y++) {
      if (x == x1 && y == y1) continue;
      double delta = brightness_delta(img + (y * width + x) * 4, cr, cg, cb, ca);
      if (delta == 0) {
        zeroes++;
        if (zeroes > 2) return 0;
      } else if (delta < min) {
        min = delta;
        minX = x;
        minY = y;
      } else if (delta > max) {
        max = delta;
        maxX = x;
        maxY = y;
      }
    }
  }
  if (min == 0 || max == 0) return 0;
  return (has_many_siblings(img32, minX, minY, width, height) && has_many_siblings(other32, minX, minY, width, height)) ||
         (has_many_siblings(img32, maxX, maxY, width, height) && has_many_siblings(other32, maxX, maxY, width, height));
}

/*
 * match.ts `matchRows`: compares rows [from_row, to_row) of two RGBA images of `width` × `height`
 * (borders are the whole image's); rows with skip[y] = 1 are equal and skipped. Writes a MARK_* per
 * differing pixel into `marks` (zero on entry) and 1 into marked_rows[y] for rows with a mark; returns
 * the count of differing, non-anti-aliased pixels. `max_delta` is pixelmatch's 35215 * t * t,
 * computed by the caller in JavaScript.
 */
EXPORT("match_rows")
int match_rows(const uint8_t *img1, const uint8_t *img2, int width, int height, uint8_t *marks, uint8_t *marked_rows, int from_row, int to_row, const uint8_t *skip, double max_delta) {
  const int32_t *a32 = (const int32_t *)img1;
  const int32_t *b32 = (const int32_t *)img2;
  int diff = 0;
  for (int y = from_row; y < to_row; y++) {
    if (skip[y]) continue;
    int row_start = y * width;
    int marked = 0;
    int x = 0;
    while (x < width) {
      /* Skip equal words 4 at a time. */
      if (x + 4 <= width) {
        v128_t va = wasm_v128_load(a32 + row_start + x);
        v128_t vb = wasm_v128_load(b32 + row_start + x);
        if (wasm_i32x4_all_true(wasm_i32x4_eq(va, vb))) {
          x += 4;
          continue;
        }
      }
      int end = x + 4 <= width ? x + 4 : width;
      for (; x < end; x++) {
        int i = row_start + x;
        if (a32[i] == b32[i]) continue;
        double delta = color_delta(img1 + i * 4, img2 + i * 4);
        if ((delta < 0 ? -delta : delta) <= max_delta) continue;
        marked = 1;
        if (antialiased(img1, a32, b32, x, y, width, height) || antialiased(img2, b32, a32, x, y, width, height)) {
          marks[i] = MARK_AA;
        } else {
          marks[i] = delta < 0 ? MARK_DIFF_DARKER : MARK_DIFF;
          diff++;
        }
      }
    }
    if (marked) marked_rows[y] = 1;
  }
  return diff;
}

static inline int faded_grey(const uint8_t *p, double alpha) {
  double val = 255 + (p[0] * 0.29889531 + p[1] * 0.58662247 + p[2] * 0.11448223 - 255) * alpha * p[3] / 255;
  return (int)val;
}

static int rows_equal(const uint8_t *a, const uint8_t *b, int bytes) {
  int i = 0;
  for (; i + 16 <= bytes; i += 16) {
    if (!wasm_i8x16_all_true(wasm_i8x16_eq(wasm_v128_load(a + i), wasm_v128_load(b + i)))) return 0;
  }
  for (; i < bytes; i++) if (a[i] != b[i]) return 0;
  return 1;
}

/*
 * diff.ts `indexDiffRows`: palette indices of rows [from_row, to_row) of the diff image — the faded
 * grey of each base pixel minus `grey_min` (computed once per run of equal words; a base row equal to
 * the row above copies that row's background), then each mark's index from mark_index[0..3].
 * `background` is `width` bytes of scratch owned by the caller's band, `cache` 128 KiB of its scratch:
 * a direct-mapped table word → index (a grey is a function of the pixel's word alone, so a hit is
 * exact; entries hold index + 1, 0 = empty), cleared here.
 */
#define CACHE_BITS 14
EXPORT("index_rows")
void index_rows(const uint8_t *base, int width, const uint8_t *marks, const uint8_t *marked_rows, uint8_t *indices, uint8_t *background, int32_t *cache, int from_row, int to_row, double alpha, int grey_min, int mark1, int mark2, int mark3) {
  const int32_t *src32 = (const int32_t *)base;
  int row_bytes = width * 4;
  int32_t *cache_word = cache;
  int32_t *cache_index = cache + (1 << CACHE_BITS);
  for (int i = 0; i < (1 << CACHE_BITS); i++) cache_index[i] = 0;
  for (int y = from_row; y < to_row; y++) {
    int row = y * width;
    uint8_t *target = indices + row;
    if (y > from_row && rows_equal(base + (row - width) * 4, base + row * 4, row_bytes)) {
      for (int x = 0; x < width; x++) target[x] = background[x];
    } else {
      int32_t last = 0;
      int last_index = -1;
      for (int x = 0; x < width; x++) {
        int32_t c = src32[row + x];
        if (c != last || last_index < 0) {
          uint32_t h = ((uint32_t)c * 2654435761u) >> (32 - CACHE_BITS);
          if (cache_index[h] != 0 && cache_word[h] == c) {
            last_index = cache_index[h] - 1;
          } else {
            last_index = faded_grey(base + (row + x) * 4, alpha) - grey_min;
            cache_word[h] = c;
            cache_index[h] = last_index + 1;
          }
          last = c;
        }
        target[x] = (uint8_t)last_index;
      }
      for (int x = 0; x < width; x++) background[x] = target[x];
    }
    if (marked_rows[y]) {
      const uint8_t *m = marks + row;
      for (int x = 0; x < width; x++) {
        int k = m[x];
        if (k) target[x] = (uint8_t)(k == 1 ? mark1 : k == 2 ? mark2 : mark3);
      }
    }
  }
}

/*
 * PNG's scanline filters reversed for one row of 4-byte pixels (png.ts `unfilterRowRgba` and
 * `unfilterPaethRgba`): `src` holds the row's filtered bytes (filter byte excluded), `prev` the row
 * above (already unfiltered; ignored when `first`), `out` receives the row. Sub, Average and Paeth
 * carry a whole pixel (four channels in one vector) from one pixel to the next; Up adds 16 bytes at a
 * time. Paeth as the PNG specification: |p − a| = |b − c|, |p − b| = |a − c|, |p − c| = |a + b − 2c|,
 * ties a, then b, then c; with no row above it is Sub, Average halves the left pixel alone.
 */
EXPORT("unfilter_rgba")
void unfilter_rgba(const uint8_t *src, uint8_t *out, const uint8_t *prev, int stride, int filter, int first) {
  v128_t zero = wasm_i16x8_splat(0);
  if (filter == 2) {
    int i = 0;
    if (first) {
      for (; i < stride; i++) out[i] = src[i];
      return;
    }
    for (; i + 16 <= stride; i += 16) wasm_v128_store(out + i, wasm_i8x16_add(wasm_v128_load(src + i), wasm_v128_load(prev + i)));
    for (; i < stride; i++) out[i] = (uint8_t)(src[i] + prev[i]);
    return;
  }
  if (filter == 1 || (filter == 4 && first)) {
    v128_t a = zero;
    for (int i = 0; i < stride; i += 4) {
      a = wasm_i8x16_add(wasm_v128_load32_zero(src + i), a);
      wasm_v128_store32_lane(out + i, a, 0);
    }
    return;
  }
  if (filter == 3) {
    v128_t a = zero;
    for (int i = 0; i < stride; i += 4) {
      v128_t sum = first ? a : wasm_i16x8_add(a, wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(prev + i)));
      v128_t pred = wasm_u16x8_shr(sum, 1);
      v128_t r = wasm_i8x16_add(wasm_v128_load32_zero(src + i), wasm_u8x16_narrow_i16x8(pred, pred));
      wasm_v128_store32_lane(out + i, r, 0);
      a = wasm_u16x8_extend_low_u8x16(r);
    }
    return;
  }
  /*
   * Paeth below the first row. The chain from one pixel to the next (through a) is kept short: the
   * channels stay in 16-bit lanes (the sum masked to 8 bits instead of narrowed and widened again; the
   * narrow for the store is off the chain), and "pa ≤ pb and pa ≤ pc" is "pa ≤ min(pb, pc)".
   */
  v128_t a = zero;
  v128_t c = zero;
  const v128_t low_byte = wasm_i16x8_splat(0xff);
  for (int i = 0; i < stride; i += 4) {
    v128_t b = wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(prev + i));
    v128_t x = wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(src + i));
    v128_t bc = wasm_i16x8_sub(b, c);
    v128_t pa = wasm_i16x8_abs(bc);
    v128_t ac = wasm_i16x8_sub(a, c);
    v128_t pb = wasm_i16x8_abs(ac);
    v128_t pc = wasm_i16x8_abs(wasm_i16x8_add(bc, ac));
    v128_t use_a = wasm_i16x8_le(pa, wasm_i16x8_min(pb, pc));
    v128_t use_b = wasm_i16x8_le(pb, pc);
    v128_t pred = wasm_v128_bitselect(a, wasm_v128_bitselect(b, c, use_b), use_a);
    a = wasm_v128_and(wasm_i16x8_add(x, pred), low_byte);
    wasm_v128_store32_lane(out + i, wasm_u8x16_narrow_i16x8(a, a), 0);
    c = b;
  }
}

/*
 * The Adler-32 (zlib's, continued from `adler`) of rows [from_row, to_row) of palette indices as the
 * diff PNG's scanlines hold them: per row a filter byte 0, then the row's `width` indices (png.ts
 * `deflateIndexSegment`). 16 bytes at a time: after a chunk x0..x15, a += Σ x and b += 16·a + Σ (16 − j)·xj
 * (a before the chunk), the partial sums in 32-bit lanes reduced modulo 65521 every 256 chunks at most
 * (a lane then holds < 2^27), the tail byte by byte — the same numbers as the byte loop, exactly.
 */
#define ADLER_BASE 65521u
static inline uint32_t lanes_sum(v128_t v) {
  return (uint32_t)wasm_i32x4_extract_lane(v, 0) + (uint32_t)wasm_i32x4_extract_lane(v, 1) + (uint32_t)wasm_i32x4_extract_lane(v, 2) + (uint32_t)wasm_i32x4_extract_lane(v, 3);
}
EXPORT("adler_rows")
uint32_t adler_rows(const uint8_t *indices, int width, int from_row, int to_row, uint32_t adler) {
  uint64_t a = adler & 0xffff;
  uint64_t b = adler >> 16;
  const v128_t w_lo = wasm_i16x8_make(16, 15, 14, 13, 12, 11, 10, 9);
  const v128_t w_hi = wasm_i16x8_make(8, 7, 6, 5, 4, 3, 2, 1);
  for (int y = from_row; y < to_row; y++) {
    const uint8_t *p = indices + (uint32_t)y * (uint32_t)width;
    int n = width;
    b = (b + a) % ADLER_BASE; /* the filter byte 0 */
    while (n >= 16) {
      int chunks = n >> 4;
      if (chunks > 256) chunks = 256;
      v128_t vs = wasm_i32x4_splat(0);
      v128_t vps = wasm_i32x4_splat(0);
      v128_t vw = wasm_i32x4_splat(0);
      for (int k = 0; k < chunks; k++, p += 16) {
        v128_t x = wasm_v128_load(p);
        v128_t lo = wasm_u16x8_extend_low_u8x16(x);
        v128_t hi = wasm_u16x8_extend_high_u8x16(x);
        vps = wasm_i32x4_add(vps, vs);
        vs = wasm_i32x4_add(vs, wasm_i32x4_add(wasm_u32x4_extadd_pairwise_u16x8(lo), wasm_u32x4_extadd_pairwise_u16x8(hi)));
        vw = wasm_i32x4_add(vw, wasm_i32x4_add(wasm_i32x4_dot_i16x8(lo, w_lo), wasm_i32x4_dot_i16x8(hi, w_hi)));
      }
      b = (b + (uint64_t)chunks * 16 * a + 16 * (uint64_t)lanes_sum(vps) + lanes_sum(vw)) % ADLER_BASE;
      a = (a + lanes_sum(vs)) % ADLER_BASE;
      n -= chunks << 4;
    }
    for (; n > 0; n--, p++) {
      a += *p;
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return (uint32_t)((b << 16) | a);
}
