"""Images for a model: PNG, JPEG, GIF and WebP, downscaled to fit a pixel and byte budget.

An image that already fits is delivered as its own bytes. A larger one is scaled down
(never up) so its long edge and pixel count fit, then encoded in its own format; when
the bytes are still over budget it is re-encoded as JPEG (or WebP, to keep
transparency) at falling quality, then scaled down further, until it fits.

Memory is decided before any pixel is decoded: the header gives the size and the mode,
so what a full decode allocates is known (:func:`decoded_bytes`). A JPEG is decoded at
a reduced size (``draft``: 1/2, 1/4 or 1/8) small enough for the bound; another format
over it is refused. Once decoded, an image is scaled down in its own mode before it is
converted (a palette image by nearest neighbour to twice the target first), so no
second copy of the full size is ever made. :func:`deliver` runs in the decoding process
(:mod:`steadyhand.formats.sandbox`), never in the server.
"""

from __future__ import annotations

import base64
import contextlib
import io
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

# Pillow is imported when an image is first delivered, not at server start-up.

from steadyhand.protocol.errors import ErrorCode, ToolError

#: Pillow format name -> media type, for the formats delivered as they are.
MEDIA_TYPES: dict[str, str] = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}

#: Images with more pixels than this are refused before decoding (decompression bombs).
HARD_PIXEL_LIMIT = 200_000_000
#: The most a full decode of one image may allocate, less the file's own size (the file's
#: bytes are in memory too): with the interpreter and what scaling down needs, the
#: decoding process stays within its 256 MiB bound.
DECODE_BYTES = 192 * 1024 * 1024
#: ... and never more than this.
MAX_DECODE_BYTES = 144 * 1024 * 1024
#: Bytes per pixel of Pillow's storage, by mode (what a full decode allocates).
_STORAGE: dict[str, int] = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}
_JPEG_SCALES = (1, 2, 4, 8)


def decoded_bytes(mode: str, width: int, height: int) -> int:
    """What Pillow allocates to decode a ``width`` × ``height`` image of ``mode`` whole."""
    return width * height * _STORAGE.get(mode, 4)


def decode_budget(file_bytes: int) -> int:
    """The most a full decode of an image of ``file_bytes`` bytes may allocate."""
    return max(0, min(MAX_DECODE_BYTES, DECODE_BYTES - file_bytes))


