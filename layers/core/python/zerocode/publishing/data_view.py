"""The builder's view of an app's data (issue 39, point 6): what the console's Data tab and
``/api/apps/{id}/data/{space}/...`` show the app's owner (and admins).

A space's data model is the one in force there, as for visitors (data/in_force.py): the
preview's is the build its preview shows, the live one the deployed build's. The builder
is held to no access rule: they see every record and every end user of their app, can
search records, export a collection whole (JSON or CSV) and remove an end user.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from zerocode.apps.records import App
from zerocode.data.backend import Backend
from zerocode.data.model import DATA_MODEL, Collection, DataModel, DataModelInvalid, parse
from zerocode.data.records import MAX_LIMIT, SPACES, Space
from zerocode.data.service import Asked
from zerocode.errors import Conflict, InvalidInput, NotFound
from zerocode.publishing.pointers import Publisher, preview_pointer

EXPORTS = ("json", "csv")
RECORD_KEYS = ("id", "createdAt", "updatedAt", "owner")


def check_space(value: str) -> Space:
    if value not in SPACES:
        raise NotFound(f"no data space {value[:20]!r}: preview or live")
    return value


@dataclass
class DataView:
    backend: Backend
    publisher: Publisher

    def build_of(self, app: App, space: Space) -> str | None:
        """The build whose data model is in force in ``space`` (None: nothing built yet)."""
        if space != "preview":
            return app.deploy_build_id
        try:
            target = self.publisher.target(preview_pointer(app.preview_key))
        except InvalidInput:  # a key from before per-app origins: no preview yet
            return None
        return target.build_id if target is not None and target.app_id == app.id else None

    def model(self, app: App, space: Space) -> tuple[str | None, DataModel | None]:
        build = self.build_of(app, space)
        return build, self.backend.models.of(app.id, build) if build else None

    def overview(self, app: App, space: Space) -> dict[str, Any]:
        build, model = self.model(app, space)
        collections = [] if model is None else model.collections
        if space == "preview" and model is not None:
            self.backend.data.seed_preview(app.id, model)  # as a visitor of the preview sees it
        return {
            "space": space,
            "buildId": build,
            "collections": [self._shown(app, space, c) for c in collections],
        }

    def _shown(self, app: App, space: Space, collection: Collection) -> dict[str, Any]:
        return {
            "name": collection.name,
            "fields": [
                {
                    "name": f.name,
                    "type": f.type,
                    "required": f.required,
                    **({"values": list(f.values)} if f.values else {}),
                }
                for f in collection.fields
            ],
            "rules": dict(collection.rules),
            "count": self.backend.records.count(app.id, space, collection.name),
        }

    def records(
        self, app: App, space: Space, collection: str, params: Mapping[str, str]
    ) -> dict[str, Any]:
        return self.backend.data.list(self._asked(app, space, collection), params)

    def export(self, app: App, space: Space, collection: str, form: str) -> tuple[bytes, str]:
        """Every record of the collection, oldest first, as JSON or CSV: (body, media type)."""
        if form not in EXPORTS:
            raise InvalidInput("format: json or csv")
        asked = self._asked(app, space, collection)
        rows = list(self._every(asked))
        if form == "json":
            body = json.dumps({"records": rows}, ensure_ascii=False, indent=1)
            return body.encode(), "application/json"
        model = asked.model.collection(collection)
        assert model is not None  # _asked found it
        columns = [*RECORD_KEYS, *(f.name for f in model.fields)]
        out = io.StringIO()
        writer = csv.DictWriter(out, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
        return out.getvalue().encode(), "text/csv; charset=utf-8"

    def _every(self, asked: Asked) -> Iterator[dict[str, Any]]:
        cursor: str | None = None
        while True:
            params = {"limit": str(MAX_LIMIT), **({"cursor": cursor} if cursor else {})}
            page = self.backend.data.list(asked, params)
            yield from page["records"]
            cursor = page["cursor"]
            if cursor is None:
                return

    def check_deploy(self, app: App, source: Mapping[str, bytes]) -> None:
        """DataHidden (409) when the source's data model would hide live records."""
        _, live = self.model(app, "live")
        if live is None:
            return
        data = source.get(DATA_MODEL)
        try:
            new = parse(data) if data is not None else None
        except DataModelInvalid as exc:  # every write is checked: only a file from before
            raise InvalidInput(str(exc)) from None
        held = {
            c.name: self.backend.records.count(app.id, "live", c.name) for c in live.collections
        }
        found = hidden_by(new, live, held)
        if found:
            raise DataHidden(
                "this deploy's data model would no longer show what the live site keeps: "
                + "; ".join(found)
                + ". Nothing is deleted by a deploy: deploy with confirmDataChanges to hide "
                "them (they come back with a model that shows them again)"
            )

    def add(self, app: App, space: Space, collection: str, body: Any) -> dict[str, Any]:
        """A record the builder adds (no owner; held to the fields, not the rules)."""
        return self.backend.data.create(self._asked(app, space, collection), body)

    def change(
        self, app: App, space: Space, collection: str, record_id: str, body: Any
    ) -> dict[str, Any]:
        return self.backend.data.update(self._asked(app, space, collection), record_id, body)

    def delete(self, app: App, space: Space, collection: str, record_id: str) -> None:
        self.backend.data.delete(self._asked(app, space, collection), record_id)

    def reset_preview(self, app: App) -> tuple[int, int]:
        """The preview's records and end users deleted, its seed records back (under the
        model the preview shows now): (records deleted, users deleted)."""
        _, model = self.model(app, "preview")
        users = self.backend.users.clear(app.id, "preview")
        return self.backend.data.reset_preview(app.id, model), users

    def users(self, app: App, space: Space, after: str | None, limit: int) -> dict[str, Any]:
        users, cursor = self.backend.end_users.page(app.id, space, after, limit)
        return {"users": [u.shown() for u in users], "cursor": cursor}

    def remove_user(self, app: App, space: Space, user_id: str) -> None:
        self.backend.end_users.remove(app.id, space, user_id)

    def _asked(self, app: App, space: Space, collection: str) -> Asked:
        _, model = self.model(app, space)
        if model is None:
            raise NotFound(f"the app keeps no data in its {space} space (no zerocode.data.json)")
        return Asked(app.id, space, model, collection, None, builder=True)


