"""The SSH door of `cardtui serve`: every visitor gets their own `cardtui` in a pseudo-terminal, nothing else.

`door` is the asyncssh server with its limits and refusals, `visitor` one visitor's session,
`ptychild` the child process in its pseudo-terminal (warm-forked from a preloaded process),
`hostkey` the server's host key kept on disk. No shell, no commands, no forwarding, no SFTP.
"""