def jpeg_scale(mode: str, w: int, h: int, tw: int, th: int, limit: int) -> int | None:
    """The reduction (1, 2, 4 or 8) to decode a JPEG of ``w`` × ``h`` at: the largest that
    still gives at least ``tw`` × ``th`` pixels, or a larger one when that is needed to
    stay within ``limit`` bytes; None when even 1/8 is over ``limit``."""
    fine = [s for s in _JPEG_SCALES if w // s >= tw and h // s >= th]
    start = fine[-1] if fine else 1
    for s in _JPEG_SCALES:
        if s >= start and decoded_bytes(mode, -(-w // s), -(-h // s)) <= limit:
            return s
    return None


_MIN_EDGE = 16
_QUALITIES = (85, 70, 55, 40)


@dataclass(frozen=True, slots=True)
class Budget:
    max_pixels: int
    max_dimension: int
    max_bytes: int


@dataclass(frozen=True, slots=True)
class DeliveredImage:
    media_type: str
    data: bytes
    width: int
    height: int
    original_format: str
    original_width: int
    original_height: int
    original_bytes: int
    frames: int

    @property
    def resized(self) -> bool:
        return (self.width, self.height) != (self.original_width, self.original_height)

    @property
    def reencoded(self) -> bool:
        """Whether the data delivered are not the file's own bytes."""
        return len(self.data) != self.original_bytes or self.media_type != MEDIA_TYPES.get(
            self.original_format
        )

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def to_wire(self) -> dict[str, object]:
        """As plain JSON values (the data in base64), for :meth:`from_wire`."""
        return {
            "media_type": self.media_type,
            "data": self.base64(),
            "size": [self.width, self.height],
            "original": [self.original_format, self.original_width, self.original_height],
            "original_bytes": self.original_bytes,
            "frames": self.frames,
        }

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> DeliveredImage:
        fmt, ow, oh = wire["original"]
        w, h = wire["size"]
        return cls(
            str(wire["media_type"]),
            base64.b64decode(wire["data"]),
            int(w),
            int(h),
            str(fmt),
            int(ow),
            int(oh),
            int(wire["original_bytes"]),
            int(wire["frames"]),
        )

    def fields(self) -> dict[str, object]:
        """The result fields that describe the delivered image."""
        return {
            "media_type": self.media_type,
            "data": self.base64(),
            "width": self.width,
            "height": self.height,
            "original_width": self.original_width,
            "original_height": self.original_height,
        }


def sniff(head: bytes) -> str | None:
    """The image format announced by the first bytes, if it is one Steadyhand reads."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


def corrupt(path: str, detail: str) -> ToolError:
    return ToolError(
        ErrorCode.UNREADABLE,
        f"{path} could not be decoded as an image ({detail}); it may be truncated or "
        "corrupt. Check the file, or ask the user for a working copy.",
        path=path,
        reason="corrupt",
    )


def _fits(w: int, h: int, budget: Budget) -> bool:
    return w * h <= budget.max_pixels and max(w, h) <= budget.max_dimension


def _scale_for(w: int, h: int, budget: Budget) -> float:
    return min(
        1.0,
        math.sqrt(budget.max_pixels / (w * h)),
        budget.max_dimension / max(w, h),
    )


def _encode(img: Image.Image, fmt: str, quality: int) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        rgb = img if img.mode in ("RGB", "L") else img.convert("RGB")
        rgb.save(out, "JPEG", quality=quality, optimize=True)
    elif fmt == "WEBP":
        img.save(out, "WEBP", quality=quality)
    else:
        img.save(out, "PNG", optimize=True)
    return out.getvalue()


def _has_alpha(img: Image.Image) -> bool:
    if img.mode in ("RGBA", "LA", "PA"):
        low, _high = img.getchannel("A").getextrema()
        return isinstance(low, int | float) and low < 255
    return False


def deliver(path: str, data: bytes, budget: Budget) -> DeliveredImage:
    """The image in ``data`` as it should reach the model, or ``unreadable``/``too_large``
    (``reason: "memory_limit"`` when decoding it would pass the memory bound)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            fmt = img.format or ""
            ow, oh = img.size
            frames = int(getattr(img, "n_frames", 1))
            if fmt not in MEDIA_TYPES:
                raise ToolError(
                    ErrorCode.UNREADABLE,
                    f"{path} is a {fmt or 'unknown'} image; Steadyhand delivers PNG, JPEG, GIF "
                    "and WebP. Convert it to one of those (for example with an image tool) "
                    "and read the copy.",
                    path=path,
                    reason="unsupported",
                )
            if ow * oh > HARD_PIXEL_LIMIT:
                raise _too_many_pixels(path, ow, oh)
            limit = decode_budget(len(data))
            if fmt == "JPEG" and not (len(data) <= budget.max_bytes and _fits(ow, oh, budget)):
                scale = _scale_for(ow, oh, budget)
                tw, th = max(1, int(ow * scale)), max(1, int(oh * scale))
                s = jpeg_scale(img.mode, ow, oh, tw, th, limit)
                if s is None:
                    raise _over_memory(path, ow, oh, img.mode, limit)
                if s > 1:
                    img.draft(img.mode, (ow // s, oh // s))
            w, h = img.size
            if decoded_bytes(img.mode, w, h) > limit:
                raise _over_memory(path, ow, oh, img.mode, limit)
            if len(data) <= budget.max_bytes and _fits(ow, oh, budget):
                img.load()  # decode fully once, so a truncated file is caught here
                return DeliveredImage(
                    MEDIA_TYPES[fmt], data, ow, oh, fmt, ow, oh, len(data), frames
                )
            img.load()
            shown: Image.Image = ImageOps.exif_transpose(img) if fmt == "JPEG" else img
            return _shrink(path, shown, fmt, ow, oh, len(data), frames, budget)
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise _too_many_pixels(path, 0, 0) from exc
    except MemoryError as exc:
        raise _over_memory(path, 0, 0, "", decode_budget(len(data))) from exc
    except UnidentifiedImageError as exc:
        raise corrupt(path, "the format is not recognized") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise corrupt(path, str(exc) or type(exc).__name__) from exc


def _too_many_pixels(path: str, w: int, h: int) -> ToolError:
    size = f" ({w:,}×{h:,} pixels)" if w else ""
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{path} is too large an image to decode safely{size}. Ask the user for a smaller "
        "version, or downscale it with an image tool first.",
        path=path,
    )


def _over_memory(path: str, w: int, h: int, mode: str, limit: int) -> ToolError:
    size = f" ({w:,}×{h:,} pixels)" if w else ""
    need = f", about {decoded_bytes(mode, w, h) >> 20:,} MiB to decode" if w else ""
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{path} is too large an image to decode within the {limit >> 20} MiB memory "
        f"bound{size}{need}. Ask the user for a smaller version, or downscale it with an "
        "image tool first.",
        path=path,
        reason="memory_limit",
        limit_bytes=limit,
    )


def _target(w: int, h: int, scale: float, budget: Budget) -> tuple[int, int]:
    tw, th = max(1, round(w * scale)), max(1, round(h * scale))
    while not _fits(tw, th, budget):  # rounding up may overshoot by a pixel
        tw, th = max(1, tw - 1), max(1, th - 1)
    return tw, th


def _reduce(img: Image.Image, tw: int, th: int) -> Image.Image:
    """``img`` at ``tw`` × ``th`` (or its own size, when that is not larger) in a mode
    the encoders take (RGB, RGBA, L, LA): scaled down in its own mode first, so that no
    conversion ever copies the full size."""
    from PIL import Image

    lanczos = Image.Resampling.LANCZOS
    w, h = img.size
    small = (tw, th) != (w, h)
    mode = img.mode
    if mode in ("P", "1"):
        # these scale only by nearest neighbour: to twice the target, then convert and
        # filter down
        if small:
            img = img.resize((min(w, 2 * tw), min(h, 2 * th)), Image.Resampling.NEAREST)
        if mode == "1":
            img = img.convert("L")
        else:
            img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif mode == "I" or mode.startswith("I;16"):
        if small:
            try:
                img = img.resize((tw, th), lanczos)
            except ValueError:  # a Pillow that cannot filter this mode
                img = img.resize((tw, th), Image.Resampling.NEAREST)
        # 16-bit grey: a plain conversion clips every value over 255 to white, so scale
        # the range down to 8 bits first
        img = img.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    elif mode not in ("RGB", "RGBA", "L", "LA"):
        if small:
            with contextlib.suppress(ValueError):  # else converted at full size below
                img = img.resize((tw, th), lanczos)
        img = img.convert("RGBA" if "A" in mode else "RGB")
    return img.resize((tw, th), lanczos) if img.size != (tw, th) else img


def _shrink(
    path: str,
    img: Image.Image,
    fmt: str,
    ow: int,
    oh: int,
    nbytes: int,
    frames: int,
    budget: Budget,
) -> DeliveredImage:
    from PIL import Image

    w, h = img.size
    scale = _scale_for(w, h, budget)
    first = _reduce(img, *_target(w, h, scale, budget))
    del img
    alpha = _has_alpha(first)
    first_fmt = {"GIF": "PNG"}.get(fmt, fmt)
    fallback = "WEBP" if alpha else "JPEG"
    while True:
        tw, th = _target(w, h, scale, budget)
        resized = (
            first if (tw, th) == first.size else first.resize((tw, th), Image.Resampling.LANCZOS)
        )
        attempts = [(first_fmt, _QUALITIES[0])] + [(fallback, q) for q in _QUALITIES]
        for out_fmt, quality in attempts:
            data = _encode(resized, out_fmt, quality)
            if len(data) <= budget.max_bytes:
                return DeliveredImage(
                    MEDIA_TYPES[out_fmt], data, tw, th, fmt, ow, oh, nbytes, frames
                )
        if min(tw, th) <= _MIN_EDGE:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{path} cannot be made to fit the image budget of {budget.max_bytes:,} "
                "bytes. Raise the imageMaxBytes setting, or crop the image first.",
                path=path,
            )
        scale *= 0.75
