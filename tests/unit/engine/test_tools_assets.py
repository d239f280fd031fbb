"""The model's tools and the builder's images: it lists them and cannot write, change or
delete one (a builder's upload is final)."""

from __future__ import annotations

from tests.pictures import png
from tests.unit.engine.tools_support import APP, MemoryWorkspace, call, failed, ok
from zerocode.engine.tools import ToolBox


def test_the_model_lists_the_uploads_with_what_a_page_needs(
    box: ToolBox, ws: MemoryWorkspace
) -> None:
    assert "no images" in ok(box.run(call("list_assets")))
    ws.max_file_bytes = 10_000
    ws.files[(APP, "public/assets/logo.png")] = png((64, 32))
    ws.files[(APP, "public/assets/notes.txt")] = b"not an image"
    first, how = ok(box.run(call("list_assets"))).splitlines()
    assert first.startswith("public/assets/logo.png (image/png, 64×32 px, ")
    assert first.endswith(": assets/logo.png") and "notes" not in first
    assert "<img :src=\"'assets/NAME'\"" in how  # how a template writes it


def test_no_tool_writes_changes_or_deletes_an_upload(box: ToolBox, ws: MemoryWorkspace) -> None:
    ws.max_file_bytes = 10_000
    logo = png()
    ws.files[(APP, "public/assets/logo.png")] = logo
    for name, args in [
        ("write_file", {"path": "public/assets/logo.png", "content": "<svg onload=x>"}),
        ("write_file", {"path": "public/assets/new.html", "content": "<script>"}),
        ("modify_file", {"path": "public/assets/logo.png", "old": "PNG", "new": "GIF"}),
        ("delete_file", {"path": "public/assets/logo.png"}),
    ]:
        assert "the builder's uploaded images" in failed(box.run(call(name, args)))
    assert ws.files[(APP, "public/assets/logo.png")] == logo
    assert (APP, "public/assets/new.html") not in ws.files
