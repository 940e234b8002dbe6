"""The table host: the dealer of one networked table, and the server-side tables of `cardtui serve`.

`host` runs a table (seats, the match, moves checked by the engine, every message signed and
chained), `lobby` seats people and bots before the match, `dealing` shuffles and deals with
the seats' nonces, `store` saves a table so `cardtui host --resume` can continue it, and
`service` keeps many hosted tables behind a small HTTP API; `state` declares the table state
those parts share.
"""
