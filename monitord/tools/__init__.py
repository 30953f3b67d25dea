"""Tools around the daemon, not the daemon: the synthetic workflow generator and the player.

They build and re-enact submit directories for tests, benchmarks and ``monitord demo``/``play``.
They may import the pure core (dagman line classifier, readers); nothing in the daemon, the
service, the sinks or the notifications imports them.
"""
