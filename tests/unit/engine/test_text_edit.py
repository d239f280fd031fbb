"""Mapping a picked text back to its one place in the source: changed exactly there, or
refused saying why (never a guess)."""

from __future__ import annotations

import pytest

from zerocode.engine.text_edit import TextNotEditable, Why, edit_text, places
from zerocode.errors import InvalidInput

PAGE = b"""<!doctype html>
<html lang="en">
<head><title>Crumbs</title><style>h1 { color: red } /* <p>Start</p> */</style></head>
<body>
  <h1>Crumbs</h1>
  <p class="lead">
    Fresh bread &amp; cakes
  </p>
  <button id="go">Start</button>
  <!-- <button>Stop</button> -->
  <button>Stop</button>
  <script>document.querySelector("p").textContent = "<b>Made by code</b>";</script>
</body>
</html>
"""

VUE = b"""<template>
  <main>
    <h1>Recipes</h1>
    <p>{{ count }} recipes</p>
    <template v-if="empty"><p>Nothing yet</p></template>
    <button @click="add">Add</button>
  </main>
</template>

<script setup>
const label = "<button>Add</button>";
</script>

<style scoped>
h1 { color: teal; }
</style>
"""


def test_a_unique_text_is_replaced_exactly_there_and_escaped() -> None:
    done = edit_text({"index.html": PAGE}, "Start", "Go <now> & then", tag="button", vue=False)
    assert done.path == "index.html" and done.line == 9
    assert done.data == PAGE.replace(
        b'<button id="go">Start</button>', b'<button id="go">Go &lt;now&gt; &amp; then</button>'
    )


def test_whitespace_and_entities_are_matched_as_the_page_shows_them() -> None:
    done = edit_text({"index.html": PAGE}, "Fresh bread & cakes", "Bread", tag="p", vue=False)
    # The segment's own leading and trailing whitespace stays; only the words change.
    assert b'<p class="lead">\n    Bread\n  </p>' in done.data


def test_scripts_styles_and_comments_are_not_page_text() -> None:
    found, _ = places({"index.html": PAGE}, "Stop", "button")
    assert [p.line for p in found] == [11]  # the commented-out button is not a place
    with pytest.raises(TextNotEditable) as refused:
        edit_text({"index.html": PAGE}, "Made by code", "x", tag="p", vue=False)
    assert refused.value.why is Why.NOT_FOUND and refused.value.status == 422


def test_the_same_text_in_two_places_is_ambiguous_and_names_them() -> None:
    two = {"index.html": PAGE, "about.html": b"<html><body><h1>Crumbs</h1></body></html>"}
    with pytest.raises(TextNotEditable) as refused:
        edit_text(two, "Crumbs", "Crumbs & Co", tag="h1", vue=False)
    assert refused.value.why is Why.AMBIGUOUS
    assert "about.html:1" in refused.value.message and "index.html:5" in refused.value.message


def test_the_tag_tells_two_texts_apart() -> None:
    # "Crumbs" is also the <title>; the picked element was the heading.
    done = edit_text({"index.html": PAGE}, "Crumbs", "Crumbs & Co", tag="h1", vue=False)
    assert b"<title>Crumbs</title>" in done.data and b"<h1>Crumbs &amp; Co</h1>" in done.data
    with pytest.raises(TextNotEditable):
        edit_text({"index.html": PAGE}, "Crumbs", "X", tag=None, vue=False)


def test_vue_templates_only_and_expressions_are_refused() -> None:
    files = {"src/App.vue": VUE, "src/main.js": b'document.title = "Recipes"'}
    done = edit_text(files, "Recipes", "My Recipes", tag="h1", vue=True)
    assert done.path == "src/App.vue" and b"<h1>My Recipes</h1>" in done.data
    # In the script, the same markup is a string, not the page.
    assert edit_text(files, "Add", "New", tag="button", vue=True).data.count(b"Add") == 1
    assert edit_text(files, "Nothing yet", "Empty", tag="p", vue=True).line == 5
    with pytest.raises(TextNotEditable) as refused:
        edit_text(files, "3 recipes", "x", tag="p", vue=True)
    assert refused.value.why is Why.DYNAMIC


@pytest.mark.parametrize(
    ("new", "kind"),
    [
        ("", "html"),
        ("   ", "html"),
        ("two\nlines", "html"),
        ("tab\there", "html"),
        ("x" * 2001, "html"),
        ("evil\u202etxt", "html"),
        ("{{ secret }}", "vue"),
    ],
)
def test_bad_new_text_is_a_clear_400(new: str, kind: str) -> None:
    vue = kind == "vue"
    files = {"src/App.vue": VUE} if vue else {"index.html": PAGE}
    with pytest.raises(InvalidInput):
        edit_text(files, "Recipes" if vue else "Stop", new, tag=None, vue=vue)


def test_an_element_without_text_is_a_clear_400() -> None:
    with pytest.raises(InvalidInput):
        edit_text({"index.html": PAGE}, "  ", "x", tag=None, vue=False)
