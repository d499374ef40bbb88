"""Steep's search: the query language (query.py) and where a query matched a result
(matcher.py). Pure: the registry compiles a `Query` to SQL (steepy/registry/search.py)."""

from steepy.search.matcher import Match, SearchResult, TermMatch, matches
from steepy.search.query import Locator, Operator, Query, Type, parse_query

__all__ = ["Locator", "Match", "Operator", "Query", "SearchResult", "TermMatch", "Type",
           "matches", "parse_query"]
