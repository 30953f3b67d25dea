from monitord.core.readers.errfile import (
    err_text_and_payloads,
    pegasus_lite_exitcode,
    pegasus_lite_host,
)
from monitord.core.readers.payloads import PAYLOAD_END as E
from monitord.core.readers.payloads import PAYLOAD_START as S

ERR = (
    "2023-03-03 22:24:19: PegasusLite: version 5.0.5\n"
    "2023-03-03 22:24:19: Executing on host workflow.isi.edu IP=128.9.46.53\n"
    "later: Executing on host other.host IP=1.2.3.4\n"
    "PegasusLite: exitcode 0\n"
)


def test_host_and_ip_first_match():
    assert pegasus_lite_host(ERR) == ("workflow.isi.edu", "128.9.46.53")


def test_host_without_ip():
    assert pegasus_lite_host("x: Executing on host node17\n") == ("node17", None)


def test_no_host():
    assert pegasus_lite_host("nothing here\n") is None


def test_exitcode_first_line_start_only():
    text = (
        "x PegasusLite: exitcode 9\nPegasusLite: exitcode 3 (trailing)\nPegasusLite: exitcode 4\n"
    )
    assert pegasus_lite_exitcode(text) == "3"
    assert pegasus_lite_exitcode(ERR) == "0"
    assert pegasus_lite_exitcode("no code\n") is None
    assert pegasus_lite_exitcode("PegasusLite: exitcode \n") is None
    # a line-start mark without a number: the next line that has one
    assert pegasus_lite_exitcode("PegasusLite: exitcode x\nPegasusLite: exitcode 5\n") == "5"


def test_single_payload_removed_and_parsed():
    text = f'before\n{S}{{"monitoring_event": "int.metric", "payload": []}}{E}\nafter\n'
    stripped, payloads = err_text_and_payloads(text)
    assert stripped == "before\n\nafter\n"
    assert payloads == [{"monitoring_event": "int.metric", "payload": []}]


def test_no_payload_returns_text_unchanged():
    assert err_text_and_payloads("plain\n") == ("plain\n", [])


def test_bad_payload_json_dropped():
    stripped, payloads = err_text_and_payloads(f"a {S}{{not json{E} b")
    assert payloads == []
    assert stripped == "a  b"


def test_non_object_payload_dropped():
    assert err_text_and_payloads(f"{S}[1, 2]{E}")[1] == []


def test_several_payloads_keep_all_but_last_end_marker():
    # observed with the reference 5.1.3 (black box): only the last payload's END is cut
    v1 = '{"ts": 1, "monitoring_event": "m1"}'
    v2 = '{"ts": 2, "monitoring_event": "m2"}'
    stripped, payloads = err_text_and_payloads(f"A {S}{v1}{E} B {S}{v2}{E} C {S}{v1}{E} D")
    assert stripped == f"A {E} B {E} C  D"
    assert [p["monitoring_event"] for p in payloads] == ["m1", "m2", "m1"]


def test_start_without_end_reproduces_reference_cut():
    v1 = '{"ts": 1, "monitoring_event": "m1"}'
    text = f"A {S}{v1}{E} B {S}{v1} C\n"  # the broken payload is text[start:-1]: "{...} C"
    stripped, payloads = err_text_and_payloads(text)
    assert stripped == f"A {E} B " + text[len(E) - 1 :]
    assert len(payloads) == 1
