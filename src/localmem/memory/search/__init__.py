"""The read path: tokens, stemming, stopwords, the full-text index, ranking, lookup, recall."""
