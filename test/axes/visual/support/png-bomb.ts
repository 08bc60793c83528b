import * as zlib from 'node:zlib';

/**
 * A valid PNG of `width`×`height` zero pixels (filter None) whose image data is a real zlib stream
 * inflating to every scanline, built without deflating all of it: deflate output after a full flush
 * does not depend on what came before, so one flushed 1 MiB block of zeros is repeated. A 16-bit RGBA
 * 16384×16384 image (2 GiB of scanlines) comes out at about 2 MB, as in issue 36's attack; `tag` varies
 * one byte of an ancillary chunk so a base and a head differ as files.
 */
export function pngBomb(width: number, height: number, bitDepth: 8 | 16, colorType: 2 | 6, tag = 0): Buffer {
  const channels = colorType === 6 ? 4 : 3;
  const total = height * (width * channels * (bitDepth / 8) + 1);
  const MiB = 1 << 20;
  const flushed = (n: number) => {
    const d = zlib.deflateRawSync(Buffer.alloc(n), { finishFlush: zlib.constants.Z_FULL_FLUSH });
    return d;
  };
  const block = flushed(MiB);
  const parts: Buffer[] = [Buffer.from([0x78, 0x9c])];
  const whole = Math.floor(total / MiB);
  for (let i = 0; i < whole; i++) parts.push(block);
  parts.push(zlib.deflateRawSync(Buffer.alloc(total % MiB)));
  // adler32 of `total` zero bytes: a = 1, b = total * 1 mod 65521.
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE((((total % 65521) << 16) | 1) >>> 0);
  parts.push(trailer);
  const idat = Buffer.concat(parts);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = colorType;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('tEXt', Buffer.from(`tag\0${tag}`)), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(td));
  return Buffer.concat([len, td, crc]);
}
