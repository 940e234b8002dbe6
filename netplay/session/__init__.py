"""What the app plays through, without any networking: the events of a match and the local match against bots.

`events` defines the session interface and the events a match emits (a match started, a round
started or ended, a notice), shared by the local match and the networked seat; `local` plays a
whole match in-process against bots and saves it for `cardtui play --resume`.
"""
