#!/usr/bin/env python3
"""Builds Specs/vectors/ from an implementation independent of Coffer's Swift code and of
libsodium: argon2-cffi (the Argon2 reference C code), hashlib's BLAKE2b (for crypto_kdf, the
header MAC and checksums) and a small HChaCha20 in Python on top of pyca/cryptography's
ChaCha20-Poly1305 (for XChaCha20-Poly1305). The Swift tests check that Coffer reproduces every
value and opens the vault file built here, so Specs/vault-format.md is proven precise enough to
implement from.

Format 2 adds Ed25519 (key history certificates, archive signatures) and X25519 (the recovery
slot) from pyca/cryptography, libsodium's crypto_secretstream_xchacha20poly1305 written out in
Python on ChaCha20 and Poly1305 (archives), and Python's lzma (xz). Archive formats 2 to 4 (the export in columns; format 3's id table coded as
differences of ordered ids, format 4's in columns) are written and read here too, and the committed fixtures
Tests/Fixtures/backup-v2, backup-v3 and backup-v4 are read back from Specs/backup-format.md alone.

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


def write_vault(path, header, rows, buckets, commit):
    """The SQLite file of §1, in rollback-journal mode (a WAL file could not be committed)."""
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


path = OUT / "vault-v1.coffer"
write_vault(path, header, rows, buckets, commit)
print(f"wrote {OUT / 'vault-v1.json'} and {path}")


# ---------------------------------------------------------------------------------------------
# Header format 2 (Specs/vault-format.md §6), with an X25519 recovery slot and a two-generation
# key history; commit record format 2; and a version 1 archive of it (Specs/backup-format.md).

import base64
import lzma

from cryptography.hazmat.primitives import poly1305
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def raw_public(key):
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def signing_key(master_key):
    """Subkey 5 is the seed of crypto_sign_seed_keypair, i.e. an RFC 8032 private key."""
    return Ed25519PrivateKey.from_private_bytes(kdf_subkey(master_key, 5))


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def recovery_display(secret):
    """secret ‖ BLAKE2b-16(secret)[0..<4], most significant bit first, in 5-bit groups."""
    data = secret + blake2b(secret, 16)[:4]
    bits = int.from_bytes(data, "big")
    symbols = [CROCKFORD[(bits >> (len(data) * 8 - 5 * (i + 1))) & 31] for i in range(len(data) * 8 // 5)]
    return "-".join("".join(symbols[i:i + 4]) for i in range(0, len(symbols), 4))


V2 = {"description": "Coffer vault header format 2 and archive format 1 test vectors (Specs/vault-format.md §6, "
                     "Specs/backup-format.md). All byte strings are hex."}
vault_id2 = fixed("v2 vault id", 16)
passphrase2 = "fixture passphrase two"
old_master, master2 = fixed("v2 master key generation 1", 32), fixed("v2 master key generation 2", 32)
created1, created2 = 1_790_000_000, 1_795_000_000


def statement(number, created, public):
    return b"coffer-key-generation-v1" + vault_id2 + struct.pack("<IQ", number, created) + public


gen1_key, gen2_key = signing_key(old_master), signing_key(master2)
gen1_pk, gen2_pk = raw_public(gen1_key), raw_public(gen2_key)
history = [struct.pack("<IQ", 1, created1) + gen1_pk + gen1_key.sign(statement(1, created1, gen1_pk)),   # self-certified
           struct.pack("<IQ", 2, created2) + gen2_pk + gen1_key.sign(statement(2, created2, gen2_pk))]   # by generation 1

ops2, mem2 = 2, 67108864
slot_salt2, slot_nonce2 = fixed("v2 slot salt", 16), fixed("v2 slot nonce", 24)
slot_params2 = bytes([1, 1]) + struct.pack("<QQ", ops2, mem2) + slot_salt2
passphrase_slot = slot_params2 + slot_nonce2 + xchacha_seal(argon2id(passphrase2, slot_salt2, ops2, mem2), slot_nonce2,
                                                            b"coffer-slot-v1" + vault_id2 + slot_params2, master2)

recovery_secret = fixed("v2 recovery secret", 16)
recovery_scalar = blake2b(b"coffer-recovery-x25519-v1" + vault_id2 + recovery_secret)
recipient = raw_public(X25519PrivateKey.from_private_bytes(recovery_scalar))
ephemeral = X25519PrivateKey.from_private_bytes(fixed("v2 ephemeral scalar", 32))
ephemeral_pk = raw_public(ephemeral)
shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(recipient))
recovery_kek = blake2b(b"coffer-recovery-x25519-v1" + ephemeral_pk + recipient, 32, shared)
recovery_nonce = fixed("v2 recovery nonce", 24)
recovery_slot = bytes([2, 3]) + recipient + ephemeral_pk + recovery_nonce + xchacha_seal(
    recovery_kek, recovery_nonce, b"coffer-slot-v1" + vault_id2 + bytes([2, 3]) + recipient + ephemeral_pk, master2)

body2 = (b"CFRVAULT" + struct.pack("<H", 2) + vault_id2 + blake2b(b"coffer-master-key-id-v1", 16, master2)
         + struct.pack("<I", 2) + bytes([2]) + passphrase_slot + recovery_slot + struct.pack("<H", 2) + b"".join(history))
header2 = body2 + blake2b(body2, 32, kdf_subkey(master2, 3))
header2 += blake2b(header2)

# Records, manifest (both with format version 1 in their associated data) and commit record format 2.
record_key2, integrity_key2 = kdf_subkey(master2, 1), kdf_subkey(master2, 2)
payloads2 = [b"generation two", "\u20ac canary CANARY-FIXTURE-2".encode(), bytes(range(200))]
rows2, entries2 = [], {}
for n, payload in enumerate(payloads2):
    record_id, version, nonce = fixed(f"v2 record id {n}", 16), 2 * n + 1, fixed(f"v2 record nonce {n}", 24)
    ciphertext = xchacha_seal(record_key2, nonce, vault_id2 + record_id + struct.pack("<QH", version, 1), pad(payload))
    rows2.append((record_id, version, nonce + ciphertext))
    entries2.setdefault(record_id[0], []).append(record_id + struct.pack("<Q", version) + ciphertext[-16:])
buckets2, digests2 = [], []
for bucket in range(256):
    nonce = fixed(f"v2 bucket nonce {bucket}", 24)
    sealed = nonce + xchacha_seal(integrity_key2, nonce, vault_id2 + bytes([2]) + struct.pack("<H", 1) + bytes([bucket]),
                                  b"".join(sorted(entries2.get(bucket, []))))
    buckets2.append((bucket, sealed))
    digests2.append(blake2b(sealed))
device_id = fixed("v2 device id", 16)
commit_counter2 = 11
commit_plain2 = struct.pack("<QQ", commit_counter2, len(payloads2)) + b"".join(digests2) + blake2b(header2) + device_id
commit_nonce2 = fixed("v2 commit nonce", 24)
commit2 = commit_nonce2 + xchacha_seal(integrity_key2, commit_nonce2, vault_id2 + bytes([3]) + struct.pack("<H", 2), commit_plain2)

V2["vault"] = {"file": "vault-v2.coffer", "passphrase": passphrase2, "recoveryKey": recovery_display(recovery_secret),
               "recoverySecret": recovery_secret.hex(), "recoveryScalar": recovery_scalar.hex(), "recoveryPublicKey": recipient.hex(),
               "vaultId": vault_id2.hex(), "masterKey": master2.hex(), "keyGeneration": 2,
               "signingKeys": [gen1_pk.hex(), gen2_pk.hex()], "header": header2.hex(), "deviceId": device_id.hex(),
               "commitCounter": commit_counter2,
               "records": [{"id": r[0].hex(), "version": r[1], "payload": p.hex()} for r, p in zip(rows2, payloads2)]}


# libsodium's crypto_secretstream_xchacha20poly1305, push side.
def chacha20_ietf(key, counter, nonce12, data):
    return Cipher(algorithms.ChaCha20(key, struct.pack("<I", counter) + nonce12), mode=None).encryptor().update(data)


class SecretStreamPush:
    def __init__(self, key, header):
        self.k = hchacha20(key, header[:16])
        self.counter, self.inonce = 1, header[16:24]

    def push(self, message, ad, tag):
        nonce = struct.pack("<I", self.counter) + self.inonce
        mac = poly1305.Poly1305(chacha20_ietf(self.k, 0, nonce, bytes(64))[:32])
        mac.update(ad + bytes((16 - len(ad) % 16) % 16))
        block = chacha20_ietf(self.k, 1, nonce, bytes([tag]) + bytes(63))
        mac.update(block)
        ciphertext = chacha20_ietf(self.k, 2, nonce, message)
        # libsodium pads with (0x10 - sizeof block + mlen) & 0xf zero bytes: mlen mod 16, not
        # what the usual AEAD padding would give.
        mac.update(ciphertext + bytes(len(message) % 16))
        mac.update(struct.pack("<QQ", len(ad), 64 + len(message)))
        tag_bytes = mac.finalize()
        self.inonce = bytes(a ^ b for a, b in zip(self.inonce, tag_bytes[:8]))
        self.counter = (self.counter + 1) & 0xFFFFFFFF
        assert tag & 2 == 0 or tag == 3, "rekeying is not needed for these vectors"
        return block[:1] + ciphertext + tag_bytes


archive_records = sorted((fixed(f"archive record {n}", 16), payload) for n, payload in
                         enumerate([bytes([1, 2]) + b"\x03GBP\x01", bytes([2, 1]) + b"opaque to the archive", b"\x09" + bytes(300)]))
section = b"".join(rid + struct.pack("<I", len(p)) + p for rid, p in archive_records)
kinds = {}
for _, p in archive_records:
    kinds[p[0]] = kinds.get(p[0], 0) + 1


def string16(text):
    return struct.pack("<H", len(text.encode())) + text.encode()


manifest = (struct.pack("<QB", len(archive_records), len(kinds)) + b"".join(struct.pack("<BQ", k, kinds[k]) for k in sorted(kinds))
            + blake2b(section) + struct.pack("<Q", commit_counter2) + string16("GBP 1234.56") + string16("make-vectors.py"))
export = b"CFREXPV1" + struct.pack("<HI", 1, len(manifest)) + manifest + section
compressed = lzma.compress(export, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)

sequence, archive_time = 3, 1_796_000_000
archive_name = "coffer-20261130-005320-000003.cbak"   # the name of that time (UTC) and sequence
backup_key = kdf_subkey(master2, 4)
file_key, file_key_nonce, stream_header = fixed("archive file key", 32), fixed("archive file key nonce", 24), fixed("archive stream header", 24)
bound = (b"COFFERBK" + struct.pack("<HHHBH", 1, 0, 0, 1, 1) + vault_id2 + struct.pack("<QQQ", sequence, archive_time, len(export))
         + struct.pack("<H", len(header2)) + header2)
archive_header = (bound + file_key_nonce + xchacha_seal(backup_key, file_key_nonce, b"coffer-archive-key-v1" + bound, file_key)
                  + stream_header + gen2_pk)
archive_header += blake2b(archive_header)
stream = SecretStreamPush(file_key, stream_header)
chunk_ad = blake2b(archive_header)
pieces = [compressed[i:i + 65536] for i in range(0, len(compressed), 65536)] or [b""]
archive = archive_header + b"".join(
    struct.pack("<I", len(c)) + c for c in (stream.push(piece, chunk_ad, 3 if i == len(pieces) - 1 else 0) for i, piece in enumerate(pieces)))

key_id = blake2b(b"coffer-minisign-key-id" + gen2_pk, 16)[:8]
key_id_text = key_id[::-1].hex().upper()
trusted_comment = (f"coffer-archive v1 vault={vault_id2.hex()} seq={sequence} time={archive_time} file={archive_name} "
                   f"device={device_id.hex()} commit={commit_counter2}")
signature = gen2_key.sign(hashlib.blake2b(archive, digest_size=64).digest())
minisig = (f"untrusted comment: signature from Coffer vault key {key_id_text}\n"
           + base64.b64encode(b"ED" + key_id + signature).decode() + "\n"
           + f"trusted comment: {trusted_comment}\n"
           + base64.b64encode(gen2_key.sign(signature + trusted_comment.encode())).decode() + "\n")
public_key_file = f"untrusted comment: minisign public key {key_id_text}\n" + base64.b64encode(b"Ed" + key_id + gen2_pk).decode() + "\n"

V2["archive"] = {"file": archive_name, "signature": archive_name + ".minisig", "publicKey": "archive-v1.pub",
                 "passphrase": passphrase2, "sequence": sequence, "created": archive_time, "backupKey": backup_key.hex(),
                 "fileKey": file_key.hex(), "header": archive_header.hex(), "export": export.hex(),
                 "records": [{"id": rid.hex(), "payload": p.hex()} for rid, p in archive_records],
                 "netWorth": "GBP 1234.56", "commitCounter": commit_counter2, "trustedComment": trusted_comment, "keyId": key_id_text}

(OUT / "vault-v2.json").write_text(json.dumps(V2, indent=2) + "\n")
(OUT / archive_name).write_bytes(archive)
(OUT / (archive_name + ".minisig")).write_text(minisig)
(OUT / "archive-v1.pub").write_text(public_key_file)
path2 = OUT / "vault-v2.coffer"
write_vault(path2, header2, rows2, buckets2, commit2)
print(f"wrote {OUT / 'vault-v2.json'}, {path2}, {OUT / archive_name} and its signature and public key")


# ---------------------------------------------------------------------------------------------
# Record payloads (Specs/record-payloads.md): one of each common kind, encoded from the table alone.
import datetime


def uvarint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def svarint(n):
    return uvarint((n << 1) ^ (n >> 63) if n < 0 else n << 1)


def text(value):
    return uvarint(len(value.encode())) + value.encode()


def day(iso):
    return svarint(datetime.date.fromisoformat(iso).toordinal() - datetime.date(1970, 1, 1).toordinal())


def optional(value, encode):
    return b"\0" if value is None else b"\1" + encode(value)


account_id, category_id, client_id = fixed("payload account id", 16), fixed("payload category id", 16), fixed("payload client id", 16)
savings_id = fixed("payload savings id", 16)


def flow(source, target, order):
    """optional<flow>: from optional<uuid>, to optional<uuid>, order uvarint."""
    return b"\1" + optional(source, lambda v: v) + optional(target, lambda v: v) + uvarint(order)
payload_vectors = [
    ("settings", {"currency": "JPY", "includeReceivables": False}, bytes([1, 2]) + text("JPY") + b"\0"),
    ("account", {"name": "Nationwide ISA \u00a3", "category": "Savings", "kind": "asset", "growthBasisPoints": 425,
                 "created": "2025-05-01", "closed": None},
     bytes([2, 1]) + text("Nationwide ISA \u00a3") + text("Savings") + b"\0" + optional(425, svarint) + day("2025-05-01") + optional(None, day)),
    ("value update", {"accountId": account_id.hex(), "date": "1969-12-31", "amountMinorUnits": -123456789, "sequence": 300, "note": "payday"},
     bytes([3, 2]) + account_id + day("1969-12-31") + svarint(-123456789) + uvarint(300) + optional("payday", text)),
    ("budget transaction", {"amountMinorUnits": 4520, "type": "expense", "target": {"category": category_id.hex()}, "note": None,
                            "date": "2026-01-31", "sequence": 9, "origin": {"account": "Current", "rowDigest": bytes(range(16)).hex()},
                            "flow": {"from": account_id.hex(), "to": savings_id.hex(), "order": 301}},
     bytes([10, 3]) + svarint(4520) + b"\1" + b"\0" + category_id + optional(None, text) + day("2026-01-31") + uvarint(9)
     + b"\1" + text("Current") + uvarint(16) + bytes(range(16)) + flow(account_id, savings_id, 301)),
    ("client", {"name": "Acme Ltd", "email": None, "address": "1 High St\nLondon", "termsDays": 14, "account": account_id.hex()},
     bytes([12, 2]) + text("Acme Ltd") + optional(None, text) + optional("1 High St\nLondon", text) + svarint(14)
     + optional(account_id, lambda v: v)),
    ("invoice", {"number": 7, "clientId": client_id.hex(),
                 "items": [{"kind": "charge", "description": "Design", "quantityThousandths": 2500, "unitPriceMinorUnits": 3333, "shareBasisPoints": None},
                           {"kind": "discount", "description": "Loyalty", "quantityThousandths": 1000, "unitPriceMinorUnits": 0, "shareBasisPoints": 1000},
                           {"kind": "credit", "description": "Deposit", "quantityThousandths": 1000, "unitPriceMinorUnits": 500, "shareBasisPoints": None}],
                 "taxBasisPoints": 2000, "issued": "2026-11-01", "due": "2026-11-15", "notes": None, "status": "sent",
                 "sentOn": "2026-11-01", "voidedOn": None,
                 "payments": [{"date": "2026-11-10", "amountMinorUnits": 100, "flow": {"from": None, "to": account_id.hex(), "order": 302}}],
                 "reference": "INV-2026-0007", "reminders": ["2026-11-12"]},
     bytes([13, 3]) + uvarint(7) + client_id + uvarint(3)
     + text("Design") + svarint(2500) + svarint(3333) + bytes([0]) + optional(None, svarint)
     + text("Loyalty") + svarint(1000) + svarint(0) + bytes([1]) + optional(1000, svarint)
     + text("Deposit") + svarint(1000) + svarint(500) + bytes([2]) + optional(None, svarint)
     + optional(2000, svarint)
     + day("2026-11-01") + day("2026-11-15") + optional(None, text) + bytes([1]) + optional("2026-11-01", day) + optional(None, day)
     + uvarint(1) + day("2026-11-10") + svarint(100) + flow(None, account_id, 302)
     + text("INV-2026-0007") + uvarint(1) + day("2026-11-12")),
]
(OUT / "payloads-v1.json").write_text(json.dumps({
    "description": "Coffer record payload test vectors (Specs/record-payloads.md): each payload's hex and the fields it holds.",
    "payloads": [{"kind": kind, "fields": fields, "payload": payload.hex()} for kind, fields, payload in payload_vectors]}, indent=2) + "\n")
print(f"wrote {OUT / 'payloads-v1.json'}")


# ---------------------------------------------------------------------------------------------
# A sync folder (Specs/sync-format.md) of the format 2 vault above, key generation 2: its keys
# file, two devices' enrolments and change files, one of them xz-packed, with a concurrent edit.
# Joining it with the passphrase must give exactly the records listed in sync-v1.json.
SYNC_DIR = OUT / "sync-v1"
sync_key = kdf_subkey(backup_key, 1, b"CfrSync1")
generation = 2


def bytes_field(data):
    return uvarint(len(data)) + data


def sync_file(kind, device, sequence, body, signer, label):
    if len(body) >= 4096:
        packed = b"\x01" + struct.pack("<Q", len(body)) + lzma.compress(body, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)
    else:
        packed = b"\x00" + body
    return sealed_packed(kind, device, sequence, packed, signer, label)


def sealed_packed(kind, device, sequence, packed, signer, label):
    padded = pad(packed, 512)
    header = (b"CFRSYNC1" + bytes([kind]) + vault_id2 + struct.pack("<II", generation, generation) + device
              + struct.pack("<QI", sequence, 24 + len(padded) + 16))
    nonce = fixed(f"sync nonce {label}", 24)
    sealed = nonce + xchacha_seal(sync_key, nonce, header, padded)
    return header + sealed + signer.sign(b"coffer-sync-signature-v1" + header + sealed)


def changes(published_ms, seen, writes):
    """writes: (record id, clock, (base clock, base device) or None, payload or None), any order."""
    writes = sorted(writes)
    body = svarint(published_ms) + uvarint(len(seen)) + b"".join(d + uvarint(s) for d, s in sorted(seen.items()))
    body += uvarint(len(writes)) + b"".join(w[0] for w in writes) + b"".join(uvarint(w[1]) for w in writes)
    body += b"".join(uvarint(0) if w[2] is None else uvarint(w[2][0]) + w[2][1] for w in writes)
    body += b"".join(b"\x02" if w[3] is None else b"\x01" + bytes_field(w[3]) for w in writes)
    return body


def clock(ms):
    return ms << 16


device_a, device_b = fixed("sync device a", 16), fixed("sync device b", 16)
key_a, key_b = (Ed25519PrivateKey.from_private_bytes(fixed(f"sync device key {n}", 32)) for n in "ab")
settings_id, value_id = fixed("sync settings id", 16), fixed("sync value id", 16)
account_ids = [fixed(f"sync account id {n}", 16) for n in range(100)]
joint_id = fixed("sync joint account id", 16)


def account(name):
    return bytes([2, 1]) + text(name) + text("Savings") + b"\0" + optional(None, svarint) + day("2026-01-01") + optional(None, day)


def value(amount):
    return bytes([3, 2]) + account_ids[0] + day("2026-11-01") + svarint(amount) + uvarint(1) + optional(None, text)


c1, c2, c2b = clock(1_795_000_000_000), clock(1_795_000_100_000), clock(1_795_000_050_000)
settings = bytes([1, 2]) + text("GBP") + b"\1"
a1 = changes(1_795_000_000_000, {device_a: 0},
             [(settings_id, c1, None, settings), (value_id, c1, None, value(100_000))]
             + [(rid, c1, None, account(f"Account {n:02d}")) for n, rid in enumerate(account_ids)])
a2 = changes(1_795_000_100_000, {device_a: 1},
             [(value_id, c2, (c1, device_a), value(120_000)), (account_ids[99], c2, (c1, device_a), None)])
b1 = changes(1_795_000_050_000, {device_a: 1, device_b: 0},
             [(value_id, c2b, (c1, device_a), value(90_000)), (joint_id, c2b, None, account("Joint"))])
assert len(a1) >= 4096 and len(a2) < 4096, "one body packed with xz, one not"

if SYNC_DIR.exists():
    for old in sorted(SYNC_DIR.rglob("*"), reverse=True):
        old.rmdir() if old.is_dir() else old.unlink()
for device in (device_a, device_b):
    (SYNC_DIR / device.hex()).mkdir(parents=True)
(SYNC_DIR / f"keys-{generation:08d}-{blake2b(header2)[:4].hex()}.cfkeys").write_bytes(b"CFRSKEY1" + header2)
for device, key, name, enrolled in ((device_a, key_a, "laptop", 1_795_000_000), (device_b, key_b, "desktop", 1_795_000_010)):
    body = bytes_field(raw_public(key)) + text(name) + svarint(enrolled)
    (SYNC_DIR / device.hex() / f"enrol-{generation:08d}.cfsync").write_bytes(sync_file(1, device, 0, body, gen2_key, f"enrol {name}"))
for device, key, sequence, body in ((device_a, key_a, 1, a1), (device_a, key_a, 2, a2), (device_b, key_b, 1, b1)):
    (SYNC_DIR / device.hex() / f"{generation:08d}-{sequence:016d}.cfsync").write_bytes(
        sync_file(2, device, sequence, body, key, f"{device.hex()} {sequence}"))

expected = {settings_id: settings, value_id: value(120_000), joint_id: account("Joint")}
expected.update({rid: account(f"Account {n:02d}") for n, rid in enumerate(account_ids[:99])})
(OUT / "sync-v1.json").write_text(json.dumps({
    "description": "A Coffer sync folder (Specs/sync-format.md) of vault-v2.coffer's vault, key generation 2, built from the spec "
                   "alone: device A's #1 (xz-packed) and #2, device B's #1, which edits the value A's #2 edits (B loses: a conflict).",
    "folder": "sync-v1", "passphrase": passphrase2, "vaultId": vault_id2.hex(), "syncKey": sync_key.hex(),
    "devices": {"laptop": device_a.hex(), "desktop": device_b.hex()}, "conflicts": 1,
    "losingPayload": value(90_000).hex(),
    "bodies": {"laptop #1": a1.hex(), "laptop #2": a2.hex(), "desktop #1": b1.hex()},
    "records": [{"id": rid.hex(), "payload": p.hex()} for rid, p in sorted(expected.items())]}, indent=2) + "\n")
print(f"wrote {OUT / 'sync-v1.json'} and {SYNC_DIR}")


# ---------------------------------------------------------------------------------------------
# Format 3 (Specs/vault-format.md §8): records sealed in pages of one group, a sealed index per
# group, rows named by keyed locators, and a commit record listing the indexes' digests.

def size_class(n):
    """The padded size of n plaintext bytes: at least one byte more, 1 KiB to 16 KiB by doubling,
    then whole multiples of 16 KiB."""
    needed = n + 1
    if needed <= 16384:
        size = 1024
        while size < needed:
            size *= 2
        return size
    return (needed + 16383) // 16384 * 16384


def pad_to_class(data):
    return pad(data, size_class(len(data)))


V3 = {"description": "Coffer vault format 3 test vectors (Specs/vault-format.md §8): pages, group indexes and the "
                     "format 3 commit record, built from the spec alone. All byte strings are hex."}
vault_id3 = fixed("v3 vault id", 16)
passphrase3 = "fixture passphrase three"
master3 = fixed("v3 master key", 32)
created3 = 1_796_000_000
gen_key3 = signing_key(master3)
gen_pk3 = raw_public(gen_key3)
history3 = struct.pack("<IQ", 1, created3) + gen_pk3 + gen_key3.sign(
    b"coffer-key-generation-v1" + vault_id3 + struct.pack("<IQ", 1, created3) + gen_pk3)
slot_salt3, slot_nonce3 = fixed("v3 slot salt", 16), fixed("v3 slot nonce", 24)
slot_params3 = bytes([1, 1]) + struct.pack("<QQ", ops2, mem2) + slot_salt3
passphrase_slot3 = slot_params3 + slot_nonce3 + xchacha_seal(
    argon2id(passphrase3, slot_salt3, ops2, mem2), slot_nonce3, b"coffer-slot-v1" + vault_id3 + slot_params3, master3)
body3 = (b"CFRVAULT" + struct.pack("<H", 3) + vault_id3 + blake2b(b"coffer-master-key-id-v1", 16, master3)
         + struct.pack("<I", 1) + bytes([1]) + passphrase_slot3 + struct.pack("<H", 1) + history3)
header3 = body3 + blake2b(body3, 32, kdf_subkey(master3, 3))
header3 += blake2b(header3)

record_key3, integrity_key3 = kdf_subkey(master3, 1), kdf_subkey(master3, 2)
locator_key3 = kdf_subkey(integrity_key3, 1, b"CofferPg")


def locator(role, group, number):
    return blake2b(bytes([role]) + struct.pack("<QI", group, number), 16, locator_key3)


setup_group, november_group = 1 << 56, 4 << 56 | (2026 * 12 + 10)
# (group, page number, [(record label, version, payload)]): page numbers may have gaps, and a
# record larger than a page gets one of its own (here padded to 32 KiB).
layout3 = [
    (setup_group, 0, [("settings", 1, b"settings payload"), ("account", 3, "\u20ac canary CANARY-FIXTURE-3".encode())]),
    (november_group, 0, [("coffee", 2, b"flat white 3.20")]),
    (november_group, 2, [("large", 5, bytes(i % 251 for i in range(20000)))]),
]
pages3, indexes3, records3 = [], {}, []
for group, number, records in layout3:
    ids = [fixed(f"v3 record id {label}", 16) for label, _, _ in records]
    plain = struct.pack("<I", len(records)) + b"".join(
        rid + struct.pack("<I", len(payload)) + payload for rid, (_, _, payload) in zip(ids, records))
    page_locator = locator(1, group, number)
    nonce = fixed(f"v3 page nonce {group} {number}", 24)
    sealed = nonce + xchacha_seal(record_key3, nonce, vault_id3 + bytes([4]) + struct.pack("<H", 3) + page_locator,
                                  pad_to_class(plain))
    pages3.append((page_locator, sealed))
    indexes3.setdefault(group, []).append(struct.pack("<I", number) + sealed[-16:] + struct.pack("<I", len(records))
                                          + b"".join(rid + struct.pack("<Q", version)
                                                     for rid, (_, version, _) in zip(ids, records)))
    records3 += [{"id": rid.hex(), "version": version, "payload": payload.hex(), "group": group, "page": number,
                  "pageLocator": page_locator.hex()} for rid, (_, version, payload) in zip(ids, records)]
index_rows3, group_entries3 = [], []
for group in sorted(indexes3):
    index_locator = locator(2, group, 0)
    plain = struct.pack("<QI", group, len(indexes3[group])) + b"".join(indexes3[group])
    nonce = fixed(f"v3 index nonce {group}", 24)
    sealed = nonce + xchacha_seal(integrity_key3, nonce, vault_id3 + bytes([5]) + struct.pack("<H", 3) + index_locator,
                                  pad_to_class(plain))
    index_rows3.append((index_locator, sealed))
    group_entries3.append(struct.pack("<Q", group) + blake2b(sealed))
device_id3 = fixed("v3 device id", 16)
commit_counter3 = 13
commit_plain3 = (struct.pack("<QQ", commit_counter3, len(records3)) + blake2b(header3) + device_id3
                 + struct.pack("<I", len(group_entries3)) + b"".join(group_entries3))
commit_nonce3 = fixed("v3 commit nonce", 24)
commit3 = commit_nonce3 + xchacha_seal(integrity_key3, commit_nonce3, vault_id3 + bytes([3]) + struct.pack("<H", 3),
                                       pad_to_class(commit_plain3))

V3["vault"] = {"file": "vault-v3.coffer", "passphrase": passphrase3, "vaultId": vault_id3.hex(), "masterKey": master3.hex(),
               "header": header3.hex(), "deviceId": device_id3.hex(), "commitCounter": commit_counter3,
               "locatorKey": locator_key3.hex(), "signingKey": gen_pk3.hex(),
               "indexLocators": {str(group): locator(2, group, 0).hex() for group in sorted(indexes3)},
               "pages": len(pages3), "records": records3}
(OUT / "vault-v3.json").write_text(json.dumps(V3, indent=2) + "\n")

path3 = OUT / "vault-v3.coffer"
if path3.exists():
    path3.unlink()
db = sqlite3.connect(path3)
db.executescript("""
    PRAGMA journal_mode = DELETE;
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
    INSERT INTO grdb_migrations VALUES ('v1');
    INSERT INTO grdb_migrations VALUES ('v2-pages');
    CREATE TABLE header (id INTEGER PRIMARY KEY CHECK (id = 1), body BLOB NOT NULL);
    CREATE TABLE commit_record (id INTEGER PRIMARY KEY CHECK (id = 1), sealed BLOB NOT NULL);
    CREATE TABLE page (locator BLOB PRIMARY KEY NOT NULL, sealed BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE page_index (locator BLOB PRIMARY KEY NOT NULL, sealed BLOB NOT NULL) WITHOUT ROWID;
""")
db.execute("INSERT INTO header VALUES (1, ?)", (header3,))
db.executemany("INSERT INTO page VALUES (?, ?)", pages3)
db.executemany("INSERT INTO page_index VALUES (?, ?)", index_rows3)
db.execute("INSERT INTO commit_record VALUES (1, ?)", (commit3,))
db.commit()
db.execute("VACUUM")
db.close()
os.chmod(path3, 0o600)
print(f"wrote {OUT / 'vault-v3.json'} and {path3}")


# ---------------------------------------------------------------------------------------------
# Archive format 2 (Specs/backup-format.md, "Body, format 2"): the id table, then the export in
# columns. A writer of the vector from the document alone, and a reader that opens it and the
# committed fixture Tests/Fixtures/backup-v2 (made by Coffer) from the passphrase alone.

def zz(value):
    return ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF


def unzz(raw):
    value = (raw >> 1) ^ -(raw & 1)
    return value


def signed64(value):
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


class Cursor:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        assert 0 <= n <= len(self.data) - self.at, "truncated"
        self.at += n
        return self.data[self.at - n:self.at]

    def byte(self):
        return self.take(1)[0]

    def leb(self):
        result, shift = 0, 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def end(self):
        return self.at == len(self.data)


def parse_layout(text):
    """The layout as nested lists: (symbol, streams, children); streams numbered in text order."""
    at, count = 0, 0

    def new():
        nonlocal count
        count += 1
        return count - 1

    def sequence(depth):
        nonlocal at
        assert depth <= 8
        fields = []
        while at < len(text) and text[at] not in ")]|>":
            fields.append(field(depth))
        return fields

    def field(depth):
        nonlocal at
        symbol = text[at]
        at += 1
        if symbol in "usdnbi*":
            return (symbol, [new()], None)
        if symbol == "t":
            return (symbol, [new(), new()], None)
        if symbol == "?":
            return (symbol, [new()], [field(depth + 1)])
        if symbol in "([<":
            streams = [] if symbol == "(" else [new()]
            alternatives = [sequence(depth + 1)]
            while symbol == "<" and text[at] == "|":
                at += 1
                alternatives.append(sequence(depth + 1))
            assert text[at] == {"(": ")", "[": "]", "<": ">"}[symbol]
            at += 1
            return (symbol, streams, alternatives if symbol == "<" else alternatives[0])
        raise AssertionError(f"unknown layout symbol {symbol}")

    fields = sequence(0)
    assert at == len(text)
    return fields, count


def encode_block(kind, version, layout, payloads, index_of):
    """Splits each payload (after kind and version) into the layout's streams."""
    fields, count = parse_layout(layout)
    streams = [bytearray() for _ in range(count)]
    previous, dictionaries = [0] * count, [dict() for _ in range(count)]

    def emit(fields, c):
        for symbol, ss, inner in fields:
            if symbol in "us":
                streams[ss[0]] += uvarint(c.leb())
            elif symbol == "d":
                value = unzz(c.leb())
                streams[ss[0]] += uvarint(zz(signed64(value - previous[ss[0]])))
                previous[ss[0]] = value
            elif symbol == "n":   # format 3: an unsigned value that mostly grows
                value = c.leb()
                assert value < 1 << 64
                streams[ss[0]] += uvarint(zz(signed64(value - previous[ss[0]])))
                previous[ss[0]] = value
            elif symbol == "b":
                streams[ss[0]].append(c.byte())
            elif symbol == "t":
                text = c.take(c.leb())
                known = dictionaries[ss[0]]
                if text not in known:
                    streams[ss[1]] += uvarint(len(text)) + text
                    known[text] = len(known)
                streams[ss[0]] += uvarint(known[text])
            elif symbol == "i":
                position = index_of(c.take(16))
                streams[ss[0]] += uvarint(zz(signed64(position - previous[ss[0]])))
                previous[ss[0]] = position
            elif symbol == "*":
                rest = c.take(len(c.data) - c.at)
                streams[ss[0]] += uvarint(len(rest)) + rest
            elif symbol == "?":
                flag = c.byte()
                streams[ss[0]].append(flag)
                if flag:
                    emit(inner, c)
            elif symbol == "[":
                n = c.leb()
                streams[ss[0]] += uvarint(n)
                for _ in range(n):
                    emit(inner, c)
            elif symbol == "(":
                emit(inner, c)
            elif symbol == "<":
                tag = c.byte()
                streams[ss[0]].append(tag)
                emit(inner[tag], c)

    for payload in payloads:
        c = Cursor(payload if kind == 0 else payload[2:])
        emit(fields, c)
        assert c.end()
    out = bytes([kind, version, len(layout)]) + layout.encode() + uvarint(len(payloads)) + uvarint(count)
    return out + b"".join(uvarint(len(s)) for s in streams) + b"".join(bytes(s) for s in streams)


def decode_block(block, table):
    """Rebuilds every payload of one block; every stream must be used to its end."""
    c = Cursor(block)
    kind, version, length = c.byte(), c.byte(), c.byte()
    layout = c.take(length).decode()
    fields, count = parse_layout(layout)
    records, stream_count = c.leb(), c.leb()
    assert stream_count == count and (kind != 0 or (version == 0 and layout == "*"))
    lengths = [c.leb() for _ in range(count)]
    streams = [Cursor(c.take(n)) for n in lengths]
    assert c.end()
    previous, dictionaries = [0] * count, [[] for _ in range(count)]

    def rebuild(fields, out):
        for symbol, ss, inner in fields:
            s = streams[ss[0]] if ss else None   # `(` has no stream of its own
            if symbol in "us":
                out += uvarint(s.leb())
            elif symbol == "d":
                previous[ss[0]] = signed64(previous[ss[0]] + unzz(s.leb()))
                out += uvarint(zz(previous[ss[0]]))
            elif symbol == "n":   # the difference added back modulo 2^64, written as a uvarint
                previous[ss[0]] = (previous[ss[0]] + unzz(s.leb())) & 0xFFFFFFFFFFFFFFFF
                out += uvarint(previous[ss[0]])
            elif symbol == "b":
                out.append(s.byte())
            elif symbol == "t":
                code, known = s.leb(), dictionaries[ss[0]]
                if code == len(known):
                    known.append(streams[ss[1]].take(streams[ss[1]].leb()))
                out += uvarint(len(known[code])) + known[code]
            elif symbol == "i":
                previous[ss[0]] = signed64(previous[ss[0]] + unzz(s.leb()))
                assert 0 <= previous[ss[0]] < len(table), "table index out of range"
                out += table[previous[ss[0]]]
            elif symbol == "*":
                out += s.take(s.leb())
            elif symbol == "?":
                flag = s.byte()
                assert flag in (0, 1)
                out.append(flag)
                if flag:
                    rebuild(inner, out)
            elif symbol == "[":
                n = s.leb()
                out += uvarint(n)
                for _ in range(n):
                    rebuild(inner, out)
            elif symbol == "(":
                rebuild(inner, out)
            elif symbol == "<":
                tag = s.byte()
                out.append(tag)
                rebuild(inner[tag], out)

    payloads = []
    for _ in range(records):
        out = bytearray() if kind == 0 else bytearray([kind, version])
        rebuild(fields, out)
        payloads.append(bytes(out))
    assert all(s.end() for s in streams)
    return payloads


def manifest_bytes(records, commit_counter, net_worth, app):
    kinds = {}
    for _, p in records:
        kinds[p[:1][0] if p else 0] = kinds.get(p[:1][0] if p else 0, 0) + 1
    digest = blake2b(b"".join(rid + struct.pack("<I", len(p)) + p for rid, p in records))
    return (struct.pack("<QB", len(records), len(kinds)) + b"".join(struct.pack("<BQ", k, kinds[k]) for k in sorted(kinds))
            + digest + struct.pack("<Q", commit_counter) + string16(net_worth) + string16(app))


# The records: two transactions in one category (text and id repeated), a change-log entry naming
# a deleted record (an extra id), a budget category in no layout, and an empty payload.
category_id, deleted_id = fixed("v2 archive category", 16), fixed("v2 archive deleted record", 16)
tx_ids = [fixed(f"v2 archive transaction {n}", 16) for n in range(2)]
change_id, empty_id = fixed("v2 archive change", 16), fixed("v2 archive empty", 16)
LAYOUTS2 = {(10, 3): "sb<i|i|i|>?tdu?(tt)?(?i?iu)", (5, 1): "ust[i?t]"}


def transaction_payload(amount, day, sequence):
    return (bytes([10, 3]) + uvarint(zz(amount)) + bytes([0, 0]) + category_id + b"\x01" + uvarint(12) + b"Fixture shop"
            + uvarint(zz(day)) + uvarint(sequence) + b"\x00\x00")


groups = [  # (kind, version, layout, [(id, payload)]) in export order
    (0, 0, "*", [(empty_id, b"")]),
    (5, 1, LAYOUTS2[(5, 1)], [(change_id, bytes([5, 1]) + uvarint(1) + uvarint(zz(1_796_000_000))
                                + uvarint(8) + b"Imported" + uvarint(2) + tx_ids[0] + b"\x00" + deleted_id + b"\x01"
                                + uvarint(3) + b"old")]),
    (8, 2, "*", [(category_id, bytes([8, 2]) + uvarint(9) + b"Groceries" + b"\x00\x00\x00\x00")]),
    (10, 3, LAYOUTS2[(10, 3)], [(tx_ids[0], transaction_payload(-1234, 20_400, 1)),
                                (tx_ids[1], transaction_payload(-750, 20_401, 2))]),
]
records_v2 = [r for _, _, _, rs in groups for r in rs]
table_v2 = [rid for rid, _ in records_v2] + [deleted_id]
export_v2 = b"CFREXPV2"
for kind, version, layout, rs in groups:
    block = encode_block(kind, version, layout, [p for _, p in rs], table_v2.index)
    export_v2 += struct.pack("<I", len(block)) + block
manifest_v2 = manifest_bytes(records_v2, commit_counter2, "GBP 1234.56", "make-vectors.py")
export_v2 += struct.pack("<II", 0, len(manifest_v2)) + manifest_v2
body_v2 = (struct.pack("<QQ", len(records_v2), 1) + b"".join(table_v2)
           + lzma.compress(export_v2, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6))

def seal_archive(version, sequence, created, name, label, export_length, body):
    """Header, chunks and minisign signature of an archive of the vault of vault-v2.json (key
    generation 2), written to OUT: returns (file key, header, archive, trusted comment)."""
    file_key, nonce, stream_header = (fixed(f"archive {label} file key", 32), fixed(f"archive {label} file key nonce", 24),
                                      fixed(f"archive {label} stream header", 24))
    bound = (b"COFFERBK" + struct.pack("<HHHBH", version, 0, 0, 1, 1) + vault_id2
             + struct.pack("<QQQ", sequence, created, export_length) + struct.pack("<H", len(header2)) + header2)
    header = (bound + nonce + xchacha_seal(backup_key, nonce, b"coffer-archive-key-v1" + bound, file_key)
              + stream_header + gen2_pk)
    header += blake2b(header)
    stream, ad = SecretStreamPush(file_key, stream_header), blake2b(header)
    pieces = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    archive = header + b"".join(struct.pack("<I", len(c)) + c for c in (
        stream.push(piece, ad, 3 if i == len(pieces) - 1 else 0) for i, piece in enumerate(pieces)))
    comment = (f"coffer-archive v1 vault={vault_id2.hex()} seq={sequence} time={created} file={name} "
               f"device={device_id.hex()} commit={commit_counter2}")
    signature = gen2_key.sign(hashlib.blake2b(archive, digest_size=64).digest())
    (OUT / name).write_bytes(archive)
    (OUT / (name + ".minisig")).write_text(
        f"untrusted comment: signature from Coffer vault key {key_id_text}\n"
        + base64.b64encode(b"ED" + key_id + signature).decode() + "\n" + f"trusted comment: {comment}\n"
        + base64.b64encode(gen2_key.sign(signature + comment.encode())).decode() + "\n")
    return file_key, header, archive, comment


sequence_v2, time_v2 = 4, 1_796_083_200
name_v2 = "coffer-20261201-000000-000004.cbak"
file_key_v2, header_v2, archive_v2, comment_v2 = seal_archive(2, sequence_v2, time_v2, name_v2, "v2", len(export_v2), body_v2)
(OUT / "archive-v2.json").write_text(json.dumps({
    "description": "Coffer archive format 2 test vector (Specs/backup-format.md, \"Body, format 2\"): the vault of "
                   "vault-v2.json, its passphrase and keys. All byte strings are hex.",
    "file": name_v2, "signature": name_v2 + ".minisig", "publicKey": "archive-v1.pub", "passphrase": passphrase2,
    "sequence": sequence_v2, "created": time_v2, "fileKey": file_key_v2.hex(), "header": header_v2.hex(),
    "body": body_v2.hex(), "export": export_v2.hex(), "extraIds": [deleted_id.hex()],
    "records": [{"id": rid.hex(), "payload": p.hex()} for rid, p in records_v2],
    "netWorth": "GBP 1234.56", "commitCounter": commit_counter2, "trustedComment": comment_v2}, indent=2) + "\n")


# The reader: from the file and the passphrase alone.
class SecretStreamPull:
    def __init__(self, key, header):
        self.k = hchacha20(key, header[:16])
        self.counter, self.inonce = 1, header[16:24]

    def pull(self, sealed, ad):
        nonce = struct.pack("<I", self.counter) + self.inonce
        mac = poly1305.Poly1305(chacha20_ietf(self.k, 0, nonce, bytes(64))[:32])
        mac.update(ad + bytes((16 - len(ad) % 16) % 16))
        keystream = chacha20_ietf(self.k, 1, nonce, bytes(64))
        tag = sealed[0] ^ keystream[0]
        mac.update(sealed[:1] + keystream[1:])
        ciphertext, expected = sealed[1:-16], sealed[-16:]
        mac.update(ciphertext + bytes(len(ciphertext) % 16))
        mac.update(struct.pack("<QQ", len(ad), 64 + len(ciphertext)))
        mac.verify(expected)
        self.inonce = bytes(a ^ b for a, b in zip(self.inonce, expected[:8]))
        self.counter = (self.counter + 1) & 0xFFFFFFFF
        return chacha20_ietf(self.k, 2, nonce, ciphertext), tag


def xchacha_open(key, nonce24, aad, sealed):
    return ChaCha20Poly1305(hchacha20(key, nonce24[:16])).decrypt(b"\0" * 4 + nonce24[16:], sealed, aad)


MIB = 1 << 20


def strict_uvarint(c):
    """A minimal LEB128 uvarint of at most 10 bytes and 64 bits (the id table's coding 1)."""
    result = 0
    for i in range(10):
        b = c.byte()
        result |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            assert i == 0 or b != 0, "uvarint not minimal"
            assert result < 1 << 64, "uvarint above 64 bits"
            return result
    raise AssertionError("uvarint longer than 10 bytes")


def id_table_content(ids):
    """Coding 1's content: per id zigzag(high - previous high), zigzag(low - previous low), the
    words being bytes 0-7 and 8-15 read big-endian, differences modulo 2^64 read as signed."""
    out, high, low = bytearray(), 0, 0
    for rid in ids:
        h, l = struct.unpack(">QQ", rid)
        out += uvarint(zz(signed64(h - high))) + uvarint(zz(signed64(l - low)))
        high, low = h, l
    return bytes(out)


def id_table_columns(ids):
    """Coding 2's content (format 4): three columns of zigzag differences, each starting from 0: the
    high word's first 48 bits (bytes 0-5) for every id, its last 16 (bytes 6-7), then the low word
    (bytes 8-15, modulo 2^64)."""
    parts = [[int.from_bytes(rid[0:6], "big") for rid in ids], [int.from_bytes(rid[6:8], "big") for rid in ids],
             [int.from_bytes(rid[8:16], "big") for rid in ids]]
    out = bytearray()
    for column, values in enumerate(parts):
        previous = 0
        for value in values:
            difference = value - previous if column < 2 else signed64(value - previous)
            out += uvarint(zz(difference))
            previous = value
    return bytes(out)


def encode_id_table(ids, coding):
    """The table's bytes (L of them) for coding 0 (as it is), 1 (format 3: content length C u64 ‖ xz
    of the pairs) or 2 (format 4: the same, of the columns)."""
    if coding == 0:
        return b"".join(ids)
    content = id_table_content(ids) if coding == 1 else id_table_columns(ids)
    return struct.pack("<Q", len(content)) + lzma.compress(content, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)


def decode_id_table(coding, table, count, extra, body_length, version=3):
    """The N + E ids of a format 3 or 4 table, with the checks of "Reading (level 2, format 3)" and
    "Reading (level 2, format 4)"."""
    total = count + extra
    if coding == 0:
        assert len(table) == 16 * total, "coding 0: L is not 16 × (N + E)"
        return [table[i:i + 16] for i in range(0, len(table), 16)]
    assert coding == (2 if version >= 4 else 1), "unknown table coding"
    assert 16 * total <= 256 * MIB + 64 * body_length, "ids out of proportion to the body"
    t = Cursor(table)
    content_length = struct.unpack("<Q", t.take(8))[0]
    least, most = (2, 20) if coding == 1 else (3, 20)
    assert least * total <= content_length <= most * total, "content length out of range"
    xz = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=256 * MIB)
    content = xz.decompress(table[8:], max_length=content_length + 1)
    assert xz.eof and not xz.unused_data, "the xz stream does not end at the end of the table"
    assert len(content) == content_length, "content is not C bytes"
    c, ids = Cursor(content), []
    if coding == 1:
        high = low = 0
        for _ in range(total):
            high = (high + unzz(strict_uvarint(c))) & 0xFFFFFFFFFFFFFFFF
            low = (low + unzz(strict_uvarint(c))) & 0xFFFFFFFFFFFFFFFF
            ids.append(struct.pack(">QQ", high, low))
    else:
        columns = []
        for column, limit in enumerate((1 << 48, 1 << 16, None)):
            value, values = 0, []
            for _ in range(total):
                value += unzz(strict_uvarint(c))
                if limit is None:
                    value &= 0xFFFFFFFFFFFFFFFF
                else:
                    assert 0 <= value < limit, "a column's value outside its part of the id"
                values.append(value)
            columns.append(values)
        ids = [m.to_bytes(6, "big") + k.to_bytes(2, "big") + low.to_bytes(8, "big") for m, k, low in zip(*columns)]
    assert c.end(), "bytes after the last id"
    return ids


