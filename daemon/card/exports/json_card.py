"""The card as JSON, and the JSON Schema a receiving facility validates it with.

The JSON is the CardSet model as the wire carries it (`card.get`); the schema is
generated from that model and kept in the repository as card.schema.json, so
that a facility's tools (any language) can check a card without tcccd. A test
holds the two together: change the model, regenerate the file
(`python -m tcccd.card.exports.json_card > daemon/card/exports/card.schema.json`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from tcccd.wire.card import CardSet

SCHEMA_ID = "urn:tcccd:card:1"


def card_json(cards: CardSet) -> dict[str, Any]:
    return cards.model_dump(mode="json")


def generated_schema() -> dict[str, Any]:
    schema = CardSet.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "tcccd casualty cards (DD Form 1380)", **schema}


def shipped_schema() -> dict[str, Any]:
    """The schema file as installed with tcccd."""
    return json.loads(resources.files("tcccd.card.exports").joinpath("card.schema.json").read_text())


if __name__ == "__main__":
    print(json.dumps(generated_schema(), indent=1, sort_keys=True))
