#!/usr/bin/env python3
"""Builds Specs/vectors/ from an implementation independent of Coffer's Swift code and of
libsodium: argon2-cffi (the Argon2 reference C code), hashlib's BLAKE2b (for crypto_kdf, the
header MAC and checksums) and a small HChaCha20 in Python on top of pyca/cryptography's
ChaCha20-Poly1305 (for XChaCha20-Poly1305). The Swift tests check that Coffer reproduces every
value and opens the vault file built here, so Specs/vault-format.md is proven precise enough to
implement from.

Usage: pip install argon2-cffi cryptography && python3 scripts/make-vectors.py
Deterministic: every "random" value is fixed below, so re-running rewrites identical files.
"""
import hashlib
import json
import os
import sqlite3
import struct
import unicodedata
from pathlib import Path

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

OUT = Path(__file__).resolve().parent.parent / "Specs" / "vectors"


def rotl(v, c):
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotl(s[b] ^ s[c], 7)


def hchacha20(key, nonce16):
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    s += list(struct.unpack("<8I", key)) + list(struct.unpack("<4I", nonce16))
    for _ in range(10):
        quarter(s, 0, 4, 8, 12); quarter(s, 1, 5, 9, 13); quarter(s, 2, 6, 10, 14); quarter(s, 3, 7, 11, 15)
        quarter(s, 0, 5, 10, 15); quarter(s, 1, 6, 11, 12); quarter(s, 2, 7, 8, 13); quarter(s, 3, 4, 9, 14)
    return struct.pack("<8I", *(s[0:4] + s[12:16]))


def xchacha_seal(key, nonce24, aad, plaintext):
    subkey = hchacha20(key, nonce24[:16])
    return ChaCha20Poly1305(subkey).encrypt(b"\0" * 4 + nonce24[16:], plaintext, aad)


def kdf_subkey(master, subkey_id, context=b"CofferV1"):
    """libsodium crypto_kdf_derive_from_key: BLAKE2b keyed with the master key, salt = LE64(id)
    padded to 16 bytes, personalisation = context padded to 16 bytes, empty input."""
    return hashlib.blake2b(b"", digest_size=32, key=master,
                           salt=struct.pack("<Q", subkey_id) + b"\0" * 8, person=context + b"\0" * 8).digest()


def argon2id(passphrase, salt, ops, mem):
    normalised = unicodedata.normalize("NFC", passphrase).encode()
    return hash_secret_raw(normalised, salt, time_cost=ops, memory_cost=mem // 1024, parallelism=1,
                           hash_len=32, type=Type.ID, version=19)