def read_archive(path, passphrase):
    """Opens a format 2, 3 or 4 archive with its passphrase: returns (records, manifest and table fields)."""
    data = Path(path).read_bytes()
    c = Cursor(data)
    assert c.take(8) == b"COFFERBK"
    version, critical, _, codec, _ = struct.unpack("<HHHBH", c.take(9))
    assert version in (2, 3, 4) and critical == 0 and codec == 1
    vault_id = c.take(16)
    _, _, export_length = struct.unpack("<QQQ", c.take(24))
    vault_header = c.take(struct.unpack("<H", c.take(2))[0])
    bound = data[:c.at]
    nonce, wrapped, stream_header, signer = c.take(24), c.take(48), c.take(24), c.take(32)
    assert c.take(32) == blake2b(data[:c.at - 32])
    # The archived vault header's passphrase slot (vault-format.md): after magic, format, vault id,
    # master key id, generation and slot count.
    slot = Cursor(vault_header[47:])
    params = slot.take(34)
    ops, mem = struct.unpack("<QQ", params[2:18])
    master = xchacha_open(argon2id(passphrase, params[18:34], ops, mem), slot.take(24),
                          b"coffer-slot-v1" + vault_id + params, slot.take(48))
    assert raw_public(signing_key(master)) == signer
    file_key = xchacha_open(kdf_subkey(master, 4), nonce, b"coffer-archive-key-v1" + bound, wrapped)
    stream, ad, body, final = SecretStreamPull(file_key, stream_header), blake2b(data[:c.at]), b"", False
    while not c.end():
        assert not final, "data after the final chunk"
        message, tag = stream.pull(c.take(struct.unpack("<I", c.take(4))[0]), ad)
        body, final = body + message, tag == 3
    assert final, "no final chunk"
    b = Cursor(body)
    count, extra = struct.unpack("<QQ", b.take(16))
    assert 16 * (count + extra) < 1 << 64
    coding, table_length = None, 16 * (count + extra)
    if version == 2:
        assert 16 * (count + extra) <= len(body) - b.at, "the id table does not fit the body"
        table = [b.take(16) for _ in range(count + extra)]
    else:
        assert count <= (1 << 31) - 1
        coding = b.byte()
        assert coding in (0, 1, 2), "unknown table coding"
        table_length = struct.unpack("<Q", b.take(8))[0]
        # "the body's length": taken here as the secretstream's plaintext, the body of "Body, format 3".
        table = decode_id_table(coding, b.take(table_length), count, extra, len(body), version)
    assert len(set(table[:count])) == count
    xz = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=256 * MIB)
    export = xz.decompress(body[b.at:], max_length=export_length + 1)
    assert xz.eof and not xz.unused_data and len(export) == export_length
    e = Cursor(export)
    assert e.take(8) == b"CFREXPV2"
    records, layouts = [], []
    while True:
        length = struct.unpack("<I", e.take(4))[0]
        if length == 0:
            break
        block = e.take(length)
        layouts.append((block[0], block[1], block[3:3 + block[2]].decode()))
        for payload in decode_block(block, table):
            assert len(records) < count, "a block holds more records than the table has left"
            records.append((table[len(records)], payload))
    manifest = e.take(struct.unpack("<I", e.take(4))[0])
    assert e.end() and len(records) == count
    m = Cursor(manifest)
    assert struct.unpack("<Q", m.take(8))[0] == count
    m.take(9 * m.byte())
    assert m.take(32) == blake2b(b"".join(rid + struct.pack("<I", len(p)) + p for rid, p in records))
    commit = struct.unpack("<Q", m.take(8))[0]
    net_worth = m.take(struct.unpack("<H", m.take(2))[0]).decode()
    assert manifest == manifest_bytes(records, commit, net_worth, m.take(struct.unpack("<H", m.take(2))[0]).decode())
    return records, {"commit": commit, "netWorth": net_worth, "format": version, "tableCoding": coding,
                     "tableLength": table_length, "extraIds": table[count:], "layouts": layouts}


