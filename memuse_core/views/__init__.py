"""Typed page views: one function per page section returning a pydantic view model.

Pages call these directly (widgets -> one view call -> one figure); views call the store and the
rules. Nothing here imports Streamlit or DuckDB.
"""