def pad(data, block=64):
    """ISO/IEC 7816-4 as sodium_pad: 0x80 then zeros up to the next multiple of `block`."""
    padded_length = (len(data) // block + 1) * block
    return data + b"\x80" + b"\0" * (padded_length - len(data) - 1)


def blake2b(data, size=32, key=b""):
    return hashlib.blake2b(data, digest_size=size, key=key).digest()


def fixed(label, n):
    """Deterministic stand-ins for random values."""
    return hashlib.blake2b(label.encode(), digest_size=n).digest()


# Self-check against draft-irtf-cfrg-xchacha-03 A.3.1 before trusting the Python XChaCha.
_draft = xchacha_seal(bytes(range(0x80, 0xA0)), bytes(range(0x40, 0x58)), bytes.fromhex("50515253c0c1c2c3c4c5c6c7"),
                      b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
assert _draft.hex().endswith("c0875924c1c7987947deafd8780acf49"), "HChaCha20/XChaCha self-check failed"

FORMAT = 1
vectors = {"description": "Coffer vault format v1 test vectors (Specs/vault-format.md). All byte strings are hex.",
           "argon2id": [], "kdf": [], "xchacha20poly1305": [], "records": []}

# Argon2id: passphrase (as typed, NFD where noted) + salt + parameters -> key encryption key.
for passphrase, ops, mem in [("correct horse battery staple", 2, 67108864),
                             ("Cafe\u0301 au lait \u2014 \u00fcber", 1, 8192),   # NFD input: é written as e + U+0301
                             ("p", 3, 65536)]:
    salt = fixed("salt:" + passphrase, 16)
    vectors["argon2id"].append({
        "passphrase": passphrase, "passphraseNFC": unicodedata.normalize("NFC", passphrase).encode().hex(),
        "salt": salt.hex(), "opsLimit": ops, "memLimit": mem, "key": argon2id(passphrase, salt, ops, mem).hex()})

master = fixed("master key", 32)
for subkey_id, purpose in [(1, "records"), (2, "integrity"), (3, "header"), (4, "backup"), (5, "signing seed")]:
    vectors["kdf"].append({"masterKey": master.hex(), "context": "CofferV1", "subkeyId": subkey_id,
                           "purpose": purpose, "subkey": kdf_subkey(master, subkey_id).hex()})

for i, (plaintext, aad) in enumerate([(b"", b""), (b"coffer", b"associated"), (bytes(range(256)), bytes(42))]):
    key, nonce = fixed(f"aead key {i}", 32), fixed(f"aead nonce {i}", 24)
    vectors["xchacha20poly1305"].append({"key": key.hex(), "nonce": nonce.hex(), "associatedData": aad.hex(),
                                         "plaintext": plaintext.hex(), "ciphertext": xchacha_seal(key, nonce, aad, plaintext).hex()})

# A whole vault: header, one key slot, three records, manifest and commit record.
vault_id = fixed("vault id", 16)
passphrase = "fixture passphrase"
record_key, integrity_key, header_key = kdf_subkey(master, 1), kdf_subkey(master, 2), kdf_subkey(master, 3)
payloads = [b"first record", b"x" * 64, "\u00a3 canary CANARY-FIXTURE-1".encode()]
rows, entries = [], {}
for n, payload in enumerate(payloads):
    record_id, version, nonce = fixed(f"record id {n}", 16), n + 1, fixed(f"record nonce {n}", 24)
    aad = vault_id + record_id + struct.pack("<QH", version, FORMAT)
    ciphertext = xchacha_seal(record_key, nonce, aad, pad(payload))
    rows.append((record_id, version, nonce + ciphertext))
    entries.setdefault(record_id[0], []).append(record_id + struct.pack("<Q", version) + ciphertext[-16:])
    vectors["records"].append({"vaultId": vault_id.hex(), "recordId": record_id.hex(), "version": version,
                               "formatVersion": FORMAT, "recordKey": record_key.hex(), "nonce": nonce.hex(),
                               "payload": payload.hex(), "associatedData": aad.hex(), "padded": pad(payload).hex(),
                               "sealed": (nonce + ciphertext).hex()})

buckets, digests = [], []
for bucket in range(256):
    plain = b"".join(sorted(entries.get(bucket, [])))
    nonce = fixed(f"bucket nonce {bucket}", 24)
    sealed = nonce + xchacha_seal(integrity_key, nonce, vault_id + bytes([2]) + struct.pack("<H", FORMAT) + bytes([bucket]), plain)
    buckets.append((bucket, sealed))
    digests.append(blake2b(sealed))
commit_plain = struct.pack("<QQ", 7, len(payloads)) + b"".join(digests)
commit_nonce = fixed("commit nonce", 24)
commit = commit_nonce + xchacha_seal(integrity_key, commit_nonce, vault_id + bytes([3]) + struct.pack("<H", FORMAT), commit_plain)

ops, mem = 2, 67108864
slot_salt, slot_nonce = fixed("slot salt", 16), fixed("slot nonce", 24)
kek = argon2id(passphrase, slot_salt, ops, mem)
slot_params = bytes([1, 1]) + struct.pack("<QQ", ops, mem) + slot_salt
wrapped = xchacha_seal(kek, slot_nonce, b"coffer-slot-v1" + vault_id + slot_params, master)
master_key_id = blake2b(b"coffer-master-key-id-v1", 16, master)
body = b"CFRVAULT" + struct.pack("<H", FORMAT) + vault_id + master_key_id + bytes([1]) + slot_params + slot_nonce + wrapped
header = body + blake2b(body, 32, header_key)
header += blake2b(header)

vectors["vault"] = {"file": "vault-v1.coffer", "passphrase": passphrase, "vaultId": vault_id.hex(), "masterKey": master.hex(),
                    "header": header.hex(), "commitCounter": 7,
                    "records": [{"id": r[0].hex(), "version": r[1], "payload": p.hex()} for r, p in zip(rows, payloads)]}

OUT.mkdir(parents=True, exist_ok=True)
(OUT / "vault-v1.json").write_text(json.dumps(vectors, indent=2) + "\n")
path = OUT / "vault-v1.coffer"
if path.exists():
    path.unlink()
db = sqlite3.connect(path)
db.executescript("""
    PRAGMA journal_mode = DELETE;
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
    INSERT INTO grdb_migrations VALUES ('v1');
    CREATE TABLE header (id INTEGER PRIMARY KEY CHECK (id = 1), body BLOB NOT NULL);
    CREATE TABLE record (id BLOB PRIMARY KEY NOT NULL, version INTEGER NOT NULL, sealed BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE manifest (bucket INTEGER PRIMARY KEY CHECK (bucket BETWEEN 0 AND 255), sealed BLOB NOT NULL);
    CREATE TABLE commit_record (id INTEGER PRIMARY KEY CHECK (id = 1), sealed BLOB NOT NULL);
""")
db.execute("INSERT INTO header VALUES (1, ?)", (header,))
db.executemany("INSERT INTO record VALUES (?, ?, ?)", rows)
db.executemany("INSERT INTO manifest VALUES (?, ?)", buckets)
db.execute("INSERT INTO commit_record VALUES (1, ?)", (commit,))
db.commit()
db.execute("VACUUM")
db.close()
os.chmod(path, 0o600)
print(f"wrote {OUT / 'vault-v1.json'} and {path}")