read_back, fields = read_archive(OUT / name_v2, passphrase2)
assert read_back == records_v2 and fields["netWorth"] == "GBP 1234.56" and fields["extraIds"] == [deleted_id]
print(f"wrote {OUT / name_v2} and archive-v2.json")


# ---------------------------------------------------------------------------------------------
# Archive format 3 (Specs/backup-format.md, "Body, format 3"): format 2's export (layouts may use
# `n`), with the id table coded as differences. Records get ordered ids (record-payloads.md
# "Record ids"), as Coffer issues them, so that coding 1 saves most of the table.

class OrderedIDs:
    """RFC 9562 version 8 ids as one process issues them: 48-bit Unix milliseconds (big-endian),
    version 1000, 12-bit counter within the millisecond, variant 10, 62 random bits drawn once per
    process (fixed here). A clock that stands still or steps back keeps the last millisecond and
    counts on; a counter past 4,095 moves to the next millisecond."""

    def __init__(self, label):
        self.random = int.from_bytes(fixed(label, 8), "big") & ((1 << 62) - 1)
        self.ms, self.counter = -1, 0

    def issue(self, clock_ms):
        if clock_ms > self.ms:
            self.ms, self.counter = clock_ms, 0
        elif self.counter < 4095:
            self.counter += 1
        else:
            self.ms, self.counter = self.ms + 1, 0
        return struct.pack(">QQ", self.ms << 16 | 0x8 << 12 | self.counter, 0b10 << 62 | self.random)


