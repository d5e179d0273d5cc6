"""Images end to end: delivered as base64 within a configurable pixel and byte budget."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from PIL import Image
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import READ
from tests.conftest import call


def _decoded(r: dict[str, Any]) -> Image.Image:
    img = Image.open(io.BytesIO(base64.b64decode(r["data"])))
    img.load()
    return img


def _noise(w: int, h: int, mode: str = "RGB") -> Image.Image:
    return Image.frombytes(mode, (w, h), os.urandom(w * h * len(mode)))


def _configure(client: LanguageClient, **settings: object) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": settings})
    )


async def test_small_png_is_delivered_as_it_is(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "dot.png"
    Image.new("RGBA", (40, 30), (0, 128, 255, 200)).save(path)
    r = await call(client, READ, file_path="dot.png")
    assert r["ok"] and r["type"] == "image" and r["media_type"] == "image/png"
    assert (r["width"], r["height"]) == (40, 30) == (r["original_width"], r["original_height"])
    assert base64.b64decode(r["data"]) == path.read_bytes()
    assert "data" not in r["message"].split("`data`")[0] or "base64" in r["message"]
    assert r["data"] not in r["message"]
    again = await call(client, READ, file_path="dot.png")
    assert again["ok"] and again["type"] == "file_unchanged" and "data" not in again


async def test_large_jpeg_is_downscaled_to_the_pixel_budget(
    client: LanguageClient, workspace: Path
) -> None:
    Image.new("RGB", (4000, 3000), (10, 200, 90)).save(workspace / "photo.jpg", quality=90)
    r = await call(client, READ, file_path="photo.jpg")
    assert r["ok"] and r["media_type"] == "image/jpeg"
    assert (r["original_width"], r["original_height"]) == (4000, 3000)
    w, h = r["width"], r["height"]
    assert w * h <= 1_150_000 and max(w, h) <= 1568
    assert abs(w / h - 4 / 3) < 0.01
    assert _decoded(r).size == (w, h)
    assert "Downscaled" in r["message"] and f"{w}×{h}" in r["message"]


async def test_byte_budget_forces_reencoding(client: LanguageClient, workspace: Path) -> None:
    _configure(client, imageMaxBytes=60_000, imageMaxPixels=4_000_000, imageMaxDimension=4000)
    _noise(600, 400).save(workspace / "noise.png")  # about 720 KB of incompressible pixels
    _noise(300, 300, "RGBA").save(workspace / "alpha.webp", lossless=True)
    r = await call(client, READ, file_path="noise.png")
    assert r["ok"], r
    data = base64.b64decode(r["data"])
    assert len(data) <= 60_000 and r["bytes"] == len(data)
    assert r["media_type"] in ("image/jpeg", "image/png")
    assert _decoded(r).size == (r["width"], r["height"])
    a = await call(client, READ, file_path="alpha.webp")
    assert a["ok"] and len(base64.b64decode(a["data"])) <= 60_000
    assert a["media_type"] == "image/webp"  # transparency kept: never JPEG
    assert _decoded(a).mode in ("RGBA", "LA")


async def test_pixel_budget_setting(client: LanguageClient, workspace: Path) -> None:
    _configure(client, imageMaxPixels=10_000, imageMaxDimension=500)
    Image.new("RGB", (400, 100), "white").save(workspace / "wide.png")
    r = await call(client, READ, file_path="wide.png")
    assert r["ok"] and r["width"] * r["height"] <= 10_000 and r["width"] == 200


async def test_gif_and_webp(client: LanguageClient, workspace: Path) -> None:
    frames = [Image.new("RGB", (20, 20), c) for c in ("red", "green", "blue")]
    frames[0].save(workspace / "anim.gif", save_all=True, append_images=frames[1:])
    Image.new("RGB", (50, 20), "red").save(workspace / "pic.webp")
    g = await call(client, READ, file_path="anim.gif")
    assert g["ok"] and g["media_type"] == "image/gif" and g["frames"] == 3
    w = await call(client, READ, file_path="pic.webp")
    assert w["ok"] and w["media_type"] == "image/webp" and (w["width"], w["height"]) == (50, 20)


async def test_image_recognized_without_extension(client: LanguageClient, workspace: Path) -> None:
    Image.new("RGB", (8, 8), "blue").save(workspace / "logo", format="PNG")
    r = await call(client, READ, file_path="logo")
    assert r["ok"] and r["type"] == "image" and r["media_type"] == "image/png"


async def test_corrupt_images_are_refused_clearly(client: LanguageClient, workspace: Path) -> None:
    good = io.BytesIO()
    _noise(64, 64).save(good, "PNG")
    (workspace / "cut.png").write_bytes(good.getvalue()[:300])
    (workspace / "fake.jpg").write_bytes(b"this is not a jpeg at all\n")
    for name in ("cut.png", "fake.jpg"):
        r = await call(client, READ, file_path=name)
        assert r["ok"] is False and r["error"] == "unreadable", r
        assert r["reason"] == "corrupt" and "could not be decoded" in r["message"]


async def test_pages_on_an_image_is_ignored_with_a_note(
    client: LanguageClient, workspace: Path
) -> None:
    Image.new("L", (5, 5), 0).save(workspace / "g.png")
    r = await call(client, READ, file_path="g.png", pages="1", offset=3)
    assert r["ok"] and "`offset` and `pages` do not apply" in r["message"]


async def test_a_16_bit_grey_image_keeps_its_tones_when_reencoded(
    client: LanguageClient, workspace: Path
) -> None:
    # a left-to-right gradient over the whole 16-bit range
    w, h = 600, 400
    noise = os.urandom(w * h)  # low bits of noise: too many bytes to send as they are
    data = b"".join(
        min(65535, int(x / (w - 1) * 65280) + noise[y * w + x]).to_bytes(2, "little")
        for y in range(h)
        for x in range(w)
    )
    Image.frombytes("I;16", (w, h), data).save(workspace / "g16.png")
    assert (workspace / "g16.png").stat().st_size > 60_000
    _configure(client, imageMaxBytes=60_000)
    r = await call(client, READ, file_path="g16.png")
    assert r["ok"], r
    img = _decoded(r).convert("L")
    y = img.height // 2
    greys = [img.getpixel((round(f * (img.width - 1)), y)) for f in (0, 0.25, 0.5, 0.75, 1)]
    assert greys[0] < 10 and greys[-1] > 245, greys
    assert greys == sorted(set(greys)), greys  # a gradient: rising left to right
    assert 100 < greys[2] < 156, greys
    assert "Delivered as it is" not in r["message"], r["message"]
    assert ("Re-encoded" in r["message"]) or ("Downscaled" in r["message"]), r["message"]
