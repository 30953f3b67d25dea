"""braindump.yml / braindump.txt reader (spec 1.1)."""

from __future__ import annotations

import calendar
import random
import re
from pathlib import Path

import pytest

from monitord.core.readers import braindump
from monitord.core.readers.braindump import (
    BRAINDUMP_KEYS,
    BraindumpError,
    parse_braindump_txt,
    parse_braindump_yml,
    planner_iso_epoch,
    read_braindump,
)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def test_every_fixed_key_present_and_none_when_absent() -> None:
    bd = parse_braindump_yml('wf_uuid: "u-1"\ndag: "x.dag"\n')
    assert bd.wf_uuid == "u-1" and bd.dag == "x.dag"
    for key in BRAINDUMP_KEYS:
        assert hasattr(bd, key)
    assert bd.notify is None and bd.as_dict()["properties"] is None


def test_yaml_scalars_booleans_only_true_false() -> None:
    bd = parse_braindump_yml(
        "uses_pmc: true\nvogroup: yes\ntype: off\nscript: false\n"
        "timestamp: 2023-03-03T22:23:33-08:00\ngrid_dn: null\n"
    )
    assert bd.uses_pmc is True and bd.script is False
    assert bd.vogroup == "yes" and bd.type == "off"
    assert bd.timestamp == "2023-03-03T22:23:33-08:00"
    assert bd.grid_dn is None


def test_paths_are_normalised() -> None:
    bd = parse_braindump_yml(
        'submit_dir: "/x/run0001/00/00/./sub.000/"\ndax: "/a//b/./c.yml"\nuser: "./keep/"\n'
    )
    assert bd.submit_dir == "/x/run0001/00/00/sub.000"
    assert bd.dax == "/a/b/c.yml"
    assert bd.user == "./keep/"  # not a path key


def test_unknown_key_is_kept_and_warned_once(capsys: pytest.CaptureFixture[str]) -> None:
    """A newer planner's key must not make the directory unreadable (the reference refuses it)."""
    text = "wf_uuid: u\ndag: x.dag\nnew_planner_key_a: 1\n"
    bd = parse_braindump_yml(text, source="bd.yml")
    assert (bd.wf_uuid, bd.dag) == ("u", "x.dag")
    assert bd.extra == {"new_planner_key_a": 1}
    parse_braindump_yml(text, source="other/bd.yml")
    err = capsys.readouterr()
    logged = err.out + err.err
    assert logged.count("new_planner_key_a") == 1, logged
    assert "bd.yml" in logged


@pytest.mark.parametrize("text", ["- a\n- b\n", "a: [unclosed\n"])
def test_invalid_yaml_is_braindump_error(text: str) -> None:
    with pytest.raises(BraindumpError):
        parse_braindump_yml(text)


def test_txt_split_at_first_space_and_run_fixup() -> None:
    text = "wf_uuid  abc \nlabel my label\nrun /old/place\npegasus_wf_time 20230303T222333-0800\n"
    bd = parse_braindump_txt(text, "/new/place")
    assert bd.wf_uuid == "abc"
    assert bd.label == "my label"
    assert bd.extra["run"] == "/new/place"
    assert bd.epoch == 1677911013
    assert parse_braindump_txt("run /old\n", ".").extra["run"] == "/old"


def test_read_prefers_yml_then_txt_then_error(tmp_path: Path) -> None:
    with pytest.raises(BraindumpError, match=str(tmp_path)):
        read_braindump(str(tmp_path))
    (tmp_path / "braindump.txt").write_text("wf_uuid from-txt\n")
    assert read_braindump(str(tmp_path)).wf_uuid == "from-txt"
    (tmp_path / "braindump.yml").write_text("wf_uuid: from-yml\n")
    assert read_braindump(str(tmp_path)).wf_uuid == "from-yml"


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        ("20230303T222333-0800", 1677911013),
        ("20230303T222333.7-0800", 1677911013),
        ("2023-03-03T22:23:33-08:00", 1677911013),
        ("20230303T222333Z", 1677882213),
        ("20230303t222333z", 1677882213),
        ("2023-03-03 22:23:33Z", 1677882213),
        ("20230303T222333+05:30", 1677862413),
        ("20230303T222333", None),
        ("20230303T222333-08", None),
        ("20231303T222333Z", None),
        ("garbage", None),
    ],
)
def test_planner_iso_epoch(text: str, epoch: int | None) -> None:
    assert planner_iso_epoch(text) == epoch


def _plain_epoch(text: str) -> int | None:
    """The stamp rules written plainly: the pattern, the date's ranges, the zone."""
    m = re.fullmatch(
        r"(\d{4})-?(\d{2})-?(\d{2})[Tt ](\d{2}):?(\d{2}):?(\d{2})(?:[.,]\d+)?"
        r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))",
        text,
    )
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        return None
    east = 0 if m[7] else (int(m[9]) * 3600 + int(m[10]) * 60) * (1 if m[8] == "+" else -1)
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - east


def test_static_bp_stamp_shortcut_agrees_with_the_pattern_on_random_stamps() -> None:
    """The cache by a ``...SS.<digits>Z`` stamp's first 19 characters gives what the pattern
    gives, also for a stamp that shares a cached prefix but not the form (a non-digit
    fraction, another character at 19, a lower-case or numeric zone, an empty fraction)."""
    rnd = random.Random(30)
    braindump._Z_EPOCHS.clear()
    prefixes = [
        "1970-02-16T16:11:29",
        "1969-12-31T23:59:59",
        "2023-03-03T22:23:33",
        "2023-13-03T22:23:33",
        "2023-03-03 22:23:33",
        "20230303T222333xxxx",
        "2023-03-03T22:23:3a",
    ]
    seps = [".", ".", ".", ",", "x", "", "5"]
    fractions = ["4678", "0", "", "٣٤", "4x", " 4", "4 ", "²"]
    zones = ["Z", "Z", "Z", "z", "+05:30", "-0800", "", "ZZ"]
    checked = 0
    for _ in range(20000):
        text = rnd.choice(prefixes) + rnd.choice(seps) + rnd.choice(fractions) + rnd.choice(zones)
        assert planner_iso_epoch(text) == _plain_epoch(text), text
        checked += _plain_epoch(text) is not None
    assert checked > 1000  # valid stamps too, not only rejects


def test_derived_values() -> None:
    bd = parse_braindump_yml(
        'planner_arguments: "\\"--conf p --force wf.yml \\""\njsd: "/r/run1/jobstate.log"\n'
    )
    assert bd.argv == "--conf p --force wf.yml"
    assert bd.orig_submit_dir == "/r/run1"


def test_every_corpus_braindump_parses() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not available at {CORPUS}")
    files = sorted(CORPUS.glob("*/input/**/braindump.yml"))
    assert files
    for path in files:
        bd = read_braindump(str(path.parent))
        assert bd.wf_uuid and bd.dag and isinstance(bd.epoch, int)
        assert "/./" not in bd.submit_dir