def _cell(value: Any) -> str:
    """A CSV cell: text as it is, anything else as JSON (true, 3, null → empty)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _inert(value)
    return json.dumps(value, ensure_ascii=False)


def _inert(text: str) -> str:
    """A cell a spreadsheet will not run as a formula (CSV injection): a leading =, +, -, @,
    tab or carriage return is quoted away with an apostrophe."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


class DataHidden(Conflict):
    """A deploy whose data model would hide live records (issue 39, point 4)."""

    code = "data_hidden"


def hidden_by(new: DataModel | None, live: DataModel | None, held: Mapping[str, int]) -> list[str]:
    """What of the live records ``new`` would no longer show, where ``live`` shows it
    (``held``: live records per collection): a collection or a field gone, a field of
    another type, enum values gone. Nothing is deleted either way; this is what a deploy
    must be told before it hides them."""
    found: list[str] = []
    for was in live.collections if live is not None else ():
        count = held.get(was.name, 0)
        if count == 0:
            continue
        now = new.collection(was.name) if new is not None else None
        records = f"{count} live record{'s' if count != 1 else ''}"
        if now is None:
            found.append(f"the collection {was.name} ({records})")
            continue
        for field in was.fields:
            kept = now.field(field.name)
            if kept is None:
                found.append(f"the field {was.name}.{field.name} ({records})")
            elif kept.type != field.type:
                found.append(
                    f"the field {was.name}.{field.name}, now {kept.type}, was {field.type} "
                    f"({records})"
                )
            elif set(field.values) - set(kept.values):
                gone = ", ".join(sorted(set(field.values) - set(kept.values)))
                found.append(f"the values {gone} of {was.name}.{field.name} ({records})")
    return found
