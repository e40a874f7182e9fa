"""The mutation list keeps up with the code it mutates: every mutation still applies."""

import pytest

from tests.mutations import MUTATIONS, ROOT, TESTS


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.what)
def test_each_mutation_finds_its_text_exactly_once(mutation):
    text = (ROOT / mutation.path).read_text()
    assert text.count(mutation.before) == 1
    assert mutation.after != mutation.before
    assert mutation.path in TESTS
