"""The relay: rooms of WebSocket connections whose MessagePack frames it routes without reading them.

`wire` is the framing every layer shares (MessagePack maps, protocol errors, room codes),
`server` the aiohttp relay with its limits, `client` the connection a host or a seat keeps to
it. Nothing here knows a game or a card: the relay stamps each frame with its sender's
connection number and forwards the body untouched.
"""
