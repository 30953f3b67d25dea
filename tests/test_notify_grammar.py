"""The .notify grammar (doc §11.1): entities, field counts, ids, diagnostics with line numbers."""

from __future__ import annotations

from notifications.grammar import Action, parse_notify

UUID = "d2c4f79c-8d5b-4577-8c46-5031f4d704e8"


def test_planner_example_is_parsed_into_the_three_tables() -> None:
    text = f"""
WORKFLOW {UUID} on_error /bin/date1
INVOCATION merge_vahi-preprocess-1.0_PID1_ID1 1 on_success /bin/date_executable
DAXJOB subdax_black_ID000003 on_error /bin/date13
JOB    analyze_ID00004    on_success /bin/date
DAGJOB subdag_x start /bin/echo dag
"""
    table, diags = parse_notify(text, wf_uuid=UUID, path="wf.notify")
    assert diags == []
    assert table.workflow == [Action("on_error", "/bin/date1")]
    assert table.invocations == {
        ("merge_vahi-preprocess-1.0_PID1_ID1", 1): [Action("on_success", "/bin/date_executable")]
    }
    # JOB, DAXJOB and DAGJOB share one table keyed by node name.
    assert table.jobs == {
        "subdax_black_ID000003": [Action("on_error", "/bin/date13")],
        "analyze_ID00004": [Action("on_success", "/bin/date")],
        "subdag_x": [Action("start", "/bin/echo dag")],
    }
    assert len(table) == 5


def test_action_keeps_its_inner_spaces_and_quotes() -> None:
    text = f"WORKFLOW {UUID} all /bin/notify  --msg \"two  words\" 'x y'   \n"
    table, _ = parse_notify(text, wf_uuid=UUID)
    assert table.workflow == [Action("all", "/bin/notify  --msg \"two  words\" 'x y'")]


def test_entity_keyword_is_case_insensitive_and_comments_blank_lines_skip() -> None:
    text = f"# a comment\n\n   \nworkflow {UUID} start a\nJob j at_end b\ndaxJOB d never c\n"
    table, diags = parse_notify(text, wf_uuid=UUID)
    assert diags == []
    assert table.workflow == [Action("start", "a")]
    assert table.jobs == {"j": [Action("at_end", "b")], "d": [Action("never", "c")]}


def test_several_actions_for_one_id_and_condition_are_all_kept_in_order() -> None:
    text = "JOB j on_error first\nJOB j on_error second\nJOB j on_error first\n"
    table, _ = parse_notify(text, wf_uuid=UUID)
    assert [a.command for a in table.jobs["j"]] == ["first", "second", "first"]


def test_malformed_lines_are_reported_with_file_and_line_and_the_rest_kept() -> None:
    text = "\n".join(
        [
            "JOB ok start good1",  # 1
            "JOB onlythree start",  # 2: too few fields
            "FOO bar start x",  # 3: unknown entity
            "INVOCATION j x all y",  # 4: index not an integer
            "INVOCATION j 1 all",  # 5: too few fields
            "WORKFLOW 00000000-0000-0000-0000-000000000000 start z",  # 6: another workflow
            "WORKFLOW",  # 7
            "INVOCATION j 2 on_error good2",  # 8
            f"WORKFLOW {UUID} at_end good3",  # 9
        ]
    )
    table, diags = parse_notify(text, wf_uuid=UUID, path="/run/wf.notify")
    assert [(d.path, d.line_no, d.kept) for d in diags] == [
        ("/run/wf.notify", n, False) for n in (2, 3, 4, 5, 6, 7)
    ]
    assert "unknown entity" in diags[1].message
    assert "not an integer" in diags[2].message
    assert UUID in diags[4].message
    assert str(diags[0]).startswith("/run/wf.notify:2: ")
    assert table.jobs == {"ok": [Action("start", "good1")]}
    assert table.invocations == {("j", 2): [Action("on_error", "good2")]}
    assert table.workflow == [Action("at_end", "good3")]


def test_unknown_condition_is_kept_with_a_warning() -> None:
    table, diags = parse_notify("JOB j bogus cmd\n", wf_uuid=UUID, path="f")
    assert table.jobs == {"j": [Action("bogus", "cmd")]}
    assert len(diags) == 1 and diags[0].kept and diags[0].line_no == 1


def test_empty_or_all_invalid_file_gives_an_empty_table() -> None:
    for text in ("", "# only a comment\n", "JOB x\n"):
        table, _ = parse_notify(text, wf_uuid=UUID)
        assert not table and len(table) == 0


def test_negative_and_large_invocation_indexes_are_integers() -> None:
    table, diags = parse_notify("INVOCATION j -1 all a\nINVOCATION j 12 all b\n", wf_uuid=UUID)
    assert diags == []
    assert set(table.invocations) == {("j", -1), ("j", 12)}
