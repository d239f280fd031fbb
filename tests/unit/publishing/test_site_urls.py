"""Preview and site URLs (publish.py): one origin per app, keys that survive a host name."""

from __future__ import annotations

import pytest

from zerocode.apps.records import (
    DEPLOY_KEY_CHARS,
    PREVIEW_KEY_CHARS,
    new_deploy_key,
    new_preview_key,
)
from zerocode.bootstrap.settings import Settings
from zerocode.errors import InvalidInput
from zerocode.publishing.pointers import SiteUrls, is_host_key, pointer_of_label

LOCAL = SiteUrls("http://127.0.0.1:8001", "localhost:8001")


def test_new_keys_are_host_labels_and_do_not_repeat() -> None:
    previews = {new_preview_key() for _ in range(200)}
    deploys = {new_deploy_key() for _ in range(200)}
    assert len(previews) == len(deploys) == 200
    assert all(is_host_key(k) and len(k) == PREVIEW_KEY_CHARS for k in previews)
    assert all(is_host_key(k) and len(k) == DEPLOY_KEY_CHARS for k in deploys)
    assert len("p-" + max(previews, key=len)) <= 63  # a DNS label's limit


def test_local_urls_give_each_preview_and_site_its_own_origin() -> None:
    assert LOCAL.preview("abcdefgh1234") == "http://p-abcdefgh1234.localhost:8001/"
    assert LOCAL.site("abcdefgh1234") == "http://abcdefgh1234.localhost:8001/"
    assert LOCAL.template(preview=True) == "http://p-{key}.localhost:8001/"
    with pytest.raises(InvalidInput):
        LOCAL.site("a/b")


@pytest.mark.parametrize(
    ("host", "pointer"),
    [
        ("abcdefgh1234.localhost:8001", "site:abcdefgh1234"),
        ("ABCDEFGH1234.LocalHost", "site:abcdefgh1234"),  # host names ignore case
        ("p-abcdefgh1234.localhost:8001", "preview:abcdefgh1234"),
        ("localhost:8001", None),
        ("127.0.0.1:8001", None),
        ("a.abcdefgh1234.localhost:8001", None),
        ("abcdefgh1234.localhost.example.com", None),
        ("abcdefgh1234.notlocalhost:8001", None),
        ("p-abcdefgh1234-x.localhost", None),
        ("abc.localhost", None),  # too short for a key
        ("", None),
    ],
)
def test_a_host_names_one_pointer_or_none(host: str, pointer: str | None) -> None:
    assert LOCAL.pointer_of_host(host) == pointer


def test_labels_keep_previews_and_sites_apart() -> None:
    assert pointer_of_label("p-abcdefgh") == "preview:abcdefgh"
    assert pointer_of_label("abcdefgh") == "site:abcdefgh"
    assert pointer_of_label("p-") is None and pointer_of_label("ab_cdefgh") is None


def test_which_scheme_each_mode_uses() -> None:
    local = Settings(sites_port=9001).site_urls()
    assert local.per_app_origins and local.domain == "localhost:9001"
    assert local.base == "http://127.0.0.1:9001"  # covers stay on the bare host
    aws = Settings(mode="aws", sites_url="https://d1.cloudfront.net/").site_urls()
    assert not aws.per_app_origins
    assert aws.site("Old_Key-123") == "https://d1.cloudfront.net/sites/Old_Key-123/"
    assert aws.usable("Old_Key-123") and not local.usable("Old_Key-123")
    custom = Settings(
        mode="aws", sites_url="https://d1.cloudfront.net", sites_domain="apps.example.net"
    ).site_urls()
    assert custom.site("abcdefgh1234") == "https://abcdefgh1234.apps.example.net/"
    assert custom.pointer_of_host("p-abcdefgh1234.apps.example.net") == "preview:abcdefgh1234"
