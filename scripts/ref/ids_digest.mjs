// The digest of an id sequence shared by the golden scripts (src/util/hash.hpp ids_digest).

// FNV-1a 64 over the UTF-8 bytes of ids joined by ",", as 16 lowercase hex digits; the same as
// overhead::util::ids_digest.
export function idsDigest(ids) {
  return textDigest(ids.join(","));
}

// FNV-1a 64 of the UTF-8 bytes of a text as 16 lowercase hex digits (overhead::util::text_digest).
// Four 16-bit limbs keep every product exact in a double (no BigInt: this runs over tens of MB of
// digits). prime = 2^40 + 0x1b3, so only limbs 0 and 2 of it are non-zero.
export function textDigest(text) {
  const bytes = Buffer.from(text, "utf8");
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i];
    const t0 = h0 * 0x1b3;
    let t1 = h1 * 0x1b3;
    let t2 = h2 * 0x1b3 + h0 * 0x100;
    let t3 = h3 * 0x1b3 + h1 * 0x100;
    t1 += t0 >>> 16;
    t2 += Math.floor(t1 / 65536);
    t3 += Math.floor(t2 / 65536);
    h0 = t0 & 0xffff;
    h1 = t1 % 65536;
    h2 = t2 % 65536;
    h3 = t3 % 65536;
  }
  const hex = (x) => x.toString(16).padStart(4, "0");
  return hex(h3) + hex(h2) + hex(h1) + hex(h0);
}