def epoch_day(iso):
    return datetime.date.fromisoformat(iso).toordinal() - datetime.date(1970, 1, 1).toordinal()


# Four processes, each with its own random bits: the one that set the vault up (an account, a
# category, a record with an empty payload and a transaction deleted later), an import of 30
# transactions (ids issued in bursts within a millisecond), the delete, and a spend with a flow.
# Each process's last id is its change-log entry's.
setup_ids, import_ids = OrderedIDs("v3 archive process setup"), OrderedIDs("v3 archive process import")
delete_ids, spend_ids = OrderedIDs("v3 archive process delete"), OrderedIDs("v3 archive process spend")
setup_ms, import_ms, delete_ms, spend_ms = 1_796_140_800_123, 1_796_144_400_000, 1_796_148_000_250, 1_796_151_600_500
account_v3, category_v3, empty_v3 = setup_ids.issue(setup_ms), setup_ids.issue(setup_ms), setup_ids.issue(setup_ms + 1)
deleted_v3 = setup_ids.issue(setup_ms + 3)
setup_change_v3 = setup_ids.issue(setup_ms + 4)
imported_v3 = [import_ids.issue(import_ms + n // 12) for n in range(30)]   # counters 0-11, 0-11, 0-5
import_change_v3 = import_ids.issue(import_ms + 3)
delete_change_v3 = delete_ids.issue(delete_ms)
spent_v3 = spend_ids.issue(spend_ms)
spend_change_v3 = spend_ids.issue(spend_ms)                               # same millisecond: counter 1
LAYOUTS3 = {(2, 1): "ttb?sd?d", (5, 1): "ndt[i?t]", (10, 3): "sb<i|i|i|>?tdn?(tt)?(?i?in)"}


def transaction_v3(amount, kind, target, note, date, sequence, origin=None, flow_=None):
    """Kind 10 version 3: amount, type, target (tag 0-2 with an id, 3 uncategorised), note, date,
    entry sequence, origin (account, row digest), flow (from, to, order)."""
    tag, target_id = target
    return (bytes([10, 3]) + svarint(amount) + bytes([kind, tag]) + (target_id or b"") + optional(note, text)
            + svarint(epoch_day(date)) + uvarint(sequence)
            + optional(origin, lambda o: text(o[0]) + uvarint(len(o[1])) + o[1])
            + optional(flow_, lambda f: optional(f[0], lambda v: v) + optional(f[1], lambda v: v) + uvarint(f[2])))


def change_v3(sequence, timestamp, summary, touched):
    return (bytes([5, 1]) + uvarint(sequence) + svarint(timestamp) + text(summary) + uvarint(len(touched))
            + b"".join(rid + optional(previous, lambda v: uvarint(len(v)) + v) for rid, previous in touched))


shops = ["Tesco", "Pret", "Tesco", "Trainline", "Tesco", "Waitrose"]
imported_payloads = [transaction_v3(250 + 137 * n, 1, (0, category_v3) if n % 3 else (3, None), shops[n % len(shops)],
                                    f"2026-11-{n + 1:02d}", n + 1, ("Current", fixed(f"v3 archive row {n}", 16)))
                     for n in range(30)]
deleted_payload = transaction_v3(5000, 2, (3, None), "Holiday", "2026-11-08", 40)
spent_payload = transaction_v3(320, 1, (0, category_v3), "Coffee", "2026-12-01", 31, None, (account_v3, None, 7))
account_payload = (bytes([2, 1]) + text("Current") + text("Bank") + b"\x00" + optional(None, svarint)
                   + svarint(epoch_day("2026-11-01")) + optional(None, svarint))
category_payload = bytes([8, 2]) + text("Groceries") + b"\x00" + svarint(0) + b"\x01" + optional(account_v3, lambda v: v)
changes_v3 = [
    (setup_change_v3, change_v3(1, setup_ms // 1000, "Set up", [(account_v3, None), (category_v3, None), (deleted_v3, None)])),
    (import_change_v3, change_v3(2, import_ms // 1000, "Imported 30 transactions", [(rid, None) for rid in imported_v3])),
    (delete_change_v3, change_v3(3, delete_ms // 1000, "Deleted transaction", [(deleted_v3, deleted_payload)])),
    (spend_change_v3, change_v3(4, spend_ms // 1000, "Spent 3.20", [(spent_v3, None)])),
]
groups_v3 = [  # (kind, version, layout, [(id, payload)]) in export order, as Coffer's encoder orders them
    (0, 0, "*", [(empty_v3, b"")]),
    (2, 1, LAYOUTS3[(2, 1)], [(account_v3, account_payload)]),
    (5, 1, LAYOUTS3[(5, 1)], changes_v3),
    (8, 2, "*", [(category_v3, category_payload)]),
    (10, 3, LAYOUTS3[(10, 3)], list(zip(imported_v3, imported_payloads)) + [(spent_v3, spent_payload)]),
]
records_v3 = [r for _, _, _, rs in groups_v3 for r in rs]
table_v3 = [rid for rid, _ in records_v3] + [deleted_v3]   # the deleted transaction: named, not held
assert len(set(table_v3)) == len(table_v3) and all(rid[6] >> 4 == 8 and rid[8] >> 6 == 2 for rid in table_v3)
export_v3 = b"CFREXPV2"
for kind, version, layout, rs in groups_v3:
    block = encode_block(kind, version, layout, [p for _, p in rs], table_v3.index)
    assert decode_block(block, table_v3) == [p for _, p in rs]
    export_v3 += struct.pack("<I", len(block)) + block
net_worth_v3 = "GBP 2345.67"
manifest_v3 = manifest_bytes(records_v3, commit_counter2, net_worth_v3, "make-vectors.py")
export_v3 += struct.pack("<II", 0, len(manifest_v3)) + manifest_v3
# Coffer writes coding 1 when it saves at least a quarter of the 16 × (N + E) bytes; here it does.
def coded_table_vector(version, coding, sequence, created, description):
    """A format 3 or 4 archive of the records above, the id table in `coding`, sealed and signed,
    with its JSON description: returns (name, table content, coded table, body)."""
    content = id_table_content(table_v3) if coding == 1 else id_table_columns(table_v3)
    table = encode_id_table(table_v3, coding)
    # Coffer writes a coded table when its content is under three quarters of 16 × (N + E) (format 4:
    # and the coded table under 16 × (N + E)); here it is.
    assert 4 * len(content) < 3 * 16 * len(table_v3) and len(table) < 16 * len(table_v3)
    body = (struct.pack("<QQBQ", len(records_v3), 1, coding, len(table)) + table
            + lzma.compress(export_v3, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6))
    name = datetime.datetime.fromtimestamp(created, datetime.timezone.utc).strftime(
        f"coffer-%Y%m%d-%H%M%S-{sequence:06d}.cbak")
    file_key, header, _, comment = seal_archive(version, sequence, created, name, f"v{version}", len(export_v3), body)
    (OUT / f"archive-v{version}.json").write_text(json.dumps({
        "description": description + " tableContent is the C bytes the table's xz stream holds. All byte strings are hex.",
        "file": name, "signature": name + ".minisig", "publicKey": "archive-v1.pub", "passphrase": passphrase2,
        "sequence": sequence, "created": created, "fileKey": file_key.hex(), "header": header.hex(),
        "body": body.hex(), "export": export_v3.hex(), "tableCoding": coding, "table": table.hex(),
        "tableContent": content.hex(), "extraIds": [deleted_v3.hex()],
        "records": [{"id": rid.hex(), "payload": p.hex()} for rid, p in records_v3],
        "netWorth": net_worth_v3, "commitCounter": commit_counter2, "trustedComment": comment}, indent=2) + "\n")
    return name, content, table, body


name_v3, table_content_v3, coded_table_v3, body_v3 = coded_table_vector(
    3, 1, 5, 1_796_169_600,
    "Coffer archive format 3 test vector (Specs/backup-format.md, \"Body, format 3\"): the vault of vault-v2.json, its "
    "passphrase and keys; ordered record ids (record-payloads.md \"Record ids\"), so the id table is coded as "
    "differences (coding 1), and layouts with `n`.")
assert name_v3 == "coffer-20261202-000000-000005.cbak"

# The id table coder against itself and the reader's refusals.
assert decode_id_table(1, coded_table_v3, len(records_v3), 1, len(body_v3)) == table_v3
assert decode_id_table(0, encode_id_table(table_v3, 0), len(records_v3), 1, len(body_v3)) == table_v3


def refused(table, coding=1, count=len(records_v3), extra=1, body_length=len(body_v3)):
    try:
        decode_id_table(coding, table, count, extra, body_length)
    except (AssertionError, lzma.LZMAError):
        return True
    return False


def coded(content, length=None):
    return struct.pack("<Q", len(content) if length is None else length) + lzma.compress(content, format=lzma.FORMAT_XZ)


assert refused(coded_table_v3 + b"\0")                                   # a byte after the xz stream
assert refused(coded(table_content_v3, len(table_content_v3) - 1))     # more than C bytes
assert refused(coded(table_content_v3 + b"\0", len(table_content_v3)))  # ditto
assert refused(coded(table_content_v3[:-1] + b"\x80\x00"))              # a non-minimal uvarint
assert refused(coded(table_content_v3 + b"\0\0"))                       # a pair more than N + E
assert refused(coded(bytes(2 * 31)), extra=0)                           # C below 2 × (N + E)
assert refused(coded_table_v3, count=1 << 27, extra=0, body_length=0)   # 16 × (N + E) above 256 MiB + 64 × body
assert refused(encode_id_table(table_v3, 0)[:-16], coding=0)            # coding 0: L not 16 × (N + E)
assert refused(coded_table_v3, coding=2)                                 # an unknown coding (in format 3)

read_back, fields = read_archive(OUT / name_v3, passphrase2)
assert read_back == records_v3 and fields["netWorth"] == net_worth_v3 and fields["extraIds"] == [deleted_v3]
assert fields["format"] == 3 and fields["tableCoding"] == 1 and fields["tableLength"] == len(coded_table_v3)
print(f"wrote {OUT / name_v3} and archive-v3.json: {len(table_v3)} ids in a {len(coded_table_v3)}-byte table "
      f"(coding 1; {len(table_content_v3)} bytes before xz, {16 * len(table_v3)} as they are)")


# ---------------------------------------------------------------------------------------------
# Archive format 4 (Specs/backup-format.md, "Body, format 4"): format 3's records and export, with
# the id table coded in columns (coding 2).

name_v4, table_columns_v4, coded_table_v4, body_v4 = coded_table_vector(
    4, 2, 6, 1_796_256_000,
    "Coffer archive format 4 test vector (Specs/backup-format.md, \"Body, format 4\"): the records and export of "
    "archive-v3.json, with the id table coded in columns (coding 2).")
assert name_v4 == "coffer-20261203-000000-000006.cbak"
total_v4 = len(table_v3)
assert decode_id_table(2, coded_table_v4, len(records_v3), 1, len(body_v4), 4) == table_v3


def refused4(table, coding=2, count=len(records_v3), extra=1, body_length=len(body_v4)):
    try:
        decode_id_table(coding, table, count, extra, body_length, 4)
    except (AssertionError, lzma.LZMAError):
        return True
    return False


assert refused4(coded_table_v4 + b"\0")                                  # a byte after the xz stream
assert refused4(coded(table_columns_v4 + b"\0"))                          # a value more than 3 × (N + E)
assert refused4(coded(table_columns_v4[:-1] + b"\x80\x00"))                # a non-minimal uvarint
assert refused4(coded(uvarint(zz(1 << 48)) + bytes(3 * total_v4 - 1)))   # m past 48 bits
assert refused4(coded(bytes(total_v4) + uvarint(zz(1 << 16)) + bytes(2 * total_v4 - 1)))   # c past 16 bits
assert refused4(coded(uvarint(zz(-1)) + bytes(3 * total_v4 - 1)))       # m below 0
assert refused4(coded(bytes(total_v4) + uvarint(zz(-1)) + bytes(2 * total_v4 - 1)))   # c below 0
assert refused4(coded(uvarint(zz(1)) + uvarint(zz(-2)) + bytes(3 * total_v4 - 2)))   # m 1, then below 0
assert not refused4(coded(bytes(3 * total_v4 - 1) + uvarint(zz(-1))))   # the low word wraps: ...ff is an id
assert refused4(coded(bytes(3 * total_v4 - 1)))                          # C below 3 × (N + E)
assert refused4(encode_id_table(table_v3, 1), coding=1)                  # format 3's coding, in format 4
assert refused4(coded_table_v4, count=1 << 27, extra=0, body_length=0)   # 16 × (N + E) above 256 MiB + 64 × body

read_back, fields = read_archive(OUT / name_v4, passphrase2)
assert read_back == records_v3 and fields["netWorth"] == net_worth_v3 and fields["extraIds"] == [deleted_v3]
assert fields["format"] == 4 and fields["tableCoding"] == 2 and fields["tableLength"] == len(coded_table_v4)
print(f"wrote {OUT / name_v4} and archive-v4.json: {len(table_v3)} ids in a {len(coded_table_v4)}-byte table "
      f"(coding 2; {len(table_columns_v4)} bytes before xz)")


# The committed fixtures (made by Coffer), read from the document and the passphrase alone.
FIXTURES = Path(__file__).resolve().parent.parent / "Tests" / "Fixtures"
for folder, format_version in (("backup-v2", 2), ("backup-v3", 3), ("backup-v4", 4)):
    fixture_records, fixture_fields = read_archive(next((FIXTURES / folder).glob("*.cbak")), "fixture passphrase v1")
    assert fixture_fields["format"] == format_version
    kinds_read = {}
    for _, p in fixture_records:
        kinds_read[p[0] if p else 0] = kinds_read.get(p[0] if p else 0, 0) + 1
    summary = (f"read the format {format_version} fixture {folder}: {len(fixture_records)} records ({kinds_read.get(10, 0)} "
               f"transactions, {kinds_read.get(5, 0)} changes), {len(fixture_fields['extraIds'])} extra ids, "
               f"net worth {fixture_fields['netWorth']}")
    if format_version >= 3:
        assert fixture_fields["tableCoding"] == format_version - 2, "the fixture's id table should be coded"
        assert all(rid[6] >> 4 == 8 for rid, _ in fixture_records), "a fixture record id is not an ordered (version 8) id"
        total = len(fixture_records) + len(fixture_fields["extraIds"])
        summary += (f"; id table coding {format_version - 2}, {fixture_fields['tableLength']} bytes for {total} ids "
                    f"({16 * total} as they are), every record id version 8")
    print(summary)


# ---------------------------------------------------------------------------------------------
# A change file in columns (Specs/sync-format.md §4, packed body 2): a third device of the sync
# folder's vault publishes the format 4 archive's records (all but its empty payload) as one
# snapshot, their payloads in the archive's column encoding, and one delete. Joining the folder
# must give exactly the records listed in sync-v1-columns.json.
COLUMNS_DIR = OUT / "sync-v1-columns"
device_c = fixed("sync device c", 16)
key_c = Ed25519PrivateKey.from_private_bytes(fixed("sync device key c", 32))
snapshot_groups = [group for group in groups_v3 if group[0] != 0]
snapshot_records = [r for _, _, _, rs in snapshot_groups for r in rs]
snapshot_table = [rid for rid, _ in snapshot_records] + [deleted_v3]   # the deleted record: named by a change, not held
snapshot_export = b"CFREXPV2"
for kind, version, layout, rs in snapshot_groups:
    snapshot_export += struct.pack("<I", len(block := encode_block(kind, version, layout, [p for _, p in rs], snapshot_table.index))) + block
snapshot_manifest = manifest_bytes(snapshot_records, 0, "", "")
snapshot_export += struct.pack("<II", 0, len(snapshot_manifest)) + snapshot_manifest
snapshot_id_table = encode_id_table(snapshot_table, 2)
columns = (struct.pack("<QQQBQ", len(snapshot_export), len(snapshot_records), 1, 2, len(snapshot_id_table)) + snapshot_id_table
           + lzma.compress(snapshot_export, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=1))
c_clocks = [clock(1_795_000_200_000 + n) for n in range(len(snapshot_records))]   # in the columns' order
c_delete_clock = clock(1_795_000_300_000)
rest = (svarint(1_795_000_300_000) + uvarint(1) + device_c + uvarint(0)
        + uvarint(len(snapshot_records)) + b"".join(uvarint(c) for c in c_clocks) + uvarint(0) * len(snapshot_records)
        + uvarint(1) + deleted_v3 + uvarint(c_delete_clock) + uvarint(0))
packed_columns = (b"\x02" + struct.pack("<Q", len(columns)) + columns + struct.pack("<Q", len(rest))
                  + lzma.compress(rest, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=0))



if COLUMNS_DIR.exists():
    for old in sorted(COLUMNS_DIR.rglob("*"), reverse=True):
        old.rmdir() if old.is_dir() else old.unlink()
(COLUMNS_DIR / device_c.hex()).mkdir(parents=True)
(COLUMNS_DIR / f"keys-{generation:08d}-{blake2b(header2)[:4].hex()}.cfkeys").write_bytes(b"CFRSKEY1" + header2)
(COLUMNS_DIR / device_c.hex() / f"enrol-{generation:08d}.cfsync").write_bytes(sealed_packed(
    1, device_c, 0, b"\x00" + bytes_field(raw_public(key_c)) + text("phone") + svarint(1_795_000_200), gen2_key, "enrol phone"))
(COLUMNS_DIR / device_c.hex() / f"{generation:08d}-{1:016d}.cfsync").write_bytes(
    sealed_packed(2, device_c, 1, packed_columns, key_c, f"{device_c.hex()} 1"))
(OUT / "sync-v1-columns.json").write_text(json.dumps({
    "description": "A Coffer sync folder (Specs/sync-format.md) of vault-v2.coffer's vault, key generation 2, built from the spec "
                   "alone: device C's #1 in columns (packed body 2): the records of archive-v4.json but its empty payload, in "
                   "the archive's column encoding, the stamps in the columns' order, and one delete.",
    "folder": "sync-v1-columns", "passphrase": passphrase2, "vaultId": vault_id2.hex(), "syncKey": sync_key.hex(),
    "devices": {"phone": device_c.hex()}, "conflicts": 0, "writes": len(snapshot_records) + 1,
    "packed": packed_columns.hex(), "rest": rest.hex(), "export": snapshot_export.hex(),
    "records": [{"id": rid.hex(), "payload": p.hex()} for rid, p in sorted(snapshot_records)]}, indent=2) + "\n")
print(f"wrote {OUT / 'sync-v1-columns.json'} and {COLUMNS_DIR}: {len(snapshot_records)} records in columns")

# ---------------------------------------------------------------------------------------------
# The sync index (Specs/sync-format.md §7, kind 17's bytes): version 1 (BLAKE2b-128 digests) and
# version 2 (SipHash-2-4 digests under the index's own key), each of the same three entries.

def siphash24(key, data):
    """SipHash-2-4 (Aumasson and Bernstein), 64-bit output, as the paper defines it."""
    mask = (1 << 64) - 1
    def left(x, b):
        return ((x << b) | (x >> (64 - b))) & mask
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    def sip_round():
        v[0] = (v[0] + v[1]) & mask; v[1] = left(v[1], 13) ^ v[0]; v[0] = left(v[0], 32)
        v[2] = (v[2] + v[3]) & mask; v[3] = left(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & mask; v[3] = left(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & mask; v[1] = left(v[1], 17) ^ v[2]; v[2] = left(v[2], 32)
    whole = len(data) - len(data) % 8
    words = [struct.unpack_from("<Q", data, at)[0] for at in range(0, whole, 8)]
    words.append((len(data) & 0xFF) << 56 | int.from_bytes(data[whole:], "little"))
    for m in words:
        v[3] ^= m; sip_round(); sip_round(); v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        sip_round()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


# The paper's Appendix A: key 00..0f, message 00..0e.
assert siphash24(bytes(range(16)), bytes(range(15))) == 0xA129CA6149BE45E5, "SipHash-2-4 self-check"

index_devices = [fixed("index device laptop", 16), fixed("index device phone", 16)]
index_entries = sorted([
    # (record id, device, clock, payload or None for a delete)
    (fixed("index record 1", 16), index_devices[1], clock(1_795_000_100_000), payloads[1]),
    (fixed("index record 2", 16), index_devices[0], clock(1_795_000_200_000), None),
    (fixed("index record 3", 16), index_devices[0], clock(1_795_000_300_000), payloads[2]),
])
index_key = fixed("sync index digest key", 16)


def sync_index(version):
    table = []
    for _, device, _, _ in index_entries:   # in the order the entries first name them
        if device not in table:
            table.append(device)
    out = bytes([version]) + (index_key if version == 2 else b"") + struct.pack("<H", len(table)) + b"".join(table)
    out += struct.pack("<I", len(index_entries))
    described = []
    for record, device, stamp, payload in index_entries:
        if payload is None:
            digest = b""
        elif version == 1:
            digest = blake2b(payload, 16)
        else:
            digest = struct.pack("<Q", siphash24(index_key, payload))
        out += record + bytes([0 if payload is not None else 1]) + struct.pack("<QH", stamp, table.index(device)) + digest
        described.append({"id": record.hex(), "deleted": payload is None, "clock": stamp, "device": device.hex(),
                          "payload": payload.hex() if payload is not None else None, "digest": digest.hex()})
    return {"version": version, "key": index_key.hex() if version == 2 else None, "hex": out.hex(),
            "entries": described}


(OUT / "sync-index.json").write_text(json.dumps({
    "description": "Coffer sync index bytes (Specs/sync-format.md §7, the data of a kind 17 record): the same three entries "
                   "(two present, one deleted) at version 1 (BLAKE2b-128 digests) and version 2 (SipHash-2-4 under the "
                   "index's key, the paper's Appendix A vector checked first).",
    "siphash24": {"key": bytes(range(16)).hex(), "input": bytes(range(15)).hex(), "output": "a129ca6149be45e5"},
    "indexes": [sync_index(1), sync_index(2)]}, indent=2) + "\n")
print(f"wrote {OUT / 'sync-index.json'}")
