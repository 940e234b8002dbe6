"""Everything that crosses a process boundary: the relay, the fairness toolkit, the table host, the seat, the offline session and the SSH door.

Sub-packages, each importing only those before it (docs/DESIGN.md, "Layout"; tests/test_style.py
checks it): `relay` routes frames between the connections of a room and knows nothing of games;
`fair` is the fairness toolkit (commitments, keys, signed transcripts, the round audit), pure
functions with no networking; `session` is what the app plays through, the events a match emits
and the local match against bots, with no networking at all; `protocol` (a module) is the game
protocol the table and its seats share; `table` is the host that deals a table and the
server-side tables of `cardtui serve`; `seat` is a person's (or a bot's) networked seat at a
table; `ssh` is the SSH door that gives every visitor their own `cardtui` in a pseudo-terminal.
"""
