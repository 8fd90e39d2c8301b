from textstats import top_words, word_counts


def test_word_counts_ignore_case():
    assert word_counts("The cat and the hat")["the"] == 2


def test_top_words_order():
    assert top_words("b a b c a b", 2) == [("b", 3), ("a", 2)]
