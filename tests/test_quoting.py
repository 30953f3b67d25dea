from monitord.core.quoting import url_quote


def test_ascii_printable_is_kept():
    text = "abc XYZ 0123 #@ /:;<=>?[]{}~`!$&()*+,-.\\^_|"
    assert url_quote(text) == text


def test_specials_and_controls_are_escaped_upper_case():
    assert url_quote("a%b'c\"d") == "a%25b%27c%22d"
    assert url_quote("\n\t\r\x00\x1f\x7f") == "%0A%09%0D%00%1F%7F"


def test_non_ascii_is_utf8_byte_escaped():
    assert url_quote("é") == "%C3%A9"
    assert url_quote("x€y") == "x%E2%82%ACy"
    assert url_quote("\U0001f600") == "%F0%9F%98%80"


def test_every_byte_value_follows_the_rule():
    for code in range(0x80):
        quoted = url_quote(chr(code))
        if code < 0x20 or code >= 0x7F or chr(code) in "%'\"":
            assert quoted == f"%{code:02X}"
        else:
            assert quoted == chr(code)


def test_lone_surrogate_escape_round_trips_the_original_byte():
    raw = b"ok \xff end"
    assert url_quote(raw.decode("utf-8", "surrogateescape")) == "ok %FF end"
