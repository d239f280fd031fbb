"""Where the builder's images live and how they are named (apps/assets.py), and who may
write there (the tools, hand edits, the download's allow-list)."""

from __future__ import annotations

import pytest

from zerocode.apps import assets
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import IMAGE_EXTENSIONS, WorkspaceLimits, clean_path
from zerocode.publishing import export_rules
from zerocode.publishing.media_types import media_type

VUE, HTML, MULTI = CodeGenType.VUE_PROJECT, CodeGenType.HTML, CodeGenType.MULTI_FILE


@pytest.mark.parametrize(
    ("name", "ext", "path"),
    [
        ("logo.png", "png", "assets/logo.png"),
        ("My Logo.PNG", "png", "assets/my-logo.png"),
        ("../../etc/passwd.png", "png", "assets/passwd.png"),
        ("..\\..\\windows\\win.ini", "png", "assets/win.png"),
        ("photo.png", "jpg", "assets/photo.jpg"),  # the real type names it
        (".htaccess", "png", "assets/htaccess.png"),
        ("", "gif", "assets/image.gif"),
        ("...", "gif", "assets/image.gif"),
        ("café crème.jpg", "jpg", "assets/cafe-creme.jpg"),
        ("标志.png", "png", "assets/image.png"),
        ("a\u202eexe.png", "png", "assets/aexe.png"),
        ("x" * 300 + ".png", "png", "assets/" + "x" * 60 + ".png"),
        ("index.html", "png", "assets/index.png"),
    ],
)
def test_an_uploads_name_is_folded_into_the_folder(name: str, ext: str, path: str) -> None:
    got = assets.path_for(HTML, name, ext)
    assert got == path and clean_path(got) == got and assets.is_asset_file(HTML, got)
    vue = assets.path_for(VUE, name, ext)
    assert vue == "public/" + path and assets.url(VUE, vue) == path


def test_the_folder_is_written_by_uploads_alone() -> None:
    for kind, path in [(VUE, "public/assets/logo.png"), (HTML, "assets/logo.png")]:
        why = assets.write_refusal(kind, path)
        assert why is not None and "uploaded images" in why
        assert assets.write_refusal(kind, "index.html") is None
    assert assets.write_refusal(VUE, "public/logo.png") is None  # the app's own public files


def test_a_static_apps_download_carries_its_images_and_nothing_else_there() -> None:
    for kind in (HTML, MULTI):
        assert export_rules.refusal(kind, "assets/logo.png") is None
        assert export_rules.refusal(kind, "assets/deep/logo.png") is not None
        assert export_rules.refusal(kind, "assets/page.html") is not None
        assert export_rules.refusal(kind, "assets/.npmrc") is not None
        assert export_rules.refusal(kind, "logo.png") is not None


def test_images_have_their_own_bound_and_their_own_types_everywhere() -> None:
    limits = WorkspaceLimits(max_file_bytes=1000, max_files=5, max_image_bytes=9000)
    assert limits.most("assets/logo.PNG") == 9000 and limits.most("src/App.vue") == 1000
    assert set(assets.MEDIA_TYPES) <= IMAGE_EXTENSIONS
    for ext, kind in assets.MEDIA_TYPES.items():
        assert media_type(f"assets/x.{ext}") == kind
    assert media_type("index.html") == "text/html"
    assert media_type("x.unknownext") == "application/octet-stream"
