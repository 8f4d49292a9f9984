"""Benchmarks, the ranking evaluation and ``just demo``'s script, apart from runtime code.

May use every other part; nothing imports it.
"""
