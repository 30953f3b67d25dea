"""Passwords are masked wherever they stand alone, and short ones do not mangle the text."""

from __future__ import annotations

import pytest

from monitord.system.secrets import mask_secret
from sinks.amqp.config import scrub as amqp_scrub
from sinks.sql.database import parse_url, scrub

pytestmark = pytest.mark.quick


def test_a_password_is_masked_in_every_spelling() -> None:
    text = "connect u:s3cr/t@h failed; dsn password='s3cr/t' quoted s3cr%2Ft"
    masked = mask_secret(text, "s3cr/t")
    assert "s3cr" not in masked
    assert masked.count("***") == 3


def test_a_short_password_does_not_mangle_words() -> None:
    url = parse_url("mysql://u:p@127.0.0.1:1/db")
    message = 'OperationalError: (2003, "Can\'t connect") for mysql://u:p@127.0.0.1:1/db'
    assert scrub(message, url) == (
        'OperationalError: (2003, "Can\'t connect") for mysql://u:***@127.0.0.1:1/db'
    )
    assert amqp_scrub("ProtocolError p", "p") == "ProtocolError ***"


def test_nothing_to_mask() -> None:
    assert mask_secret("text", None) == "text"
    assert mask_secret("text", "") == "text"
