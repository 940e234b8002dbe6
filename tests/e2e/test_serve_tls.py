"""`cardtui serve --tls-cert/--tls-key`: the browser door over HTTPS and the opened API over
wss://, with every connection counted against its address before its handshake. 127.0.0.x are
distinct visitors; the certificate is self-signed for 127.0.0.1 and 127.0.0.2."""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from netplay.relay.client import RelayConnection, client_tls
from netplay.relay.launch import tls_context
from tests.e2e import test_serve
from tests.e2e.test_door_limits import read_to_end
from tests.e2e.test_serve import SERVER_LOGIN, WAIT_SECONDS, ServerMaker, eventually
from tui.commands.serve import listen

serve = test_serve.serve

pytestmark = pytest.mark.timeout(120)


def certificate(tmp_path: Path) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and 127.0.0.2 and its key (openssl command)."""
    cert, key = tmp_path / "serve.pem", tmp_path / "serve.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=cardtui test server", "-addext",
                    "subjectAltName=IP:127.0.0.1,IP:127.0.0.2",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def _password(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


async def test_the_browser_door_and_the_opened_api_speak_tls_only(
        serve: ServerMaker, tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    server = await serve("--password", "open sesame", "--tls-cert", cert, "--tls-key", key,
                         "--api-bind", "127.0.0.2")
    web = f"127.0.0.1:{server.web_port}"
    assert f"in a browser:  https://{web}/" in server.banner
    assert f"cardtui host --relay wss://127.0.0.2:{server.port}" in server.banner
    trusted = ssl.create_default_context(cafile=cert)
    connector = aiohttp.TCPConnector(ssl=trusted)
    async with aiohttp.ClientSession(connector=connector) as http:
        async with http.get(f"https://{web}/") as page:
            assert page.status == 401  # the password is asked inside TLS
        async with http.get(f"https://{web}/", headers=_password("ann", "open sesame")) as page:
            assert page.status == 200
        # The page's own origin is now https; the plain-HTTP one is another site.
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"wss://{web}/ws", headers=_password("ann", "open sesame")
                                  | {"Origin": f"http://{web}"})
        assert refused.value.status == 403
        async with http.ws_connect(
                f"wss://{web}/ws?width=100&height=30",
                headers=_password("ann", "open sesame") | {"Origin": f"https://{web}"},
                max_msg_size=0) as terminal:
            seen = ""
            while f"{SERVER_LOGIN} ann" not in seen:
                message = await asyncio.wait_for(terminal.receive(), WAIT_SECONDS)
                assert message.type is aiohttp.WSMsgType.BINARY, message
                seen += message.data.decode(errors="replace")
        async with http.get(f"https://127.0.0.2:{server.port}/tables") as listing:
            assert listing.status == 200
    # Plain HTTP to either listener gets no page and no table listing.
    async with aiohttp.ClientSession() as plain:
        for url in (f"http://{web}/", f"http://127.0.0.2:{server.port}/tables"):
            with pytest.raises(aiohttp.ClientError):
                async with plain.get(url) as answer:
                    await answer.read()
    # A remote host opens a room through the opened API over wss://, with the real client.
    async with await RelayConnection.open_room(f"wss://127.0.0.2:{server.port}/ws",
                                               tls=client_tls(cert)) as host:
        assert host.room
    output = await server.stop()
    assert "web login failed" not in output


async def test_silent_tls_clients_are_counted_before_their_handshake_and_dropped_after_it(
        serve: ServerMaker, tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    server = await serve("--tls-cert", cert, "--tls-key", key)
    loop = asyncio.get_running_loop()
    silent = []
    trusted = ssl.create_default_context(cafile=cert)
    try:
        for _ in range(40):  # never a hello: each holds a slot as a silent plain client does
            sock = socket.socket()
            sock.setblocking(False)
            sock.bind(("127.0.0.2", 0))
            await loop.sock_connect(sock, ("127.0.0.1", server.web_port))
            silent.append(sock)
        ended = [asyncio.create_task(read_to_end(sock)) for sock in silent]

        async def closed(count: int) -> bool:
            return sum(task.done() for task in ended) >= count

        await eventually(lambda: closed(8), "the connections past 32 from one address closed")
        assert sum(task.done() for task in ended) == 8
        connector = aiohttp.TCPConnector(local_addr=("127.0.0.3", 0), ssl=trusted)
        async with aiohttp.ClientSession(connector=connector) as http, http.get(
                f"https://127.0.0.1:{server.web_port}/") as page:
            assert page.status == 200  # another address is not held back
        # The handshake deadline (10 s) drops the silent ones and gives their slots back.
        await eventually(lambda: closed(40), "the silent TLS clients dropped at the deadline")
        connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0), ssl=trusted)
        async with aiohttp.ClientSession(connector=connector) as http, http.get(
                f"https://127.0.0.1:{server.web_port}/") as page:
            assert page.status == 200
        for task in ended:
            task.cancel()
    finally:
        for sock in silent:
            sock.close()
    await server.stop()


@pytest.mark.parametrize(("options", "says"), [
    (("--tls-cert", "a.pem"), "--tls-cert and --tls-key go together"),
    (("--tls-cert", "a.pem", "--tls-key", "a.key"), "give --web-port or --api-bind"),
])
def test_tls_options_that_cannot_work_are_refused_at_once(options: tuple[str, ...],
                                                          says: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tui.cli", "serve", *options],
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr


def test_an_unusable_certificate_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate")
    bad = str(tmp_path / "bad.pem")
    done = subprocess.run([sys.executable, "-m", "tui.cli", "serve", "--web-port", "0",
                           "--tls-cert", bad, "--tls-key", bad],
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "cannot use" in done.stderr and "for TLS" in done.stderr


async def test_a_request_sent_with_the_last_handshake_message_is_answered(
        tmp_path: Path) -> None:
    # TLS 1.3 lets a client send its request right behind its Finished message; the server's
    # TLS layer then hands the request on before the handshake's task resumes. 40 fresh
    # connections, each asking at once: every one is answered (about half hung before).
    cert, key = certificate(tmp_path)

    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        port = await listen(runner, "127.0.0.1", 0, capped=True, tls=tls_context(cert, key))
        trusted = ssl.create_default_context(cafile=cert)
        for _ in range(40):
            async with aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(ssl=trusted, force_close=True),
                    timeout=aiohttp.ClientTimeout(total=WAIT_SECONDS)) as http, http.get(
                    f"https://127.0.0.1:{port}/") as answer:
                assert await answer.text() == "hello"
    finally:
        await runner.cleanup()
