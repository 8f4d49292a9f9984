"""The ``governance`` command: ``cli`` is the entry point, each command has a module of its own.

May use every part but bench; heavy imports stay inside each command's ``run``.
"""
