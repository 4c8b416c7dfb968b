"""Pure retrieval functions: text analysis, lexical scoring, score fusion."""
