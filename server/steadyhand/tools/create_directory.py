"""The ``createDirectory`` tool: a folder and the folders missing above it (``mkdir -p``).

The path is resolved, confined and deny-checked as every path is; the session must be
writable and the folder not protected. An existing folder is a success that creates
nothing; a file in the way is refused. The folders are made through no symbolic link.
History keeps no record of a folder: undo and rewind leave folders as they are.
"""

from __future__ import annotations

import stat

from steadyhand.context import ToolContext
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, named
from steadyhand.protocol.params import CreateDirectoryParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import mutation
from steadyhand.tools import tree_scope as ts


async def create_directory(ctx: ToolContext, p: CreateDirectoryParams) -> Result:
    # A trailing slash is how a folder is often written; it names the same folder.
    given = p.path.rstrip("/") if p.path.strip("/") else p.path
    rp = ctx.resolve(given)
    if rp.stat is not None:
        return _existing(rp.path, rp.stat.st_mode)
    try:
        made = await mutation.make_folders(ctx, rp.path, session=p.session)
    except FileExistsError:
        # Made by someone else meanwhile (or a file put there): judge what is there now.
        now = rp.status(again=True)
        if now is None:
            raise _failed(rp.path, "it appeared and went again while being made") from None
        return _existing(rp.path, now.st_mode)
    except NotADirectoryError:
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"A part of {rp.path} is a file, so no folder can be made there. Pick a path "
            "whose folders are folders (or do not exist yet).",
            path=rp.path,
        ) from None
    except OSError as exc:
        raise _failed(rp.path, exc.strerror or str(exc)) from exc
    if not made:  # made by someone else meanwhile
        return _existing(rp.path, stat.S_IFDIR)
    shown = [ts.shown(ctx, d) for d in made]
    above = shown[:-1]
    extra = f" (with {len(above)} folder{'s' if len(above) != 1 else ''} above it: {named(above)})"
    message = f"Created the folder {rp.path}{extra if above else ''}."
    return success(message, path=rp.path, existed=False, **list_fields("created", shown))


def _existing(path: str, mode: int) -> dict[str, object]:
    if stat.S_ISDIR(mode):
        return success(
            f"{path} already exists as a folder; nothing was created.",
            path=path,
            existed=True,
            created=[],
        )
    raise ToolError(
        ErrorCode.INVALID_PATH,
        f"{path} already exists and is a file, so no folder can be made there. Pick "
        "another name, or ask the user to move the file.",
        path=path,
    )


def _failed(path: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.IO_ERROR,
        f"Could not create the folder {path}: {why}. Nothing was changed. Fix the cause "
        "(permissions, a full disk) or tell the user.",
        path=path,
    )
