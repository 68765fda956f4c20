"""Office document properties (``docProps/core.xml``) as metadata."""

from __future__ import annotations

import datetime as dt
from typing import Any

#: Core property → metadata key.
_FIELDS = {
    "title": "title",
    "author": "author",
    "creator": "author",
    "subject": "subject",
    "keywords": "keywords",
    "created": "created",
    "modified": "modified",
}


def core_properties(properties: Any) -> dict[str, Any]:
    """``title``, ``author``, ``subject``, ``keywords`` (text) and ``created``, ``modified``
    (ISO 8601) from a python-docx/python-pptx/openpyxl core properties object; blanks left out.
    """
    metadata: dict[str, Any] = {}
    for attribute, key in _FIELDS.items():
        value = getattr(properties, attribute, None)
        if key in metadata or value is None:
            continue
        if isinstance(value, dt.datetime):
            metadata[key] = value.isoformat()
        elif text := " ".join(str(value).split()):
            metadata[key] = text
    return metadata
