"""Writes the fixtures of decode_pil_test.cc: small images in the formats PIL decodes that a plain
RGB decoder gets wrong (CMYK and YCCK JPEGs, 16-bit and palette PNGs, gray+alpha, RGBA, WebP
with alpha), each as `pil/<name>.<ext>`, and what PIL's Image.open(...).convert("RGB") makes of
it as `pil/<name>.rgb` (raw HWC bytes). The pixels come from a crop of a real photograph
(skimage's chelsea.png, Debian's python3-skimage), at an odd size.

Run with Debian's interpreter (python3-pil, python3-skimage, libturbojpeg0):
    /usr/bin/python3 augment/kernels/testdata/make_pil_fixtures.py
"""

import ctypes
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image
from skimage import data

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pil")


def photo():
    return np.ascontiguousarray(data.chelsea()[100:137, 150:197])  # 37 x 47 RGB


def png_bytes(array, bit_depth, color_type):
    """A minimal PNG (no filter, one IDAT) of big-endian samples: PIL cannot write 16-bit RGB."""
    height, width = array.shape[:2]
    raw = array.astype(">u2" if bit_depth == 16 else np.uint8).tobytes()
    row = len(raw) // height
    body = b"".join(b"\0" + raw[y * row:(y + 1) * row] for y in range(height))

    def chunk(kind, payload):
        return (struct.pack(">I", len(payload)) + kind + payload +
                struct.pack(">I", zlib.crc32(kind + payload)))

    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(body)) +
            chunk(b"IEND", b""))


def ycck_jpeg(cmyk):
    """TurboJPEG writes a 4-channel image as YCCK (with an Adobe marker, transform 2)."""
    tj = ctypes.CDLL("libturbojpeg.so.0")
    tj.tjInitCompress.restype = ctypes.c_void_p
    handle = ctypes.c_void_p(tj.tjInitCompress())
    buffer, size = ctypes.POINTER(ctypes.c_ubyte)(), ctypes.c_ulong(0)
    height, width = cmyk.shape[:2]
    pixels = np.ascontiguousarray(cmyk, dtype=np.uint8)
    tjpf_cmyk, tjsamp_420 = 11, 2
    status = tj.tjCompress2(handle, pixels.ctypes.data_as(ctypes.c_void_p), width, 0, height,
                            tjpf_cmyk, ctypes.byref(buffer), ctypes.byref(size), tjsamp_420, 90, 0)
    assert status == 0, "tjCompress2 failed"
    encoded = ctypes.string_at(buffer, size.value)
    tj.tjFree(buffer)
    tj.tjDestroy(handle)
    return encoded


def without_adobe_marker(jpeg):
    """The JPEG without its APP14 "Adobe" segment (libjpeg then reads 4 components as CMYK)."""
    at = jpeg.index(b"\xff\xee")
    length = struct.unpack(">H", jpeg[at + 2:at + 4])[0]
    return jpeg[:at] + jpeg[at + 2 + length:]


def pil_save(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def fixtures():
    rgb = photo()
    image = Image.fromarray(rgb)
    gray = np.asarray(image.convert("L"))
    alpha = ((np.arange(rgb.shape[1])[None, :] * 5 + np.arange(rgb.shape[0])[:, None] * 3) % 256
             ).astype(np.uint8)
    cmyk_jpeg = pil_save(image.convert("CMYK"), "JPEG", quality=90)
    rgba = Image.fromarray(np.dstack([rgb, alpha]))
    yield "ycbcr.jpg", pil_save(image, "JPEG", quality=90)
    yield "cmyk_adobe.jpg", cmyk_jpeg
    yield "cmyk_no_adobe.jpg", without_adobe_marker(cmyk_jpeg)
    # A CMYK with deep black, so that K matters: inverted photo channels.
    cmyk = np.dstack([rgb, 255 - gray]).astype(np.uint8)
    yield "ycck.jpg", ycck_jpeg(cmyk)
    yield "rgb16.png", png_bytes(rgb.astype(np.uint16) * 257 + alpha[..., None], 16, 2)
    yield "gray16.png", png_bytes(gray.astype(np.uint16) * 3, 16, 0)
    yield "rgba16.png", png_bytes(np.dstack([rgb, alpha]).astype(np.uint16) * 251, 16, 6)
    yield "palette.png", pil_save(image.quantize(colors=200), "PNG", transparency=3)
    yield "palette4.png", pil_save(image.quantize(colors=16), "PNG", bits=4)
    yield "gray1.png", pil_save(image.convert("1"), "PNG")
    yield "gray_alpha.png", pil_save(Image.fromarray(np.dstack([gray, alpha]), "LA"), "PNG")
    yield "rgba.png", pil_save(rgba, "PNG")
    yield "rgba_lossy.webp", pil_save(rgba, "WEBP", quality=80)
    yield "rgba_lossless.webp", pil_save(rgba, "WEBP", lossless=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, encoded in fixtures():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(encoded)
        decoded = np.asarray(Image.open(io.BytesIO(encoded)).convert("RGB"))
        stem = os.path.splitext(name)[0]
        with open(os.path.join(OUT, stem + ".rgb"), "wb") as f:
            f.write(decoded.tobytes())
        print(f"{name}: {Image.open(io.BytesIO(encoded)).mode} {decoded.shape}")


if __name__ == "__main__":
    main()
