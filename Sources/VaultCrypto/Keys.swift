internal import CSodium
import Foundation

/// A 256-bit secret key (master key, key-encryption key or subkey).
///
/// Its bytes live in `SecureBytes`; there is no way to print or serialise it other than through
/// `withUnsafeBytes` or by wrapping it with another key.
public struct SymmetricKey: Sendable {
    public static let byteCount = 32
    let storage: SecureBytes

    /// Takes ownership of 32 secret bytes (for example a key just unwrapped by `open`).
    public init(_ bytes: SecureBytes) throws {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidLength, "A key must be \(Self.byteCount) bytes, not \(bytes.count).")
        }
        storage = bytes
    }

    /// A fresh random key.
    public static func random() -> SymmetricKey {
        try! SymmetricKey(SecureBytes.random(count: byteCount))
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    /// Derives an independent subkey with libsodium's `crypto_kdf` (BLAKE2b keyed with this key,
    /// subkey id and an 8-byte context as salt and personalisation). Knowing a subkey reveals
    /// nothing about this key or its other subkeys.
    public func deriveSubkey(id: UInt64, context: KDFContext) -> SymmetricKey {
        let subkey = SecureBytes(count: Self.byteCount)
        let result: Int32 = subkey.withUnsafeMutableBytes { out in
            storage.withUnsafeBytes { master in
                context.bytes.withUnsafeBufferPointer { ctx in
                    ctx.withMemoryRebound(to: CChar.self) { ctxChars in
                        crypto_kdf_derive_from_key(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), Self.byteCount, id,
                            ctxChars.baseAddress!, master.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        // Cannot fail for a 32-byte subkey; a failure would mean a broken libsodium.
        precondition(result == 0, "crypto_kdf_derive_from_key failed")
        return try! SymmetricKey(subkey)
    }

    /// Constant-time comparison.
    public func constantTimeEquals(_ other: SymmetricKey) -> Bool {
        storage.constantTimeEquals(other.storage)
    }
}

extension SymmetricKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SymmetricKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// The 8-byte context string `crypto_kdf` mixes into every subkey, so that subkeys derived for
/// one purpose can never collide with another's.
public struct KDFContext: Sendable, Equatable {
    let bytes: [UInt8]
    public init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == Int(crypto_kdf_CONTEXTBYTES), "a KDF context is exactly 8 bytes")
        bytes = Array(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

/// A public, fixed-length random value (salt or nonce), kept as a distinct type per purpose so
/// one cannot be passed where the other is expected.
public protocol FixedLengthBytes: Sendable, Equatable, Hashable {
    static var byteCount: Int { get }
    var bytes: [UInt8] { get }
    init(unchecked bytes: [UInt8])
}

extension FixedLengthBytes {
    /// Validates the length of bytes read from a file or another program.
    public init<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidLength, "\(Self.self) must be \(Self.byteCount) bytes, not \(bytes.count).")
        }
        self.init(unchecked: Array(bytes))
    }

    public static func random() -> Self { Self(unchecked: SecureRandom.bytes(count: byteCount)) }
}

/// The 16-byte Argon2id salt.
public struct Salt: FixedLengthBytes {
    public static var byteCount: Int { Int(crypto_pwhash_argon2id_SALTBYTES) }
    public let bytes: [UInt8]
    public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// The 24-byte XChaCha20-Poly1305 nonce: long enough to be chosen at random for every message.
public struct AEADNonce: FixedLengthBytes {
    public static var byteCount: Int { Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) }
    public let bytes: [UInt8]
    public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}
