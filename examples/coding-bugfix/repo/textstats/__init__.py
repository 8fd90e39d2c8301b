"""textstats: small statistics over numbers and words."""

from .stats import mean, median, mode
from .words import top_words, word_counts

__all__ = ["mean", "median", "mode", "top_words", "word_counts"]
