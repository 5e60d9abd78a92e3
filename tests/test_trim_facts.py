"""The deterministic parser on Mem0-style fact sentences and on facts stated inside a question
(MemTrim 3.1 "the same parser is applied to a current query"; grammar in `trim.grammar`).
Expected units are written out by hand."""

from __future__ import annotations

import pytest

from memuse_core.trim import DeterministicParser, MemTrim


def units(text: str) -> list[tuple[str, object]]:
    return [(u.key.label(), u.value) for u in DeterministicParser().parse(text).units]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lives in Oslo", [("user.lives_in", "oslo")]),
        ("I live in Bergen.", [("user.lives_in", "bergen")]),
        ("Moved to Bergen last spring", [("user.lives_in", "bergen last spring")]),
        ("Is vegetarian", [("user.diet", "vegetarian")]),
        ("I'm vegan now.", [("user.diet", "vegan")]),
        ("I am no longer vegetarian", [("user.diet", "not vegetarian")]),
        ("Works at Acme Corp", [("user.works_for", "acme corp")]),
        ("Likes pizza. Dislikes olives.", [("user.likes_pizza", True), ("user.likes_olives", False)]),
        ("I don't like pizza anymore.", [("user.likes_pizza", False)]),
        ("Allergic to peanuts", [("user.allergic_to_peanuts", True)]),
        ("Name is John", [("user.name", "john")]),
        ("My favourite food is sushi", [("user.favourite_food", "sushi")]),
        (
            "Favourite movies are Inception and Heat",
            [("user.favourite_movies", "inception"), ("user.favourite_movies", "heat")],
        ),
        ("Is 34 years old", [("user.age", 34.0)]),
        ("Is a software engineer", [("user.is_a", "software engineer")]),
        ("Is married", [("user.married", True)]),
    ],
)
def test_mem0_style_fact_sentences(text: str, expected: list[tuple[str, object]]) -> None:
    assert units(text) == expected


def test_facts_inside_a_question() -> None:
    """A leading clause set off by a comma is evidence; the rest is the task."""
    p = DeterministicParser().parse("I live in Bergen, what should I cook?")
    assert [(u.key.label(), u.value) for u in p.units] == [("user.lives_in", "bergen")]
    assert p.question == "what should I cook?" and p.task == "what:cook"
    p = DeterministicParser().parse("Since I'm vegan, which dish fits best?")
    assert [(u.key.label(), u.value) for u in p.units] == [("user.diet", "vegan")]
    assert p.task == "which:dish_fits_best"
    # a plain question is still only a task
    assert DeterministicParser().parse("What should I cook tonight?").units == []


def test_other_subjects_are_not_the_user() -> None:
    assert units("Maya lives in Oslo.") == [("subject", "maya"), ("maya.lives_in", "oslo")]
    assert units("The visitor center is open.") == [
        ("subject", "visitor center"),
        ("visitor center.status", "open"),
    ]


def test_mem0_facts_against_a_question_with_a_fact() -> None:
    """The query's "I live in Bergen" conflicts with the stored "Lives in Oslo" (the query
    wins); the diet is memory-only and stays; the duplicate of the query is removed."""
    t = MemTrim()
    t.write("m1", "Lives in Oslo")
    t.write("m2", "Is vegetarian")
    t.write("m3", "Lives in Bergen")
    res = t.read("I live in Bergen, what should I cook?", ["m1", "m2", "m3"])
    assert [u.value for u in res.decisions["m1"].conflicting] == ["oslo"]
    assert [u.value for u in res.decisions["m3"].shared] == ["bergen"]
    assert res.lines == ["Is vegetarian"]
    res = t.read("I'm vegan these days. Any dinner ideas?", ["m1", "m2"])
    assert [u.value for u in res.decisions["m2"].conflicting] == ["vegetarian"]
    assert res.lines == ["Lives in Oslo"]
