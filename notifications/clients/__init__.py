"""Notification clients: programs a ``.notify`` line runs (``monitord-notify-email``, ``-webhook``).

They read the ``PEGASUS_*`` environment the daemon sets (doc §11.3) and a
pegasus-status-like summary of the workflow from its Stampede database.
"""
