"""A networked seat: one person's or one bot's place at a table, reached through the relay.

`remote` is the session the app plays through (it joins, follows the table and sends moves),
`checks` verifies everything the host sends against this seat's own engine and the fairness
toolkit, and `keyfile` keeps the seat's identity key and token on disk so it can rejoin.
"""
