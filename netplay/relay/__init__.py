"""The relay: rooms of WebSocket connections whose MessagePack frames it routes without reading them.

`wire` is the framing every layer shares (MessagePack maps, protocol errors, room codes),
`server` the aiohttp relay's routing, `limits` its bounds and counters, `rooms` what it keeps
of each connection and room, `launch` starts it on a port, `guard` holds each source address
to its share, `client` is the connection a host or a seat keeps to it. Nothing here knows a game or a card: the relay stamps each frame with its sender's
connection number and forwards the body untouched.
"""
