"""Images for a model: PNG, JPEG, GIF and WebP, downscaled to fit a pixel and byte budget.

An image that already fits is delivered as its own bytes. A larger one is scaled down
(never up) so its long edge and pixel count fit, then encoded in its own format; when
the bytes are still over budget it is re-encoded as JPEG (or WebP, to keep
transparency) at falling quality, then scaled down further, until it fits.
"""

from __future__ import annotations

import base64
import io
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    from PIL import Image, ImageOps, UnidentifiedImageError

    """The image in ``data`` as it should reach the model, or ``unreadable``/``too_large``."""
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
            if len(data) <= budget.max_bytes and _fits(ow, oh, budget):
                img.load()  # decode fully once, so a truncated file is caught here
                return DeliveredImage(
                    MEDIA_TYPES[fmt], data, ow, oh, fmt, ow, oh, len(data), frames
                )
            scale = _scale_for(ow, oh, budget)
            if fmt == "JPEG":
                img.draft("RGB", (max(1, int(ow * scale)), max(1, int(oh * scale))))
            img.load()
            shown: Image.Image = ImageOps.exif_transpose(img) if fmt == "JPEG" else img
            return _shrink(path, shown, fmt, ow, oh, len(data), frames, budget)
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise _too_many_pixels(path, 0, 0) from exc
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

    if img.mode == "P" or img.mode == "1":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif img.mode == "I" or img.mode.startswith("I;16"):
        # 16-bit grey: a plain conversion clips every value over 255 to white, so scale
        # the range down to 8 bits first
        img = img.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    elif img.mode not in ("RGB", "RGBA", "L", "LA"):
        img = img.convert("RGBA" if "A" in img.mode else "RGB")
    w, h = img.size
    scale = _scale_for(w, h, budget)
    alpha = _has_alpha(img)
    first_fmt = {"GIF": "PNG"}.get(fmt, fmt)
    fallback = "WEBP" if alpha else "JPEG"
    while True:
        tw, th = max(1, round(w * scale)), max(1, round(h * scale))
        while not _fits(tw, th, budget):  # rounding up may overshoot by a pixel
            tw, th = max(1, tw - 1), max(1, th - 1)
        resized = img if (tw, th) == (w, h) else img.resize((tw, th), Image.Resampling.LANCZOS)
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
