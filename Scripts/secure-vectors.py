#!/usr/bin/env python3
"""Independent implementation of the msgpipe secure handshake and sealing (docs/PROTOCOL.md section 6)
with Python's `cryptography`, printing the test vectors pinned in Tests/SecureTests/SecureVectorTests.swift.
Not run by the tests; run it by hand (pip install cryptography) to cross-check the Swift implementation."""
import hashlib, hmac
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import hashes, serialization

RAW = dict(encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw)

def key(start):
    return X25519PrivateKey.from_private_bytes(bytes(range(start, start + 32)))

def pub(private):
    return private.public_key().public_bytes(**RAW)

def handshake(mode, client_static=None, server_static=None, psk=None):
    ce, se = key(0x20), key(0x40)
    client_hello = bytes([1, 1, mode]) + pub(ce)
    if mode == 3:  # the client's static public key, sealed to the server's identity
        k = HKDF(algorithm=hashes.SHA256(), length=32, salt=hashlib.sha256(client_hello).digest(),
                 info=b"msgpipe secure v1 announce").derive(ce.exchange(server_static.public_key()))
        client_hello += ChaCha20Poly1305(k).encrypt(bytes(12), pub(client_static), client_hello)
    server_unconfirmed = bytes([1, 2, mode]) + pub(se)
    ikm = ce.exchange(se.public_key())
    if mode == 1:
        ikm += psk
        info = b"msgpipe secure v1 psk"
    else:
        ikm += ce.exchange(server_static.public_key())  # es
        ikm += client_static.exchange(se.public_key())  # se
        info = b"msgpipe secure v1 identity" + pub(client_static) + pub(server_static)
    th = hashlib.sha256(client_hello + server_unconfirmed).digest()
    okm = HKDF(algorithm=hashes.SHA256(), length=128, salt=th, info=info).derive(ikm)
    c2s, s2c, kcs, kcc = okm[0:32], okm[32:64], okm[64:96], okm[96:128]
    server_confirm = hmac.new(kcs, b"msgpipe server finished" + th, hashlib.sha256).digest()
    client_confirm = hmac.new(kcc, b"msgpipe client finished" + th, hashlib.sha256).digest()
    return client_hello, server_unconfirmed + server_confirm, bytes([1, 3]) + client_confirm, c2s, s2c

def seal(k, direction, counter, plaintext, kind=0x10):
    header = bytes([1, kind]) + counter.to_bytes(8, "big")
    nonce = direction.to_bytes(4, "big") + counter.to_bytes(8, "big")
    return header + ChaCha20Poly1305(k).encrypt(nonce, plaintext, header)

for name, args in [("psk", dict(mode=1, psk=bytes(range(32)))),
                   ("identity", dict(mode=2, client_static=key(0x60), server_static=key(0x80))),
                   ("announced", dict(mode=3, client_static=key(0x60), server_static=key(0x80)))]:
    ch, sh, cf, c2s, s2c = handshake(**args)
    print(f"{name}.clientHello  {ch.hex()}")
    print(f"{name}.serverHello  {sh.hex()}")
    print(f"{name}.clientFinish {cf.hex()}")
    print(f"{name}.sealed c2s 0 {seal(c2s, 1, 0, b'pay 12.50 EUR').hex()}")
    print(f"{name}.sealed s2c 0 {seal(s2c, 2, 0, b'approved').hex()}")
    print(f"{name}.alert  s2c 1 {seal(s2c, 2, 1, bytes([5]), 0x11).hex()}")
    origin = bytes.fromhex("0102030405060708") + (5).to_bytes(4, "big")  # outbox session, message id 5
    print(f"{name}.origin c2s 1 {seal(c2s, 1, 1, origin + b'pay 12.50 EUR', 0x12).hex()}")
print(f"identity.client public {pub(key(0x60)).hex()}")
print(f"identity.server public {pub(key(0x80)).hex()}")
