"""Plugins for monitord's tests, written only against the pegasus-monitord plugin contract.

None imports monitord: each reads its settings through the properties object
``start`` receives and appends what it sees, one JSON object per line, to the
file named by ``pegasus.monitord.plugins.<name>.output``.
"""
