"""Counted nouns agree with their number (`wording.plural`)."""

from memuse_core.wording import plural


def test_plural_forms() -> None:
    assert plural(1, "episode") == "1 episode"
    assert plural(0, "episode") == "0 episodes"
    assert plural(2_500, "span") == "2,500 spans"
    assert plural(3, "entry") == "3 entries" and plural(2, "delivery") == "2 deliveries"
    assert plural(2, "day") == "2 days"  # a vowel before y: plain -s
    assert plural(2, "analysis", "analyses") == "2 analyses"
