"""Images sent to the model: detection by magic bytes, dimensions, and resizing to pi's limits.

Used by the read tool and by ``@file`` arguments on the command line (settings
``images.autoResize``).

Detection and dimension parsing are plain Python; Pillow is imported only when an image must
actually be resized (larger than 2000x2000 or its base64 over 4.5 MB).
"""

from __future__ import annotations

import base64
import io
import struct
from typing import Any

from piko.lib.jsnumbers import js_round
from piko.lib.jsnumbers import js_to_fixed
from piko.lib.records import Record

__all__ = [
    "ResizedImage",
    "detect_image_mime_type",
    "format_dimension_note",
    "image_size",
    "resize_image",
]

SNIFF_BYTES = 4100
MAX_WIDTH = 2000
MAX_HEIGHT = 2000
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)  # headroom below Anthropic's 5 MB per image
JPEG_QUALITY = 80
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# pi's words for an image that could not be made small enough to send
IMAGE_OMITTED_NOTE = "[Image omitted: could not be resized below the inline image size limit.]"


def detect_image_mime_type(head: bytes) -> str | None:
    """``image/jpeg``, ``image/png``, ``image/gif`` or ``image/webp`` from a file's first bytes.

    Animated PNGs (an ``acTL`` chunk before the image data) are not images here, as in pi.
    A UTF-8 byte order mark before the signature is skipped.
    """
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if not head:
        return None
    if head.startswith(b"\xff\xd8\xff"):
        return None if head[3:4] == b"\xf7" else "image/jpeg"  # FF D8 FF F7 is JPEG-LS
    if head.startswith(b"GIF"):
        return "image/gif"
    if head.startswith(_PNG_SIGNATURE):
        return _png_kind(head)
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _png_kind(head: bytes) -> str | None:
    """Walk the PNG chunks in ``head``: ``IDAT`` first means a still image, ``acTL`` an animation."""
    pos = 8
    seen_header = False
    for _ in range(512):
        if pos + 8 > len(head):
            return "image/png"
        length, kind = struct.unpack(">I4s", head[pos : pos + 8])
        if length > 0x7FFFFFFF:
            return None
        if kind == b"IHDR":
            if length != 13:
                return None
            seen_header = True
        if kind == b"IDAT":
            return "image/png"
        if kind == b"acTL":
            return None
        if not seen_header and kind != b"CgBI":
            return None
        pos += 8 + length + 4
        if pos + 8 >= len(head):
            return "image/png"
    return "image/png"


def image_size(data: bytes, mime_type: str) -> tuple[int, int] | None:
    """``(width, height)`` read from the header, without decoding; ``None`` if unreadable."""
    try:
        if mime_type == "image/png":
            return _png_size(data)
        if mime_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if mime_type == "image/jpeg":
            return _jpeg_size(data)
        if mime_type == "image/webp":
            return _webp_size(data)
    except (struct.error, IndexError):
        return None
    return None


def _png_size(data: bytes) -> tuple[int, int] | None:
    pos = 8
    if data[pos + 4 : pos + 8] == b"CgBI":
        pos += 8 + struct.unpack(">I", data[pos : pos + 4])[0] + 4
    if data[pos + 4 : pos + 8] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[pos + 8 : pos + 16])
    return width, height


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


class ResizedImage(Record, kw_only=False, frozen=True):
    """An image ready to send: base64 ``data``, its type, and its size before and after."""

    data: str
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool


def resize_image(data: bytes, mime_type: str) -> ResizedImage | None:
    """Fit an image within 2000x2000 and 4.5 MB of base64, as pi does; ``None`` if impossible.

    An image already within the limits is returned unchanged. Otherwise it is scaled (Lanczos),
    encoded as PNG and as JPEG at falling qualities, and the first candidate under the byte limit
    wins; if none fits, the dimensions shrink by a quarter and the search repeats.
    """
    encoded = base64.b64encode(data).decode("ascii")
    size = image_size(data, mime_type)
    if size is not None:
        # EXIF orientation may swap the axes, which does not matter against a square limit.
        width, height = size
        if width <= MAX_WIDTH and height <= MAX_HEIGHT and len(encoded) < MAX_BASE64_BYTES:
            return ResizedImage(encoded, mime_type, width, height, width, height, False)
    try:
        return _resize_with_pillow(data, mime_type, encoded)
    except Exception:  # undecodable image or Pillow missing: pi omits the image
        return None


def _resize_with_pillow(data: bytes, mime_type: str, encoded: str) -> ResizedImage | None:
    from PIL import Image
    from PIL import ImageOps

    with Image.open(io.BytesIO(data)) as opened:
        image: Any = ImageOps.exif_transpose(opened) or opened
        image.load()
    original_width, original_height = image.size
    if original_width <= MAX_WIDTH and original_height <= MAX_HEIGHT and len(encoded) < MAX_BASE64_BYTES:
        return ResizedImage(
            encoded, mime_type, original_width, original_height, original_width, original_height, False
        )
    width, height = original_width, original_height
    if width > MAX_WIDTH:
        height = js_round(height * MAX_WIDTH / width)
        width = MAX_WIDTH
    if height > MAX_HEIGHT:
        width = js_round(width * MAX_HEIGHT / height)
        height = MAX_HEIGHT
    qualities = list(dict.fromkeys([JPEG_QUALITY, 85, 70, 55, 40]))
    if image.mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    while True:
        scaled = image.resize((max(1, width), max(1, height)), Image.Resampling.LANCZOS)
        for candidate, candidate_type in _candidates(scaled, qualities):
            text = base64.b64encode(candidate).decode("ascii")
            if len(text) < MAX_BASE64_BYTES:
                return ResizedImage(
                    text, candidate_type, original_width, original_height, width, height, True
                )
        if width == 1 and height == 1:
            return None
        next_width = 1 if width == 1 else max(1, int(width * 0.75))
        next_height = 1 if height == 1 else max(1, int(height * 0.75))
        if (next_width, next_height) == (width, height):
            return None
        width, height = next_width, next_height


def _candidates(image: Any, qualities: list[int]) -> Any:
    """PNG first, then JPEG at each quality (encoded lazily: the first that fits wins)."""
    out = io.BytesIO()
    image.save(out, "PNG")
    yield out.getvalue(), "image/png"
    rgb = image.convert("RGB") if image.mode != "RGB" else image
    for quality in qualities:
        out = io.BytesIO()
        rgb.save(out, "JPEG", quality=quality)
        yield out.getvalue(), "image/jpeg"


def format_dimension_note(image: ResizedImage) -> str | None:
    """pi's note telling the model how to map coordinates back to the original image."""
    if not image.was_resized:
        return None
    scale = image.original_width / image.width
    return (
        f"[Image: original {image.original_width}x{image.original_height}, displayed at "
        f"{image.width}x{image.height}. Multiply coordinates by {js_to_fixed(scale, 2)} to map to original image.]"
    )
