"""Bash analysis: words, parser, resolver and rules turn a command into the acts it performs.

May use the root modules only; knows nothing of the matrix that decides the acts.
"""
